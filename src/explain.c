/* hark explain's trace of one window.  The transcription runs as always; after
 * the window asked for is decoded, its mel goes through the encoder again and the
 * tokens it took go through the decoder again, one step at a time as the search
 * fed them, against the window's own cross K/V, with a probe (nn.h) that reads
 * each layer's q, k and residual stream.  From those it records softmax(q k^T /
 * sqrt(d_head)) per head (the weights the attention kernels form, recomputed in
 * f32 from the same q and k), the same scores without the scaling, the logit lens
 * and each step's candidates.  Transcription itself never sees the probe. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "kernels/kernels.h"

hark_explain *hark_explain_new(int window)
{
    if (window < 0)
        return NULL;
    hark_explain *x = calloc(1, sizeof *x);
    if (x)
        x->want = window;
    return x;
}

static void free_stats(head_stats *s, int n)
{
    for (int i = 0; s && i < n; i++)
        free(s[i].map);
    free(s);
}

void hark_explain_reset(hark_explain *x)
{
    int want = x->want;
    double occlusion = x->occlusion_s;
    if (x->m) {
        free_stats(x->enc, x->m->hp.n_audio_layer * x->m->hp.n_audio_head);
        free_stats(x->dec_cross, 0);
    }
    void *owned[] = {x->tokens, x->self, x->xattn, x->lens, x->top, x->p_search, x->p_replay,
                     x->n_suppressed, x->row, x->lens_last, x->buf, x->effect, x->head_rho, x->hidden};
    for (size_t i = 0; i < sizeof owned / sizeof *owned; i++)
        free(owned[i]);
    memset(x, 0, sizeof *x);
    x->want = want;
    x->occlusion_s = occlusion;
}

void hark_explain_free(hark_explain *x)
{
    if (!x)
        return;
    hark_explain_reset(x);
    free(x);
}

static int audio_frames(const hark_explain *x)
{
    long mel_frames = (long)(x->n_samples / 160) - x->seek, ac = x->m->hp.n_audio_ctx;
    long f = (mel_frames + 1) / 2;
    return (int)(f < 1 ? 1 : f > ac ? ac : f);
}

void hark_explain_set_occlusion(hark_explain *x, double seconds)
{
    if (x)
        x->occlusion_s = seconds > 0 ? seconds : 0;
}

int hark_explain_done(const hark_explain *x, hark_error *e)
{
    if (x->found)
        return 0;
    return hark_fail(e, HARK_ERR_ARG, "no window %d to explain: the audio made %d", x->want,
                     x->n_windows);
}

/* ------------------------------------------------------------ one row */

/* Softmax of x[n] in place; returns its entropy in nats. */
static double softmax_entropy(float *x, int n)
{
    float top = x[0];
    for (int j = 1; j < n; j++)
        top = x[j] > top ? x[j] : top;
    double sum = 0, h = 0;
    for (int j = 0; j < n; j++)
        sum += x[j] = expf(x[j] - top);
    for (int j = 0; j < n; j++) {
        x[j] = (float)(x[j] / sum);
        h -= x[j] > 0 ? x[j] * log(x[j]) : 0;
    }
    return h;
}

/* A row of scaled scores sc[n] (q.k / sqrt(d_head), root = sqrt(d_head)) into
 * its attention weights, in place; the raw scores' moments and both softmaxes'
 * entropies added to s.  tmp: n floats. */
static void row_stats(head_stats *s, float *sc, int n, float root, float *tmp)
{
    for (int j = 0; j < n; j++) {
        tmp[j] = sc[j] * root;
        s->sum += tmp[j];
        s->sum2 += (double)tmp[j] * tmp[j];
    }
    s->n += n;
    s->entropy_raw += softmax_entropy(tmp, n);
    s->entropy += softmax_entropy(sc, n);
    s->rows++;
}

