/* hark serve's requests and answers in the two APIs it speaks: the form fields of
 * OpenAI's audio API and of whisper.cpp's server into hark_params, and the
 * transcript in the response_format asked for (OpenAI's verbose_json among them). */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "option_table.h"
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

/* hark's option of that name in the option table, which names the form field that
 * sets it and the field's range where it is the command line's. */
static const cli_option *option(const char *name)
{
    return cli_find_option(name, CLI_OWN);
}

/* The form field that sets hark's option of that name. */
static const char *field(const char *name)
{
    return option(name)->form;
}

/* The field of an option that takes what the command line gives it: a whole
 * number in the option's range, true or false for a flag; into p.  As number_field. */
static int option_field(const http_request *r, const char *name, request_options *q,
                        hark_params *p)
{
    const cli_option *opt = option(name);
    int *to = cli_param_int(p, opt), on, rc;
    double x;
    if (opt->kind == CLI_INT) {
        if ((rc = number_field(r, opt->form, opt->lo, opt->hi, 1, &x, q)) > 0)
            *to = (int)x;
    } else if ((rc = bool_field(r, opt->form, &on, q)) > 0) {
        *to = opt->flags & CLI_CLEARS ? !on : on;
    }
    return rc;
}

/* OpenAI's temperature T (0 to 1 in its API): above 0, openai's ladder from T in
 * steps of 0.2; with whisper.cpp's temperature_inc X, the ladder from T (0 if not
 * given) in steps of X, X = 0 being T alone (no fallback). */
static const char *temperatures(const http_request *r, request_options *q, hark_params *p)
{
    const char *t_field = field("--temperature");
    const char *inc_field = field("--temperature-increment-on-fallback");
    double t = 0, inc = 0;
    int has_inc = 0;
    if (number_field(r, t_field, 0, 1, 0, &t, q) < 0 ||
        (has_inc = number_field(r, inc_field, 0, 1, 0, &inc, q)) < 0)
        return q->why;
    if (has_inc && inc == 0) {
        p->fallback.n_temperatures = 1;
        p->fallback.temperatures[0] = (float)t;
    } else if ((has_inc || t > 0) && cli_temperature_ladder(p, t, has_inc ? inc : 0.2)) {
        snprintf(q->why, sizeof q->why, "%s: more than %d temperatures from %s to 1", inc_field,
                 HARK_MAX_TEMPERATURES, t_field);
        return q->why;
    }
    return NULL;
}

/* offset_t and duration, whisper.cpp's milliseconds: a clip of the file. */
static const char *offset_and_duration(const http_request *r, request_options *q, hark_params *p)
{
    const cli_option *from = option("--offset-t"), *length = option("--duration");
    double offset = 0, duration = 0;
    if (number_field(r, from->form, from->lo, from->hi, 1, &offset, q) < 0 ||
        number_field(r, length->form, length->lo, length->hi, 1, &duration, q) < 0)
        return q->why;
    if (offset > 0 || duration > 0)
        cli_clip_ms(p, offset, duration);
    return NULL;
}

/* The other fields of whisper.cpp's server that hark has: beam_size (-1, its
 * default, or 1: greedy), best_of, no_timestamps, max_len (cut between words,
 * whisper.cpp's split_on_word; 0: no limit), diarize, logprob_thold (an average
 * log-probability, at most 0). */
static const char *whispercpp_fields(const http_request *r, request_options *q, hark_params *p)
{
    const cli_option *beam = option("--beam-size"), *max_len = option("--max-len");
    double x;
    int rc;
    if ((rc = number_field(r, beam->form, -1, beam->hi, 1, &x, q)) < 0)
        return q->why;
    p->search.beam_size = rc ? (x > 1 ? (int)x : 1) : p->search.beam_size;
    if (option_field(r, "--best-of", q, p) < 0 || option_field(r, "--no-timestamps", q, p) < 0)
        return q->why;
    if ((rc = number_field(r, max_len->form, 0, max_len->hi, 1, &x, q)) < 0)
        return q->why;
    if (rc && x > 0)
        p->max_len = (int)x, p->words.enabled = 1;
    if (option_field(r, "--diarize", q, p) < 0)
        return q->why;
    if ((rc = number_field(r, field("--logprob-threshold"), -1e6, 0, 0, &x, q)) < 0)
        return q->why;
    p->fallback.logprob_threshold = rc ? (float)x : p->fallback.logprob_threshold;
    return offset_and_duration(r, q, p);
}

