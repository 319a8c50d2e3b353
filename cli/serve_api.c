/* hark serve's requests and answers in the two APIs it speaks: the form fields of
 * OpenAI's audio API and of whisper.cpp's server into hark_params, and the
 * transcript in the response_format asked for (OpenAI's verbose_json among them). */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "serve_api.h"
#include "face.h"

/* A text field of the form, NUL-terminated into out; 0 when absent. */
static int text_field(const http_request *r, const char *name, char *out, size_t n)
{
    form_field f;
    if (http_form_field(r, name, &f))
        return 0;
    snprintf(out, n, "%.*s", (int)(f.len < n ? f.len : n - 1), f.data);
    return 1;
}

/* A number field in [lo, hi]: 1 with it in *x, 0 when absent, -1 (why said) when
 * it is no such number; whole: an integer. */
static int number_field(const http_request *r, const char *name, double lo, double hi,
                        int whole, double *x, request_options *q)
{
    char v[40], *end;
    if (!text_field(r, name, v, sizeof v))
        return 0;
    *x = strtod(v, &end);
    if (*v && !*end && *x >= lo && *x <= hi && (!whole || *x == (long)*x))
        return 1;
    snprintf(q->why, sizeof q->why, whole ? "%s is a whole number from %.0f to %.0f"
                                          : "%s is a number from %g to %g", name, lo, hi);
    return -1;
}

/* whisper.cpp's boolean field: true, 1, yes, y or false, 0, no, n. */
static int bool_field(const http_request *r, const char *name, int *x, request_options *q)
{
    char v[8];
    if (!text_field(r, name, v, sizeof v))
        return 0;
    static const char *const words[] = {"false", "0", "no", "n", "true", "1", "yes", "y"};
    for (int i = 0; i < 8; i++)
        if (!strcmp(v, words[i]))
            return *x = i >= 4, 1;
    snprintf(q->why, sizeof q->why, "%s is true or false", name);
    return -1;
}

_Static_assert(HARK_MAX_TEMPERATURES == 16, "temperatures() says 16 in its error");

/* OpenAI's temperature T: above 0, openai's ladder from T in steps of 0.2; with
 * whisper.cpp's temperature_inc X, the ladder from T (0 if not given) in steps
 * of X, X = 0 being T alone (no fallback). */
static const char *temperatures(const http_request *r, request_options *q, hark_params *p)
{
    double t = 0, inc = 0;
    int has_inc = 0;
    if (number_field(r, "temperature", 0, 1, 0, &t, q) < 0 ||
        (has_inc = number_field(r, "temperature_inc", 0, 1, 0, &inc, q)) < 0)
        return q->why;
    if (has_inc && inc == 0) {
        p->fallback.n_temperatures = 1;
        p->fallback.temperatures[0] = (float)t;
    } else if ((has_inc || t > 0) && cli_temperature_ladder(p, t, has_inc ? inc : 0.2)) {
        return "temperature_inc: more than 16 temperatures from temperature to 1";
    }
    return NULL;
}

/* offset_t and duration, whisper.cpp's milliseconds: a clip of the file. */
static const char *offset_and_duration(const http_request *r, request_options *q, hark_params *p)
{
    double offset = 0, duration = 0;
    if (number_field(r, "offset_t", 0, 1e9, 1, &offset, q) < 0 ||
        number_field(r, "duration", 0, 1e9, 1, &duration, q) < 0)
        return q->why;
    if (offset > 0 || duration > 0)
        cli_clip_ms(p, offset, duration);
    return NULL;
}

/* The other fields of whisper.cpp's server that hark has: beam_size (-1, its
 * default, or 1: greedy), best_of, no_timestamps, max_len (cut between words,
 * whisper.cpp's split_on_word), diarize, logprob_thold. */
static const char *whispercpp_fields(const http_request *r, request_options *q, hark_params *p)
{
    double beam, best_of, max_len, logprob;
    int flag, rc;
    if ((rc = number_field(r, "beam_size", -1, 64, 1, &beam, q)) < 0)
        return q->why;
    p->search.beam_size = rc ? (beam > 1 ? (int)beam : 1) : p->search.beam_size;
    if ((rc = number_field(r, "best_of", 1, 64, 1, &best_of, q)) < 0)
        return q->why;
    p->search.best_of = rc ? (int)best_of : p->search.best_of;
    if ((rc = bool_field(r, "no_timestamps", &flag, q)) < 0)
        return q->why;
    p->timestamps = rc ? !flag : p->timestamps;
    if ((rc = number_field(r, "max_len", 0, 100000, 1, &max_len, q)) < 0)
        return q->why;
    if (rc && max_len > 0)
        p->max_len = (int)max_len, p->words.enabled = 1;
    if ((rc = bool_field(r, "diarize", &flag, q)) < 0)
        return q->why;
    p->diarize = rc ? flag : p->diarize;
    if ((rc = number_field(r, "logprob_thold", -1e6, 0, 0, &logprob, q)) < 0)
        return q->why;
    p->fallback.logprob_threshold = rc ? (float)logprob : p->fallback.logprob_threshold;
    return offset_and_duration(r, q, p);
}