/* The top EXPLAIN_TOP of logits[n] with their softmax probabilities. */
static void top_candidates(candidate_list *c, const float *logits, int n)
{
    float top = logits[0];
    for (int j = 1; j < n; j++)
        top = logits[j] > top ? logits[j] : top;
    double sum = 0;
    for (int j = 0; j < n; j++)
        sum += exp(logits[j] - top);
    for (int k = 0; k < EXPLAIN_TOP; k++)
        c->id[k] = -1, c->p[k] = 0;
    for (int j = 0; j < n; j++) {
        int k = EXPLAIN_TOP;
        while (k > 0 && (c->id[k - 1] < 0 || logits[j] > logits[c->id[k - 1]]))
            k--;
        if (k == EXPLAIN_TOP)
            continue;
        memmove(c->id + k + 1, c->id + k, sizeof(int) * (EXPLAIN_TOP - 1 - k));
        c->id[k] = j;
    }
    for (int k = 0; k < EXPLAIN_TOP && c->id[k] >= 0; k++)
        c->p[k] = (float)(exp(logits[c->id[k]] - top) / sum);
}

/* ------------------------------------------------------------ the probe */

/* Encoder row i's weights w[n]: how far it looks, and its cells of the map. */
static void encoder_row(head_stats *s, const float *w, int i, int n, int grid)
{
    float *cell = s->map + (size_t)(i * grid / n) * grid;
    for (int j = 0; j < n; j++) {
        s->distance += w[j] * fabs((double)(i - j));
        cell[j * grid / n] += w[j];
    }
}

/* Each map row the mean of the rows it covers: rows of weights summing to 1. */
static void encoder_map_rows(head_stats *s, int n, int grid)
{
    for (int r = 0; r < grid; r++) {
        int first = (r * n + grid - 1) / grid, end = ((r + 1) * n + grid - 1) / grid;
        for (int c = 0; end > first && c < grid; c++)
            s->map[(size_t)r * grid + c] /= (float)(end - first);
    }
}

static void on_encoder(void *user, int l, const float *q, const float *k, int n)
{
    hark_explain *x = user;
    int d = x->m->hp.n_audio_state, heads = x->m->hp.n_audio_head, dh = d / heads;
    float root = sqrtf((float)dh);
    for (int h = 0; h < heads; h++) {
        head_stats *s = &x->enc[l * heads + h];
        for (int i = 0; i < n; i++) {
            cblas_sgemv(CblasRowMajor, CblasNoTrans, n, dh, 1.0f / root, k + h * dh, d,
                        q + (size_t)i * d + h * dh, 1, 0.0f, x->row, 1);
            row_stats(s, x->row, n, root, x->buf);
            encoder_row(s, x->row, i, n, x->grid);
        }
        encoder_map_rows(s, n, x->grid);
    }
}

/* Decoder self-attention: row pos's weights over keys 0..pos; above them the
 * causal mask's zeros, never written. */
static void on_self(void *user, int l, const float *q, const float *k, int n, int past)
{
    hark_explain *x = user;
    int d = x->m->hp.n_text_state, heads = x->m->hp.n_text_head, dh = d / heads, P = x->n_pos;
    float root = sqrtf((float)dh);
    for (int h = 0; h < heads; h++)
        for (int i = 0, pos = past; i < n && pos < P; i++, pos++) {
            float *w = x->self + (((size_t)l * heads + h) * P + pos) * P;
            cblas_sgemv(CblasRowMajor, CblasNoTrans, pos + 1, dh, 1.0f / root, k + h * dh, d,
                        q + (size_t)i * d + h * dh, 1, 0.0f, w, 1);
            softmax_entropy(w, pos + 1);
        }
}

static void on_cross(void *user, int l, const float *q, int n, int past)
{
    hark_explain *x = user;
    int d = x->m->hp.n_text_state, heads = x->m->hp.n_text_head, dh = d / heads;
    int ac = x->m->hp.n_audio_ctx, P = x->n_pos;
    n = past + n > P ? P - past : n;
    for (int h = 0; h < heads && n > 0; h++) {
        float *w = x->xattn + (((size_t)l * heads + h) * P + past) * ac;
        hark_cross_head_scores(x->m, x->cross, l, h, q, n, w, x->buf + ac);
        for (int i = 0; i < n; i++)
            row_stats(&x->dec_cross[l * heads + h], w + (size_t)i * ac, ac, sqrtf((float)dh), x->buf);
    }
}

