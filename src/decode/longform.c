/* The long-form loop, as openai/whisper's transcribe(): the log-mel of the
 * whole input plus 30 s of zeros, computed window by window; windows of 2 * n_audio_ctx frames; each
 * window encoded once, decoded with temperature fallback, split into segments
 * at timestamp pairs; the seek pointer moved to the last complete pair (with
 * word timestamps, after the last word); the previous text as the next
 * window's prompt. */
#include "decode/decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "base/base.h"
#include "audio/audio.h"

enum { PAD_SAMPLES = 30 * HARK_SAMPLE_RATE, SAMPLES_PER_FRAME = 160 };

/* UTF-8 bytes / zlib-compressed bytes, openai's repetition measure. */
float hark_compression_ratio(const char *text)
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

/* ---------------------------------------------------------- state */

typedef struct loop_state {
    const hark_model *m;
    const hark_params *p;
    hark_mel_stream mel;   /* the log-mel, window by window */
    float *window, *enc;
    int frames, content;
    hark_cross cross;
    hark_workspace ws;     /* the encoder's, reused window after window */
    hark_decoder *dec;     /* the context's KV caches */
    double last_speech;    /* end of the last timed word so far (openai's last_speech_timestamp) */
    int *history;          /* every text and timestamp token so far (the prompt source) */
    int n_history, cap_history, prompt_from;
    int n_initial;         /* the initial prompt's tokens, at the start of history */
    int *carried, n_carried; /* with carry_initial_prompt: the initial prompt + recent text */
    int lang_token, task_token;
    const hark_levels *levels; /* a stereo file's, to label speakers; else NULL */
    int *matching, n_matching; /* the tokens suppress_regex matches */
    const hark_time_map *vad_map; /* with VAD: the speech's times to the file's; else NULL */
    const hark_window_observer *obs; /* NULL, or told of each window (hark explain) */
    int n_windows;         /* windows decoded so far */
} loop_state;

static int history_add(loop_state *st, const int *t, int n)
{
    if (st->n_history + n > st->cap_history) {
        int cap = (st->n_history + n) * 2 + 64;
        int *p = realloc(st->history, sizeof(int) * (size_t)cap);
        if (!p)
            return HARK_ERR_NOMEM;
        st->history = p;
        st->cap_history = cap;
    }
    memcpy(st->history + st->n_history, t, sizeof(int) * (size_t)n);
    st->n_history += n;
    return 0;
}

/* Room in r for n segments. */
static int reserve(hark_result *r, int n)
{
    if (n <= r->cap)
        return 0;
    int cap = r->cap * 2 > n ? r->cap * 2 : n + 16;
    hark_segment *p = realloc(r->seg, sizeof(hark_segment) * (size_t)cap);
    if (!p)
        return HARK_ERR_NOMEM;
    r->seg = p;
    r->cap = cap;
    return 0;
}

static hark_segment *new_segment(hark_result *r)
{
    if (reserve(r, r->n + 1))
        return NULL;
    hark_segment *s = &r->seg[r->n++];
    memset(s, 0, sizeof *s);
    return s;
}

/* A segment from tokens [from, to) of a decoded window. */
static int add_segment(const loop_state *st, hark_result *r, const hark_window *w, int from,
                       int to, double start, double end, int seek, float temperature)
{
    const hark_vocab *v = &st->m->vocab;
    hark_segment *s = new_segment(r);
    if (!s)
        return HARK_ERR_NOMEM;
    int n = to - from;
    s->seek = seek;
    s->start = start;
    s->end = end;
    s->temperature = temperature;
    s->text = hark_detokenize(v, w->tokens + from, n);
    s->tokens = malloc(sizeof(int) * (size_t)(n ? n : 1));
    s->probs = malloc(sizeof(float) * (size_t)(n ? n : 1));
    s->token_text = calloc((size_t)(n ? n : 1), sizeof(char *));
    if (!s->text || !s->tokens || !s->probs || !s->token_text)
        return HARK_ERR_NOMEM;
    memcpy(s->tokens, w->tokens + from, sizeof(int) * (size_t)n);
    memcpy(s->probs, w->probs + from, sizeof(float) * (size_t)n);
    s->n_tokens = n;
    for (int i = 0; i < n; i++) {
        int len, id = s->tokens[i];
        const char *b = hark_token_bytes(v, id, &len);
        s->token_text[i] = id < v->sp.eot ? hark_detokenize(v, &id, 1) : strndup(b, (size_t)len);
        if (!s->token_text[i])
            return HARK_ERR_NOMEM;
    }
    s->avg_logprob = (float)(w->sum_logprob / (w->n + 1));
    s->no_speech_prob = w->no_speech_prob;
    s->compression_ratio = hark_compression_ratio(s->text);
    return 0;
}

