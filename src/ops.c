/* Numeric kernels: matrix products on OpenBLAS, LayerNorm, GELU, softmax,
 * attention.  Weights stay in their stored type; f16/bf16 rows are widened to
 * f32 a block at a time so no second full-size copy of a model ever exists. */
#include "ops.h"
#include "kernels.h"
#include "pool.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Products are cut into blocks of BLOCK_ROWS weight rows at fixed offsets, and
 * threads take whole blocks: every OpenBLAS call is the same whatever the
 * thread count, so results are too.  256 rows keep the repacking of the
 * activations (once per block) rare and the widened f32 block small. */
enum { BLOCK_ROWS = 256, ATTN_ROWS = 128 };

/* A slice of a product: output columns (weight rows) [r0, r1). */
typedef struct linear_job {
    float *y;
    const float *x;
    int m;
    const hark_weight *w;
    const float *b;
    int chunk;
} linear_job;

/* Rows [r0, r1) of W (a whole number of blocks, or the tail), block by block;
 * non-f32 rows are widened into a bounded scratch first. */
static void blocked_rows(const linear_job *j, int r0, int r1)
{
    const hark_weight *w = j->w;
    float *block = w->type == HARK_F32 ? NULL : malloc(sizeof(float) * BLOCK_ROWS * (size_t)w->cols);
    size_t row = hark_row_bytes(w->type, (size_t)w->cols);
    for (int b0 = r0; b0 < r1; b0 += BLOCK_ROWS) {
        int nr = r1 - b0 < BLOCK_ROWS ? r1 - b0 : BLOCK_ROWS;
        const float *wb = (const float *)w->data + (size_t)b0 * w->cols;
        if (w->type != HARK_F32) {
            if (!block)
                return;
            hark_to_f32(block, (const char *)w->data + (size_t)b0 * row, w->type, (size_t)nr * w->cols);
            wb = block;
        }
        if (j->m == 1)
            cblas_sgemv(CblasRowMajor, CblasNoTrans, nr, w->cols, 1.0f, wb, w->cols, j->x, 1, 0.0f,
                        j->y + b0, 1);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, j->m, nr, w->cols, 1.0f, j->x,
                        w->cols, wb, w->cols, 0.0f, j->y + b0, w->rows);
    }
    free(block);
}

static void linear_slice(void *arg, int i)
{
    const linear_job *j = arg;
    const hark_weight *w = j->w;
    int r0 = i * j->chunk, r1 = r0 + j->chunk < w->rows ? r0 + j->chunk : w->rows;
    if (r0 >= r1)
        return;
    if ((w->type == HARK_F16 || w->type == HARK_BF16) && j->m <= HARK_MAX_BATCH)
        /* bandwidth-bound: each stored weight is read once for all m vectors */
        hark_matvec16(j->y, j->x, j->m, w->data, w->type, w->rows, w->cols, r0, r1);
    else if (hark_dtype_is_quantized(w->type) && j->m <= HARK_MAX_BATCH)
        hark_matvec_q(j->y, j->x, j->m, w->data, w->type, w->rows, w->cols, r0, r1);
    else
        blocked_rows(j, r0, r1);
    if (j->b) /* this slice's columns only: the bias is added in parallel too */
        for (int i = 0; i < j->m; i++)
            hark_add(j->y + (size_t)i * w->rows + r0, j->b + r0, (size_t)(r1 - r0));
}

void hark_linear(float *y, const float *x, int m, const hark_weight *w, const float *b)
{
    /* whole blocks per task, a few tasks per thread for balance */
    int threads = hark_pool_threads(), tasks = threads > 1 ? threads * 4 : 1;
    int chunk = (w->rows + tasks - 1) / tasks;
    chunk = (chunk + BLOCK_ROWS - 1) / BLOCK_ROWS * BLOCK_ROWS;
    linear_job job = {y, x, m, w, b, chunk};
    hark_parallel((w->rows + chunk - 1) / chunk, linear_slice, &job, (size_t)m * w->rows * w->cols);
}

void hark_add(float *y, const float *x, size_t n)
{
    hark_add_fast(y, x, n);
}

static void layer_norm_rows(float *y, const float *x, int r0, int r1, int d, const float *g,
                            const float *b)
{
    for (int i = r0; i < r1; i++)
        hark_layer_norm_row(y + (size_t)i * d, x + (size_t)i * d, d, g, b);
}

/* Row-wise and element-wise work in slices of fixed size, so that the
 * threads share it and the results do not depend on how many there are. */
enum { SLICE_ROWS = 64, SLICE_ELEMS = 1 << 16 };

typedef struct rows_job {
    float *y;
    const float *x;
    int m, d;
    const float *g, *b;
} rows_job;

static void layer_norm_slice(void *arg, int i)
{
    const rows_job *j = arg;
    int r0 = i * SLICE_ROWS, r1 = r0 + SLICE_ROWS < j->m ? r0 + SLICE_ROWS : j->m;
    layer_norm_rows(j->y, j->x, r0, r1, j->d, j->g, j->b);
}

void hark_layer_norm(float *y, const float *x, int m, int d, const float *g, const float *b)
{
    rows_job j = {y, x, m, d, g, b};
    hark_parallel((m + SLICE_ROWS - 1) / SLICE_ROWS, layer_norm_slice, &j, (size_t)m * d * 4);
}

typedef struct elems_job {
    float *x;
    size_t n;
} elems_job;

