/* A decoder step shared by several files' sequences (hark_decode_groups and
 * the step broker behind hark -j): every sequence gets the same logits, bit
 * for bit, as its own window's step alone, whatever the other groups and the
 * thread count; and the broker hands each thread the rows of its own step. */
#include <pthread.h>
#include <unistd.h>

#include "check.h"
#include "decode/decode.h"
#include "kernels/kernels.h"

enum { ROWS = 10, STEPS = 3 };
/* groups as -j steps them: a greedy window, a window's 5 beams, 3 samples of
 * another window, and a lone sequence on the first window again */
static const int SIZES[] = {1, 5, 3, 1};
enum { GROUPS = sizeof SIZES / sizeof SIZES[0] };

static void make_cross(const hark_model *m, hark_cross *c, float phase)
{
    size_t n = (size_t)m->hp.n_audio_ctx * m->hp.n_audio_state;
    float *enc = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++)
        enc[i] = sinf((float)i * 0.37f + phase);
    hark_cross_init(c, m);
    hark_cross_set(m, c, enc);
    free(enc);
}

/* Row i's sequence: its group's window, and a start of its own length. */
static void start_rows(const hark_model *m, hark_kv *kv, hark_cross *cross)
{
    float *logits = malloc(sizeof(float) * (size_t)m->hp.n_vocab);
    for (int g = 0, i = 0; g < GROUPS; g++)
        for (int k = 0; k < SIZES[g]; k++, i++) {
            int toks[8] = {m->vocab.sp.sot, 400 + i, 500 + 3 * i, 600, 700 + i, 800, 900, 1000};
            hark_kv_init(&kv[i], m, &cross[g == 2]);
            hark_decode(m, &kv[i], toks, 2 + (i + g) % 6, logits);
        }
    free(logits);
}

static int token(int i, int step)
{
    return 50 + 11 * i + 3 * step;
}

/* Each group stepped alone (hark_decode_batch): the reference logits. */
static void steps_alone(const hark_model *m, hark_kv *kv, float *out)
{
    int V = m->hp.n_vocab;
    for (int step = 0; step < STEPS; step++)
        for (int g = 0, i = 0; g < GROUPS; i += SIZES[g++]) {
            hark_kv *p[ROWS];
            int toks[ROWS];
            for (int k = 0; k < SIZES[g]; k++)
                p[k] = &kv[i + k], toks[k] = token(i + k, step);
            CHECK(hark_decode_batch(m, p, toks, SIZES[g], out + ((size_t)step * ROWS + i) * V) == 0,
                  "group %d alone", g);
        }
}

static void steps_together(const hark_model *m, hark_kv *kv, float *out)
{
    float *scratch = malloc(sizeof(float) * hark_decode_scratch_floats(m, ROWS));
    hark_kv *p[ROWS];
    for (int i = 0; i < ROWS; i++)
        p[i] = &kv[i];
    for (int step = 0; step < STEPS; step++) {
        int toks[ROWS];
        for (int i = 0; i < ROWS; i++)
            toks[i] = token(i, step);
        CHECK(hark_decode_groups(m, p, toks, ROWS, SIZES, GROUPS,
                                 out + (size_t)step * ROWS * m->hp.n_vocab, scratch) == 0,
              "combined step");
    }
    free(scratch);
}

static void free_rows(hark_kv *kv, int n)
{
    for (int i = 0; i < n; i++)
        hark_kv_free(&kv[i]);
}

/* The caches' new rows must match too: the next steps read them. */
static int same_caches(const hark_model *m, const hark_kv *a, const hark_kv *b)
{
    size_t d = (size_t)m->hp.n_text_state, tc = (size_t)m->hp.n_text_ctx;
    for (int i = 0; i < ROWS; i++) {
        if (a[i].n_past != b[i].n_past)
            return 0;
        for (int l = 0; l < m->hp.n_text_layer; l++)
            if (memcmp(a[i].self_k + l * tc * d, b[i].self_k + l * tc * d,
                       sizeof(float) * d * (size_t)a[i].n_past) ||
                memcmp(a[i].self_v + l * tc * d, b[i].self_v + l * tc * d,
                       sizeof(float) * d * (size_t)a[i].n_past))
                return 0;
    }
    return 1;
}