/* ---------------------------------------------------------- one window */

/* openai's carry_initial_prompt: the initial prompt, then the text since the last
 * reset (or since the initial prompt) cut to what fits beside it, Python's
 * rest[-keep:] with its quirks (keep 0: all of it; keep < 0: all but the first
 * -keep); the decoder keeps the last n_text_ctx / 2 - 1 of the whole. */
static int carry_prompt(loop_state *st)
{
    int from = st->n_initial > st->prompt_from ? st->n_initial : st->prompt_from;
    int rest = st->n_history - from, keep = st->m->hp.n_text_ctx / 2 - 1 - st->n_initial;
    int skip = keep > 0 ? (rest > keep ? rest - keep : 0) : (-keep < rest ? -keep : rest);
    int *p = realloc(st->carried, sizeof(int) * (size_t)(st->n_history + 1));
    if (!p)
        return HARK_ERR_NOMEM;
    st->carried = p;
    memcpy(p, st->history, sizeof(int) * (size_t)st->n_initial);
    memcpy(p + st->n_initial, st->history + from + skip, sizeof(int) * (size_t)(rest - skip));
    st->n_carried = st->n_initial + rest - skip;
    return 0;
}

static hark_decode_opts window_opts(const loop_state *st, float t, int seek, int t_index)
{
    const hark_params *p = st->p;
    hark_decode_opts o = {0};
    o.timestamps = p->timestamps;
    o.sample_len = p->search.max_tokens > 0 ? p->search.max_tokens : st->m->hp.n_text_ctx / 2;
    o.prompt = st->history + st->prompt_from;
    o.n_prompt = st->n_history - st->prompt_from;
    if (p->prompt.carry_initial)
        o.prompt = st->carried, o.n_prompt = st->n_carried;
    o.lang_token = st->lang_token;
    o.task_token = st->task_token;
    o.temperature = t;
    o.beam_size = p->search.beam_size;
    o.patience = p->search.patience > 0 ? p->search.patience : 1.0f;
    o.length_penalty = p->search.length_penalty;
    o.best_of = p->search.best_of;
    /* a seed per window and temperature: results never depend on threads */
    o.seed = p->search.seed * 0x9e3779b97f4a7c15ull ^ (uint64_t)seek << 20 ^ (uint64_t)t_index;
    o.max_initial_timestamp = 50;
    hark_suppress_option(&o, p->suppress.tokens, p->suppress.n_tokens);
    o.suppress_matching = st->matching;
    o.n_suppress_matching = st->n_matching;
    o.prepend_punctuations = p->words.prepend_punctuations;
    o.append_punctuations = p->words.append_punctuations;
    return o;
}

int hark_needs_fallback(const hark_params *p, const char *text, double sum_logprob, int n_tokens,
                        float no_speech_prob)
{
    float ratio = hark_compression_ratio(text);
    double avg = sum_logprob / (n_tokens + 1);
    int retry = (p->fallback.compression_ratio_threshold > 0 && ratio > p->fallback.compression_ratio_threshold) ||
                avg < p->fallback.logprob_threshold;
    if (p->fallback.no_speech_threshold > 0 && no_speech_prob > p->fallback.no_speech_threshold &&
        avg < p->fallback.logprob_threshold)
        retry = 0; /* silence: a retry would not help */
    return retry;
}

static int needs_fallback(const hark_params *p, const hark_model *m, const hark_window *w)
{
    char *text = hark_detokenize(&m->vocab, w->tokens, w->n);
    int retry = text ? hark_needs_fallback(p, text, w->sum_logprob, w->n, w->no_speech_prob) : 0;
    free(text);
    return retry;
}

