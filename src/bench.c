/* The timings hark bench reports, taken here because they reach below hark.h:
 * the model's stages as whisper.cpp's bench protocol runs them (encoder, single-token
 * decode, 5-sequence batched decode, a 256-token prompt, each the median of reps
 * runs on pseudo-random input), what a step computes and reads, and the machine's
 * f32 product rate, OpenBLAS's and hark's own tiles', for the percentages of peak. */
#include <cblas.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "face.h"
#include "kernels/kernels.h"

enum { DECODE_STEPS = 256, BATCH_SEQS = HARK_BENCH_BATCH, BATCH_STEPS = 64, PROMPT_TOKENS = 256 };
enum { PROBE_RUNS = 10 }; /* best of: a busy machine interrupts some runs */

/* ------------------------------------------------------------ timing */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* ------------------------------------------------------------ what a step reads and computes */

/* FLOPs of one encoder window plus the cross K/V projection: the work the
 * encoder time covers (a multiply-add is 2 FLOPs). */
static double encoder_flops(const hark_hparams *hp)
{
    double n = hp->n_audio_ctx, d = hp->n_audio_state, mels = hp->n_mels;
    double conv1 = 2 * (2 * n) * d * (3 * mels);
    double conv2 = 2 * n * d * (3 * d);
    double projections = 4 * 2 * n * d * d; /* q, k, v, out */
    double attention = 2 * (2 * n * n * d);  /* scores and weighted sum, all heads */
    double mlp = 2 * (2 * n * d * 4 * d);
    double cross_kv = hp->n_text_layer * 2 * (2 * n * d * hp->n_text_state);
    return conv1 + conv2 + hp->n_audio_layer * (projections + attention + mlp) + cross_kv;
}

static double weight_bytes(const hark_weight *w)
{
    return (double)hark_row_bytes(w->type, (size_t)w->cols) * w->rows;
}

/* Weight bytes one decoded token must read: every decoder matrix except the
 * cross-attention K/V projections (applied once per window, not per token),
 * and the token embedding again as the output projection. */
static double decode_weight_bytes(const hark_model *m)
{
    double sum = weight_bytes(&m->tok_emb);
    for (int l = 0; l < m->hp.n_text_layer; l++) {
        const hark_block *b = &m->dec[l];
        sum += weight_bytes(&b->attn.q) + weight_bytes(&b->attn.k) + weight_bytes(&b->attn.v) +
               weight_bytes(&b->attn.o) + weight_bytes(&b->cross.q) + weight_bytes(&b->cross.o) +
               weight_bytes(&b->fc1) + weight_bytes(&b->fc2);
    }
    return sum;
}

/* What a decoding step reads besides the weights: every layer's cross-attention
 * keys and values over the whole window (for base.en a quarter of the bytes). */
static double cross_kv_bytes(const hark_model *m, const hark_cross *c)
{
    return 2.0 * m->hp.n_text_layer * m->hp.n_audio_ctx * m->hp.n_text_state * (c->k16 ? 2 : 4);
}

/* ------------------------------------------------------------ model stages */

/* Everything a stage needs; the encoder output feeds the cross K/V. */
typedef struct bench_state {
    const hark_model *m;
    int n_threads, reps;
    float *mel, *enc, *logits;
    hark_cross cross;
    hark_workspace ws; /* kept across passes, as transcription keeps it across windows */
} bench_state;

/* Pseudo-random mel in [-1, 1): no value-dependent shortcut can flatter it. */
static void fill_mel(float *mel, size_t n)
{
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        mel[i] = (float)(x >> 8) / (float)(1u << 23) - 1.0f;
    }
}

static int state_init(bench_state *s, const hark_model *m, int n_threads, int reps)
{
    const hark_hparams *hp = &m->hp;
    size_t mel_n = (size_t)hp->n_mels * 2 * hp->n_audio_ctx;
    memset(s, 0, sizeof *s);
    s->m = m, s->n_threads = n_threads, s->reps = reps;
    s->mel = malloc(mel_n * sizeof(float));
    s->enc = malloc((size_t)hp->n_audio_ctx * hp->n_audio_state * sizeof(float));
    s->logits = malloc((size_t)BATCH_SEQS * hp->n_vocab * sizeof(float));
    if (!s->mel || !s->enc || !s->logits || hark_cross_init(&s->cross, m))
        return HARK_ERR_NOMEM;
    fill_mel(s->mel, mel_n);
    return 0;
}

