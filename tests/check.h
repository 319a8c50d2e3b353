/* A minimal test harness: each CHECK is one counted assertion; a test binary
 * ends with check_summary(), which prints its counts for tests/run.sh. */
#ifndef HARK_CHECK_H
#define HARK_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int check_passed, check_failed, check_skipped;

#define CHECK(cond, ...)                                                                    \
    do {                                                                                    \
        if (cond) {                                                                         \
            check_passed++;                                                                 \
        } else {                                                                            \
            check_failed++;                                                                 \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                          \
            printf(__VA_ARGS__);                                                            \
            printf("\n");                                                                   \
        }                                                                                   \
    } while (0)

#define SKIP(...)                                                                           \
    do {                                                                                    \
        check_skipped++;                                                                    \
        printf("SKIP ");                                                                    \
        printf(__VA_ARGS__);                                                                \
        printf("\n");                                                                       \
    } while (0)

static inline int check_summary(const char *name)
{
    printf("# %s: %d passed, %d failed, %d skipped\n", name, check_passed, check_failed,
           check_skipped);
    return check_failed ? 1 : 0;
}

/* Every how-many-th case a test takes from a long list of real-speech cases
 * (golden clips, sample windows): 1, all of them, unless HARK_TEST_STRIDE says
 * otherwise.  tests/run.sh gives its sanitized and other-kernel runs a stride:
 * they look for memory errors and kernel differences that any case shows, at
 * 15-20 times the plain run's cost a case; the plain run takes every case. */
static inline int check_stride(void)
{
    const char *s = getenv("HARK_TEST_STRIDE");
    int k = s ? atoi(s) : 1;
    return k >= 1 ? k : 1;
}

/* Where the shared reference fixtures are ($HARK_SHARED or ../shared). */
static inline const char *shared_dir(void)
{
    const char *s = getenv("HARK_SHARED");
    return s ? s : "../shared";
}

static inline int shared_path(char *out, size_t n, const char *rel)
{
    struct stat st;
    snprintf(out, n, "%s/%s", shared_dir(), rel);
    return stat(out, &st) == 0;
}

#ifdef cJSON__h
/* A JSON reference fixture, parsed (NULL, after a failed check, if unreadable). */
static inline cJSON *load_json_fixture(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long n = 0;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)n + 1)) && fread(text, 1, (size_t)n, f) == (size_t)n)
        text[n] = 0;
    else {
        free(text);
        text = NULL;
    }
    if (f)
        fclose(f);
    cJSON *json = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK(json != NULL, "%s: unreadable reference fixture", path);
    return json;
}
#endif

static inline double max_abs_diff(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= m))
            m = d; /* NaN propagates as a failure */
    }
    return m;
}

#endif
