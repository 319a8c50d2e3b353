/* Whisper's text decoder: token + learned position embeddings, blocks of
 * masked self-attention (KV cache), cross-attention over the encoder output
 * (K/V projected once per window), MLP; logits tied to the token embedding. */
#include <cblas.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "nn/nn.h"
#include "kernels/kernels.h"
#include "base/base.h"

enum { CROSS_ROWS = 128 };

/* Scratch of one slot: widened K and V of a head and a block of scores (which
 * also covers the few-query path's 8 score rows and 16 rows of d_head). */
static size_t cross16_slot_floats(int ac, int dh)
{
    return 2 * (size_t)ac * dh + (size_t)CROSS_ROWS * ac + 16 * (size_t)dh;
}

int hark_cross_init(hark_cross *c, const hark_model *m)
{
    size_t n = (size_t)m->hp.n_text_layer * m->hp.n_audio_ctx * m->hp.n_text_state;
    memset(c, 0, sizeof *c);
    if (m->dec[0].cross.k.type == HARK_F32) { /* f32 weights: f32 all the way */
        c->k = hark_alloc_populated(n * sizeof(float));
        c->v = hark_alloc_populated(n * sizeof(float));
    } else {
        c->k16 = hark_alloc_populated(n * sizeof(uint16_t));
        c->v16 = hark_alloc_populated(n * sizeof(uint16_t));
        c->staging = hark_alloc_populated((size_t)m->hp.n_audio_ctx * m->hp.n_text_state * sizeof(float));
    }
    if (!(c->k && c->v) && !(c->k16 && c->v16 && c->staging)) {
        hark_cross_free(c);
        return HARK_ERR_NOMEM;
    }
    return 0;
}

void hark_cross_free(hark_cross *c)
{
    free(c->k);
    free(c->v);
    free(c->k16);
    free(c->v16);
    free(c->staging);
    free(c->lowp);
    memset(c, 0, sizeof *c);
}

/* The staging [ac][d] as per-head f16, transposed: V as [h][dh][ac], K in
 * tiles of KEY_TILE frames, [h][tile][dh][frames of the tile] (how the
 * cross-attention kernels read them: a query's scores run down a head's 64
 * channels a few dozen frames at a time, so untiled K was 64 strided streams;
 * one tile is one contiguous stream, a quarter faster from memory).  Tiles of PACK_T frames x PACK_I channels are narrowed row by row
 * (vectorised) into a buffer in L1, then written out a channel at a time,
 * PACK_T frames contiguous: the whole thing, done serially with a stride of ac
 * between writes, was half the cross K/V projection's time and none of it
 * shared by threads (figures: docs/perf-log.md, "Figures behind code comments"). */
enum { PACK_T = 64, PACK_I = 64, KEY_TILE = 128 }; /* PACK_T divides KEY_TILE */

typedef struct pack_job {
    uint16_t *dst;
    const float *src;
    int ac, d, dh, t_tiles, i_tiles;
    int tile; /* frames a tile of dst: KEY_TILE for K, ac (one tile) for V */
} pack_job;

/* Where channel i of a head's frame t0 goes, in a head of ac frames stored
 * in tiles of `tile` frames (the last tile narrower), [tile][dh][frames]. */
static int tile_width(int start, int ac, int tile)
{
    return ac - start < tile ? ac - start : tile;
}

static size_t tiled_at(int t0, int i, int ac, int dh, int tile)
{
    int start = t0 / tile * tile;
    return (size_t)start * dh + (size_t)i * tile_width(start, ac, tile) + (size_t)(t0 - start);
}

static void pack_tile(void *arg, int task)
{
    const pack_job *j = arg;
    int per_head = j->t_tiles * j->i_tiles, h = task / per_head, rest = task % per_head;
    int t0 = rest / j->i_tiles * PACK_T, i0 = rest % j->i_tiles * PACK_I;
    int nt = j->ac - t0 < PACK_T ? j->ac - t0 : PACK_T, ni = j->dh - i0 < PACK_I ? j->dh - i0 : PACK_I;
    uint16_t half[PACK_T][PACK_I];
    for (int t = 0; t < nt; t++)
        hark_narrow_f16(half[t], j->src + (size_t)(t0 + t) * j->d + h * j->dh + i0, (size_t)ni);
    for (int i = 0; i < ni; i++) {
        uint16_t *out = j->dst + (size_t)h * j->dh * j->ac + tiled_at(t0, i0 + i, j->ac, j->dh, j->tile);
        for (int t = 0; t < nt; t++)
            out[t] = half[t][i];
    }
}

