/* Numeric kernels: matrix products on OpenBLAS, LayerNorm, GELU, softmax,
 * attention.  Weights stay in their stored type; f16/bf16 rows are widened to
 * f32 a block at a time so no second full-size copy of a model ever exists. */
#include "kernels/kernels.h"
#include "base/base.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Products through OpenBLAS are cut into a grid of tiles that depends on the
 * shapes only, never on the thread count, so every OpenBLAS call, and so every
 * result, is the same however many threads share them: weight rows in even
 * blocks of at most BLOCK_ROWS (384 rows make two blocks of 192, not 256 + 128),
 * and activation rows in even tiles, as many as it takes for MIN_TILES tiles in
 * all (a 384-row product of 1500 frames is 2 x 4 tiles, not 2 unequal blocks) but
 * no smaller than MIN_M_TILE rows.  A block of f16/bf16 rows is widened to f32
 * for each tile it meets. */
enum { BLOCK_ROWS = 256, MIN_TILES = 8, MIN_M_TILE = 128, ROW_ALIGN = 16, ATTN_ROWS = 128 };
/* Packing a weight block costs about as much as multiplying a few dozen rows by
 * it: fewer rows than this go to OpenBLAS, which multiplies them unpacked. */
enum { MIN_PACKED_M = 64 };
/* Row-wise work in slices of fixed size, so that the threads share it and the
 * results do not depend on how many there are. */
enum { SLICE_ROWS = 64 };

typedef struct linear_job {
    float *y;
    const float *x;
    int m;
    const hark_weight *w;
    const float *b;
    int gelu;     /* GELU after the bias (hark_linear_gelu) */
    int chunk;    /* weight rows per task (stored-type kernels) or per block (grid) */
    int n_blocks; /* weight blocks per activation tile (grid) */
    int m_tile;   /* activation rows per tile (grid) */
    const int8_t *xq; /* block-quantised weights: x quantised (hark_q8_quantize) */
    const float *d8, *s8;
    const hark_packed *packed; /* bf16 / int8 weights (hark_linear_packed), */
    const void *xc;            /* x converted for them, */
    float *sx;                 /* int8: with each row's scale */
} linear_job;

static int ceil_div(int a, int b)
{
    return (a + b - 1) / b;
}

/* The smallest multiple of ROW_ALIGN that cuts n rows into `parts` pieces. */
static int even_chunk(int n, int parts)
{
    return ceil_div(ceil_div(n, parts), ROW_ALIGN) * ROW_ALIGN;
}

/* Bias and GELU on this tile's part only: in parallel, and while it is in cache. */
static void finish_tile(const linear_job *j, int m0, int m1, int r0, int r1)
{
    for (int i = m0; (j->b || j->gelu) && i < m1; i++)
        hark_bias_gelu_row(j->y + (size_t)i * j->w->rows + r0, (size_t)(r1 - r0),
                           j->b ? j->b + r0 : NULL, j->gelu);
}

/* Grid tile i: activation tile i / n_blocks times weight block i % n_blocks. */
static void tile_bounds(const linear_job *j, int i, int *r0, int *nr, int *m0, int *mm)
{
    *r0 = i % j->n_blocks * j->chunk;
    *nr = j->w->rows - *r0 < j->chunk ? j->w->rows - *r0 : j->chunk;
    *m0 = i / j->n_blocks * j->m_tile;
    *mm = j->m - *m0 < j->m_tile ? j->m - *m0 : j->m_tile;
}

static void gemm_tile(void *arg, int i)
{
    const linear_job *j = arg;
    const hark_weight *w = j->w;
    int r0, nr, m0, mm;
    tile_bounds(j, i, &r0, &nr, &m0, &mm);
    const float *wb = (const float *)w->data + (size_t)r0 * w->cols;
    float *block = NULL;
    if (w->type != HARK_F32) {
        block = malloc(sizeof(float) * (size_t)nr * w->cols);
        if (!block)
            return;
        hark_to_f32(block, (const char *)w->data + (size_t)r0 * hark_row_bytes(w->type, (size_t)w->cols),
                    w->type, (size_t)nr * w->cols);
        wb = block;
    }
    const float *x = j->x + (size_t)m0 * w->cols;
    float *y = j->y + (size_t)m0 * w->rows + r0;
    if (mm == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, nr, w->cols, 1.0f, wb, w->cols, x, 1, 0.0f, y, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, mm, nr, w->cols, 1.0f, x, w->cols, wb,
                    w->cols, 0.0f, y, w->rows);
    free(block);
    finish_tile(j, m0, m0 + mm, r0, r0 + nr);
}

