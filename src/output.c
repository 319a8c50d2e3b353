/* Writers: txt, srt, vtt, tsv and json, formatted as openai/whisper's writers
 * format them; files are written under a temporary name and renamed. */
#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "transcribe.h"

const hark_result *hark_context_result(const hark_context *c);
const hark_params *hark_context_params(const hark_context *c);

typedef struct sbuf {
    char *s;
    size_t n, cap;
    int oom;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0 || b->oom)
        return;
    if (b->n + (size_t)k + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 1024) + (size_t)k;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

/* Segment text without surrounding blanks, as the writers print it. */
static char *stripped(const char *t)
{
    while (*t == ' ' || *t == '\t' || *t == '\n' || *t == '\r')
        t++;
    size_t n = strlen(t);
    while (n && (t[n - 1] == ' ' || t[n - 1] == '\t' || t[n - 1] == '\n' || t[n - 1] == '\r'))
        n--;
    return strndup(t, n);
}

/* openai's format_timestamp: hours always (srt) or only when non-zero (vtt). */
static void put_time(sbuf *b, double seconds, int always_hours, char sep)
{
    long ms = lround(seconds * 1000.0);
    long h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60;
    if (always_hours || h > 0)
        put(b, "%02ld:", h);
    put(b, "%02ld:%02ld%c%03ld", m, s, sep, ms % 1000);
}

static void put_txt(sbuf *b, const hark_result *r)
{
    for (int i = 0; i < r->n; i++) {
        char *t = stripped(r->seg[i].text);
        put(b, "%s\n", t ? t : "");
        free(t);
    }
}

/* The text of a subtitle cue: "-->" cannot appear inside one. */
static void put_cue_text(sbuf *b, const char *text)
{
    char *t = stripped(text);
    for (char *p = t; p && *p; p++) {
        if (strncmp(p, "-->", 3) == 0) {
            put(b, "->");
            p += 2;
        } else {
            put(b, "%c", *p);
        }
    }
    put(b, "\n");
    free(t);
}

/* One subtitle cue in SRT (numbered, hours always) or VTT form. */
static void put_cue(sbuf *b, int *index, double start, double end, const char *text, int srt)
{
    if (srt)
        put(b, "%d\n", ++*index);
    put_time(b, start, srt, srt ? ',' : '.');
    put(b, " --> ");
    put_time(b, end, srt, srt ? ',' : '.');
    put(b, "\n");
    put_cue_text(b, text);
    put(b, "\n");
}

/* The segment's words joined, word k (if >= 0) underlined after its spaces. */
static char *words_text(const hark_segment *s, int k)
{
    size_t n = 1;
    for (int i = 0; i < s->n_words; i++)
        n += strlen(s->words[i].text) + 7;
    char *t = malloc(n), *p = t;
    for (int i = 0; t && i < s->n_words; i++) {
        const char *w = s->words[i].text;
        size_t lead = strspn(w, " ");
        if (i == k)
            p += sprintf(p, "%.*s<u>%s</u>", (int)lead, w, w + lead);
        else
            p += sprintf(p, "%s", w);
    }
    if (t)
        *p = 0;
    return t;
}

/* openai's --highlight_words: a cue per word with that word underlined, and
 * the plain line over any gap between words. */
static void put_highlighted(sbuf *b, int *index, const hark_segment *s, int srt)
{
    char *plain = words_text(s, -1);
    double last = s->words[0].start;
    for (int k = 0; plain && k < s->n_words; k++) {
        const hark_word *w = &s->words[k];
        if (lround(last * 1000) != lround(w->start * 1000))
            put_cue(b, index, last, w->start, plain, srt);
        char *marked = words_text(s, k);
        if (marked)
            put_cue(b, index, w->start, w->end, marked, srt);
        free(marked);
        last = w->end;
    }
    free(plain);
}

static void put_subtitles(sbuf *b, const hark_result *r, int highlight, int srt)
{
    int index = 0;
    if (!srt)
        put(b, "WEBVTT\n\n");
    for (int i = 0; i < r->n; i++) {
        if (highlight && r->seg[i].n_words > 0)
            put_highlighted(b, &index, &r->seg[i], srt);
        else
            put_cue(b, &index, r->seg[i].start, r->seg[i].end, r->seg[i].text, srt);
    }
}

static void put_tsv(sbuf *b, const hark_result *r)
{
    put(b, "start\tend\ttext\n");
    for (int i = 0; i < r->n; i++) {
        char *t = stripped(r->seg[i].text);
        for (char *p = t; p && *p; p++)
            if (*p == '\t')
                *p = ' ';
        put(b, "%ld\t%ld\t%s\n", lround(r->seg[i].start * 1000), lround(r->seg[i].end * 1000),
            t ? t : "");
        free(t);
    }
}