const char *serve_request_options(const http_request *r, request_options *q, hark_params *p)
{
    const char *granularity = field("--word-timestamps");
    if (!text_field(r, field("--format"), q->format, sizeof q->format))
        snprintf(q->format, sizeof q->format, "json");
    if (!hark_is_format(q->format) && strcmp(q->format, "text") &&
        strcmp(q->format, "verbose_json"))
        return "response_format is one of json, text, verbose_json, srt, vtt, tsv, csv, lrc";
    if (text_field(r, field("--language"), q->language, sizeof q->language) && *q->language)
        p->language = q->language;
    if (text_field(r, field("--initial-prompt"), q->prompt, sizeof q->prompt) && *q->prompt)
        p->prompt.initial = q->prompt;
    int translate, rc = bool_field(r, field("--task"), &translate, q); /* whisper.cpp's */
    if (rc < 0)
        return q->why;
    p->translate = rc ? translate : p->translate;
    form_field g; /* OpenAI's SDK sends one field for each granularity */
    for (int found = http_form_field(r, granularity, &g) == 0; found;
         found = http_form_next(r, granularity, &g) == 0)
        p->words.enabled |= g.len == 4 && memcmp(g.data, "word", 4) == 0;
    const char *bad = temperatures(r, q, p);
    return bad ? bad : whispercpp_fields(r, q, p);
}

const char *serve_upload_options(const http_request *r, const hark_model *m, form_field *file,
                                 request_options *q, hark_params *p)
{
    if (http_form_field(r, "file", file))
        return "the body holds no \"file\": send multipart/form-data with the audio as its "
               "\"file\" field";
    const char *bad = serve_request_options(r, q, p);
    int vad, rc = bad ? 0 : bool_field(r, "vad", &vad, q);
    if (rc < 0)
        return q->why;
    if (rc > 0 && vad && !p->vad.model)
        return "this server has no VAD model: start hark serve with --vad";
    if (rc > 0 && !vad)
        p->vad.model = NULL;
    p->translate |= !strcmp(r->path, "/v1/audio/translations");
    if (!bad && p->translate && !hark_model_is_multilingual(m))
        bad = "this server's model is English-only: it cannot translate";
    return bad;
}

int serve_save_upload(const form_field *f, char *path, size_t n)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, n, "%s/hark-upload-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    size_t at = 0;
    while (at < f->len) {
        ssize_t w = write(fd, f->data + at, f->len - at);
        if (w <= 0)
            break;
        at += (size_t)w;
    }
    close(fd);
    if (at < f->len)
        unlink(path);
    return at < f->len ? -1 : 0;
}

int serve_failure(const hark_context *ctx, int rc, const hark_params *p, const char *tmp,
                  const char *name, char *out, size_t n)
{
    const char *upload = *name ? name : "the uploaded file";
    if (!ctx || rc == HARK_ERR_NOMEM)
        return snprintf(out, n, "out of memory"), 500;
    if (rc == HARK_ERR_TOO_LONG) /* the library's message tells of a transcript kept */
        return snprintf(out, n, "%s: longer than this server's --max-duration (%g s)", upload,
                        p->max_duration), 413;
    const char *e = hark_last_error(ctx);
    size_t k = strlen(tmp);
    if (strncmp(e, tmp, k) == 0)
        snprintf(out, n, "%s%s", upload, e + k);
    else
        snprintf(out, n, "%s", e);
    return 400;
}

void serve_respond_error(conn *c, int status, const char *extra, const char *message)
{
    cJSON *root = cJSON_CreateObject(), *err = cJSON_AddObjectToObject(root, "error");
    cJSON_AddStringToObject(err, "message", message);
    cJSON_AddStringToObject(err, "type", status >= 500 ? "server_error" : "invalid_request_error");
    if (status == 401)
        cJSON_AddStringToObject(err, "code", "invalid_api_key");
    char *body = cJSON_PrintUnformatted(root);
    const char *text = body ? body : "{\"error\":{\"message\":\"out of memory\"}}";
    conn_answer(c, status, extra, "application/json", text, strlen(text));
    free(body);
    cJSON_Delete(root);
}

int serve_error(conn *c, int status, const char *message)
{
    serve_respond_error(c, status, NULL, message);
    return status;
}

int serve_respond_json(conn *c, int status, cJSON *root)
{
    char *body = root ? cJSON_PrintUnformatted(root) : NULL;
    if (body)
        conn_answer(c, status, NULL, "application/json", body, strlen(body));
    else
        status = serve_error(c, 500, "out of memory");
    free(body);
    cJSON_Delete(root);
    return status;
}

const char *serve_content_type(const char *format)
{
    if (!strcmp(format, "json") || !strcmp(format, "verbose_json"))
        return "application/json";
    if (!strcmp(format, "vtt"))
        return "text/vtt; charset=utf-8";
    if (!strcmp(format, "csv"))
        return "text/csv; charset=utf-8";
    return "text/plain; charset=utf-8";
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
    *content_type = serve_content_type(format);
    if (strcmp(format, "verbose_json") == 0)
        return verbose_json(ctx, p);
    if (strcmp(format, "json") == 0) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "text", hark_text(ctx));
        char *s = cJSON_PrintUnformatted(root);
        cJSON_Delete(root);
        return s;
    }
    if (strcmp(format, "text") == 0) {
        size_t len = strlen(hark_text(ctx));
        char *s = malloc(len + 2);
        if (s)
            snprintf(s, len + 2, "%s\n", hark_text(ctx));
        return s;
    }
    return hark_format_output(ctx, format, layout);
}