static void pack_heads(uint16_t *dst, const float *src, int ac, int d, int heads, int tile)
{
    int dh = d / heads;
    pack_job j = {dst, src, ac, d, dh, (ac + PACK_T - 1) / PACK_T, (dh + PACK_I - 1) / PACK_I, tile};
    hark_parallel(heads * j.t_tiles * j.i_tiles, pack_tile, &j, (size_t)ac * d * 8);
}

/* A head's tiled f16 K as f32 [dh][ac], untiled. */
static void widen_keys(float *k, const uint16_t *k16, int dh, int ac)
{
    for (int start = 0; start < ac; start += KEY_TILE)
        for (int i = 0; i < dh; i++)
            hark_widen_f16(k + (size_t)i * ac + start, k16 + tiled_at(start, i, ac, dh, KEY_TILE),
                           (size_t)tile_width(start, ac, KEY_TILE));
}

/* y[j][t] = q[j] . K[t] for m queries of one head, K tiled (pack_heads). */
static void key_scores(float *y, const float *q, int m, const uint16_t *k, int dh, int ac)
{
    for (int start = 0; start < ac; start += KEY_TILE)
        hark_vecmat16(y + start, (size_t)ac, q, m, k + (size_t)start * dh, dh,
                      tile_width(start, ac, KEY_TILE));
}

/* At a lower precision (the thread's, with its packed set): the encoder's output
 * converted once, then each layer's K and V projected from it; 0 when done,
 * -1 to take the f32 path (f32, no set, no memory). */
static int cross_set_lowp(const hark_model *m, hark_cross *c, const float *enc_out)
{
    const hark_packed *pk = hark_model_packed(m, hark_precision_current());
    int ac = m->hp.n_audio_ctx, d = m->hp.n_text_state, heads = m->hp.n_text_head;
    int at = hark_model_packed_count(m) - 2 * m->hp.n_text_layer; /* the first cross K */
    if (!pk || (!c->lowp && !(c->lowp = malloc(hark_linear_packed_scratch(&pk[at], ac)))))
        return -1;
    hark_linear_packed_convert(enc_out, ac, &pk[at], c->lowp);
    for (int l = 0; l < m->hp.n_text_layer; l++) {
        const hark_attn *a = &m->dec[l].cross;
        size_t off = (size_t)l * ac * d;
        hark_packed_product k = {c->k ? c->k + off : c->staging, &pk[at + 2 * l], NULL, 0};
        hark_packed_product v = {c->v ? c->v + off : c->staging, &pk[at + 2 * l + 1], a->v_b, 0};
        hark_linear_packed_run(&k, 1, ac, c->lowp);
        if (!c->k)
            pack_heads(c->k16 + off, c->staging, ac, d, heads, KEY_TILE);
        hark_linear_packed_run(&v, 1, ac, c->lowp);
        if (!c->k)
            pack_heads(c->v16 + off, c->staging, ac, d, heads, ac);
    }
    c->computations++;
    return 0;
}

void hark_cross_set(const hark_model *m, hark_cross *c, const float *enc_out)
{
    size_t d = (size_t)m->hp.n_text_state, ac = (size_t)m->hp.n_audio_ctx;
    int heads = m->hp.n_text_head;
    if (hark_precision_current() != HARK_PREC_F32 && cross_set_lowp(m, c, enc_out) == 0)
        return;
    for (int l = 0; l < m->hp.n_text_layer; l++) {
        const hark_attn *a = &m->dec[l].cross;
        if (c->k) {
            hark_linear(c->k + l * ac * d, enc_out, (int)ac, &a->k, NULL);
            hark_linear(c->v + l * ac * d, enc_out, (int)ac, &a->v, a->v_b);
            continue;
        }
        hark_linear(c->staging, enc_out, (int)ac, &a->k, NULL);
        pack_heads(c->k16 + l * ac * d, c->staging, (int)ac, (int)d, heads, KEY_TILE);
        hark_linear(c->staging, enc_out, (int)ac, &a->v, a->v_b);
        pack_heads(c->v16 + l * ac * d, c->staging, (int)ac, (int)d, heads, (int)ac);
    }
    c->computations++;
}