static cJSON *segment_json(const hark_segment *s, int id)
{
    cJSON *o = cJSON_CreateObject(), *toks = cJSON_CreateArray();
    cJSON_AddNumberToObject(o, "id", id);
    cJSON_AddNumberToObject(o, "seek", s->seek);
    cJSON_AddNumberToObject(o, "start", s->start);
    cJSON_AddNumberToObject(o, "end", s->end);
    cJSON_AddStringToObject(o, "text", s->text);
    for (int j = 0; j < s->n_tokens; j++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddNumberToObject(t, "id", s->tokens[j]);
        cJSON_AddStringToObject(t, "text", s->token_text[j]);
        cJSON_AddNumberToObject(t, "p", round(s->probs[j] * 1e6) / 1e6);
        cJSON_AddItemToArray(toks, t);
    }
    cJSON_AddItemToObject(o, "tokens", toks);
    cJSON_AddNumberToObject(o, "temperature", s->temperature);
    cJSON_AddNumberToObject(o, "avg_logprob", round(s->avg_logprob * 1e6) / 1e6);
    cJSON_AddNumberToObject(o, "compression_ratio", round(s->compression_ratio * 1e6) / 1e6);
    cJSON_AddNumberToObject(o, "no_speech_prob", round(s->no_speech_prob * 1e6) / 1e6);
    if (s->n_words > 0) {
        cJSON *words = cJSON_AddArrayToObject(o, "words");
        for (int j = 0; j < s->n_words; j++) {
            cJSON *w = cJSON_CreateObject();
            cJSON_AddStringToObject(w, "word", s->words[j].text);
            cJSON_AddNumberToObject(w, "start", round(s->words[j].start * 100) / 100);
            cJSON_AddNumberToObject(w, "end", round(s->words[j].end * 100) / 100);
            cJSON_AddNumberToObject(w, "probability", round(s->words[j].probability * 1e6) / 1e6);
            cJSON_AddItemToArray(words, w);
        }
    }
    return o;
}

static void put_json(sbuf *b, const hark_result *r)
{
    cJSON *root = cJSON_CreateObject(), *segs = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "text", r->text ? r->text : "");
    for (int i = 0; i < r->n; i++)
        cJSON_AddItemToArray(segs, segment_json(&r->seg[i], i));
    cJSON_AddItemToObject(root, "segments", segs);
    cJSON_AddStringToObject(root, "language", r->language);
    char *s = cJSON_PrintUnformatted(root);
    if (s)
        put(b, "%s\n", s);
    else
        b->oom = 1;
    free(s);
    cJSON_Delete(root);
}

static void put_srt(sbuf *b, const hark_result *r, int highlight)
{
    put_subtitles(b, r, highlight, 1);
}

static void put_vtt(sbuf *b, const hark_result *r, int highlight)
{
    put_subtitles(b, r, highlight, 0);
}

static void put_txt_h(sbuf *b, const hark_result *r, int highlight)
{
    (void)highlight;
    put_txt(b, r);
}

static void put_tsv_h(sbuf *b, const hark_result *r, int highlight)
{
    (void)highlight;
    put_tsv(b, r);
}

static void put_json_h(sbuf *b, const hark_result *r, int highlight)
{
    (void)highlight;
    put_json(b, r);
}

static const struct {
    const char *name;
    void (*write)(sbuf *, const hark_result *, int highlight);
} WRITERS[] = {{"txt", put_txt_h}, {"srt", put_srt}, {"vtt", put_vtt}, {"tsv", put_tsv_h},
               {"json", put_json_h}};

char *hark_format_output(const hark_context *ctx, const char *format)
{
    const hark_result *r = hark_context_result(ctx);
    int highlight = hark_context_params(ctx)->highlight_words;
    for (size_t i = 0; i < sizeof WRITERS / sizeof WRITERS[0]; i++)
        if (strcmp(format, WRITERS[i].name) == 0) {
            sbuf b = {0};
            put(&b, "%s", "");
            WRITERS[i].write(&b, r, highlight);
            if (b.oom) {
                free(b.s);
                return NULL;
            }
            return b.s;
        }
    return NULL;
}

int hark_write_output(const hark_context *ctx, const char *format, const char *path, char *err,
                      size_t errlen)
{
    char *text = hark_format_output(ctx, format);
    if (!text) {
        snprintf(err, errlen, "%s: unknown format %s", path, format);
        return HARK_ERR_ARG;
    }
    size_t tlen = strlen(path) + 32;
    char *tmp = malloc(tlen);
    int rc = 0;
    snprintf(tmp, tlen, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(text, 1, strlen(text), f) != strlen(text) || fflush(f) != 0 ||
        fsync(fileno(f)) != 0) {
        snprintf(err, errlen, "%s: cannot write", path);
        rc = HARK_ERR_IO;
    }
    if (f && fclose(f) != 0 && !rc) {
        snprintf(err, errlen, "%s: cannot write", path);
        rc = HARK_ERR_IO;
    }
    if (!rc && rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: cannot rename into place", path);
        rc = HARK_ERR_IO;
    }
    if (rc)
        remove(tmp);
    free(tmp);
    free(text);
    return rc;
}