static void state_free(bench_state *s)
{
    free(s->mel);
    free(s->enc);
    free(s->logits);
    hark_cross_free(&s->cross);
    hark_workspace_free(&s->ws);
}

/* One timed encoder pass (plus cross K/V); negative on failure. */
static double time_encoder(bench_state *s)
{
    double t0 = 1e3 * hark_now_s();
    if (hark_encode(s->m, s->mel, s->enc, &s->ws))
        return -1;
    hark_cross_set(s->m, &s->cross, s->enc);
    return 1e3 * hark_now_s() - t0;
}

/* steps single-token calls from an empty cache, all with token 0 as
 * whisper.cpp's bench does; returns ms or a negative value.  split: NULL, or
 * where the parts' times are added. */
static double time_decode(bench_state *s, int steps, hark_decode_split *split)
{
    hark_kv kv;
    if (hark_kv_init(&kv, s->m, &s->cross))
        return -1;
    kv.split = split;
    int token = 0, rc = 0;
    double t0 = 1e3 * hark_now_s();
    for (int i = 0; i < steps && !rc; i++)
        rc = hark_decode(s->m, &kv, &token, 1, s->logits);
    double ms = 1e3 * hark_now_s() - t0;
    hark_kv_free(&kv);
    return rc ? -1 : ms;
}

static double time_batch(bench_state *s, int steps)
{
    hark_kv kv[BATCH_SEQS], *kvs[BATCH_SEQS];
    int tokens[BATCH_SEQS] = {0}, n_init = 0, rc = 0;
    while (n_init < BATCH_SEQS && !hark_kv_init(&kv[n_init], s->m, &s->cross))
        kvs[n_init] = &kv[n_init], n_init++;
    double t0 = 1e3 * hark_now_s(), ms = -1;
    if (n_init == BATCH_SEQS) {
        for (int i = 0; i < steps && !rc; i++)
            rc = hark_decode_batch(s->m, kvs, tokens, BATCH_SEQS, s->logits);
        ms = rc ? -1 : 1e3 * hark_now_s() - t0;
    }
    for (int i = 0; i < n_init; i++)
        hark_kv_free(&kv[i]);
    return ms;
}

static double time_prompt(bench_state *s, int n_tokens)
{
    hark_kv kv;
    int *tokens = calloc((size_t)n_tokens, sizeof(int));
    if (!tokens || hark_kv_init(&kv, s->m, &s->cross)) {
        free(tokens);
        return -1;
    }
    double t0 = 1e3 * hark_now_s();
    int rc = hark_decode(s->m, &kv, tokens, n_tokens, s->logits);
    double ms = 1e3 * hark_now_s() - t0;
    hark_kv_free(&kv);
    free(tokens);
    return rc ? -1 : ms;
}

typedef enum { STAGE_ENCODER, STAGE_DECODE, STAGE_BATCH, STAGE_PROMPT } stage;

static double time_stage(bench_state *s, stage which, int count)
{
    switch (which) {
    case STAGE_ENCODER: return time_encoder(s);
    case STAGE_DECODE: return time_decode(s, count, NULL);
    case STAGE_BATCH: return time_batch(s, count);
    default: return time_prompt(s, count);
    }
}

/* Median ms of s->reps runs of a stage, or a negative value on failure. */
static double median_stage(bench_state *s, stage which, int count)
{
    double *ms = malloc(sizeof(double) * (size_t)s->reps), result = -1;
    int i = 0;
    for (; ms && i < s->reps; i++)
        if ((ms[i] = time_stage(s, which, count)) < 0)
            break;
    if (ms && i == s->reps)
        result = median(ms, s->reps);
    free(ms);
    return result;
}

/* ------------------------------------------------------------ the parts of a step */

/* What each part of a step reads per token, over steps steps from an empty
 * cache (the self-attention K and V of a layer at the mean length, (steps + 1) / 2). */
