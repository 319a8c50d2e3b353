/* Decoding a window the way openai/whisper's DecodingTask does: the start
 * sequence, the logit filters (SuppressBlank, SuppressTokens, timestamp
 * rules), then greedy, sampled (best_of) or beam-search selection ranked by
 * length-normalised log-probability.  Special tokens other than eot and
 * timestamps are never sampled, as in whisper.cpp. */
#include "decode/decode.h"
#include "kernels/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void hark_window_free(hark_window *w)
{
    free(w->tokens);
    free(w->probs);
    memset(w, 0, sizeof *w);
}

static int window_push(hark_window *w, int tok, float p)
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

static int window_copy(hark_window *dst, const hark_window *src)
{
    dst->n = 0;
    for (int i = 0; i < src->n; i++)
        if (window_push(dst, src->tokens[i], src->probs[i]))
            return HARK_ERR_NOMEM;
    dst->sum_logprob = src->sum_logprob;
    dst->no_speech_prob = src->no_speech_prob;
    return 0;
}

int hark_start_sequence(const hark_model *m, const hark_decode_opts *o, int *seq, int cap,
                        int *sot_index)
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
    *sot_index = n;
    seq[n++] = s->sot;
    if (o->lang_token >= 0)
        seq[n++] = o->lang_token;
    if (o->task_token >= 0)
        seq[n++] = o->task_token;
    if (!o->timestamps)
        seq[n++] = s->notimestamps;
    return n;
}

/* ---------------------------------------------------------- logit filters */

static double log_sum_exp(const float *x, int from, int to)
{
    return to > from ? hark_log_sum_exp(x + from, (size_t)(to - from)) : -INFINITY;
}

/* Whether x holds a NaN (the log-sum-exp skips an all-NaN row as all -inf). */
static int any_nan(const float *x, int from, int to)
{
    for (int i = from; i < to; i++)
        if (isnan(x[i]))
            return 1;
    return 0;
}

static void fill(float *x, int from, int to, float v)
{
    for (int i = from; i < to; i++)
        x[i] = v;
}

/* openai's ApplyTimestampRules on the tokens sampled so far. */
static void timestamp_rules(const hark_model *m, const hark_decode_opts *o, float *logits,
                            const int *toks, int n)
{
    const hark_specials *s = &m->vocab.sp;
    int tb = s->timestamp_begin, V = m->hp.n_vocab;
    int last_ts = n >= 1 && toks[n - 1] >= tb;
    int penult_ts = n < 2 || toks[n - 2] >= tb;
    if (last_ts)
        fill(logits, penult_ts ? tb : 0, penult_ts ? V : s->eot, -INFINITY);
    int latest = -1;
    for (int i = 0; i < n; i++)
        if (toks[i] >= tb)
            latest = toks[i];
    if (latest >= 0) /* never decrease; a segment has a non-zero length */
        fill(logits, tb, (last_ts && !penult_ts) ? latest : latest + 1, -INFINITY);
    if (n == 0) {
        fill(logits, 0, tb, -INFINITY);
        if (o->max_initial_timestamp >= 0 && tb + o->max_initial_timestamp + 1 < V)
            fill(logits, tb + o->max_initial_timestamp + 1, V, -INFINITY);
    }
    /* when timestamps are likelier together than any text token, sample one */
    double lse = log_sum_exp(logits, 0, V);
    double ts = log_sum_exp(logits, tb, V) - lse;
    float text_max = hark_vocab_max(logits, tb);
    if (ts > (double)text_max - lse)
        fill(logits, 0, tb, -INFINITY);
}

void hark_suppress_option(hark_decode_opts *o, const int *ids, int n)
{
    o->suppress = ids;
    o->n_suppress = n;
    o->no_model_suppress = n > 0;
    for (int i = 0; i < n; i++)
        o->no_model_suppress &= ids[i] != -1;
}