/* Decodes the encoded window at each temperature until one is acceptable, and
 * tells the observer, if any, what it took. */
static int decode_with_fallback(loop_state *st, int seek, hark_window *w, float *temperature)
{
    hark_decode_opts used = {0};
    const hark_params *p = st->p;
    int n_t = p->fallback.n_temperatures > 0 ? p->fallback.n_temperatures : 1, rc = 0;
    for (int i = 0; i < n_t; i++) {
        float t = p->fallback.n_temperatures > 0 ? p->fallback.temperatures[i] : 0.0f;
        hark_decode_opts o = window_opts(st, t, seek, i);
        if (i > 0)
            hark_window_free(w);
        if ((rc = hark_decode_window(st->m, &st->cross, &o, st->dec, w)))
            return rc;
        *temperature = t;
        used = o;
        if (!needs_fallback(p, st->m, w))
            break;
    }
    if (st->obs && (rc = st->obs->decoded(st->obs->user, st->m, st->n_windows, seek, st->window,
                                          &st->cross, &used, w)))
        hark_window_free(w);
    st->n_windows++;
    return rc;
}

static int is_silence(const hark_params *p, const hark_window *w)
{
    if (p->fallback.no_speech_threshold <= 0 || w->no_speech_prob <= p->fallback.no_speech_threshold)
        return 0;
    return !(w->sum_logprob / (w->n + 1) > p->fallback.logprob_threshold);
}

/* The tokens end in a lone timestamp: no speech after it. */
static int single_timestamp_end(const loop_state *st, const hark_window *w)
{
    int tb = st->m->vocab.sp.timestamp_begin, n = w->n;
    return n >= 2 && w->tokens[n - 2] < tb && w->tokens[n - 1] >= tb;
}

/* Splits a window at consecutive timestamp pairs; returns frames consumed, or
 * HARK_ERR_NOMEM. */
static int split_segments(loop_state *st, hark_result *r, const hark_window *w, int seek,
                          int size, float temperature)
{
    int tb = st->m->vocab.sp.timestamp_begin, n = w->n, last = 0, rc = 0;
    double t0 = seek / 100.0, step = 0.02; /* openai: seek * 160 / 16000 */
    int single_end = single_timestamp_end(st, w);
    int cuts = 0;
    for (int i = 1; i < n && !rc; i++) {
        if (!(w->tokens[i - 1] >= tb && w->tokens[i] >= tb))
            continue;
        cuts++;
        rc = add_segment(st, r, w, last, i, t0 + (w->tokens[last] - tb) * step,
                         t0 + (w->tokens[i - 1] - tb) * step, seek, temperature);
        last = i;
    }
    if (rc)
        return rc;
    if (cuts == 0) {
        double end = size / 100.0;
        for (int i = n - 1; i >= 0; i--)
            if (w->tokens[i] >= tb) {
                if (w->tokens[i] != tb)
                    end = (w->tokens[i] - tb) * step;
                break;
            }
        rc = add_segment(st, r, w, 0, n, t0, t0 + end, seek, temperature);
        return rc ? rc : size;
    }
    if (single_end) {
        rc = add_segment(st, r, w, last, n, t0 + (w->tokens[last] - tb) * step,
                         t0 + (w->tokens[n - 1] - tb) * step, seek, temperature);
        return rc ? rc : size;
    }
    /* continue from the last complete timestamp pair */
    return (w->tokens[last - 1] - tb) * 2;
}

/* ---------------------------------------------------------- the loop */

static int drop_empty_segments(hark_result *r, int from)
{
    int k = from;
    for (int i = from; i < r->n; i++) {
        hark_segment *s = &r->seg[i];
        int blank = 1;
        for (const char *c = s->text; *c && blank; c++)
            blank = strchr(" \t\n\r\v\f", *c) != NULL;
        if (blank || s->start == s->end) { /* openai blanks these; hark drops them */
            hark_segment_free(s);
            continue;
        }
        r->seg[k++] = *s;
    }
    int removed = r->n - k;
    r->n = k;
    return removed;
}

/* --max-len: segments [first, r->n) cut between their words, each into its
 * pieces in place. */