static void test_groups(const hark_model *m, int threads)
{
    size_t n = (size_t)STEPS * ROWS * m->hp.n_vocab;
    float *alone = malloc(sizeof(float) * n), *together = malloc(sizeof(float) * n);
    hark_cross cross[2];
    hark_kv a[ROWS], b[ROWS];
    hark_pool *pool = hark_pool_new(threads);
    hark_pool_use(pool);
    make_cross(m, &cross[0], 0.0f);
    make_cross(m, &cross[1], 1.3f);
    start_rows(m, a, cross);
    start_rows(m, b, cross);
    steps_alone(m, a, alone);
    steps_together(m, b, together);
    for (int step = 0; step < STEPS; step++)
        for (int i = 0; i < ROWS; i++) {
            size_t at = ((size_t)step * ROWS + i) * m->hp.n_vocab;
            CHECK(memcmp(alone + at, together + at, sizeof(float) * m->hp.n_vocab) == 0,
                  "%s, %d threads: row %d's logits at step %d differ from its group's alone",
                  m->path, threads, i, step);
        }
    CHECK(same_caches(m, a, b), "%s, %d threads: the KV caches differ", m->path, threads);
    free_rows(a, ROWS), free_rows(b, ROWS);
    hark_cross_free(&cross[0]), hark_cross_free(&cross[1]);
    hark_pool_use(NULL);
    hark_pool_free(pool);
    free(alone), free(together);
}

/* ---- the broker: threads submitting their own steps */

typedef struct member {
    const hark_model *m;
    hark_broker *broker;
    hark_kv *kv;     /* its group's sequences */
    int first, size; /* its rows */
    float *out;      /* [STEPS][ROWS][n_vocab], its rows written */
    int rc;
} member;

static void *member_run(void *arg)
{
    member *t = arg;
    int V = t->m->hp.n_vocab;
    hark_broker_enter(t->broker);
    for (int step = 0; step < STEPS && !t->rc; step++) {
        hark_kv *p[ROWS];
        int toks[ROWS];
        const float *logits;
        for (int k = 0; k < t->size; k++)
            p[k] = &t->kv[k], toks[k] = token(t->first + k, step);
        t->rc = hark_broker_step(t->broker, t->m, p, toks, t->size, &logits);
        if (!t->rc)
            memcpy(t->out + ((size_t)step * ROWS + t->first) * V, logits,
                   sizeof(float) * V * (size_t)t->size);
    }
    hark_broker_leave(t->broker);
    return NULL;
}

static void test_broker(const hark_model *m)
{
    size_t n = (size_t)STEPS * ROWS * m->hp.n_vocab;
    float *alone = malloc(sizeof(float) * n), *brokered = calloc(n, sizeof(float));
    hark_cross cross[2];
    hark_kv a[ROWS], b[ROWS];
    make_cross(m, &cross[0], 0.0f);
    make_cross(m, &cross[1], 1.3f);
    start_rows(m, a, cross);
    start_rows(m, b, cross);
    steps_alone(m, a, alone);
    hark_broker *broker = hark_broker_new();
    hark_broker_add_threads(broker, 2);
    member t[GROUPS];
    pthread_t id[GROUPS];
    for (int g = 0, i = 0; g < GROUPS; i += SIZES[g++]) {
        t[g] = (member){m, broker, &b[i], i, SIZES[g], brokered, 0};
        pthread_create(&id[g], NULL, member_run, &t[g]);
    }
    for (int g = 0; g < GROUPS; g++) {
        pthread_join(id[g], NULL);
        CHECK(t[g].rc == 0, "member %d: step failed (%d)", g, t[g].rc);
    }
    CHECK(memcmp(alone, brokered, sizeof(float) * n) == 0,
          "%s: the broker's logits differ from each group's alone", m->path);
    CHECK(same_caches(m, a, b), "%s: the broker's KV caches differ", m->path);
    hark_broker_free(broker);
    free_rows(a, ROWS), free_rows(b, ROWS);
    hark_cross_free(&cross[0]), hark_cross_free(&cross[1]);
    free(alone), free(brokered);
}

static void test_model(const char *path)
{
    char err[512];
    hark_model *m = hark_model_load(path, err, sizeof err);
    CHECK(m != NULL, "%s", err);
    if (!m)
        return;
    test_groups(m, 1);
    test_groups(m, 3);
    test_broker(m);
    hark_model_free(m);
}

/* The random model quantised to type (a file in dir), then tested. */
static void test_quantised(const char *dir, const char *type)
{
    char err[512], path[512];
    hark_model *m = hark_model_load("tests/data/tiny-random/hf-f32", err, sizeof err);
    snprintf(path, sizeof path, "%s/model-%s.bin", dir, type);
    CHECK(m && hark_model_write(m, path, type, err, sizeof err) == 0, "%s: %s", type, err);
    hark_model_free(m);
    test_model(path);
    remove(path);
}

int main(void)
{
    /* f16 and bf16 share the weight reads; f32 runs each group on OpenBLAS alone */
    const char *models[] = {"tests/data/tiny-random/hf-f16", "tests/data/tiny-random/hf-bf16",
                            "tests/data/tiny-random/hf-f32", "models/hark-en-tiny"};
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++)
        test_model(models[k]);
    /* block-quantised: the activations quantised once for all groups */
    char dir[] = "/tmp/hark-batchstep-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "a temporary directory");
    test_quantised(dir, "q8_0");
    test_quantised(dir, "q4_1");
    rmdir(dir);
    return check_summary("batchstep");
}