static void part_bytes(const hark_model *m, const hark_cross *c, int steps, hark_bench_part *p)
{
    double self = 0, cross = cross_kv_bytes(m, c), mlp = 0;
    double cache = 2.0 * m->hp.n_text_state * sizeof(float) * (steps + 1) / 2;
    for (int l = 0; l < m->hp.n_text_layer; l++) {
        const hark_block *b = &m->dec[l];
        self += weight_bytes(&b->attn.q) + weight_bytes(&b->attn.k) + weight_bytes(&b->attn.v) +
                weight_bytes(&b->attn.o) + cache;
        cross += weight_bytes(&b->cross.q) + weight_bytes(&b->cross.o);
        mlp += weight_bytes(&b->fc1) + weight_bytes(&b->fc2);
    }
    const char *names[HARK_BENCH_PARTS] = {"self-attention", "cross-attention", "MLP", "logits"};
    double mb[HARK_BENCH_PARTS] = {self / 1e6, cross / 1e6, mlp / 1e6, weight_bytes(&m->tok_emb) / 1e6};
    for (int k = 0; k < HARK_BENCH_PARTS; k++)
        p[k] = (hark_bench_part){names[k], 0, mb[k]};
}

/* The decode stage again, its parts timed: each part's median of s->reps runs. */
static int time_parts(bench_state *s, int steps, hark_bench_part *p)
{
    int reps = s->reps, rc = 0;
    double *ms = malloc(sizeof(double) * (size_t)reps * HARK_BENCH_PARTS);
    for (int i = 0; ms && i < reps && !rc; i++) {
        hark_decode_split sp = {0};
        rc = time_decode(s, steps, &sp) < 0;
        double part[HARK_BENCH_PARTS] = {sp.self_attn, sp.cross_attn, sp.mlp, sp.logits};
        for (int k = 0; k < HARK_BENCH_PARTS; k++)
            ms[k * reps + i] = 1e3 * part[k] / steps;
    }
    for (int k = 0; ms && !rc && k < HARK_BENCH_PARTS; k++)
        p[k].ms_per_token = median(ms + k * reps, reps);
    free(ms);
    return ms && !rc ? 0 : -1;
}

/* The four stages; the encoder's first pass, like a transcription's first
 * window, also faults in the weights and buffers: it is reported on its own,
 * not in the median, and gives the decoder a real encoder output. */
static int run_stages(bench_state *s, hark_bench_stages *r)
{
    int ctx = s->m->hp.n_text_ctx;
    r->decode_steps = min_int(DECODE_STEPS, ctx);
    r->batch_steps = min_int(BATCH_STEPS, ctx);
    r->prompt_tokens = min_int(PROMPT_TOKENS, ctx);
    if ((r->first_encoder_ms = time_encoder(s)) < 0)
        return -1;
    r->encoder_ms = median_stage(s, STAGE_ENCODER, 1);
    double decode = median_stage(s, STAGE_DECODE, r->decode_steps);
    double batch = median_stage(s, STAGE_BATCH, r->batch_steps);
    double prompt = median_stage(s, STAGE_PROMPT, r->prompt_tokens);
    if (r->encoder_ms < 0 || decode < 0 || batch < 0 || prompt < 0)
        return -1;
    part_bytes(s->m, &s->cross, r->decode_steps, r->decode_parts);
    if (time_parts(s, r->decode_steps, r->decode_parts))
        return -1;
    r->decode_ms_per_token = decode / r->decode_steps;
    r->batch5_ms_per_token = batch / ((double)r->batch_steps * BATCH_SEQS);
    r->prompt_ms_per_token = prompt / r->prompt_tokens;
    return 0;
}

typedef struct sgemm_probe {
    int n;
    const float *a, *b;
    float *c;
} sgemm_probe;

static void run_openblas(const sgemm_probe *p)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, p->n, p->n, p->n, 1.0f, p->a, p->n, p->b,
                p->n, 0.0f, p->c, p->n);
}