static int split_long(hark_result *r, int first, int max_len, int eot)
{
    for (int i = first; i < r->n; i++) {
        hark_segment *pieces;
        int n, rc = hark_split_segment(&r->seg[i], max_len, eot, &pieces, &n);
        if (rc || (n && (rc = reserve(r, r->n + n - 1)))) {
            free(pieces);
            return rc;
        }
        if (n == 0)
            continue;
        memmove(&r->seg[i + n], &r->seg[i + 1], sizeof(hark_segment) * (size_t)(r->n - i - 1));
        hark_segment_free(&r->seg[i]);
        memcpy(&r->seg[i], pieces, sizeof(hark_segment) * (size_t)n);
        free(pieces);
        r->n += n - 1;
        i += n - 1;
    }
    return 0;
}

/* A decoded window's segments; returns frames consumed, or HARK_ERR_NOMEM. */
static int segments_of(loop_state *st, hark_result *r, hark_window *w, int seek, int size,
                       float temperature)
{
    if (st->p->timestamps)
        return split_segments(st, r, w, seek, size, temperature);
    int rc = add_segment(st, r, w, 0, w->n, seek / 100.0, seek / 100.0 + size / 100.0, seek,
                         temperature);
    return rc ? rc : size;
}

/* Segments from index keep on removed (openai's current_segments[si:] = []). */
static void truncate_segments(hark_result *r, int keep)
{
    while (r->n > keep)
        hark_segment_free(&r->seg[--r->n]);
}

/* The words of the window's segments r->seg[first..], and where the next window
 * starts by them (openai's transcribe() with word_timestamps); returns frames
 * consumed, or HARK_ERR_NOMEM.  *dropped: the window was dropped whole as
 * a hallucination after silence (the prompt and last speech are left as they are). */
static int words_and_seek(loop_state *st, hark_result *r, int first, int seek, int size,
                          float temperature, int advance, int single_end, int *dropped)
{
    hark_decode_opts o = window_opts(st, temperature, seek, 0);
    if (hark_align_words(st->m, &st->cross, &o, size, seek / 100.0, st->last_speech,
                         r->seg + first, r->n - first))
        return HARK_ERR_NOMEM;
    hark_word_window ww = {seek, size, 2 * st->m->hp.n_audio_ctx, st->content, single_end,
                           st->last_speech};
    int keep, next = hark_word_seek(&ww, st->p->words.hallucination_silence_threshold, r->seg + first,
                                    r->n - first, seek + advance, &keep);
    *dropped = keep < 0;
    truncate_segments(r, first + (keep < 0 ? 0 : keep));
    double end;
    if (!*dropped && hark_segments_end(r->seg + first, r->n - first, &end))
        st->last_speech = end;
    return next - seek;
}

/* A segment found in the speech VAD kept, moved to the file's times; as
 * whisper.cpp's, at least 0.1 s long. */
static void to_file_times(const hark_time_map *map, hark_segment *s)
{
    s->start = hark_time_map_apply(map, s->start, 0);
    s->end = fmax(hark_time_map_apply(map, s->end, 1), s->start + 0.1);
    for (int k = 0; k < s->n_words; k++) {
        s->words[k].start = hark_time_map_apply(map, s->words[k].start, 0);
        s->words[k].end = fmax(hark_time_map_apply(map, s->words[k].end, 1), s->words[k].start);
    }
}

/* The window at seek, of audio up to frame end; returns frames consumed, or a
 * negative HARK_ERR_ code. */