static void gelu_slice(void *arg, int i)
{
    const elems_job *j = arg;
    size_t a = (size_t)i * SLICE_ELEMS, n = j->n - a < SLICE_ELEMS ? j->n - a : SLICE_ELEMS;
    hark_gelu_fast(j->x + a, n);
}

void hark_gelu(float *x, size_t n)
{
    elems_job j = {x, n};
    hark_parallel((int)((n + SLICE_ELEMS - 1) / SLICE_ELEMS), gelu_slice, &j, n * 16);
}

void hark_softmax_rows(float *x, int m, int n)
{
    for (int i = 0; i < m; i++)
        hark_softmax_row(x + (size_t)i * n, n);
}

typedef struct attn_job {
    float *out;
    const float *q, *k, *v;
    int nq, nk, d, dh, causal_offset, n_head, slots;
    int tiled;      /* hark_attn64 register tiles instead of OpenBLAS */
    float *scratch; /* slot_floats() per slot */
} attn_job;

static int block_rows(int nq)
{
    return nq < ATTN_ROWS ? nq : ATTN_ROWS;
}

/* A slot's scratch: a block's scores, rows padded to whole tiles of keys, then
 * the head's packed keys and values for the register tiles. */
static size_t slot_floats(int nq, int nk)
{
    return (size_t)(block_rows(nq) + 2 * HARK_ATTN64_HEAD) * hark_attn64_keys(nk);
}

static void mask_and_softmax(const attn_job *a, int q0, int nq, float *s, int lds)
{
    for (int i = 0; i < nq; i++) {
        float *row = s + (size_t)i * lds;
        if (a->causal_offset >= 0)
            for (int j = q0 + i + a->causal_offset + 1; j < a->nk; j++)
                row[j] = -INFINITY;
        hark_softmax_row(row, a->nk);
    }
}

/* Query rows [q0, q0 + nq) of head h on OpenBLAS: scores, mask, softmax, weighted sum. */
static void attention_rows(const attn_job *a, int h, int q0, int nq, float *s)
{
    int nk = a->nk, d = a->d, dh = a->dh;
    float scale = 1.0f / sqrtf((float)dh);
    const float *q = a->q + (size_t)q0 * d + h * dh;
    float *out = a->out + (size_t)q0 * d + h * dh;
    if (nq == 1) /* one query (a decoding step): matrix-vector, no packing */
        cblas_sgemv(CblasRowMajor, CblasNoTrans, nk, dh, scale, a->k + h * dh, d, q, 1, 0.0f, s, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, nk, dh, scale, q, d, a->k + h * dh,
                    d, 0.0f, s, nk);
    mask_and_softmax(a, q0, nq, s, nk);
    if (nq == 1)
        cblas_sgemv(CblasRowMajor, CblasTrans, nk, dh, 1.0f, a->v + h * dh, d, s, 1, 0.0f, out, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, dh, nk, 1.0f, s, nk,
                    a->v + h * dh, d, 0.0f, out, d);
}

/* The same with register tiles over keys and values packed once per head. */
static void attention_rows_tiled(const attn_job *a, int h, int q0, int nq, float *s, const float *kt,
                                 const float *vp)
{
    int d = a->d, dh = a->dh, lds = hark_attn64_keys(a->nk);
    hark_attn64_scores(s, a->q + (size_t)q0 * d + h * dh, d, nq, kt, a->nk, 1.0f / sqrtf((float)dh));
    mask_and_softmax(a, q0, nq, s, lds);
    hark_attn64_mix(a->out + (size_t)q0 * d + h * dh, d, s, nq, vp, a->nk);
}

/* Blocks of ATTN_ROWS queries: the scores of a block stay in cache, and the
 * encoder's 1500 x 1500 matrix of a head is never materialised whole. */
static void attention_head(const attn_job *a, int h, float *s)
{
    float *kt = s + (size_t)block_rows(a->nq) * hark_attn64_keys(a->nk);
    float *vp = kt + (size_t)HARK_ATTN64_HEAD * hark_attn64_keys(a->nk);
    if (a->tiled) {
        hark_attn64_pack_keys(kt, a->k + h * a->dh, a->d, a->nk);
        hark_attn64_pack_values(vp, a->v + h * a->dh, a->d, a->nk);
    }
    for (int q0 = 0; q0 < a->nq; q0 += ATTN_ROWS) {
        int nq = block_rows(a->nq - q0);
        if (a->tiled)
            attention_rows_tiled(a, h, q0, nq, s, kt, vp);
        else
            attention_rows(a, h, q0, nq, s);
    }
}

/* Slot i computes heads i, i + slots, ...: scratch grows with threads, not heads. */
static void attention_slot(void *arg, int slot)
{
    const attn_job *a = arg;
    for (int h = slot; h < a->n_head; h += a->slots)
        attention_head(a, h, a->scratch + (size_t)slot * slot_floats(a->nq, a->nk));
}

size_t hark_attention_scratch(int nq, int nk, int n_head)
{
    int slots = hark_pool_threads() < n_head ? hark_pool_threads() : n_head;
    return (size_t)slots * slot_floats(nq, nk);
}

void hark_attention(float *out, const float *q, const float *k, const float *v, int nq, int nk,
                    int d, int n_head, int causal_offset, float *scratch)
{
    int slots = hark_pool_threads() < n_head ? hark_pool_threads() : n_head;
    int tiled = nq > 1 && d / n_head == HARK_ATTN64_HEAD && hark_attn64_available();
    attn_job a = {out, q, k, v, nq, nk, d, d / n_head, causal_offset, n_head, slots, tiled, scratch};
    hark_parallel(slots, attention_slot, &a, (size_t)nq * nk * d * 2);
}