/* The same tile by the AVX-512 register tiles (gemm512.c says why): the block
 * of weight rows is packed, from its stored type, once per tile. */
static void packed_tile(void *arg, int i)
{
    const linear_job *j = arg;
    const hark_weight *w = j->w;
    int r0, nr, m0, mm;
    tile_bounds(j, i, &r0, &nr, &m0, &mm);
    float *bp = aligned_alloc(64, sizeof(float) * hark_gemm512_packed_floats(nr, w->cols));
    if (!bp)
        return;
    hark_gemm512_pack(bp, w->data, w->type, r0, nr, w->cols);
    hark_gemm512(j->y + (size_t)m0 * w->rows + r0, w->rows, j->x + (size_t)m0 * w->cols, mm,
                 w->cols, bp, nr, j->b ? j->b + r0 : NULL, j->gelu);
    free(bp);
}

/* The packed path's grid.  Its outputs are plain sums over k however the grid
 * is cut, so the grid may follow the thread count: about two tiles per thread,
 * weight blocks as tall as that allows (each block is packed once per tile),
 * activation tiles only where there are fewer blocks than that. */
static void packed_grid(linear_job *job)
{
    int want = 2 * hark_pool_threads(), rows = job->w->rows;
    int chunk = ceil_div(ceil_div(rows, want), HARK_GEMM512_PANEL) * HARK_GEMM512_PANEL;
    job->chunk = chunk < BLOCK_ROWS ? chunk : BLOCK_ROWS;
    job->n_blocks = ceil_div(rows, job->chunk);
    job->m_tile = even_chunk(job->m, ceil_div(want, job->n_blocks));
}

/* Rows [r0, r1) by the kernels that read the stored type directly: each
 * output is one row's dot product, whatever the split. */
static void stored_type_rows(const linear_job *j, int r0, int r1)
{
    const hark_weight *w = j->w;
    if (w->type == HARK_F16 || w->type == HARK_BF16)
        /* bandwidth-bound: each stored weight is read once for all m vectors */
        hark_matvec16(j->y, j->x, j->m, w->data, w->type, w->rows, w->cols, r0, r1);
    else if (j->xq)
        hark_matvec_q8(j->y, j->xq, j->d8, j->s8, j->m, w->data, w->type, w->rows, w->cols, r0, r1);
    else
        hark_matvec_q(j->y, j->x, j->m, w->data, w->type, w->rows, w->cols, r0, r1);
    finish_tile(j, 0, j->m, r0, r1);
}

/* Rows [i * chunk, ...). */
static void stored_type_slice(void *arg, int i)
{
    const linear_job *j = arg;
    int r0 = i * j->chunk, r1 = r0 + j->chunk < j->w->rows ? r0 + j->chunk : j->w->rows;
    if (r0 < r1)
        stored_type_rows(j, r0, r1);
}

/* Tasks for one product by the stored-type kernels: four a thread for balance,
 * but none under MIN_TASK_BYTES of weights.  Short slices read memory slower
 * (each one a new stream) and each claim moves a cache line between cores: a
 * small q8_0 product in eight tasks on two threads was slower than on one
 * thread (figures: docs/perf-log.md, "Figures behind code comments"). */
static int product_tasks(const hark_weight *w)
{
    enum { MIN_TASK_BYTES = 256 << 10 };
    int threads = hark_pool_threads();
    if (threads == 1)
        return 1;
    size_t fit = hark_row_bytes(w->type, (size_t)w->cols) * (size_t)w->rows / MIN_TASK_BYTES;
    int most = threads * 4;
    return fit >= (size_t)most ? most : fit > (size_t)threads ? (int)fit : threads;
}

/* The activations of a product with block-quantised weights, quantised to
 * q8_0: on the stack for the usual widths (a decode step makes ~40 of these
 * products), on the heap beyond. */