static int one_window(loop_state *st, hark_result *r, int seek, int end)
{
    const hark_model *m = st->m;
    int len = 2 * m->hp.n_audio_ctx, size = end - seek < len ? end - seek : len;
    /* inside the file, past a clip's end reads as past the file's end */
    int rc = hark_mel_stream_window(&st->mel, seek, end < st->content ? end : st->frames, len,
                                    st->window);
    if (!rc)
        rc = hark_encode(m, st->window, st->enc, &st->ws);
    if (rc)
        return rc;
    hark_cross_set(m, &st->cross, st->enc);
    hark_window w = {0};
    float temperature = 0;
    if (st->p->prompt.carry_initial && carry_prompt(st))
        return HARK_ERR_NOMEM;
    if ((rc = decode_with_fallback(st, seek, &w, &temperature)))
        return rc;
    int first = r->n, silence = is_silence(st->p, &w), dropped = 0;
    int advance = silence ? size : segments_of(st, r, &w, seek, size, temperature);
    int single_end = single_timestamp_end(st, &w);
    hark_window_free(&w);
    if (advance < 0 || silence) /* silence: skipped, the prompt untouched */
        return advance;
    if (st->p->words.enabled)
        advance = words_and_seek(st, r, first, seek, size, temperature, advance, single_end,
                                 &dropped);
    if (advance < 0 || dropped)
        return advance;
    /* after the words, as openai clears them: a segment's bounds may move to its words' */
    drop_empty_segments(r, first);
    /* the next window's prompt: the tokens of the segments kept, as openai's all_tokens */
    for (int i = first; i < r->n; i++)
        if (history_add(st, r->seg[i].tokens, r->seg[i].n_tokens))
            return HARK_ERR_NOMEM;
    if (!st->p->prompt.condition_on_previous_text || temperature > 0.5f)
        st->prompt_from = st->n_history;
    if (st->p->max_len > 0 && split_long(r, first, st->p->max_len, st->m->vocab.sp.eot))
        return HARK_ERR_NOMEM;
    for (int i = first; i < r->n; i++) { /* final from here on */
        hark_segment *s = &r->seg[i];
        if (st->vad_map)
            to_file_times(st->vad_map, s);
        s->speaker = hark_levels_speaker(st->levels, s->start, s->end);
        if (st->p->callbacks.on_segment)
            st->p->callbacks.on_segment(s->start, s->end, s->text, st->p->callbacks.on_segment_user);
    }
    return advance;
}

/* Clip c of the clip timestamps as frames [*start, *end), within the audio
 * (openai's seek_clips: rounded to frames; an odd count ends at the end). */
static void clip_frames(const loop_state *st, int c, int *start, int *end)
{
    const hark_params *p = st->p;
    double a = p->n_clip_timestamps ? p->clip_timestamps[2 * c] : 0;
    double b = 2 * c + 1 < p->n_clip_timestamps ? p->clip_timestamps[2 * c + 1] : 1e9;
    *start = (int)fmin(nearbyint(a * 100), st->content);
    *end = (int)fmin(nearbyint(b * 100), st->content);
}

static void report_progress(const loop_state *st, int seek)
{
    if (st->p->callbacks.on_progress)
        st->p->callbacks.on_progress(seek / 100.0, st->content / 100.0, st->p->callbacks.on_progress_user);
}

/* A window's short-lived buffers leave holes in the heap among the segments that
 * stay, and the heap's resident pages grew with the file (about 24 MB an hour of
 * speech, with 1 MB in use); glibc returns the whole free pages among them. */