void hark_apply_filters(const hark_model *m, const hark_decode_opts *o, float *logits,
                        const int *toks, int n)
{
    const hark_specials *s = &m->vocab.sp;
    if (n == 0) { /* SuppressBlank */
        if (m->vocab.blank_id >= 0)
            logits[m->vocab.blank_id] = -INFINITY;
        logits[s->eot] = -INFINITY;
    }
    for (int i = 0; i < m->n_suppress && !o->no_model_suppress; i++)
        logits[m->suppress[i]] = -INFINITY;
    for (int i = 0; i < o->n_suppress; i++)
        if (o->suppress[i] >= 0)
            logits[o->suppress[i]] = -INFINITY;
    for (int i = 0; i < o->n_suppress_matching; i++)
        logits[o->suppress_matching[i]] = -INFINITY;
    fill(logits, s->sot, s->timestamp_begin < m->hp.n_vocab ? s->timestamp_begin : m->hp.n_vocab,
         -INFINITY);
    if (!o->timestamps)
        fill(logits, s->timestamp_begin, m->hp.n_vocab, -INFINITY);
    else
        timestamp_rules(m, o, logits, toks, n);
}

/* ---------------------------------------------------------- selection */

static uint64_t next_random(uint64_t *state) /* splitmix64 */
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A draw from softmax(logits / t).  Each weight exp((l - max) / t) is made
 * once, into w[n], and read again by the scan: making it twice (libm's exp, a
 * logit each time) was most of a sampled step's search. */
static int sample(const float *logits, int n, float t, uint64_t *rng, double *w)
{
    float mx = logits[hark_vocab_argmax(logits, n)];
    double total = 0;
    for (int i = 0; i < n; i++) {
        w[i] = logits[i] == -INFINITY ? 0 : exp(((double)logits[i] - mx) / t);
        total += w[i];
    }
    double u = (double)(next_random(rng) >> 11) / 9007199254740992.0 * total, acc = 0;
    int last = 0;
    for (int i = 0; i < n; i++) {
        if (logits[i] == -INFINITY)
            continue;
        acc += w[i];
        last = i;
        if (u < acc)
            return i;
    }
    return last;
}

static double rank_score(const hark_decode_opts *o, const hark_window *w)
{
    double len = w->n;
    double penalty = o->length_penalty < 0 ? len : pow((5.0 + len) / 6.0, o->length_penalty);
    return w->sum_logprob / (penalty > 0 ? penalty : 1.0);
}

/* One sequence being decoded. */
typedef struct seq {
    hark_kv kv;
    hark_window w;
    float *logits;
    int done;
} seq;

static void seq_free(seq *s)
{
    hark_kv_free(&s->kv);
    hark_window_free(&s->w);
    free(s->logits);
}

static int seq_init(seq *s, const hark_model *m, const hark_cross *cross)
{
    memset(s, 0, sizeof *s);
    s->logits = malloc(sizeof(float) * (size_t)m->hp.n_vocab);
    if (!s->logits || hark_kv_init(&s->kv, m, cross))
        return HARK_ERR_NOMEM;
    return 0;
}

static int seq_copy(const hark_model *m, seq *dst, const seq *src)
{
    hark_kv_copy(m, &dst->kv, &src->kv);
    memcpy(dst->logits, src->logits, sizeof(float) * (size_t)m->hp.n_vocab);
    dst->done = src->done;
    return window_copy(&dst->w, &src->w);
}

/* Runs the start sequence; fills s->logits and the no-speech probability. */
static int run_start(const hark_model *m, const hark_decode_opts *o, seq *s)
{
    int toks[512], sot_index;
    int n = hark_start_sequence(m, o, toks, 512, &sot_index);
    int rc = hark_decode(m, &s->kv, toks, sot_index + 1, s->logits);
    if (rc)
        return rc;
    if (any_nan(s->logits, 0, m->hp.n_vocab))
        return HARK_ERR_MODEL;
    double lse = log_sum_exp(s->logits, 0, m->hp.n_vocab);
    s->w.no_speech_prob = (float)exp(s->logits[m->vocab.sp.nospeech] - lse);
    if (n > sot_index + 1)
        rc = hark_decode(m, &s->kv, toks + sot_index + 1, n - sot_index - 1, s->logits);
    return rc;
}