int hark_kv_init(hark_kv *kv, const hark_model *m, const hark_cross *cross)
{
    const hark_hparams *hp = &m->hp;
    size_t d = (size_t)hp->n_text_state, L = (size_t)hp->n_text_layer;
    size_t tc = (size_t)hp->n_text_ctx;
    memset(kv, 0, sizeof *kv);
    kv->cross = cross;
    kv->self_k = malloc(L * tc * d * sizeof(float));
    kv->self_v = malloc(L * tc * d * sizeof(float));
    kv->scratch = malloc(hark_decode_scratch_floats(m, (int)tc) * sizeof(float));
    if (!kv->self_k || !kv->self_v || !kv->scratch) {
        hark_kv_free(kv);
        return HARK_ERR_NOMEM;
    }
    return 0;
}

void hark_kv_free(hark_kv *kv)
{
    free(kv->self_k);
    free(kv->self_v);
    free(kv->scratch);
    memset(kv, 0, sizeof *kv);
}

void hark_kv_copy(const hark_model *m, hark_kv *dst, const hark_kv *src)
{
    size_t d = (size_t)m->hp.n_text_state, tc = (size_t)m->hp.n_text_ctx;
    for (int l = 0; l < m->hp.n_text_layer; l++) {
        memcpy(dst->self_k + l * tc * d, src->self_k + l * tc * d, src->n_past * d * sizeof(float));
        memcpy(dst->self_v + l * tc * d, src->self_v + l * tc * d, src->n_past * d * sizeof(float));
    }
    dst->n_past = src->n_past;
}

typedef struct step_buf {
    float *x, *h, *q, *att, *mlp, *scores;
} step_buf;

static step_buf carve(float *s, int n, int d)
{
    step_buf b;
    b.x = s;
    b.h = b.x + (size_t)n * d;
    b.q = b.h + (size_t)n * d;
    b.att = b.q + (size_t)n * d;
    b.mlp = b.att + (size_t)n * d;
    b.scores = b.mlp + (size_t)n * 4 * d;
    return b;
}

static void self_attention(const hark_model *m, hark_kv *kv, int l, step_buf *b, int n)
{
    const hark_attn *a = &m->dec[l].attn;
    int d = m->hp.n_text_state, past = kv->n_past;
    size_t base = (size_t)l * m->hp.n_text_ctx * d;
    float *k = kv->self_k + base, *v = kv->self_v + base;
    hark_layer_norm(b->h, b->x, n, d, a->ln_w, a->ln_b);
    hark_product qkv[3] = {{b->q, &a->q, a->q_b}, {k + (size_t)past * d, &a->k, NULL},
                           {v + (size_t)past * d, &a->v, a->v_b}};
    hark_linear_many(qkv, 3, b->h, n);
    if (kv->probe)
        kv->probe->self_qk(kv->probe->user, l, b->q, k, n, past);
    hark_attention(b->att, b->q, k, v, n, past + n, d, m->hp.n_text_head, past, b->scores);
    hark_linear(b->h, b->att, n, &a->o, a->o_b);
    hark_add(b->x, b->h, (size_t)n * d);
}

static void scores16(const hark_model *m, const hark_cross *c, int l, int h, const float *q,
                     int n, float *out, float *buf);

/* Stores q.k^T / sqrt(d_head) of this layer's alignment heads (word timing). */
static void capture_scores(const hark_model *m, hark_kv *kv, int l, const float *q, int n,
                           float *buf)
{
    int ac = m->hp.n_audio_ctx;
    for (int i = 0; i < m->n_alignment_heads; i++) {
        if (m->alignment_heads[i][0] != l)
            continue;
        float *out = kv->capture + ((size_t)i * m->hp.n_text_ctx + kv->n_past) * ac;
        hark_cross_head_scores(m, kv->cross, l, m->alignment_heads[i][1], q, n, out, buf);
    }
}

void hark_cross_head_scores(const hark_model *m, const hark_cross *c, int l, int h, const float *q,
                            int n, float *out, float *buf)
{
    int d = m->hp.n_text_state, ac = m->hp.n_audio_ctx, dh = d / m->hp.n_text_head;
    if (c->k16)
        scores16(m, c, l, h, q, n, out, buf);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, ac, dh, 1.0f / sqrtf((float)dh),
                    q + h * dh, d, c->k + (size_t)l * ac * d + h * dh, d, 0.0f, out, ac);
}

