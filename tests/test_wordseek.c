/* openai's word-timestamp rules against scripts/reference/word_rules_reference.py
 * (tests/data/word_rules.json): segment bounds fitted to their words
 * (hark_fit_segment_bounds), and where the next window starts, with and
 * without a hallucination silence threshold (hark_word_seek). */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "decode/decode.h"

static double num(const cJSON *a, int i)
{
    return cJSON_GetArrayItem(a, i)->valuedouble;
}

/* Segments from the fixture's [start, end, [[word, start, end, p] ...]] form. */
static hark_segment *read_segments(const cJSON *js, int *n)
{
    *n = cJSON_GetArraySize(js);
    hark_segment *s = calloc((size_t)(*n ? *n : 1), sizeof *s);
    for (int i = 0; i < *n; i++) {
        const cJSON *j = cJSON_GetArrayItem(js, i), *words = cJSON_GetArrayItem(j, 2);
        s[i].start = num(j, 0);
        s[i].end = num(j, 1);
        s[i].n_words = cJSON_GetArraySize(words);
        s[i].words = calloc((size_t)(s[i].n_words ? s[i].n_words : 1), sizeof(hark_word));
        for (int k = 0; k < s[i].n_words; k++) {
            const cJSON *w = cJSON_GetArrayItem(words, k);
            s[i].words[k].text = cJSON_GetArrayItem(w, 0)->valuestring;
            s[i].words[k].start = num(w, 1);
            s[i].words[k].end = num(w, 2);
            s[i].words[k].probability = (float)num(w, 3);
        }
    }
    return s;
}

static void free_segments(hark_segment *s, int n)
{
    for (int i = 0; i < n; i++)
        free(s[i].words);
    free(s);
}

/* Every segment's and word's bounds as openai's add_word_timestamps leaves them. */
static int fit_matches(const cJSON *c)
{
    int n, same = 1;
    hark_segment *s = read_segments(cJSON_GetObjectItem(c, "segments"), &n);
    double median = cJSON_GetObjectItem(c, "median")->valuedouble;
    double last = cJSON_GetObjectItem(c, "last_speech")->valuedouble;
    const cJSON *want = cJSON_GetObjectItem(c, "fitted");
    for (int i = 0; i < n; i++) {
        hark_fit_segment_bounds(&s[i], median, &last);
        const cJSON *j = cJSON_GetArrayItem(want, i), *words = cJSON_GetArrayItem(j, 2);
        same &= s[i].start == num(j, 0) && s[i].end == num(j, 1);
        for (int k = 0; k < s[i].n_words; k++) {
            const cJSON *w = cJSON_GetArrayItem(words, k);
            same &= s[i].words[k].start == num(w, 0) && s[i].words[k].end == num(w, 1);
        }
    }
    free_segments(s, n);
    return same;
}

static int seek_matches(const cJSON *c, int *got_seek, int *got_keep)
{
    const cJSON *w = cJSON_GetObjectItem(c, "window"), *t = cJSON_GetObjectItem(c, "threshold");
    hark_word_window ww = {cJSON_GetObjectItem(w, "seek")->valueint,
                           cJSON_GetObjectItem(w, "size")->valueint,
                           cJSON_GetObjectItem(w, "window")->valueint,
                           cJSON_GetObjectItem(w, "content")->valueint,
                           cJSON_IsTrue(cJSON_GetObjectItem(w, "single_end")),
                           cJSON_GetObjectItem(w, "last_speech")->valuedouble};
    int n;
    hark_segment *s = read_segments(cJSON_GetObjectItem(c, "segments"), &n);
    *got_seek = hark_word_seek(&ww, cJSON_IsNull(t) ? 0 : t->valuedouble, s, n,
                               cJSON_GetObjectItem(w, "next")->valueint, got_keep);
    free_segments(s, n);
    return *got_seek == cJSON_GetObjectItem(c, "seek")->valueint &&
           *got_keep == cJSON_GetObjectItem(c, "kept")->valueint;
}

/* The rules on a window worked by hand (the fixture's cases are random). */
static void test_by_hand(void)
{
    hark_word words[2] = {{" uh", 3.0, 3.05, 0.05f, 1}, {" hm", 3.05, 3.1, 0.1f, 1}};
    hark_segment s = {.start = 3.0, .end = 3.1, .words = words, .n_words = 2};
    hark_word_window w = {.seek = 0, .size = 1000, .window = 1000, .content = 5000};
    int keep, seek = hark_word_seek(&w, 0, &s, 1, 1000, &keep);
    /* no threshold: the next window starts after the last word, at 3.1 s */
    CHECK(seek == 310 && keep == 1, "seek %d keep %d", seek, keep);
    /* two improbable 50 ms words after 3 s of silence: skipped whole, from 3.0 s */
    seek = hark_word_seek(&w, 2.0, &s, 1, 1000, &keep);
    CHECK(seek == 300 && keep == -1, "seek %d keep %d", seek, keep);
    CHECK(hark_segment_anomaly(&s), "anomaly");
    words[0].probability = words[1].probability = 0.9f;
    words[0].end = words[1].start = 3.5, words[1].end = 4.0;
    CHECK(!hark_segment_anomaly(&s), "probable 0.5 s words are no anomaly");
    double end;
    CHECK(hark_segments_end(&s, 1, &end) && end == 4.0, "end %g", end);
    s.n_words = 0;
    CHECK(hark_segments_end(&s, 1, &end) && end == 3.1, "no words: the segment's end %g", end);
    CHECK(!hark_segments_end(&s, 0, &end), "no segments: no end");
    /* only the first 8 words that are not punctuation are scored */
    hark_word nine[10];
    for (int i = 0; i < 10; i++)
        nine[i] = (hark_word){i == 0 ? "," : " word", i, i + 0.4, 0.9f, 1};
    nine[9].end = 19; /* a 10 s word: 8 points */
    hark_segment long_seg = {.start = 0, .end = 19, .words = nine, .n_words = 10};
    CHECK(!hark_segment_anomaly(&long_seg), "the 9th scored word counted");
    nine[0].text = " word";
    long_seg.words = nine + 1, long_seg.n_words = 9;
    nine[8].end = 18;
    CHECK(hark_segment_anomaly(&long_seg), "a 10 s word among the first 8 is an anomaly");
    CHECK(hark_round2(2.675) == 2.67 && hark_round2(0.125) == 0.12 && hark_round2(1.005) == 1.0,
          "Python's round(x, 2)");
}

int main(void)
{
    test_by_hand();
    cJSON *ref = load_json_fixture("tests/data/word_rules.json");
    if (!ref)
        return check_summary("wordseek");
    const cJSON *c;
    int i = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(ref, "fit")) {
        CHECK(fit_matches(c), "fit case %d", i);
        i++;
    }
    i = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(ref, "seek")) {
        int seek, keep;
        CHECK(seek_matches(c, &seek, &keep), "seek case %d: seek %d, kept %d", i, seek, keep);
        i++;
    }
    cJSON_Delete(ref);
    return check_summary("wordseek");
}
