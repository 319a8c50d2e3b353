/* The public context: a model (shared, read-only), parameters, the last
 * error and the last results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "face.h"
#include "explain.h"

struct hark_context {
    const hark_model *model;
    hark_params params;
    hark_result result;
    hark_error error;
    hark_pool *pool;  /* params.n_threads threads, made once */
    hark_decoder *dec; /* KV caches, made once */
};

hark_params hark_default_params(void)
{
    static const float ladder[] = {0.0f, 0.2f, 0.4f, 0.6f, 0.8f, 1.0f};
    hark_params p = {0};
    p.n_threads = 1;
    p.timestamps = 1;
    p.max_duration = 24 * 3600;
    p.search.beam_size = 5;
    p.search.patience = 1.0f;
    p.search.length_penalty = -1.0f;
    p.search.best_of = 5;
    memcpy(p.fallback.temperatures, ladder, sizeof ladder);
    p.fallback.n_temperatures = 6;
    p.fallback.compression_ratio_threshold = 2.4f;
    p.fallback.logprob_threshold = -1.0f;
    p.fallback.no_speech_threshold = 0.6f;
    p.prompt.condition_on_previous_text = 1;
    p.vad.threshold = 0.5f; /* whisper.cpp's VAD defaults */
    p.vad.min_speech_ms = 250;
    p.vad.min_silence_ms = 100;
    p.vad.speech_pad_ms = 30;
    p.vad.samples_overlap = 0.1f;
    return p;
}

hark_context *hark_context_new(const hark_model *model, const hark_params *params)
{
    if (!model)
        return NULL;
    hark_context *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->model = model;
    c->params = params ? *params : hark_default_params();
    c->pool = hark_pool_new(c->params.n_threads);
    c->dec = hark_decoder_new();
    if (!c->pool || !c->dec) {
        hark_pool_free(c->pool);
        hark_decoder_free(c->dec);
        free(c);
        return NULL;
    }
    return c;
}

void hark_context_free(hark_context *c)
{
    if (!c)
        return;
    hark_result_clear(&c->result);
    hark_pool_free(c->pool);
    hark_decoder_free(c->dec);
    free(c);
}

/* The public face of a step broker: the model its contexts share. */
struct hark_batch {
    hark_broker *broker;
    const hark_model *model;
};

hark_batch *hark_batch_new(void)
{
    hark_batch *b = calloc(1, sizeof *b);
    if (b && !(b->broker = hark_broker_new())) {
        free(b);
        return NULL;
    }
    return b;
}

void hark_batch_free(hark_batch *b)
{
    if (b)
        hark_broker_free(b->broker);
    free(b);
}

int hark_context_join(hark_context *c, hark_batch *b)
{
    if (!c)
        return HARK_ERR_ARG;
    if (b && b->model && b->model != c->model)
        return hark_fail(&c->error, HARK_ERR_ARG, "a batch's contexts share one model");
    if (b) {
        b->model = c->model;
        hark_broker_add_threads(b->broker, c->params.n_threads > 1 ? c->params.n_threads : 1);
    }
    hark_decoder_join(c->dec, b ? b->broker : NULL);
    return 0;
}

const char *hark_last_error(const hark_context *c)
{
    return c ? c->error.msg : "no context";
}

int hark_transcribe(hark_context *c, const float *samples, size_t n)
{
    if (!c)
        return HARK_ERR_ARG;
    c->error.msg[0] = 0;
    if (!samples && n)
        return hark_fail(&c->error, HARK_ERR_ARG, "no samples given");
    hark_source src;
    hark_source_memory(&src, samples, n);
    hark_audio in = {&src, NULL};
    return hark_run(c->model, &c->params, c->pool, c->dec, &in, &c->result, &c->error);
}

int hark_transcribe_explained(hark_context *c, const float *samples, size_t n, hark_explain *x)
{
    if (!c || !x)
        return HARK_ERR_ARG;
    c->error.msg[0] = 0;
    if (!samples && n)
        return hark_fail(&c->error, HARK_ERR_ARG, "no samples given");
    hark_explain_reset(x);
    x->n_samples = n;
    hark_source src;
    hark_source_memory(&src, samples, n);
    hark_audio in = {&src, NULL};
    hark_window_observer obs = hark_explain_observer(x);
    int rc = hark_run_observed(c->model, &c->params, c->pool, c->dec, &in, &c->result, &c->error,
                               &obs);
    return rc ? rc : hark_explain_done(x, &c->error);
}

/* The message of a failed transcription of path names it, unless it names a
 * file already (the input or the model). */
static void name_input(hark_context *c, const char *path, int rc)
{
    if (strncmp(c->error.msg, path, strlen(path)) != 0 &&
        strncmp(c->error.msg, c->model->path, strlen(c->model->path)) != 0) {
        char msg[sizeof c->error.msg];
        snprintf(msg, sizeof msg, "%s", c->error.msg);
        hark_fail(&c->error, rc, "%s: %s", path, msg);
    }
}

/* The file is decoded into a temporary file first and read back a window at a
 * time: memory does not grow with its length. */