/* ---------------------------------------------------------- f16 cross K/V */


typedef struct cross16_job {
    const hark_model *m;
    const hark_cross *c;
    int l, n;
    const float *q;   /* [n][d] */
    float *att;       /* [n][d] */
    float *capture;   /* alignment: [n][ac] of this head, or NULL */
    float *scratch;   /* per slot: 8 * ac + 16 * dh floats */
    int slots;
} cross16_job;

/* Head h for queries [i0, i0 + k), k <= HARK_MAX_BATCH. */
static void cross16_queries(const cross16_job *j, int h, int i0, int k, float *buf)
{
    int d = j->m->hp.n_text_state, ac = j->m->hp.n_audio_ctx, dh = d / j->m->hp.n_text_head;
    size_t base = ((size_t)j->l * j->m->hp.n_text_head + h) * (size_t)ac * dh;
    float *scores = buf, *qh = scores + (size_t)HARK_MAX_BATCH * ac, *out = qh + (size_t)HARK_MAX_BATCH * dh;
    float scale = 1.0f / sqrtf((float)dh);
    for (int i = 0; i < k; i++)
        for (int t = 0; t < dh; t++)
            qh[i * dh + t] = j->q[(size_t)(i0 + i) * d + h * dh + t] * scale;
    key_scores(scores, qh, k, j->c->k16 + base, dh, ac);
    hark_softmax_rows(scores, k, ac);
    hark_matvec16(out, scores, k, j->c->v16 + base, HARK_F16, dh, ac, 0, dh);
    for (int i = 0; i < k; i++)
        memcpy(j->att + (size_t)(i0 + i) * d + h * dh, out + (size_t)i * dh, sizeof(float) * dh);
}

/* Many queries (a prompt): widen the head's K and V once and use sgemm, 128
 * queries at a time, instead of re-reading f16 K/V for every 8 queries. */
static void cross16_many(const cross16_job *j, int h, float *buf)
{
    int d = j->m->hp.n_text_state, ac = j->m->hp.n_audio_ctx, dh = d / j->m->hp.n_text_head;
    size_t base = ((size_t)j->l * j->m->hp.n_text_head + h) * (size_t)ac * dh;
    float *k = buf, *vt = k + (size_t)ac * dh, *scores = vt + (size_t)ac * dh;
    widen_keys(k, j->c->k16 + base, dh, ac);
    hark_widen_f16(vt, j->c->v16 + base, (size_t)ac * dh);
    for (int i0 = 0; i0 < j->n; i0 += CROSS_ROWS) {
        int rows = j->n - i0 < CROSS_ROWS ? j->n - i0 : CROSS_ROWS;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, ac, dh, 1.0f / sqrtf((float)dh),
                    j->q + (size_t)i0 * d + h * dh, d, k, ac, 0.0f, scores, ac);
        hark_softmax_rows(scores, rows, ac);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, dh, ac, 1.0f, scores, ac, vt,
                    ac, 0.0f, j->att + (size_t)i0 * d + h * dh, d);
    }
}

static void cross16_slot(void *arg, int slot)
{
    const cross16_job *j = arg;
    int ac = j->m->hp.n_audio_ctx, dh = j->m->hp.n_text_state / j->m->hp.n_text_head;
    float *buf = j->scratch + (size_t)slot * cross16_slot_floats(ac, dh);
    for (int h = slot; h < j->m->hp.n_text_head; h += j->slots) {
        if (j->n > HARK_MAX_BATCH) {
            cross16_many(j, h, buf);
            continue;
        }
        for (int i0 = 0; i0 < j->n; i0 += HARK_MAX_BATCH)
            cross16_queries(j, h, i0, j->n - i0 < HARK_MAX_BATCH ? j->n - i0 : HARK_MAX_BATCH, buf);
    }
}

static void cross_attention16(const hark_model *m, const hark_cross *c, int l, const float *q,
                              float *att, int n, float *scratch)
{
    int heads = m->hp.n_text_head, threads = hark_pool_threads();
    cross16_job j = {m, c, l, n, q, att, NULL, scratch, threads < heads ? threads : heads};
    hark_parallel(j.slots, cross16_slot, &j, (size_t)n * m->hp.n_audio_ctx * m->hp.n_text_state);
}