/* Takes token tok for s (log-probability lp); returns 1 when s goes on and
 * needs the logits after tok, 0 when it ended, negative on error. */
static int seq_take(const hark_model *m, seq *s, int tok, double lp)
{
    if (isnan(lp)) /* a NaN logit makes the chosen one or the log-sum-exp NaN */
        return HARK_ERR_MODEL;
    s->w.sum_logprob += lp;
    if (tok == m->vocab.sp.eot) {
        s->done = 1;
        return 0;
    }
    if (window_push(&s->w, tok, (float)exp(lp)))
        return HARK_ERR_NOMEM;
    if (s->kv.n_past >= m->hp.n_text_ctx) {
        s->done = 1; /* out of context: ends without eot */
        return 0;
    }
    return 1;
}

/* The sequences that took a token step together: one weight read for all. */
typedef struct pending {
    seq *s[HARK_MAX_BEAMS];
    hark_kv *kv[HARK_MAX_BEAMS];
    int tok[HARK_MAX_BEAMS], n;
    float *logits; /* [HARK_MAX_BEAMS][n_vocab] */
    double *weights; /* [n_vocab]: a draw's weights (sample) */
    hark_broker *batch; /* NULL, or the broker the step goes through */
} pending;

static int pending_add(const hark_model *m, pending *p, seq *s, int tok, double lp)
{
    int rc = seq_take(m, s, tok, lp);
    if (rc <= 0)
        return rc;
    p->s[p->n] = s;
    p->kv[p->n] = &s->kv;
    p->tok[p->n++] = tok;
    return 0;
}

static int pending_run(const hark_model *m, pending *p)
{
    int V = m->hp.n_vocab, rc = 0;
    const float *logits = p->logits;
    if (p->n && p->batch)
        rc = hark_broker_step(p->batch, m, p->kv, p->tok, p->n, &logits);
    else if (p->n)
        rc = hark_decode_batch(m, p->kv, p->tok, p->n, p->logits);
    for (int i = 0; !rc && i < p->n; i++)
        memcpy(p->s[i]->logits, logits + (size_t)i * V, sizeof(float) * (size_t)V);
    p->n = 0;
    return rc;
}

/* Greedy (one sequence) or best_of independent samples, stepped together. */
static int decode_independent(const hark_model *m, const hark_decode_opts *o, seq *seqs, int n,
                              pending *p, hark_window *out)
{
    uint64_t rng = o->seed;
    int V = m->hp.n_vocab, rc = 0;
    for (int i = 1; i < n && !rc; i++)
        rc = seq_copy(m, &seqs[i], &seqs[0]);
    for (int step = 0; step < o->sample_len && !rc; step++) {
        int live = 0;
        for (int i = 0; i < n && !rc; i++) {
            seq *s = &seqs[i];
            if (s->done)
                continue;
            live++;
            hark_apply_filters(m, o, s->logits, s->w.tokens, s->w.n);
            int tok = o->temperature > 0 ? sample(s->logits, V, o->temperature, &rng, p->weights)
                                         : hark_vocab_argmax(s->logits, V);
            double lp = s->logits[tok] - log_sum_exp(s->logits, 0, V);
            rc = pending_add(m, p, s, tok, lp);
        }
        if (!rc)
            rc = pending_run(m, p);
        if (!live)
            break;
    }
    int best = 0;
    for (int i = 1; i < n; i++)
        if (rank_score(o, &seqs[i].w) > rank_score(o, &seqs[best].w))
            best = i;
    if (!rc) {
        *out = seqs[best].w;
        memset(&seqs[best].w, 0, sizeof(hark_window));
    }
    return rc;
}

/* ---------------------------------------------------------- beam search */

typedef struct candidate {
    double score, lp;
    int source, token, order;
} candidate;

static int by_score(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return x->order - y->order; /* stable, as Python's sort */
}