enum { STACK_Q8 = HARK_MAX_BATCH * 2048 }; /* 48 KB: 5 beams of small.en's widest */
typedef struct q8_vectors {
    int8_t *qs;
    float *d8, *s8;
    int on_heap;
    int8_t qs_stack[STACK_Q8];
    float d8_stack[STACK_Q8 / 4], s8_stack[STACK_Q8 / 4];
} q8_vectors;

/* Quantises job's vectors into v and points the job at them; leaves the job on
 * the f32 kernels when there is no memory. */
static void quantise_vectors(linear_job *job, q8_vectors *v)
{
    size_t n = (size_t)job->m * job->w->cols;
    v->on_heap = n > STACK_Q8;
    v->qs = v->on_heap ? malloc(n) : v->qs_stack;
    v->d8 = v->on_heap ? malloc(sizeof(float) * n / 4) : v->d8_stack;
    v->s8 = v->on_heap ? malloc(sizeof(float) * n / 4) : v->s8_stack;
    if (!v->qs || !v->d8 || !v->s8)
        return;
    float *sums = hark_block_has_min(job->w->type) ? v->s8 : NULL;
    hark_q8_quantize(v->qs, v->d8, sums, job->x, job->m, job->w->cols);
    job->xq = v->qs, job->d8 = v->d8, job->s8 = v->s8;
}

static void q8_vectors_free(q8_vectors *v)
{
    if (v->on_heap) {
        free(v->qs);
        free(v->d8);
        free(v->s8);
    }
}

/* Task i of several products on one input: product k's slices follow
 * product k - 1's. */
typedef struct many_job {
    linear_job *jobs;
    int n, tasks[HARK_LINEAR_MANY];
} many_job;

static void many_slice(void *arg, int i)
{
    const many_job *mj = arg;
    int k = 0;
    while (i >= mj->tasks[k])
        i -= mj->tasks[k++];
    stored_type_slice(&mj->jobs[k], i);
}

/* Products of one input x[m][cols] (m <= HARK_MAX_BATCH) by weights of one
 * stored type and width, by the stored-type kernels as one parallel job;
 * block-quantised weights meet the vectors quantised to q8_0 once (what
 * whisper.cpp does too).  A decoder step's q / k / v were three quantisations
 * and three hand-overs to the pool. */
static void stored_type_products(const hark_product *p, int n, const float *x, int m, int gelu)
{
    linear_job jobs[HARK_LINEAR_MANY];
    many_job mj = {jobs, n, {0}};
    q8_vectors v;
    v.on_heap = 0;
    size_t work = 0;
    int total = 0;
    for (int k = 0; k < n; k++) {
        jobs[k] = (linear_job){.y = p[k].y, .x = x, .m = m, .w = p[k].w, .b = p[k].b, .gelu = gelu};
        if (k == 0 && hark_block_bytes(p[0].w->type))
            quantise_vectors(&jobs[0], &v);
        jobs[k].xq = jobs[0].xq, jobs[k].d8 = jobs[0].d8, jobs[k].s8 = jobs[0].s8;
        jobs[k].chunk = even_chunk(p[k].w->rows, product_tasks(p[k].w));
        mj.tasks[k] = ceil_div(p[k].w->rows, jobs[k].chunk);
        total += mj.tasks[k];
        work += (size_t)m * p[k].w->rows * p[k].w->cols;
    }
    hark_parallel(total, many_slice, &mj, work);
    q8_vectors_free(&v);
}

void hark_linear_many(const hark_product *p, int n, const float *x, int m)
{
    int same = n > 0 && n <= HARK_LINEAR_MANY && m > 0 && m <= HARK_MAX_BATCH;
    for (int k = 0; same && k < n; k++)
        same = p[k].w->type == p[0].w->type && p[k].w->cols == p[0].w->cols &&
               p[k].w->type != HARK_F32;
    if (same) {
        stored_type_products(p, n, x, m, 0);
        return;
    }
    for (int k = 0; k < n; k++)
        hark_linear(p[k].y, x, m, p[k].w, p[k].b);
}