/* The logit lens: each row's residual stream after layer l read as the output
 * reads the last: final LayerNorm, then the token embedding. */
static void on_residual(void *user, int l, const float *xs, int n, int past)
{
    hark_explain *x = user;
    const hark_model *m = x->m;
    int d = m->hp.n_text_state, L = m->hp.n_text_layer;
    for (int i = 0; i < n && past + i < x->n_pos; i++) {
        memcpy(x->hidden + ((size_t)l * x->n_pos + past + i) * d, xs + (size_t)i * d,
               sizeof(float) * (size_t)d);
        hark_layer_norm(x->row, xs + (size_t)i * d, 1, d, m->dec_ln_w, m->dec_ln_b);
        hark_linear(x->lens_last, x->row, 1, &m->tok_emb, NULL);
        top_candidates(&x->lens[(size_t)(past + i) * L + l], x->lens_last, m->hp.n_vocab);
    }
}

static hark_probe explain_probe(hark_explain *x)
{
    hark_probe p = {x, on_encoder, on_self, on_cross, on_residual};
    return p;
}

/* ------------------------------------------------------------ the window */

/* Sizes and buffers for a window of n_pos positions. */
static int prepare(hark_explain *x, const hark_model *m)
{
    const hark_hparams *hp = &m->hp;
    size_t P = (size_t)x->n_pos, ac = (size_t)hp->n_audio_ctx, L = (size_t)hp->n_text_layer;
    size_t H = (size_t)hp->n_text_head, encs = (size_t)hp->n_audio_layer * hp->n_audio_head;
    size_t wide = ac > (size_t)hp->n_text_state ? ac : (size_t)hp->n_text_state;
    x->grid = hp->n_audio_ctx < EXPLAIN_GRID ? hp->n_audio_ctx : EXPLAIN_GRID;
    x->self = calloc(L * H * P * P, sizeof(float));
    x->xattn = calloc(L * H * P * ac, sizeof(float));
    x->enc = calloc(encs, sizeof *x->enc);
    x->dec_cross = calloc(L * H, sizeof *x->dec_cross);
    x->lens = calloc(P * L, sizeof *x->lens);
    x->hidden = calloc(L * P * (size_t)hp->n_text_state, sizeof(float));
    x->top = calloc(P, sizeof *x->top);
    x->p_search = calloc(P, sizeof(float));
    x->p_replay = calloc(P, sizeof(float));
    x->n_suppressed = calloc(P, sizeof(int));
    x->row = malloc(sizeof(float) * wide);
    x->lens_last = malloc(sizeof(float) * (size_t)hp->n_vocab);
    x->buf = malloc(sizeof(float) * (ac + (size_t)HARK_MAX_BATCH * hp->n_text_state));
    int ok = x->self && x->xattn && x->enc && x->dec_cross && x->lens && x->hidden && x->top && x->p_search &&
             x->p_replay && x->n_suppressed && x->row && x->lens_last && x->buf;
    for (size_t i = 0; ok && i < encs; i++)
        ok = (x->enc[i].map = calloc((size_t)x->grid * x->grid, sizeof(float))) != NULL;
    return ok ? 0 : HARK_ERR_NOMEM;
}

/* The start sequence and the tokens taken, as far as the context holds them. */
static int take_tokens(hark_explain *x, const hark_model *m, const hark_decode_opts *o,
                       const hark_window *w)
{
    int cap = m->hp.n_text_ctx;
    x->tokens = malloc(sizeof(int) * (size_t)cap);
    if (!x->tokens)
        return HARK_ERR_NOMEM;
    x->n_start = hark_start_sequence(m, o, x->tokens, cap, &x->sot);
    if (x->n_start <= 0)
        return HARK_ERR_NOMEM;
    int n = w->n < cap - x->n_start ? w->n : cap - x->n_start;
    memcpy(x->tokens + x->n_start, w->tokens, sizeof(int) * (size_t)n);
    x->n_pos = x->n_start + n;
    return 0;
}