/* The beam_size + 1 likeliest tokens of one beam, appended to c; -1 when the
 * logits hold NaN (the sort needs scores that compare). */
static int top_candidates(const float *logits, int V, int k, double base, int source,
                          candidate *c, int at)
{
    /* the k best, ordered by logit then by lower token id */
    int top[65] = {0};
    int n = hark_vocab_top_k(logits, V, k < 65 ? k : 65, top);
    double lse = log_sum_exp(logits, 0, V);
    for (int j = 0; j < n; j++) {
        double lp = logits[top[j]] - lse;
        if (isnan(lp))
            return -1;
        c[at + j] = (candidate){base + lp, lp, source, top[j], at + j};
    }
    return n;
}

typedef struct beam_state {
    seq *pool;             /* beam_size sequences: the live beams live in place */
    int live[HARK_MAX_BEAMS], n_live;  /* pool slots of the live beams, best first */
    hark_window *finished; /* up to max_candidates, each ending with eot   */
    int n_finished, max_candidates, size;
} beam_state;

static seq *beam(beam_state *b, int j)
{
    return &b->pool[b->live[j]];
}

static int add_finished(beam_state *b, const hark_window *w, double score)
{
    if (b->n_finished >= b->max_candidates)
        return 0;
    hark_window *f = &b->finished[b->n_finished];
    memset(f, 0, sizeof *f);
    if (window_copy(f, w))
        return HARK_ERR_NOMEM;
    f->sum_logprob = score;
    b->n_finished++;
    return 0;
}

/* The next beams take their source's slot when they are its first heir, so
 * most beams continue in place; only the others copy a cache into a free slot. */
static int place_beams(const hark_model *m, beam_state *b, const candidate *next, int n,
                       int *slot)
{
    char claimed[HARK_MAX_BEAMS] = {0}, used[HARK_MAX_BEAMS] = {0};
    for (int k = 0; k < n; k++) {
        int src = b->live[next[k].source];
        slot[k] = claimed[src] ? -1 : src;
        claimed[src] = used[src] = 1;
    }
    for (int k = 0, free_slot = 0; k < n; k++) {
        if (slot[k] >= 0)
            continue;
        while (used[free_slot])
            free_slot++;
        used[free_slot] = 1;
        slot[k] = free_slot;
        int rc = seq_copy(m, &b->pool[free_slot], beam(b, next[k].source));
        if (rc)
            return rc;
    }
    return 0;
}

static int beam_step(const hark_model *m, const hark_decode_opts *o, beam_state *b,
                     candidate *cand, pending *p)
{
    int V = m->hp.n_vocab, n = 0, saved = 0, rc = 0, slot[HARK_MAX_BEAMS];
    for (int j = 0; j < b->n_live; j++) {
        seq *s = beam(b, j);
        hark_apply_filters(m, o, s->logits, s->w.tokens, s->w.n);
        int k = top_candidates(s->logits, V, b->size + 1, s->w.sum_logprob, j, cand, n);
        if (k < 0)
            return HARK_ERR_MODEL;
        n += k;
    }
    qsort(cand, (size_t)n, sizeof *cand, by_score);
    candidate next[HARK_MAX_BEAMS];
    for (int i = 0; i < n && saved < b->size && !rc; i++) {
        if (cand[i].token != m->vocab.sp.eot) {
            next[saved++] = cand[i];
            continue;
        }
        /* in score order, as openai adds them; read before any beam moves on */
        hark_window w = beam(b, cand[i].source)->w;
        rc = add_finished(b, &w, cand[i].score);
    }
    if (!rc)
        rc = place_beams(m, b, next, saved, slot);
    for (int k = 0; k < saved && !rc; k++) {
        seq *s = &b->pool[slot[k]];
        s->w.sum_logprob = next[k].score - next[k].lp; /* seq_take adds lp back */
        rc = pending_add(m, p, s, next[k].token, next[k].lp);
        b->live[k] = slot[k];
    }
    b->n_live = saved;
    return rc ? rc : pending_run(m, p);
}