static void linear(float *y, const float *x, int m, const hark_weight *w, const float *b, int gelu)
{
    if (m <= 0)
        return;
    size_t work = (size_t)m * w->rows * w->cols;
    if (w->type != HARK_F32 && m <= HARK_MAX_BATCH) {
        hark_product one = {y, w, b};
        stored_type_products(&one, 1, x, m, gelu);
        return;
    }
    linear_job job = {.y = y, .x = x, .m = m, .w = w, .b = b, .gelu = gelu};
    if (m >= MIN_PACKED_M && hark_gemm512_available()) {
        packed_grid(&job);
        hark_parallel(ceil_div(m, job.m_tile) * job.n_blocks, packed_tile, &job, work);
        return;
    }
    job.chunk = even_chunk(w->rows, ceil_div(w->rows, BLOCK_ROWS));
    job.n_blocks = ceil_div(w->rows, job.chunk);
    int m_tiles = ceil_div(MIN_TILES, job.n_blocks), most = ceil_div(m, MIN_M_TILE);
    job.m_tile = even_chunk(m, m_tiles < most ? m_tiles : most);
    hark_parallel(ceil_div(m, job.m_tile) * job.n_blocks, gemm_tile, &job, work);
}

/* A tile of a product by a packed bf16 or int8 weight. */
static void lowp_tile(void *arg, int i)
{
    const linear_job *j = arg;
    int r0, nr, m0, mm;
    tile_bounds(j, i, &r0, &nr, &m0, &mm);
    hark_lowp_product(j->y + (size_t)m0 * j->w->rows + r0, j->w->rows,
                      (const char *)j->xc + hark_lowp_x_bytes(j->packed, m0), j->sx ? j->sx + m0 : NULL,
                      mm, j->packed, r0, nr, j->b ? j->b + r0 : NULL, j->gelu);
}

static void lowp_convert_slice(void *arg, int i)
{
    const linear_job *j = arg;
    int r0 = i * SLICE_ROWS, r1 = r0 + SLICE_ROWS < j->m ? r0 + SLICE_ROWS : j->m;
    hark_lowp_convert((char *)j->xc + hark_lowp_x_bytes(j->packed, r0), j->sx ? j->sx + r0 : NULL,
                      j->x + (size_t)r0 * j->w->cols, r1 - r0, j->packed);
}

/* The packed f32 path's grid (its outputs, too, are sums over k in an order
 * no split changes). */
size_t hark_linear_packed_scratch(const hark_packed *p, int m)
{
    size_t x_bytes = (hark_lowp_x_bytes(p, m) + 63) / 64 * 64;
    return x_bytes + (p->prec == HARK_PREC_INT8 ? sizeof(float) * (size_t)m : 0);
}

/* The int8 row scales' place in a scratch: after the converted rows. */
static float *scratch_scales(const hark_packed *p, int m, void *scratch)
{
    if (p->prec != HARK_PREC_INT8)
        return NULL;
    return (float *)(void *)((char *)scratch + (hark_lowp_x_bytes(p, m) + 63) / 64 * 64);
}

void hark_linear_packed_convert(const float *x, int m, const hark_packed *p, void *scratch)
{
    hark_weight shape = {NULL, HARK_F32, p->rows, p->cols};
    linear_job job = {.x = x, .m = m, .w = &shape, .packed = p, .xc = scratch,
                      .sx = scratch_scales(p, m, scratch)};
    hark_parallel(ceil_div(m, SLICE_ROWS), lowp_convert_slice, &job, (size_t)m * p->cols);
}

void hark_linear_packed_run(const hark_packed_product *p, int n, int m, void *scratch)
{
    for (int i = 0; i < n && m > 0; i++) { /* each product's tiles over the one conversion */
        hark_weight shape = {NULL, HARK_F32, p[i].w->rows, p[i].w->cols};
        linear_job job = {.y = p[i].y, .m = m, .w = &shape, .b = p[i].b, .gelu = p[i].gelu,
                          .packed = p[i].w, .xc = scratch, .sx = scratch_scales(p[i].w, m, scratch)};
        packed_grid(&job);
        hark_parallel(ceil_div(m, job.m_tile) * job.n_blocks, lowp_tile, &job,
                      (size_t)m * shape.rows * shape.cols);
    }
}

void hark_linear_packed_many(const hark_packed_product *p, int n, const float *x, int m,
                             void *scratch)
{
    if (m <= 0 || n <= 0)
        return;
    void *own = scratch ? NULL : malloc(hark_linear_packed_scratch(p[0].w, m));
    void *xc = scratch ? scratch : own;
    if (!xc)
        return;
    hark_linear_packed_convert(x, m, p[0].w, xc);
    hark_linear_packed_run(p, n, m, xc);
    free(own);
}