int hark_transcribe_file(hark_context *c, const char *path)
{
    hark_levels levels = {{NULL, NULL}, 0, 0}, *lv = c && c->params.diarize ? &levels : NULL;
    hark_source src;
    int cut = 0;
    if (!c)
        return HARK_ERR_ARG;
    c->error.msg[0] = 0;
    hark_result_clear(&c->result);
    if (!path)
        return hark_fail(&c->error, HARK_ERR_ARG, "no file given");
    const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
    int rc = hark_source_spool(&src, &c->error);
    if (!rc)
        rc = hark_audio_decode(path, &src, lv, c->params.max_duration, &cut, &c->error);
    if (!rc) {
        hark_audio in = {&src, lv};
        rc = hark_run(c->model, &c->params, c->pool, c->dec, &in, &c->result, &c->error);
    }
    if (lv)
        hark_levels_free(lv);
    hark_source_close(&src);
    if (!rc && cut)
        rc = hark_fail(&c->error, HARK_ERR_TOO_LONG, "%s: longer than max_duration (%g s): "
                       "transcribed its first %g s", name, c->params.max_duration,
                       c->params.max_duration);
    if (rc)
        name_input(c, name, rc);
    return rc;
}

static const hark_segment *seg(const hark_context *c, int i)
{
    return c && i >= 0 && i < c->result.n ? &c->result.seg[i] : NULL;
}

const char *hark_text(const hark_context *c) { return c && c->result.text ? c->result.text : ""; }
const char *hark_language(const hark_context *c) { return c ? c->result.language : ""; }
double hark_audio_seconds(const hark_context *c) { return c ? c->result.audio_seconds : 0; }
int hark_n_segments(const hark_context *c) { return c ? c->result.n : 0; }
const char *hark_segment_text(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->text : ""; }
double hark_segment_start(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->start : 0; }
double hark_segment_end(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->end : 0; }
int hark_segment_n_tokens(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->n_tokens : 0; }

char hark_segment_label(const hark_context *c, int i)
{
    return seg(c, i) ? seg(c, i)->speaker : 0;
}

int hark_segment_speaker(const hark_context *c, int i)
{
    char label = hark_segment_label(c, i);
    return label == '0'   ? 0
           : label == '1' ? 1
           : label == '?' ? HARK_SPEAKER_UNSURE
                          : HARK_SPEAKER_NONE;
}

hark_token_info hark_segment_token(const hark_context *c, int i, int j)
{
    hark_token_info t = {-1, 0.0f, ""};
    const hark_segment *s = seg(c, i);
    if (s && j >= 0 && j < s->n_tokens) {
        t.id = s->tokens[j];
        t.p = s->probs[j];
        t.text = s->token_text[j];
    }
    return t;
}

float hark_segment_avg_logprob(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->avg_logprob : 0; }
float hark_segment_no_speech_prob(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->no_speech_prob : 0; }
float hark_segment_temperature(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->temperature : 0; }
float hark_segment_compression_ratio(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->compression_ratio : 0; }
int hark_segment_seek(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->seek : 0; }
int hark_segment_n_words(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->n_words : 0; }

const char *hark_segment_word(const hark_context *c, int i, int w, double *start, double *end,
                              float *probability)
{
    const hark_segment *s = seg(c, i);
    if (!s || w < 0 || w >= s->n_words)
        return NULL;
    if (start)
        *start = s->words[w].start;
    if (end)
        *end = s->words[w].end;
    if (probability)
        *probability = s->words[w].probability;
    return s->words[w].text;
}

int hark_detect_language(hark_context *c, const float *samples, size_t n, const char **codes,
                         float *probs, int max)
{
    const hark_model *m = c->model;
    int langs = m->vocab.sp.n_langs, len = 2 * m->hp.n_audio_ctx, frames, got = 0;
    float *mel = NULL, *window = malloc(sizeof(float) * (size_t)m->hp.n_mels * len);
    float *enc = malloc(sizeof(float) * (size_t)m->hp.n_audio_ctx * m->hp.n_audio_state);
    float *p = malloc(sizeof(float) * (size_t)(langs ? langs : 1));
    int *order = malloc(sizeof(int) * (size_t)(langs ? langs : 1));
    hark_cross cross = {0};
    int rc = !m->vocab.multilingual ? hark_fail(&c->error, HARK_ERR_MODEL, "%s: an English-only model has no language to detect", m->path)
           : !window || !enc || !p || !order || hark_cross_init(&cross, m) ? HARK_ERR_NOMEM
           : hark_log_mel(samples, n, 30 * HARK_SAMPLE_RATE, m->hp.n_mels, 1, &mel, &frames, &c->error);
    hark_pool_use(c->pool);
    hark_precision_use(hark_precision_resolve(c->params.precision));
    if (!rc) {
        hark_mel_window(mel, frames, m->hp.n_mels, 0, frames, len, window);
        if ((rc = hark_rank_languages(m, window, enc, &cross, order, p)))
            hark_fail_decode(&c->error, rc, m);
    }
    for (int i = 0; !rc && i < langs && i < max; i++, got++) {
        codes[i] = hark_lang_code(order[i]);
        probs[i] = p[i];
    }
    hark_pool_use(NULL);
    hark_precision_use(HARK_PREC_F32);
    hark_cross_free(&cross);
    free(mel), free(window), free(enc), free(p), free(order);
    return rc ? rc : got;
}

/* For the writers: the raw result, and the model (its vocabulary). */
const hark_result *hark_context_result(const hark_context *c) { return &c->result; }
const hark_model *hark_context_model(const hark_context *c) { return c->model; }