/* Too few finished sequences: the live beams, best first, as if they ended
 * (openai's finalize), until beam_size are there. */
static int finish_live_beams(beam_state *b)
{
    int rc = 0;
    char used[HARK_MAX_BEAMS] = {0};
    b->max_candidates = b->size > b->max_candidates ? b->size : b->max_candidates;
    for (int k = 0; !rc && b->n_finished < b->size && k < b->n_live; k++) {
        int best = -1;
        for (int j = 0; j < b->n_live; j++)
            if (!used[j] && (best < 0 || beam(b, j)->w.sum_logprob > beam(b, best)->w.sum_logprob))
                best = j;
        if (best < 0)
            break;
        used[best] = 1;
        rc = add_finished(b, &beam(b, best)->w, beam(b, best)->w.sum_logprob);
    }
    return rc;
}

/* The finished sequence ranked first (-1 if none). */
static int best_finished(const hark_decode_opts *o, const beam_state *b)
{
    int best = b->n_finished > 0 ? 0 : -1;
    for (int i = 1; i < b->n_finished; i++)
        if (rank_score(o, &b->finished[i]) > rank_score(o, &b->finished[best]))
            best = i;
    return best;
}

static int decode_beam(const hark_model *m, const hark_decode_opts *o, seq *pool, pending *p,
                       hark_window *out)
{
    int size = o->beam_size, rc = 0;
    beam_state b = {0};
    b.pool = pool, b.n_live = 1, b.size = size; /* the start sequence in slot 0 */
    b.max_candidates = (int)lround(size * (o->patience > 0 ? o->patience : 1.0));
    if (b.max_candidates < 1)
        b.max_candidates = 1;
    b.finished = calloc((size_t)(b.max_candidates + size), sizeof(hark_window));
    candidate *cand = malloc(sizeof(candidate) * (size_t)size * (size + 1));
    if (!b.finished || !cand)
        rc = HARK_ERR_NOMEM;
    for (int step = 0; step < o->sample_len && !rc; step++) {
        rc = beam_step(m, o, &b, cand, p);
        if (b.n_finished >= b.max_candidates || b.n_live == 0)
            break;
        int too_long = 0;
        for (int j = 0; j < b.n_live; j++)
            too_long |= beam(&b, j)->kv.n_past >= m->hp.n_text_ctx;
        if (too_long)
            break;
    }
    if (!rc)
        rc = finish_live_beams(&b);
    int best = best_finished(o, &b);
    if (!rc && best >= 0) {
        *out = b.finished[best];
        out->no_speech_prob = pool[0].w.no_speech_prob;
        memset(&b.finished[best], 0, sizeof(hark_window));
    }
    for (int i = 0; i < b.n_finished; i++)
        hark_window_free(&b.finished[i]);
    free(b.finished);
    free(cand);
    return rc;
}

/* Sequences and batch buffers kept between windows: the KV caches are made
 * once (per context) and reused. */
struct hark_decoder {
    seq *seqs;
    int n;
    const hark_model *model;
    pending *p;
    hark_broker *batch; /* NULL, or the broker its steps go through */
};

void hark_decoder_join(hark_decoder *dec, hark_broker *b)
{
    dec->batch = b;
}

hark_decoder *hark_decoder_new(void)
{
    return calloc(1, sizeof(hark_decoder));
}

static void pending_free(pending *p)
{
    if (p) {
        free(p->logits);
        free(p->weights);
    }
    free(p);
}

/* The batch buffers of model m, NULL when out of memory. */
static pending *pending_new(const hark_model *m)
{
    pending *p = calloc(1, sizeof(pending));
    size_t V = (size_t)m->hp.n_vocab;
    if (p && (!(p->logits = malloc(sizeof(float) * HARK_MAX_BEAMS * V)) ||
              !(p->weights = malloc(sizeof(double) * V)))) {
        pending_free(p);
        return NULL;
    }
    return p;
}