void hark_linear_packed(float *y, const float *x, int m, const hark_packed *p, const float *b,
                        int gelu, void *scratch)
{
    hark_packed_product one = {y, p, b, gelu};
    hark_linear_packed_many(&one, 1, x, m, scratch);
}

void hark_linear(float *y, const float *x, int m, const hark_weight *w, const float *b)
{
    linear(y, x, m, w, b, 0);
}

void hark_linear_gelu(float *y, const float *x, int m, const hark_weight *w, const float *b)
{
    linear(y, x, m, w, b, 1);
}

/* ---- groups of rows, each as if alone */

/* Weight rows a tile: the tile stays in cache while every group meets it, so
 * that the weights come from memory once for all groups. */
enum { GROUP_TILE_BYTES = 32 << 10 };

typedef struct grouped_job {
    linear_job jobs[HARK_LINEAR_MANY]; /* each product over all the rows */
    int n, tasks[HARK_LINEAR_MANY];
    const int *m; /* rows of each group */
    int groups;
} grouped_job;

/* Rows [r0, r1) of product all for the m rows from row `at`: the call that
 * product makes for those rows alone (stored_type_products). */
static void group_rows(const linear_job *all, int at, int m, int r0, int r1)
{
    linear_job g = *all;
    size_t cols = (size_t)all->w->cols;
    g.x = all->x + (size_t)at * cols;
    g.y = all->y + (size_t)at * all->w->rows;
    g.m = m;
    if (all->xq) /* quantised per block of 32: a row's blocks are its own */
        g.xq = all->xq + (size_t)at * cols, g.d8 = all->d8 + (size_t)at * cols / 4,
        g.s8 = all->s8 + (size_t)at * cols / 4;
    stored_type_rows(&g, r0, r1);
}

static void grouped_slice(void *arg, int i)
{
    const grouped_job *gj = arg;
    int k = 0;
    while (i >= gj->tasks[k])
        i -= gj->tasks[k++];
    const linear_job *j = &gj->jobs[k];
    const hark_weight *w = j->w;
    int r0 = i * j->chunk, r1 = r0 + j->chunk < w->rows ? r0 + j->chunk : w->rows;
    int tile = (int)(GROUP_TILE_BYTES / hark_row_bytes(w->type, (size_t)w->cols));
    tile = tile > ROW_ALIGN ? tile : ROW_ALIGN;
    for (int t0 = r0; t0 < r1; t0 += tile)
        for (int g = 0, at = 0; g < gj->groups; at += gj->m[g++])
            group_rows(j, at, gj->m[g], t0, t0 + tile < r1 ? t0 + tile : r1);
}

/* Whether the groups can share one pass over stored-type weights. */
static int groups_share(const hark_product *p, int n, const int *m, int groups)
{
    int ok = n > 0 && n <= HARK_LINEAR_MANY;
    for (int g = 0; ok && g < groups; g++)
        ok = m[g] > 0 && m[g] <= HARK_MAX_BATCH;
    for (int k = 0; ok && k < n; k++)
        ok = p[k].w->type == p[0].w->type && p[k].w->cols == p[0].w->cols &&
             p[k].w->type != HARK_F32;
    return ok;
}

static void grouped_products(const hark_product *p, int n, const float *x, int rows, const int *m,
                             int groups, int gelu)
{
    grouped_job gj = {.n = n, .m = m, .groups = groups};
    q8_vectors v;
    v.on_heap = 0;
    size_t work = 0;
    int total = 0;
    for (int k = 0; k < n; k++) {
        linear_job *j = &gj.jobs[k];
        *j = (linear_job){.y = p[k].y, .x = x, .m = rows, .w = p[k].w, .b = p[k].b, .gelu = gelu};
        if (k == 0 && hark_block_bytes(p[0].w->type))
            quantise_vectors(j, &v);
        j->xq = gj.jobs[0].xq, j->d8 = gj.jobs[0].d8, j->s8 = gj.jobs[0].s8;
        j->chunk = even_chunk(p[k].w->rows, product_tasks(p[k].w));
        gj.tasks[k] = ceil_div(p[k].w->rows, j->chunk);
        total += gj.tasks[k];
        work += (size_t)rows * p[k].w->rows * p[k].w->cols;
    }
    hark_parallel(total, grouped_slice, &gj, work);
    q8_vectors_free(&v);
}