/* Pre-softmax scores of alignment head h in layer l for n queries (f16 K). */
static void scores16(const hark_model *m, const hark_cross *c, int l, int h, const float *q,
                     int n, float *out, float *buf)
{
    int d = m->hp.n_text_state, ac = m->hp.n_audio_ctx, dh = d / m->hp.n_text_head;
    size_t base = ((size_t)l * m->hp.n_text_head + h) * (size_t)ac * dh;
    float scale = 1.0f / sqrtf((float)dh);
    for (int i0 = 0; i0 < n; i0 += HARK_MAX_BATCH) {
        int k = n - i0 < HARK_MAX_BATCH ? n - i0 : HARK_MAX_BATCH;
        for (int i = 0; i < k; i++)
            for (int t = 0; t < dh; t++)
                buf[i * dh + t] = q[(size_t)(i0 + i) * d + h * dh + t] * scale;
        key_scores(out + (size_t)i0 * ac, buf, k, c->k16 + base, dh, ac);
    }
}

static void cross_attention(const hark_model *m, hark_kv *kv, int l, step_buf *b, int n)
{
    const hark_attn *a = &m->dec[l].cross;
    int d = m->hp.n_text_state, ac = m->hp.n_audio_ctx;
    size_t base = (size_t)l * ac * d;
    hark_layer_norm(b->h, b->x, n, d, a->ln_w, a->ln_b);
    hark_linear(b->q, b->h, n, &a->q, a->q_b);
    if (kv->capture)
        capture_scores(m, kv, l, b->q, n, b->scores);
    if (kv->probe)
        kv->probe->cross_q(kv->probe->user, l, b->q, n, kv->n_past);
    if (kv->cross->k16)
        cross_attention16(m, kv->cross, l, b->q, b->att, n, b->scores);
    else
        hark_attention(b->att, b->q, kv->cross->k + base, kv->cross->v + base, n, ac, d,
                       m->hp.n_text_head, -1, b->scores);
    hark_linear(b->h, b->att, n, &a->o, a->o_b);
    hark_add(b->x, b->h, (size_t)n * d);
}

static void mlp(const hark_block *blk, step_buf *b, int n, int d)
{
    hark_layer_norm(b->h, b->x, n, d, blk->mlp_ln_w, blk->mlp_ln_b);
    hark_linear_gelu(b->mlp, b->h, n, &blk->fc1, blk->fc1_b);
    hark_linear(b->h, b->mlp, n, &blk->fc2, blk->fc2_b);
    hark_add(b->x, b->h, (size_t)n * d);
}

static void embed(const hark_model *m, const int *tokens, int n, int past, float *x)
{
    int d = m->hp.n_text_state;
    size_t bytes = hark_row_bytes(m->tok_emb.type, (size_t)d);
    for (int i = 0; i < n; i++) {
        float *row = x + (size_t)i * d;
        hark_to_f32(row, (const char *)m->tok_emb.data + (size_t)tokens[i] * bytes,
                    m->tok_emb.type, (size_t)d);
        hark_add(row, m->dec_pos + (size_t)(past + i) * d, (size_t)d);
    }
}

/* When the parts are timed: adds the time since t0 to *part; returns now. */
static double lap(double *part, double t0)
{
    double t = hark_now_s();
    *part += t - t0;
    return t;
}

/* n tokens through the decoder; the logits of the last row, or (states) every
 * row's final layer-normed state. */
static int decode_rows(const hark_model *m, hark_kv *kv, const int *tokens, int n, float *logits,
                       float *states)
{
    int d = m->hp.n_text_state;
    if (n <= 0 || kv->n_past + n > m->hp.n_text_ctx)
        return HARK_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= m->hp.n_vocab)
            return HARK_ERR_ARG;
    step_buf b = carve(kv->scratch, n, d);
    hark_decode_split *sp = kv->split;
    embed(m, tokens, n, kv->n_past, b.x);
    double t = sp ? hark_now_s() : 0;
    for (int l = 0; l < m->hp.n_text_layer; l++) {
        self_attention(m, kv, l, &b, n);
        t = sp ? lap(&sp->self_attn, t) : 0;
        cross_attention(m, kv, l, &b, n);
        t = sp ? lap(&sp->cross_attn, t) : 0;
        mlp(&m->dec[l], &b, n, d);
        t = sp ? lap(&sp->mlp, t) : 0;
        if (kv->probe)
            kv->probe->residual(kv->probe->user, l, b.x, n, kv->n_past);
    }
    kv->n_past += n;
    if (states)
        hark_layer_norm(states, b.x, n, d, m->dec_ln_w, m->dec_ln_b);
    if (logits) {
        float *last = b.x + (size_t)(n - 1) * d;
        hark_layer_norm(b.h, last, 1, d, m->dec_ln_w, m->dec_ln_b);
        hark_linear(logits, b.h, 1, &m->tok_emb, NULL);
    }
    if (sp)
        lap(&sp->logits, t);
    return 0;
}