/* Step i: the logits after position n_start - 1 + i, which chose token i. */
static void step(hark_explain *x, const hark_decode_opts *o, const hark_window *w, int i,
                 const float *logits)
{
    int V = x->m->hp.n_vocab, pos = x->n_start - 1 + i;
    for (int j = 0; j < V; j++) {
        double diff = fabs((double)x->lens_last[j] - logits[j]);
        x->lens_diff = diff > x->lens_diff ? diff : x->lens_diff;
    }
    top_candidates(&x->top[pos], logits, V);
    /* what the search saw: the logits after its filters (suppression, timestamp rules) */
    float *seen = x->lens_last;
    memcpy(seen, logits, sizeof(float) * (size_t)V);
    hark_apply_filters(x->m, o, seen, w->tokens, i);
    double top = -INFINITY, sum = 0;
    for (int j = 0; j < V; j++) {
        x->n_suppressed[pos] += isinf(seen[j]) && seen[j] < 0;
        top = seen[j] > top ? seen[j] : top;
    }
    for (int j = 0; j < V; j++)
        sum += exp(seen[j] - top);
    if (i < w->n && pos + 1 < x->n_pos) {
        x->p_search[pos + 1] = w->probs[i];
        x->p_replay[pos + 1] = (float)(exp(seen[w->tokens[i]] - top) / sum);
    }
}

/* The window's tokens through the decoder again, fed as the search fed them:
 * up to sot, the rest of the start sequence, then one token a step. */
static int replay(hark_explain *x, const hark_decode_opts *o, const hark_window *w)
{
    const hark_model *m = x->m;
    hark_probe probe = explain_probe(x);
    hark_kv kv;
    float *logits = malloc(sizeof(float) * (size_t)m->hp.n_vocab);
    int rc = !logits ? HARK_ERR_NOMEM : hark_kv_init(&kv, m, x->cross);
    if (rc) {
        free(logits);
        return rc;
    }
    kv.probe = &probe;
    rc = hark_decode(m, &kv, x->tokens, x->sot + 1, logits);
    if (!rc && x->n_start > x->sot + 1)
        rc = hark_decode(m, &kv, x->tokens + x->sot + 1, x->n_start - x->sot - 1, logits);
    for (int i = 0; !rc; i++) {
        step(x, o, w, i, logits);
        if (x->n_start + i >= x->n_pos)
            break;
        rc = hark_decode(m, &kv, &x->tokens[x->n_start + i], 1, logits);
    }
    hark_kv_free(&kv);
    free(logits);
    return rc;
}

static int encode_traced(hark_explain *x, const float *mel)
{
    const hark_hparams *hp = &x->m->hp;
    float *enc = malloc(sizeof(float) * (size_t)hp->n_audio_ctx * hp->n_audio_state);
    hark_probe probe = explain_probe(x);
    int rc = enc ? hark_encode_probed(x->m, mel, enc, NULL, &probe) : HARK_ERR_NOMEM;
    free(enc);
    return rc;
}

static int on_window(void *user, const hark_model *m, int index, int seek, const float *mel,
                     const hark_cross *cross, const hark_decode_opts *o, const hark_window *w)
{
    hark_explain *x = user;
    x->n_windows = index + 1;
    if (index != x->want)
        return 0;
    x->m = m;
    x->cross = cross;
    x->seek = seek;
    x->audio_frames = audio_frames(x);
    int rc = take_tokens(x, m, o, w);
    if (!rc)
        rc = prepare(x, m);
    if (!rc)
        rc = encode_traced(x, mel);
    if (!rc)
        rc = replay(x, o, w);
    if (!rc && x->occlusion_s > 0)
        rc = hark_explain_occlude(x, mel);
    x->cross = NULL;
    x->found = !rc;
    return rc;
}

hark_window_observer hark_explain_observer(hark_explain *x)
{
    hark_window_observer obs = {x, on_window};
    return obs;
}
