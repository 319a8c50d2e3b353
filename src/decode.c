/* Decoding a window the way openai/whisper does: the start sequence, logit
 * filters (suppress_tokens, SuppressBlank), then greedy selection until eot
 * or the sample length.  Special tokens other than eot (and timestamps, when
 * on) are never sampled, as in whisper.cpp. */
#include "decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

void hark_window_free(hark_window *w)
{
    free(w->tokens);
    free(w->probs);
    memset(w, 0, sizeof *w);
}

int hark_start_sequence(const hark_model *m, const hark_decode_opts *o, int *seq, int cap)
{
    const hark_specials *s = &m->vocab.sp;
    int n = 0, keep = o->n_prompt;
    if (keep > m->hp.n_text_ctx / 2 - 1)
        keep = m->hp.n_text_ctx / 2 - 1;
    if (keep > cap - 5)
        keep = cap - 5;
    if (keep > 0) {
        seq[n++] = s->startofprev;
        memcpy(seq + n, o->prompt + o->n_prompt - keep, sizeof(int) * (size_t)keep);
        n += keep;
    }
    seq[n++] = s->sot;
    if (m->vocab.multilingual) {
        seq[n++] = s->first_lang; /* English until language selection exists */
        seq[n++] = s->transcribe;
    }
    if (!o->timestamps)
        seq[n++] = s->notimestamps;
    return n;
}

static void suppress(const hark_model *m, const hark_decode_opts *o, float *logits, int first)
{
    const hark_specials *s = &m->vocab.sp;
    for (int i = 0; i < m->n_suppress; i++)
        logits[m->suppress[i]] = -INFINITY;
    for (int i = s->sot; i < s->timestamp_begin && i < m->hp.n_vocab; i++)
        logits[i] = -INFINITY;
    if (!o->timestamps)
        for (int i = s->timestamp_begin; i < m->hp.n_vocab; i++)
            logits[i] = -INFINITY;
    if (first) { /* SuppressBlank */
        if (m->vocab.blank_id >= 0)
            logits[m->vocab.blank_id] = -INFINITY;
        logits[s->eot] = -INFINITY;
    }
}

static int argmax(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

/* log-softmax value of index k. */
static double log_prob(const float *x, int n, int k)
{
    float mx = x[argmax(x, n)];
    double sum = 0;
    for (int i = 0; i < n; i++)
        if (x[i] != -INFINITY)
            sum += exp((double)x[i] - mx);
    return (double)x[k] - mx - log(sum);
}

static int push(hark_window *w, int tok, float p)
{
    if (w->n == w->cap) {
        int cap = w->cap ? w->cap * 2 : 64;
        int *t = realloc(w->tokens, sizeof(int) * (size_t)cap);
        if (t)
            w->tokens = t;
        float *q = realloc(w->probs, sizeof(float) * (size_t)cap);
        if (q)
            w->probs = q;
        if (!t || !q)
            return HARK_ERR_NOMEM;
        w->cap = cap;
    }
    w->tokens[w->n] = tok;
    w->probs[w->n++] = p;
    return 0;
}

int hark_decode_window(const hark_model *m, hark_kv *kv, const float *enc_out,
                       const hark_decode_opts *o, hark_window *w)
{
    int n_vocab = m->hp.n_vocab, seq[512];
    float *logits = malloc(sizeof(float) * (size_t)n_vocab);
    if (!logits)
        return HARK_ERR_NOMEM;
    memset(w, 0, sizeof *w);
    hark_decoder_set_audio(m, kv, enc_out);
    int n_seq = hark_start_sequence(m, o, seq, 512);
    int rc = hark_decode(m, kv, seq, n_seq, logits);
    for (int step = 0; !rc && step < o->sample_len; step++) {
        if (step == 0)
            w->no_speech_prob = (float)exp(log_prob(logits, n_vocab, m->vocab.sp.nospeech));
        suppress(m, o, logits, step == 0);
        int tok = argmax(logits, n_vocab);
        double lp = log_prob(logits, n_vocab, tok);
        w->sum_logprob += lp;
        if (tok == m->vocab.sp.eot)
            break;
        if ((rc = push(w, tok, (float)exp(lp))))
            break;
        if (kv->n_past >= m->hp.n_text_ctx)
            break;
        rc = hark_decode(m, kv, &tok, 1, logits);
    }
    free(logits);
    if (rc)
        hark_window_free(w);
    return rc;
}