const char *serve_request_options(const http_request *r, request_options *q, hark_params *p)
{
    if (!text_field(r, "response_format", q->format, sizeof q->format))
        snprintf(q->format, sizeof q->format, "json");
    if (!hark_is_format(q->format) && strcmp(q->format, "text") &&
        strcmp(q->format, "verbose_json"))
        return "response_format is one of json, text, verbose_json, srt, vtt, tsv, csv, lrc";
    if (text_field(r, "language", q->language, sizeof q->language) && *q->language)
        p->language = q->language;
    if (text_field(r, "prompt", q->prompt, sizeof q->prompt) && *q->prompt)
        p->prompt.initial = q->prompt;
    int translate, rc = bool_field(r, "translate", &translate, q); /* whisper.cpp's */
    if (rc < 0)
        return q->why;
    p->translate = rc ? translate : p->translate;
    form_field g; /* OpenAI's SDK sends one field for each granularity */
    for (int found = http_form_field(r, "timestamp_granularities[]", &g) == 0; found;
         found = http_form_next(r, "timestamp_granularities[]", &g) == 0)
        p->words.enabled |= g.len == 4 && memcmp(g.data, "word", 4) == 0;
    const char *bad = temperatures(r, q, p);
    return bad ? bad : whispercpp_fields(r, q, p);
}

/* One segment as OpenAI's verbose_json has it (tokens as ids). */
static cJSON *api_segment(const hark_context *ctx, int i)
{
    cJSON *seg = cJSON_CreateObject(), *tokens = cJSON_CreateArray();
    cJSON_AddNumberToObject(seg, "id", i);
    cJSON_AddNumberToObject(seg, "seek", hark_segment_seek(ctx, i));
    cJSON_AddNumberToObject(seg, "start", hark_segment_start(ctx, i));
    cJSON_AddNumberToObject(seg, "end", hark_segment_end(ctx, i));
    cJSON_AddStringToObject(seg, "text", hark_segment_text(ctx, i));
    for (int j = 0; j < hark_segment_n_tokens(ctx, i); j++)
        cJSON_AddItemToArray(tokens, cJSON_CreateNumber(hark_segment_token(ctx, i, j).id));
    cJSON_AddItemToObject(seg, "tokens", tokens);
    cJSON_AddNumberToObject(seg, "temperature", hark_segment_temperature(ctx, i));
    cJSON_AddNumberToObject(seg, "avg_logprob", hark_segment_avg_logprob(ctx, i));
    cJSON_AddNumberToObject(seg, "compression_ratio", hark_segment_compression_ratio(ctx, i));
    cJSON_AddNumberToObject(seg, "no_speech_prob", hark_segment_no_speech_prob(ctx, i));
    return seg;
}

/* OpenAI's verbose_json: task, language (its name, "english"), duration, text, segments,
 * and with word timing the words of all segments. */
static char *verbose_json(const hark_context *ctx, const hark_params *p)
{
    cJSON *root = cJSON_CreateObject(), *segs = cJSON_CreateArray(), *w = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "task", p->translate ? "translate" : "transcribe");
    const char *name = hark_language_name(hark_language(ctx));
    cJSON_AddStringToObject(root, "language", name ? name : hark_language(ctx));
    cJSON_AddNumberToObject(root, "duration", hark_audio_seconds(ctx));
    cJSON_AddStringToObject(root, "text", hark_text(ctx));
    for (int i = 0; i < hark_n_segments(ctx); i++) {
        cJSON_AddItemToArray(segs, api_segment(ctx, i));
        for (int k = 0; k < hark_segment_n_words(ctx, i); k++) {
            double start, end;
            float p;
            const char *word = hark_segment_word(ctx, i, k, &start, &end, &p);
            cJSON *item = cJSON_CreateObject();
            cJSON_AddStringToObject(item, "word", word);
            cJSON_AddNumberToObject(item, "start", start);
            cJSON_AddNumberToObject(item, "end", end);
            cJSON_AddItemToArray(w, item);
        }
    }
    cJSON_AddItemToObject(root, "segments", segs);
    if (p->words.enabled)
        cJSON_AddItemToObject(root, "words", w);
    else
        cJSON_Delete(w);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

/* The transcript in the requested format: {"text"} for json, OpenAI's verbose_json,
 * hark's writers for the rest (malloc'd). */
char *serve_render(const hark_context *ctx, const char *format, const hark_params *p,
                   const hark_output_params *layout, const char **content_type)
{
    *content_type = "text/plain; charset=utf-8";
    if (strcmp(format, "verbose_json") == 0) {
        *content_type = "application/json";
        return verbose_json(ctx, p);
    }
    if (strcmp(format, "json") == 0) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "text", hark_text(ctx));
        char *s = cJSON_PrintUnformatted(root);
        cJSON_Delete(root);
        *content_type = "application/json";
        return s;
    }
    if (strcmp(format, "text") == 0) {
        size_t len = strlen(hark_text(ctx));
        char *s = malloc(len + 2);
        if (s)
            snprintf(s, len + 2, "%s\n", hark_text(ctx));
        return s;
    }
    if (strcmp(format, "vtt") == 0)
        *content_type = "text/vtt; charset=utf-8";
    else if (strcmp(format, "csv") == 0)
        *content_type = "text/csv; charset=utf-8";
    return hark_format_output(ctx, format, layout);
}