int hark_decode(const hark_model *m, hark_kv *kv, const int *tokens, int n, float *logits)
{
    return decode_rows(m, kv, tokens, n, logits, NULL);
}

int hark_decode_states(const hark_model *m, hark_kv *kv, const int *tokens, int n, float *states)
{
    return decode_rows(m, kv, tokens, n, NULL, states);
}

/* ---------------------------------------------------------- batched step */

/* The sequences of one step in groups: group g is the next size[g] rows
 * (<= HARK_MAX_BATCH), all reading the cross K/V of its first row.  Every
 * product runs on each group as if it were alone (hark_linear_groups), so a
 * row's bits depend on its own group only, never on the others. */
typedef struct step_groups {
    const int *size;
    int count;
} step_groups;

/* Self-attention of row i against sequence i's own cache. */
static void batch_self_attention(const hark_model *m, hark_kv **kvs, int l, step_buf *b, int n,
                                 const step_groups *gs)
{
    const hark_attn *a = &m->dec[l].attn;
    int d = m->hp.n_text_state;
    size_t base = (size_t)l * m->hp.n_text_ctx * d;
    hark_layer_norm(b->h, b->x, n, d, a->ln_w, a->ln_b);
    /* new keys, then values, in the MLP buffer */
    hark_product qkv[3] = {{b->q, &a->q, a->q_b}, {b->mlp, &a->k, NULL},
                           {b->mlp + (size_t)n * d, &a->v, a->v_b}};
    hark_linear_groups(qkv, 3, b->h, gs->size, gs->count, 0);
    for (int i = 0; i < n; i++) {
        hark_kv *kv = kvs[i];
        float *k = kv->self_k + base, *v = kv->self_v + base;
        memcpy(k + (size_t)kv->n_past * d, b->mlp + (size_t)i * d, sizeof(float) * d);
        memcpy(v + (size_t)kv->n_past * d, b->mlp + (size_t)(n + i) * d, sizeof(float) * d);
        hark_attention(b->att + (size_t)i * d, b->q + (size_t)i * d, k, v, 1, kv->n_past + 1, d,
                       m->hp.n_text_head, kv->n_past, b->scores);
    }
    hark_product o = {b->h, &a->o, a->o_b};
    hark_linear_groups(&o, 1, b->att, gs->size, gs->count, 0);
    hark_add(b->x, b->h, (size_t)n * d);
}

/* Each group's queries in one pass over its window's keys and values. */
static void batch_cross_attention(const hark_model *m, hark_kv **kvs, int l, step_buf *b, int n,
                                  const step_groups *gs)
{
    const hark_attn *a = &m->dec[l].cross;
    int d = m->hp.n_text_state, ac = m->hp.n_audio_ctx;
    size_t base = (size_t)l * ac * d;
    hark_layer_norm(b->h, b->x, n, d, a->ln_w, a->ln_b);
    hark_product q = {b->q, &a->q, a->q_b};
    hark_linear_groups(&q, 1, b->h, gs->size, gs->count, 0);
    for (int g = 0, at = 0; g < gs->count; at += gs->size[g++]) {
        const hark_cross *cross = kvs[at]->cross;
        float *qg = b->q + (size_t)at * d, *att = b->att + (size_t)at * d;
        if (cross->k16)
            cross_attention16(m, cross, l, qg, att, gs->size[g], b->scores);
        else
            hark_attention(att, qg, cross->k + base, cross->v + base, gs->size[g], ac, d,
                           m->hp.n_text_head, -1, b->scores);
    }
    hark_product o = {b->h, &a->o, a->o_b};
    hark_linear_groups(&o, 1, b->att, gs->size, gs->count, 0);
    hark_add(b->x, b->h, (size_t)n * d);
}