static void release_free_pages(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

static int run_windows(loop_state *st, hark_result *r)
{
    int clips = st->p->n_clip_timestamps ? (st->p->n_clip_timestamps + 1) / 2 : 1;
    for (int c = 0; c < clips; c++) {
        int seek, end;
        clip_frames(st, c, &seek, &end);
        while (seek < end) {
            if (st->p->callbacks.should_abort && st->p->callbacks.should_abort(st->p->callbacks.should_abort_user))
                return HARK_ERR_ABORTED;
            int advance = one_window(st, r, seek, end);
            if (advance < 0)
                return advance;
            seek += advance > 0 ? advance : 1;
            release_free_pages();
            if (seek < st->content)
                report_progress(st, seek);
        }
    }
    report_progress(st, st->content); /* clips may end early: the file is done */
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


/* openai's: " " + initial_prompt.strip(), tokenized; the token count, or -1. */
static int initial_prompt_tokens(const hark_model *m, const char *prompt, int **ids)
{
    static const char SPACE[] = " \t\n\r\v\f\x1c\x1d\x1e\x1f"; /* Python's, in ASCII */
    size_t from = strspn(prompt, SPACE), len = strlen(prompt);
    while (len > from && strchr(SPACE, prompt[len - 1]))
        len--;
    char *text = malloc(len - from + 2);
    int k = -1;
    if (text) {
        text[0] = ' ';
        memcpy(text + 1, prompt + from, len - from);
        text[len - from + 1] = 0;
        k = hark_tokenize(&m->vocab, text, ids);
    }
    free(text);
    return k;
}

static int prepare(loop_state *st, const hark_source *src, hark_error *e)
{
    const hark_model *m = st->m;
    int rc = hark_mel_stream_open(&st->mel, src, PAD_SAMPLES, m->hp.n_mels, e);
    if (rc)
        return rc;
    st->frames = st->mel.frames;
    st->content = (int)(src->n / SAMPLES_PER_FRAME);
    int len = 2 * m->hp.n_audio_ctx;
    st->window = malloc(sizeof(float) * (size_t)m->hp.n_mels * len);
    st->enc = hark_alloc_populated(sizeof(float) * (size_t)m->hp.n_audio_ctx * m->hp.n_audio_state);
    if (!st->window || !st->enc || hark_cross_init(&st->cross, m))
        return hark_fail(e, HARK_ERR_NOMEM, "out of memory for the model's buffers");
    if (st->p->suppress.regex && *st->p->suppress.regex &&
        (rc = hark_vocab_matching(&m->vocab, st->p->suppress.regex, &st->matching,
                                  &st->n_matching, e)))
        return rc;
    if (st->p->prompt.initial && *st->p->prompt.initial) {
        int *ids = NULL, k = initial_prompt_tokens(m, st->p->prompt.initial, &ids);
        int rc = k < 0 || history_add(st, ids, k);
        free(ids);
        if (rc)
            return hark_fail(e, HARK_ERR_NOMEM, "out of memory");
        st->n_initial = k;
    }
    return 0;
}

/* The parameters hark_run refuses, with the reason. */
static int check_params(const hark_model *m, const hark_params *p, hark_error *e)
{
    if (!m->vocab.multilingual && p->translate)
        return hark_fail(e, HARK_ERR_MODEL, "%s: an English-only model cannot translate", m->path);
    if (p->language && *p->language && strcmp(p->language, "auto") &&
        hark_lang_index(p->language) < 0)
        return hark_fail(e, HARK_ERR_ARG, "unknown language \"%s\": a Whisper language code "
                         "(en, de, ...) or its name (English, German, ...)", p->language);
    for (int i = 0; i < p->suppress.n_tokens && p->suppress.n_tokens <= HARK_MAX_SUPPRESS_TOKENS;
         i++)
        if (p->suppress.tokens[i] < -1 || p->suppress.tokens[i] >= m->hp.n_vocab)
            return hark_fail(e, HARK_ERR_ARG, "bad parameters: suppress token %d is not -1 or in "
                             "the vocabulary (0 to %d)", p->suppress.tokens[i], m->hp.n_vocab - 1);
    if (p->search.beam_size > HARK_MAX_BEAMS || p->search.best_of > HARK_MAX_BEAMS || p->fallback.n_temperatures < 0 ||
        p->suppress.n_tokens < 0 || p->suppress.n_tokens > HARK_MAX_SUPPRESS_TOKENS || p->max_len < 0 ||
        p->fallback.n_temperatures > HARK_MAX_TEMPERATURES || p->search.max_tokens < 0 ||
        p->n_clip_timestamps < 0 || p->n_clip_timestamps > HARK_MAX_CLIP_TIMESTAMPS)
        return hark_fail(e, HARK_ERR_ARG,
                         "bad parameters: beam_size and best_of at most %d, n_temperatures 0 to %d, "
                         "n_clip_timestamps 0 to %d, n_suppress_tokens 0 to %d, max_tokens and "
                         "max_len not negative", HARK_MAX_BEAMS, HARK_MAX_TEMPERATURES,
                         HARK_MAX_CLIP_TIMESTAMPS, HARK_MAX_SUPPRESS_TOKENS);
    if (!hark_precision_effective(p->precision))
        return hark_fail(e, HARK_ERR_ARG, "bad parameters: precision %d is not one of "
                         "HARK_PRECISION_AUTO, _F32, _BF16, _INT8", p->precision);
    if (p->vad.model && p->n_clip_timestamps)
        return hark_fail(e, HARK_ERR_ARG, "bad parameters: clip timestamps and VAD cannot be "
                         "combined (VAD chooses what is transcribed)");
    if (p->vad.model && !(p->vad.threshold > 0 && p->vad.threshold < 1 && p->vad.min_speech_ms >= 0 &&
                    p->vad.min_silence_ms >= 0 && p->vad.speech_pad_ms >= 0 &&
                    p->vad.max_speech_s >= 0 && p->vad.samples_overlap >= 0 &&
                    p->vad.samples_overlap <= 10))
        return hark_fail(e, HARK_ERR_ARG, "bad parameters: vad_threshold between 0 and 1, the "
                         "durations not negative, vad_samples_overlap at most 10 s");
    return 0;
}

/* The language (multilingual models), then the windows, over mono 16 kHz samples. */
static int transcribe_source(loop_state *st, hark_result *r, const hark_source *src,
                             hark_error *e)
{
    const hark_model *m = st->m;
    int rc = prepare(st, src, e);
    if (!rc && m->vocab.multilingual &&
        (rc = hark_mel_stream_window(&st->mel, 0, st->frames, 2 * m->hp.n_audio_ctx, st->window)))
        hark_fail_decode(e, rc, m);
    if (!rc && m->vocab.multilingual) {
        rc = hark_select_language(m, st->p, st->window, st->enc, &st->cross, r->language,
                                  sizeof r->language, &st->lang_token, e);
        st->task_token = st->p->translate ? m->vocab.sp.translate : m->vocab.sp.transcribe;
    }
    if (!rc && (rc = run_windows(st, r)))
        hark_fail_decode(e, rc, m);
    return rc;
}

int hark_run(const hark_model *m, const hark_params *p, hark_pool *pool, hark_decoder *dec,
             const hark_audio *in, hark_result *r, hark_error *e)
{
    return hark_run_observed(m, p, pool, dec, in, r, e, NULL);
}

int hark_run_observed(const hark_model *m, const hark_params *p, hark_pool *pool,
                      hark_decoder *dec, const hark_audio *in, hark_result *r, hark_error *e,
                      const hark_window_observer *obs)
{
    loop_state st = {0};
    st.obs = obs;
    const hark_source *src = in->src;
    st.m = m;
    st.dec = dec;
    st.p = p;
    st.levels = p->diarize ? in->levels : NULL;
    st.lang_token = st.task_token = -1;
    hark_result_clear(r);
    snprintf(r->language, sizeof r->language, "en");
    r->diarized = p->diarize;
    r->audio_seconds = (double)src->n / HARK_SAMPLE_RATE;
    if (src->n == 0)
        return hark_fail(e, HARK_ERR_ARG, "no audio samples");
    int rc = check_params(m, p, e);
    if (rc)
        return rc;
    /* hark's pool splits the work (OpenBLAS's own threads are the program's to set:
     * hark.h asks for one) */
    hark_pool_use(pool);
    hark_precision_use(hark_precision_resolve(p->precision));
    hark_source voiced; /* with VAD: the speech alone, joined, in a temporary file */
    hark_source_memory(&voiced, NULL, 0);
    hark_time_map map = {0};
    if (p->vad.model) {
        rc = hark_source_spool(&voiced, e);
        if (!rc)
            rc = hark_vad_speech(p, src, &voiced, &map, e);
        st.vad_map = &map;
        src = &voiced; /* no speech: no segments */
    }
    if (!rc && src->n)
        rc = transcribe_source(&st, r, src, e);
    if ((!rc || rc == HARK_ERR_ABORTED) && join_text(r)) /* aborted: the text so far */
        rc = hark_fail(e, HARK_ERR_NOMEM, "out of memory");
    hark_cross_free(&st.cross);
    hark_workspace_free(&st.ws);
    free(st.history);
    free(st.matching);
    free(st.carried);
    hark_mel_stream_close(&st.mel);
    free(st.window);
    free(st.enc);
    hark_source_close(&voiced);
    hark_time_map_free(&map);
    hark_pool_use(NULL);
    hark_precision_use(HARK_PREC_F32);
    return rc;
}