/* Best rate of RUN on n x n x n. */
static double probe_gflops(int n, void (*run)(const sgemm_probe *))
{
    size_t nn = (size_t)n * n;
    float *a = malloc(nn * sizeof(float)), *b = malloc(nn * sizeof(float));
    float *c = malloc(nn * sizeof(float));
    double best = 0;
    if (a && b && c) {
        fill_mel(a, nn);
        fill_mel(b, nn);
        sgemm_probe p = {n, a, b, c};
        for (int r = 0; r <= PROBE_RUNS; r++) { /* run 0 warms up */
            double t0 = 1e3 * hark_now_s();
            run(&p);
            double gflops = 2.0 * n * nn / ((1e3 * hark_now_s() - t0) * 1e6);
            if (r > 0 && gflops > best)
                best = gflops;
        }
    }
    free(a);
    free(b);
    free(c);
    return best;
}

/* The product as the encoder's projections run it: hark_linear of an f32
 * weight, so hark's AVX-512 tiles where they run, on hark's pool. */
static void run_hark_linear(const sgemm_probe *p)
{
    hark_weight w = {(void *)p->b, HARK_F32, p->n, p->n};
    hark_linear(p->c, p->a, p->n, &w, NULL);
}


/* ------------------------------------------------------------ hark.h */

int hark_bench_model(const hark_model *m, int n_threads, int reps, int precision,
                     hark_bench_stages *r)
{
    memset(r, 0, sizeof *r);
    hark_pool *pool = hark_pool_new(n_threads);
    hark_pool_use(pool);
    hark_precision_use(hark_precision_resolve(precision));
    r->precision = hark_precision_name(hark_precision_current());
    bench_state s;
    double t0 = 1e3 * hark_now_s();
    /* first logits: one step against the zeroed cross K/V, before any encoder pass */
    int rc = state_init(&s, m, n_threads, reps < 1 ? 1 : reps) || time_decode(&s, 1, NULL) < 0;
    r->first_logits_ms = 1e3 * hark_now_s() - t0;
    if (!rc)
        rc = run_stages(&s, r);
    r->encoder_gflop = encoder_flops(&m->hp) / 1e9;
    r->decode_weight_mb = decode_weight_bytes(m) / 1e6;
    r->decode_read_mb = r->decode_weight_mb + cross_kv_bytes(m, &s.cross) / 1e6;
    r->weight_type = hark_dtype_name(m->dec[0].fc1.type);
    state_free(&s);
    hark_pool_use(NULL);
    hark_precision_use(HARK_PREC_F32);
    hark_pool_free(pool);
    return rc ? HARK_ERR_NOMEM : 0;
}

static double cpu_ms_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* Medians of reps encoder passes' wall and CPU ms into ms[0], ms[1]; -1 on failure. */
static int time_encoder_cpu(bench_state *s, double ms[2])
{
    double *t = malloc(sizeof(double) * 2 * (size_t)s->reps);
    int i = 0;
    for (; t && i < s->reps; i++) {
        double c0 = cpu_ms_now();
        if ((t[i] = time_encoder(s)) < 0)
            break;
        t[s->reps + i] = cpu_ms_now() - c0;
    }
    int ok = t && i == s->reps;
    if (ok)
        ms[0] = median(t, s->reps), ms[1] = median(t + s->reps, s->reps);
    free(t);
    return ok ? 0 : -1;
}

double hark_bench_encoder_ms(const hark_model *m, int n_threads, int reps, int precision,
                             double *cpu_ms)
{
    hark_pool *pool = hark_pool_new(n_threads);
    hark_pool_use(pool);
    hark_precision_use(hark_precision_resolve(precision));
    bench_state s;
    double ms = -1, both[2];
    if (state_init(&s, m, n_threads, reps < 1 ? 1 : reps) == 0 && time_encoder(&s) >= 0 &&
        time_encoder_cpu(&s, both) == 0) {
        ms = both[0];
        if (cpu_ms)
            *cpu_ms = both[1];
    }
    state_free(&s);
    hark_pool_use(NULL);
    hark_precision_use(HARK_PREC_F32);
    hark_pool_free(pool);
    return ms;
}

double hark_bench_sgemm_gflops(int n, int n_threads, int tiles)
{
    if (!tiles)
        return probe_gflops(n, run_openblas);
    if (!hark_gemm512_available())
        return 0;
    hark_pool *pool = hark_pool_new(n_threads);
    hark_pool_use(pool);
    double gflops = probe_gflops(n, run_hark_linear);
    hark_pool_use(NULL);
    hark_pool_free(pool);
    return gflops;
}