void hark_decoder_free(hark_decoder *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->n; i++)
        seq_free(&d->seqs[i]);
    free(d->seqs);
    pending_free(d->p);
    free(d);
}

/* At least n sequences of model m, reset, reading cross. */
static int decoder_prepare(hark_decoder *d, const hark_model *m, const hark_cross *cross, int n)
{
    if (d->model != m) { /* another model: other cache sizes */
        for (int i = 0; i < d->n; i++)
            seq_free(&d->seqs[i]);
        d->n = 0;
        d->model = m;
        pending_free(d->p);
        d->p = NULL;
    }
    if (!d->p && !(d->p = pending_new(m)))
        return HARK_ERR_NOMEM;
    if (n > d->n) {
        seq *s = realloc(d->seqs, sizeof(seq) * (size_t)n);
        if (!s)
            return HARK_ERR_NOMEM;
        d->seqs = s;
        for (; d->n < n; d->n++)
            if (seq_init(&d->seqs[d->n], m, cross)) {
                seq_free(&d->seqs[d->n]);
                return HARK_ERR_NOMEM;
            }
    }
    for (int i = 0; i < n; i++) {
        seq *q = &d->seqs[i];
        q->kv.cross = cross;
        q->kv.n_past = 0;
        q->done = 0;
        q->w.n = 0;
        q->w.sum_logprob = 0;
        q->w.no_speech_prob = 0;
    }
    d->p->n = 0;
    d->p->batch = d->batch;
    return 0;
}

int hark_decode_window(const hark_model *m, const hark_cross *cross, const hark_decode_opts *o,
                       hark_decoder *dec, hark_window *w)
{
    int beam = o->temperature == 0 && o->beam_size > 1;
    int n = beam ? o->beam_size : (o->temperature > 0 && o->best_of > 1 ? o->best_of : 1);
    hark_decoder *d = dec ? dec : hark_decoder_new();
    int rc = d ? decoder_prepare(d, m, cross, n) : HARK_ERR_NOMEM;
    memset(w, 0, sizeof *w);
    if (!rc)
        rc = run_start(m, o, &d->seqs[0]);
    float no_speech = rc ? 0 : d->seqs[0].w.no_speech_prob;
    /* the steps alone go through a broker: the prompt is this window's own */
    hark_broker *batch = rc ? NULL : d->batch;
    if (batch)
        hark_broker_enter(batch);
    if (!rc)
        rc = beam ? decode_beam(m, o, d->seqs, d->p, w) : decode_independent(m, o, d->seqs, n, d->p, w);
    if (batch)
        hark_broker_leave(batch);
    w->no_speech_prob = no_speech;
    if (!dec)
        hark_decoder_free(d);
    if (rc)
        hark_window_free(w);
    return rc;
}

int hark_language_probs(const hark_model *m, const hark_cross *cross, float *probs)
{
    const hark_specials *s = &m->vocab.sp;
    seq q;
    int rc = seq_init(&q, m, cross);
    if (!rc)
        rc = hark_decode(m, &q.kv, &s->sot, 1, q.logits);
    if (!rc) {
        double lse = log_sum_exp(q.logits, s->first_lang, s->first_lang + s->n_langs);
        rc = any_nan(q.logits, s->first_lang, s->first_lang + s->n_langs) ? HARK_ERR_MODEL : 0;
        for (int i = 0; i < s->n_langs; i++)
            probs[i] = (float)exp(q.logits[s->first_lang + i] - lse);
    }
    seq_free(&q);
    return rc;
}

int hark_fail_decode(hark_error *e, int rc, const hark_model *m)
{
    if (rc == HARK_ERR_MODEL)
        return hark_fail(e, rc, "%s: the model's output is NaN (its weights hold NaN or "
                         "infinite values)", m->path);
    if (rc == HARK_ERR_ABORTED)
        return hark_fail(e, rc, "transcription aborted");
    if (rc == HARK_ERR_IO)
        return hark_fail(e, rc, "cannot read the samples back from their temporary file");
    return hark_fail(e, rc, "%s: out of memory", m->path);
}
