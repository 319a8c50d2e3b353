/* hark explain --occlusion: is attention an explanation?  Each span of the
 * window's audio is masked in turn (its mel frames set to the window's floor,
 * the level of silence after Whisper's clamp), the window encoded again, and the
 * taken tokens scored again, teacher-forced: the drop in each token's log
 * probability is what the model used that span for.  Per cross-attention head, the
 * Spearman rank correlation between its attention on each span (from the row
 * that predicted the token) and that drop, averaged over the text tokens, says
 * whether the head's attention tracks the evidence. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "kernels/kernels.h"

/* Log p of each taken token, teacher-forced in one pass against cross: lp[pos]
 * for n_start <= pos < n_pos, from the raw logits (no filters). */
static int token_logprobs(const hark_explain *x, const hark_cross *cross, float *lp)
{
    const hark_model *m = x->m;
    int d = m->hp.n_text_state, V = m->hp.n_vocab;
    float *states = malloc(sizeof(float) * (size_t)x->n_pos * d);
    float *logits = malloc(sizeof(float) * (size_t)V);
    hark_kv kv;
    int rc = !states || !logits ? HARK_ERR_NOMEM : hark_kv_init(&kv, m, cross);
    if (!rc) {
        rc = hark_decode_states(m, &kv, x->tokens, x->n_pos, states);
        for (int pos = x->n_start; !rc && pos < x->n_pos; pos++) {
            hark_linear(logits, states + (size_t)(pos - 1) * d, 1, &m->tok_emb, NULL);
            lp[pos] = (float)(logits[x->tokens[pos]] - hark_log_sum_exp(logits, (size_t)V));
        }
        hark_kv_free(&kv);
    }
    free(states);
    free(logits);
    return rc;
}

/* The window with span s masked, encoded, its tokens scored into lp. */
static int masked_logprobs(const hark_explain *x, const float *mel, int s, float *work,
                           float *enc, hark_cross *cross, float *lp)
{
    const hark_hparams *hp = &x->m->hp;
    int frames = 2 * hp->n_audio_ctx, span = (int)lround(x->occlusion_s * 100);
    size_t all = (size_t)hp->n_mels * frames;
    float floor = mel[0];
    for (size_t i = 1; i < all; i++)
        floor = mel[i] < floor ? mel[i] : floor;
    memcpy(work, mel, sizeof(float) * all);
    for (int c = 0; c < hp->n_mels; c++)
        for (int t = s * span; t < (s + 1) * span && t < frames; t++)
            work[(size_t)c * frames + t] = floor;
    int rc = hark_encode(x->m, work, enc, NULL);
    if (rc)
        return rc;
    hark_cross_set(x->m, cross, enc);
    return token_logprobs(x, cross, lp);
}

/* Ranks of v[n] (ties: their mean rank). */
static void ranks(const float *v, int n, double *r)
{
    for (int i = 0; i < n; i++) {
        double below = 0, same = 0;
        for (int j = 0; j < n; j++) {
            below += v[j] < v[i];
            same += v[j] == v[i];
        }
        r[i] = below + (same - 1) / 2;
    }
}

/* Spearman's rho of a[n] and b[n]: Pearson's of their ranks; 0 when either is flat. */
static double spearman(const float *a, const float *b, int n)
{
    double ra[n], rb[n], ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    ranks(a, n, ra);
    ranks(b, n, rb);
    for (int i = 0; i < n; i++)
        ma += ra[i] / n, mb += rb[i] / n;
    for (int i = 0; i < n; i++) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0;
}

/* Head (l, h)'s rho, averaged over the text tokens: its attention per span from
 * the row before each token (the query that predicted it) against the drops. */
static float head_rho(const hark_explain *x, int l, int h, float *attn)
{
    const hark_hparams *hp = &x->m->hp;
    int ac = hp->n_audio_ctx, per = (int)lround(x->occlusion_s * 50), tokens = 0;
    double sum = 0;
    for (int pos = x->n_start; pos < x->n_pos; pos++) {
        if (x->tokens[pos] >= x->m->vocab.sp.eot)
            continue; /* timestamps and specials: not words */
        const float *w = x->xattn + (((size_t)l * hp->n_text_head + h) * x->n_pos + pos - 1) * ac;
        for (int s = 0; s < x->n_spans; s++) {
            attn[s] = 0;
            for (int t = s * per; t < (s + 1) * per && t < ac; t++)
                attn[s] += w[t];
        }
        sum += spearman(attn, x->effect + (size_t)pos * x->n_spans, x->n_spans);
        tokens++;
    }
    return tokens ? (float)(sum / tokens) : 0;
}

static int all_spans(hark_explain *x, const float *mel, float *base, float *lp)
{
    const hark_hparams *hp = &x->m->hp;
    size_t all = (size_t)hp->n_mels * 2 * hp->n_audio_ctx;
    float *work = malloc(sizeof(float) * all);
    float *enc = malloc(sizeof(float) * (size_t)hp->n_audio_ctx * hp->n_audio_state);
    hark_cross cross;
    int rc = !work || !enc ? HARK_ERR_NOMEM : hark_cross_init(&cross, x->m), made = !rc;
    if (!rc)
        rc = token_logprobs(x, x->cross, base);
    for (int s = 0; !rc && s < x->n_spans; s++) {
        rc = masked_logprobs(x, mel, s, work, enc, &cross, lp);
        for (int pos = x->n_start; !rc && pos < x->n_pos; pos++)
            x->effect[(size_t)pos * x->n_spans + s] = base[pos] - lp[pos];
    }
    if (made)
        hark_cross_free(&cross);
    free(work);
    free(enc);
    return rc;
}

int hark_explain_occlude(hark_explain *x, const float *mel)
{
    const hark_hparams *hp = &x->m->hp;
    int per = (int)lround(x->occlusion_s * 50); /* encoder frames a span */
    if (per < 1)
        return HARK_ERR_ARG;
    x->n_spans = (x->audio_frames + per - 1) / per;
    x->effect = calloc((size_t)x->n_pos * x->n_spans, sizeof(float));
    x->head_rho = calloc((size_t)hp->n_text_layer * hp->n_text_head, sizeof(float));
    float *base = malloc(sizeof(float) * (size_t)x->n_pos), *lp = malloc(sizeof(float) * (size_t)x->n_pos);
    float *attn = malloc(sizeof(float) * (size_t)x->n_spans);
    int rc = !x->effect || !x->head_rho || !base || !lp || !attn ? HARK_ERR_NOMEM
                                                                 : all_spans(x, mel, base, lp);
    for (int l = 0; !rc && l < hp->n_text_layer; l++)
        for (int h = 0; h < hp->n_text_head; h++)
            x->head_rho[l * hp->n_text_head + h] = head_rho(x, l, h, attn);
    free(base);
    free(lp);
    free(attn);
    return rc;
}
