/* The long-form loop: one log-mel for the whole input plus 30 s of zeros (as
 * openai/whisper's transcribe() computes it), then windows of 2 * n_audio_ctx
 * frames, each encoded once and decoded, each becoming a segment. */
#include "transcribe.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "decode.h"

enum { PAD_SAMPLES = 30 * HARK_SAMPLE_RATE, SAMPLES_PER_FRAME = 160 };

void hark_result_clear(hark_result *r)
{
    for (int i = 0; i < r->n; i++) {
        hark_segment *s = &r->seg[i];
        for (int j = 0; j < s->n_tokens; j++)
            free(s->token_text[j]);
        free(s->token_text);
        free(s->text);
        free(s->tokens);
        free(s->probs);
    }
    free(r->seg);
    free(r->text);
    memset(r, 0, sizeof *r);
}

/* UTF-8 bytes / zlib-compressed bytes, openai's repetition measure. */
static float compression_ratio(const char *text)
{
    uLong n = (uLong)strlen(text);
    if (n == 0)
        return 0.0f;
    uLongf cap = compressBound(n);
    Bytef *buf = malloc(cap);
    if (!buf || compress2(buf, &cap, (const Bytef *)text, n, 9) != Z_OK) {
        free(buf);
        return 0.0f;
    }
    free(buf);
    return (float)n / (float)cap;
}

static hark_segment *new_segment(hark_result *r)
{
    if (r->n == r->cap) {
        int cap = r->cap ? r->cap * 2 : 16;
        hark_segment *p = realloc(r->seg, sizeof(hark_segment) * (size_t)cap);
        if (!p)
            return NULL;
        r->seg = p;
        r->cap = cap;
    }
    hark_segment *s = &r->seg[r->n++];
    memset(s, 0, sizeof *s);
    return s;
}

static int fill_segment(const hark_model *m, hark_segment *s, hark_window *w)
{
    s->text = hark_detokenize(&m->vocab, w->tokens, w->n);
    s->token_text = calloc((size_t)(w->n ? w->n : 1), sizeof(char *));
    if (!s->text || !s->token_text)
        return HARK_ERR_NOMEM;
    for (int i = 0; i < w->n; i++) {
        int len;
        const char *b = hark_token_bytes(&m->vocab, w->tokens[i], &len);
        s->token_text[i] = w->tokens[i] < m->vocab.sp.eot ? hark_detokenize(&m->vocab, &w->tokens[i], 1)
                                                         : strndup(b, (size_t)len);
        if (!s->token_text[i])
            return HARK_ERR_NOMEM;
    }
    s->tokens = w->tokens;
    s->probs = w->probs;
    s->n_tokens = w->n;
    s->avg_logprob = (float)(w->sum_logprob / (w->n + 1));
    s->no_speech_prob = w->no_speech_prob;
    s->compression_ratio = compression_ratio(s->text);
    w->tokens = NULL;
    w->probs = NULL;
    return 0;
}

static int join_text(hark_result *r)
{
    size_t total = 1;
    for (int i = 0; i < r->n; i++)
        total += strlen(r->seg[i].text);
    r->text = malloc(total);
    if (!r->text)
        return HARK_ERR_NOMEM;
    r->text[0] = 0;
    for (int i = 0, at = 0; i < r->n; i++) {
        size_t l = strlen(r->seg[i].text);
        memcpy(r->text + at, r->seg[i].text, l + 1);
        at += (int)l;
    }
    return 0;
}

typedef struct loop_state {
    float *mel, *window, *enc;
    int frames, content;
    hark_kv kv;
} loop_state;

static void slice_window(const loop_state *st, int seek, int n_mels, int len)
{
    for (int c = 0; c < n_mels; c++)
        for (int t = 0; t < len; t++) {
            int src = seek + t;
            /* past the padded end, the padding's own (floor) value */
            st->window[(size_t)c * len + t] =
                st->mel[(size_t)c * st->frames + (src < st->frames ? src : st->frames - 1)];
        }
}

static int run_windows(const hark_model *m, const hark_params *p, loop_state *st, hark_result *r)
{
    int len = 2 * m->hp.n_audio_ctx, rc = 0;
    hark_decode_opts o = {p->timestamps, p->max_tokens > 0 ? p->max_tokens : m->hp.n_text_ctx / 2,
                          NULL, 0};
    for (int seek = 0; seek < st->content && !rc; seek += len) {
        slice_window(st, seek, m->hp.n_mels, len);
        if ((rc = hark_encode(m, st->window, st->enc, p->n_threads)))
            break;
        hark_window w;
        if ((rc = hark_decode_window(m, &st->kv, st->enc, &o, &w)))
            break;
        hark_segment *s = new_segment(r);
        if (!s) {
            hark_window_free(&w);
            return HARK_ERR_NOMEM;
        }
        s->seek = seek;
        s->start = seek * 0.01;
        s->end = (seek + len < st->content ? seek + len : st->content) * 0.01;
        rc = fill_segment(m, s, &w);
        hark_window_free(&w);
    }
    return rc;
}

int hark_run(const hark_model *m, const hark_params *p, const float *samples, size_t n,
             hark_result *r, hark_error *e)
{
    loop_state st = {0};
    hark_result_clear(r);
    snprintf(r->language, sizeof r->language, "%s", p->language ? p->language : "en");
    r->audio_seconds = (double)n / HARK_SAMPLE_RATE;
    if (n == 0)
        return hark_fail(e, HARK_ERR_ARG, "no audio samples");
    openblas_set_num_threads(p->n_threads > 0 ? p->n_threads : 1);
    int rc = hark_log_mel(samples, n, PAD_SAMPLES, m->hp.n_mels, p->n_threads, &st.mel,
                          &st.frames, e);
    if (rc)
        return rc;
    st.content = (int)(n / SAMPLES_PER_FRAME);
    int len = 2 * m->hp.n_audio_ctx;
    st.window = malloc(sizeof(float) * (size_t)m->hp.n_mels * len);
    st.enc = malloc(sizeof(float) * (size_t)m->hp.n_audio_ctx * m->hp.n_audio_state);
    if (!st.window || !st.enc || hark_kv_init(&st.kv, m))
        rc = hark_fail(e, HARK_ERR_NOMEM, "out of memory for the model's buffers");
    if (!rc && (rc = run_windows(m, p, &st, r)))
        hark_fail(e, rc, "%s: transcription failed (%s)", m->path,
                  rc == HARK_ERR_NOMEM ? "out of memory" : "decoder error");
    if (!rc && (rc = join_text(r)))
        hark_fail(e, rc, "out of memory");
    hark_kv_free(&st.kv);
    free(st.mel);
    free(st.window);
    free(st.enc);
    return rc;
}