void hark_linear_groups(const hark_product *p, int n, const float *x, const int *m, int groups,
                        int gelu)
{
    int rows = 0;
    for (int g = 0; g < groups; g++)
        rows += m[g];
    if (groups > 1 && groups_share(p, n, m, groups)) {
        grouped_products(p, n, x, rows, m, groups, gelu);
        return;
    }
    for (int g = 0, at = 0; g < groups; at += m[g++]) {
        hark_product q[HARK_LINEAR_MANY];
        for (int k = 0; k < n && k < HARK_LINEAR_MANY; k++)
            q[k] = (hark_product){p[k].y + (size_t)at * p[k].w->rows, p[k].w, p[k].b};
        const float *xg = x + (size_t)at * p[0].w->cols;
        if (gelu)
            hark_linear_gelu(q[0].y, xg, m[g], q[0].w, q[0].b);
        else
            hark_linear_many(q, n, xg, m[g]);
    }
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

void hark_softmax_rows(float *x, int m, int n)
{
    for (int i = 0; i < m; i++)
        hark_softmax_row(x + (size_t)i * n, n);
}

typedef struct attn_job {
    float *out;
    const float *q, *k, *v;
    int nq, nk, d, dh, causal_offset, n_head, slots;
    int tiled;      /* hark_attn64 register tiles instead of OpenBLAS, */
    int bf16;       /* or hark_attn16's (the thread's precision lower than f32) */
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

/* The same in bf16 (attn16.c), keys and values packed as it takes them. */
static void attention_rows_bf16(const attn_job *a, int h, int q0, int nq, float *s,
                                const uint16_t *kb, const uint16_t *vb)
{
    int d = a->d, dh = a->dh, lds = hark_attn64_keys(a->nk);
    hark_attn16_scores(s, lds, a->q + (size_t)q0 * d + h * dh, d, nq, kb, a->nk,
                       1.0f / sqrtf((float)dh));
    mask_and_softmax(a, q0, nq, s, lds);
    hark_attn16_mix(a->out + (size_t)q0 * d + h * dh, d, s, lds, nq, vb, a->nk);
}

/* Blocks of ATTN_ROWS queries: the scores of a block stay in cache, and the
 * encoder's 1500 x 1500 matrix of a head is never materialised whole. */
static void attention_head(const attn_job *a, int h, float *s)
{
    float *kt = s + (size_t)block_rows(a->nq) * hark_attn64_keys(a->nk);
    float *vp = kt + (size_t)HARK_ATTN64_HEAD * hark_attn64_keys(a->nk);
    if (a->bf16) { /* bf16 keys and values take half of kt and vp's room */
        uint16_t *kb = (uint16_t *)(void *)kt, *vb = (uint16_t *)(void *)vp;
        hark_attn16_pack_keys(kb, a->k + h * a->dh, a->d, a->nk);
        hark_attn16_pack_values(vb, a->v + h * a->dh, a->d, a->nk);
        for (int q0 = 0; q0 < a->nq; q0 += ATTN_ROWS)
            attention_rows_bf16(a, h, q0, block_rows(a->nq - q0), s, kb, vb);
        return;
    }
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
    hark_attention_at(out, q, k, v, nq, nk, d, n_head, causal_offset, scratch, HARK_PREC_F32);
}

void hark_attention_at(float *out, const float *q, const float *k, const float *v, int nq, int nk,
                       int d, int n_head, int causal_offset, float *scratch, hark_prec prec)
{
    int slots = hark_pool_threads() < n_head ? hark_pool_threads() : n_head;
    int tiled = nq > 1 && d / n_head == HARK_ATTN64_HEAD && hark_attn64_available();
    int bf16 = tiled && prec != HARK_PREC_F32 && hark_attn16_available();
    attn_job a = {out, q, k, v, nq, nk, d, d / n_head, causal_offset, n_head, slots, tiled, bf16,
                  scratch};
    hark_parallel(slots, attention_slot, &a, (size_t)nq * nk * d * 2);
}