static void batch_mlp(const hark_block *blk, step_buf *b, int n, int d, const step_groups *gs)
{
    hark_layer_norm(b->h, b->x, n, d, blk->mlp_ln_w, blk->mlp_ln_b);
    hark_product fc1 = {b->mlp, &blk->fc1, blk->fc1_b}, fc2 = {b->h, &blk->fc2, blk->fc2_b};
    hark_linear_groups(&fc1, 1, b->h, gs->size, gs->count, 1);
    hark_linear_groups(&fc2, 1, b->mlp, gs->size, gs->count, 0);
    hark_add(b->x, b->h, (size_t)n * d);
}

size_t hark_decode_scratch_floats(const hark_model *m, int rows)
{
    const hark_hparams *hp = &m->hp;
    size_t d = (size_t)hp->n_text_state, tc = (size_t)hp->n_text_ctx, ac = (size_t)hp->n_audio_ctx;
    size_t att = hark_attention_scratch((int)tc, (int)(tc > ac ? tc : ac), hp->n_text_head);
    /* f16 cross attention: a slot (thread) for each head it handles */
    int threads = hark_pool_threads(), slots = threads < hp->n_text_head ? threads : hp->n_text_head;
    att += (size_t)slots * cross16_slot_floats((int)ac, (int)(d / (size_t)hp->n_text_head));
    return (size_t)rows * d * 8 + att;
}

/* Whether every row can take one more token, and each group shares a cross. */
static int groups_valid(const hark_model *m, hark_kv **kvs, const int *tokens, int n,
                        const step_groups *gs)
{
    int rows = 0;
    for (int g = 0; g < gs->count; g++) {
        if (gs->size[g] < 1 || gs->size[g] > HARK_MAX_BATCH)
            return 0;
        for (int i = rows; i < rows + gs->size[g] && i < n; i++)
            if (kvs[i]->n_past + 1 > m->hp.n_text_ctx || tokens[i] < 0 ||
                tokens[i] >= m->hp.n_vocab || kvs[i]->cross != kvs[rows]->cross)
                return 0;
        rows += gs->size[g];
    }
    return rows == n;
}

int hark_decode_groups(const hark_model *m, hark_kv **kvs, const int *tokens, int n,
                       const int *size, int groups, float *logits, float *scratch)
{
    int d = m->hp.n_text_state;
    step_groups gs = {size, groups};
    if (n < 1 || !groups_valid(m, kvs, tokens, n, &gs))
        return HARK_ERR_ARG;
    step_buf b = carve(scratch, n, d);
    for (int i = 0; i < n; i++)
        embed(m, &tokens[i], 1, kvs[i]->n_past, b.x + (size_t)i * d);
    for (int l = 0; l < m->hp.n_text_layer; l++) {
        batch_self_attention(m, kvs, l, &b, n, &gs);
        batch_cross_attention(m, kvs, l, &b, n, &gs);
        batch_mlp(&m->dec[l], &b, n, d, &gs);
    }
    for (int i = 0; i < n; i++)
        kvs[i]->n_past++;
    hark_layer_norm(b.h, b.x, n, d, m->dec_ln_w, m->dec_ln_b);
    hark_product out = {logits, &m->tok_emb, NULL};
    hark_linear_groups(&out, 1, b.h, size, groups, 0);
    return 0;
}

/* Groups of HARK_MAX_BATCH (the last the rest), up to a sequence's scratch
 * (n_text_ctx rows) at a time. */
int hark_decode_batch(const hark_model *m, hark_kv **kvs, const int *tokens, int n, float *logits)
{
    enum { CAP = 16 };
    int size[CAP], most = m->hp.n_text_ctx / HARK_MAX_BATCH;
    most = most < 1 ? 1 : most > CAP ? CAP : most;
    for (int i = 0; i < n;) {
        int groups = 0, rows = 0;
        for (; groups < most && i + rows < n; groups++) {
            size[groups] = n - i - rows < HARK_MAX_BATCH ? n - i - rows : HARK_MAX_BATCH;
            rows += size[groups];
        }
        int rc = hark_decode_groups(m, kvs + i, tokens + i, rows, size, groups,
                                    logits + (size_t)i * m->hp.n_vocab, kvs[i]->scratch);
        if (rc)
            return rc;
        i += rows;
    }
    return 0;
}
