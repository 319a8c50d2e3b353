/* Writers: txt, srt, vtt, tsv and json, formatted as openai/whisper's writers
 * format them, and whisper.cpp's csv and lrc; files are written under a
 * temporary name and renamed.  Also the segment lines hark prints on stdout. */
#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "face.h"

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
/* Moves *t past the leading whitespace; returns the length without the trailing. */
static size_t strip_span(const char **t)
{
    const char *s = *t;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    *t = s;
    return n;
}

static char *stripped(const char *t)
{
    size_t n = strip_span(&t);
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

/* whisper.cpp's label before a diarized segment's text: "(speaker 0) ", or in
 * WebVTT a voice span, "<v Speaker0>" (speaker: the segment's label, 0 for none). */
static void put_speaker(sbuf *b, char speaker, int vtt)
{
    if (speaker)
        put(b, vtt ? "<v Speaker%c>" : "(speaker %c) ", speaker);
}

char *hark_txt_line(const char *text, char speaker)
{
    sbuf b = {0};
    size_t n = strip_span(&text);
    put_speaker(&b, speaker, 0);
    put(&b, "%.*s\n", (int)n, text);
    return b.oom ? (free(b.s), NULL) : b.s;
}

/* whisper.cpp's --print-colors palette (xterm's 256 colours), red to green */
static const int CONFIDENCE_COLORS[] = {196, 202, 208, 214, 220, 226, 190, 154, 118, 82};
enum { N_CONFIDENCE_COLORS = sizeof CONFIDENCE_COLORS / sizeof CONFIDENCE_COLORS[0] };

/* Whether the last bytes of s[0..n) begin a UTF-8 character they do not finish. */
static int ends_mid_character(const char *s, size_t n)
{
    for (size_t k = 1; k <= 3 && k <= n; k++) {
        unsigned char c = (unsigned char)s[n - k];
        if ((c & 0xC0) != 0x80)
            return (c >= 0xF0 ? 4u : c >= 0xE0 ? 3u : c >= 0xC0 ? 2u : 1u) > k;
    }
    return 0;
}

/* Text bytes in one colour: the whitespace that opens a segment stays outside
 * it, so the line can still be stripped. */
static void put_colored(sbuf *b, const char *bytes, size_t n, float p)
{
    char *text = hark_utf8_sanitize(bytes, n);
    if (!text) {
        b->oom = 1;
        return;
    }
    const char *t = text;
    if (strspn(b->s, " ") == b->n) /* nothing but blanks so far */
        for (; *t == ' '; t++)
            put(b, " ");
    int k = (int)(powf(p, 3) * N_CONFIDENCE_COLORS);
    k = k < 0 ? 0 : k >= N_CONFIDENCE_COLORS ? N_CONFIDENCE_COLORS - 1 : k;
    if (*t)
        put(b, "\033[38;5;%dm%s\033[0m", CONFIDENCE_COLORS[k], t);
    free(text);
}

char *hark_colored_text(const hark_vocab *v, const hark_segment *s)
{
    sbuf b = {0}, pending = {0};
    put(&b, "%s", "");
    float p = 1;
    for (int j = 0; j < s->n_tokens; j++) {
        int id = s->tokens[j];
        if (id < 0 || id >= v->sp.eot)
            continue;
        put(&pending, "%.*s", v->length[id], v->bytes + v->offset[id]);
        p = fminf(p, s->probs[j]);
        if (pending.oom || ends_mid_character(pending.s, pending.n))
            continue;
        put_colored(&b, pending.s, pending.n, p);
        pending.n = 0, p = 1;
    }
    if (pending.n)
        put_colored(&b, pending.s, pending.n, p);
    free(pending.s);
    return b.oom || pending.oom ? (free(b.s), NULL) : b.s;
}

char *hark_verbose_line(double start, double end, const char *text, char speaker)
{
    sbuf b = {0};
    put(&b, "[");
    put_time(&b, start, 0, '.');
    put(&b, " --> ");
    put_time(&b, end, 0, '.');
    put(&b, "] ");
    if (speaker)
        put(&b, " (speaker %c)", speaker);
    put(&b, "%s\n", text);
    return b.oom ? (free(b.s), NULL) : b.s;
}

static void put_txt(sbuf *b, const hark_result *r)
{
    for (int i = 0; i < r->n; i++) {
        char *line = hark_txt_line(r->seg[i].text, r->seg[i].speaker);
        put(b, "%s", line ? line : "\n");
        free(line);
    }
}

/* The text of a subtitle cue: "-->" cannot appear inside one. */
static void put_cue_text(sbuf *b, const char *text, char speaker, int srt)
{
    char *t = stripped(text);
    put_speaker(b, speaker, !srt);
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

/* One subtitle cue in SRT (numbered, hours always) or VTT form, labelled with
 * its speaker when diarized. */
static void put_cue(sbuf *b, int *index, double start, double end, const char *text,
                    char speaker, int srt)
{
    if (srt)
        put(b, "%d\n", ++*index);
    put_time(b, start, srt, srt ? ',' : '.');
    put(b, " --> ");
    put_time(b, end, srt, srt ? ',' : '.');
    put(b, "\n");
    put_cue_text(b, text, speaker, srt);
    put(b, "\n");
}

/* ------------------------------------------------------------ word cues */

/* A word in a cue (openai's iterate_subtitles): as spoken (its leading
 * space), stripped (first of a cue), or stripped on a new line. */
enum { WORD_AS_SPOKEN, WORD_STRIPPED, WORD_NEW_LINE };

typedef struct cue_word {
    const hark_word *w;
    char speaker; /* its segment's label */
    int starts_cue;
    int shown; /* WORD_... */
} cue_word;

static size_t stripped_chars(const char *s)
{
    char *t = stripped(s);
    size_t n = t ? hark_utf8_chars(t) : 0;
    free(t);
    return n;
}

/* Where word k of a segment goes, given the line so far (openai's rules):
 * lines of at most max_line_width characters, cues of at most max_line_count
 * lines, a new cue after a pause of over 3 s; without both of those, each
 * segment, or each max_words_per_line words of one, is a cue of its own. */
typedef struct layout {
    const hark_output_params *p;
    int keep_segments, per_line, lines, in_cue;
    size_t width, line_len;
    double last; /* the previous word's start */
} layout;

static cue_word place(layout *l, const hark_word *w, int k)
{
    cue_word c = {w, 0, 0, WORD_AS_SPOKEN};
    int pause = !l->keep_segments && w->start - l->last > 3.0;
    int segment_break = l->keep_segments && k % l->per_line == 0 && l->in_cue > 0;
    size_t width = hark_utf8_chars(w->text);
    if (l->line_len > 0 && l->line_len + width <= l->width && !pause && !segment_break) {
        l->line_len += width;
    } else {
        c.shown = WORD_STRIPPED;
        if (segment_break ||
            (l->in_cue > 0 && l->p->max_line_count > 0 && (pause || l->lines >= l->p->max_line_count))) {
            l->in_cue = 0;
            l->lines = 1;
        } else if (l->line_len > 0) {
            l->lines++;
            c.shown = WORD_NEW_LINE;
        }
        l->line_len = stripped_chars(w->text);
    }
    c.starts_cue = l->in_cue++ == 0;
    l->last = w->start;
    return c;
}

/* Every word of the result, placed; NULL when out of memory. */
static cue_word *lay_out(const hark_result *r, const hark_output_params *p, int *n)
{
    int total = 0;
    for (int i = 0; i < r->n; i++)
        total += r->seg[i].n_words;
    cue_word *cw = malloc(sizeof *cw * (size_t)(total ? total : 1));
    layout l = {.p = p,
                .keep_segments = !(p->max_line_width > 0 && p->max_line_count > 0),
                .per_line = p->max_words_per_line > 0 ? p->max_words_per_line : 1000,
                .lines = 1,
                .width = p->max_line_width > 0 ? (size_t)p->max_line_width : 1000};
    *n = 0;
    for (int i = 0; cw && i < r->n; i++)
        for (int k = 0; k < r->seg[i].n_words; k++) {
            if (*n == 0)
                l.last = r->seg[i].words[k].start;
            cw[*n] = place(&l, &r->seg[i].words[k], k);
            cw[(*n)++].speaker = r->seg[i].speaker;
        }
    return cw;
}

/* A cue's text, word u (if >= 0) underlined after its blanks. */
static char *cue_text(const cue_word *cw, int n, int u)
{
    size_t size = 1;
    for (int i = 0; i < n; i++)
        size += strlen(cw[i].w->text) + 8;
    char *t = malloc(size), *p = t;
    for (int i = 0; t && i < n; i++) {
        char *word = cw[i].shown == WORD_AS_SPOKEN ? strdup(cw[i].w->text) : stripped(cw[i].w->text);
        if (!word) {
            free(t);
            return NULL;
        }
        const char *brk = cw[i].shown == WORD_NEW_LINE ? "\n" : "";
        size_t lead = strspn(word, " \t\n\r");
        if (i == u)
            p += sprintf(p, "%s%.*s<u>%s</u>", brk, (int)lead, word, word + lead);
        else
            p += sprintf(p, "%s%s", brk, word);
        free(word);
    }
    if (t)
        *p = 0;
    return t;
}

/* One cue of words; with highlight (openai's --highlight_words) a cue per
 * word with that word underlined, and the plain text over any gap.  Its first
 * word's segment names the speaker. */
static void put_word_cue(sbuf *b, int *index, const cue_word *cw, int n, int highlight, int srt)
{
    char *plain = cue_text(cw, n, -1);
    if (!plain) {
        b->oom = 1;
        return;
    }
    char who = cw[0].speaker;
    if (!highlight)
        put_cue(b, index, cw[0].w->start, cw[n - 1].w->end, plain, who, srt);
    double last = cw[0].w->start;
    for (int k = 0; highlight && k < n; k++) {
        const hark_word *w = cw[k].w;
        if (lround(last * 1000) != lround(w->start * 1000))
            put_cue(b, index, last, w->start, plain, who, srt);
        char *marked = cue_text(cw, n, k);
        if (marked)
            put_cue(b, index, w->start, w->end, marked, who, srt);
        b->oom |= !marked;
        free(marked);
        last = w->end;
    }
    free(plain);
}

static void put_word_cues(sbuf *b, int *index, const hark_result *r, const hark_output_params *p, int srt)
{
    int n;
    cue_word *cw = lay_out(r, p, &n);
    if (!cw) {
        b->oom = 1;
        return;
    }
    for (int a = 0, z; a < n; a = z) {
        for (z = a + 1; z < n && !cw[z].starts_cue; z++)
            ;
        put_word_cue(b, index, cw + a, z - a, p->highlight_words, srt);
    }
    free(cw);
}

static int has_words(const hark_result *r)
{
    for (int i = 0; i < r->n; i++)
        if (r->seg[i].n_words > 0)
            return 1;
    return 0;
}

/* Cues from the words when their layout or highlighting was asked for,
 * else a cue per segment. */
static void put_subtitles(sbuf *b, const hark_result *r, const hark_output_params *p, int srt)
{
    int index = 0, by_words = p->highlight_words || p->max_line_width > 0 ||
                              p->max_line_count > 0 || p->max_words_per_line > 0;
    if (!srt)
        put(b, "WEBVTT\n\n");
    if (by_words && has_words(r)) {
        put_word_cues(b, &index, r, p, srt);
        return;
    }
    for (int i = 0; i < r->n; i++)
        put_cue(b, &index, r->seg[i].start, r->seg[i].end, r->seg[i].text, r->seg[i].speaker,
                srt);
}

/* openai's tsv; diarized, a speaker column before the text (empty for a file
 * without two channels), as whisper.cpp's csv has one. */
static void put_tsv(sbuf *b, const hark_result *r, int diarize)
{
    put(b, diarize ? "start\tend\tspeaker\ttext\n" : "start\tend\ttext\n");
    for (int i = 0; i < r->n; i++) {
        char *t = stripped(r->seg[i].text);
        for (char *p = t; p && *p; p++)
            if (*p == '\t')
                *p = ' ';
        put(b, "%ld\t%ld\t", lround(r->seg[i].start * 1000), lround(r->seg[i].end * 1000));
        if (diarize)
            put(b, "%.1s\t", &r->seg[i].speaker);
        put(b, "%s\n", t ? t : "");
        free(t);
    }
}

/* whisper.cpp's -ocsv: milliseconds and the text quoted, with a speaker column
 * when diarized.  Quotes inside are doubled (RFC 4180, as spreadsheets and
 * Python's csv read them), where whisper.cpp writes \" instead. */
static void put_csv(sbuf *b, const hark_result *r, const hark_output_params *p)
{
    (void)p;
    put(b, r->diarized ? "start,end,speaker,text\n" : "start,end,text\n");
    for (int i = 0; i < r->n; i++) {
        put(b, "%ld,%ld,", lround(r->seg[i].start * 1000), lround(r->seg[i].end * 1000));
        if (r->diarized)
            put(b, "%.1s,", &r->seg[i].speaker);
        const char *t = r->seg[i].text;
        size_t n = strip_span(&t);
        put(b, "\"");
        for (const char *q; (q = memchr(t, '"', n)); n -= (size_t)(q + 1 - t), t = q + 1)
            put(b, "%.*s\"\"", (int)(q - t), t);
        put(b, "%.*s\"\n", (int)n, t);
    }
}

/* whisper.cpp's -olrc, lyrics for music players: "[mm:ss.xx]text" at each
 * segment's start (minutes past 99 as they come), its speaker label first. */
static void put_lrc(sbuf *b, const hark_result *r, const hark_output_params *p)
{
    (void)p;
    put(b, "[by:hark]\n");
    for (int i = 0; i < r->n; i++) {
        long cs = lround(r->seg[i].start * 100);
        const char *t = r->seg[i].text;
        size_t n = strip_span(&t);
        put(b, "[%02ld:%02ld.%02ld]", cs / 6000, cs / 100 % 60, cs % 100);
        put_speaker(b, r->seg[i].speaker, 0);
        put(b, "%.*s\n", (int)n, t);
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
    char label[2] = {s->speaker, 0};
    if (s->speaker) /* after the text, as whisper.cpp's */
        cJSON_AddStringToObject(o, "speaker", label);
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

/* s as cJSON prints a string value, into b. */
static void put_json_string(sbuf *b, const char *s)
{
    cJSON *item = cJSON_CreateString(s);
    char *text = item ? cJSON_PrintUnformatted(item) : NULL;
    if (text)
        put(b, "%s", text);
    else
        b->oom = 1;
    free(text);
    cJSON_Delete(item);
}

/* cJSON's unformatted print of {"text", "segments", "language"}, a segment at a
 * time: the tree of a long file's tokens at once took tens of MB (3 hours: 60 000
 * tokens), and memory is not to grow with the file. */
static void put_json(sbuf *b, const hark_result *r)
{
    put(b, "%s", "{\"text\":");
    put_json_string(b, r->text ? r->text : "");
    put(b, "%s", ",\"segments\":[");
    for (int i = 0; i < r->n && !b->oom; i++) {
        cJSON *seg = segment_json(&r->seg[i], i);
        char *s = seg ? cJSON_PrintUnformatted(seg) : NULL;
        if (s)
            put(b, i ? ",%s" : "%s", s);
        else
            b->oom = 1;
        free(s);
        cJSON_Delete(seg);
    }
    put(b, "%s", "],\"language\":");
    put_json_string(b, r->language);
    put(b, "%s", "}\n");
}

static void put_srt(sbuf *b, const hark_result *r, const hark_output_params *p)
{
    put_subtitles(b, r, p, 1);
}

static void put_vtt(sbuf *b, const hark_result *r, const hark_output_params *p)
{
    put_subtitles(b, r, p, 0);
}

static void put_txt_p(sbuf *b, const hark_result *r, const hark_output_params *p)
{
    (void)p;
    put_txt(b, r);
}

static void put_tsv_p(sbuf *b, const hark_result *r, const hark_output_params *p)
{
    (void)p;
    put_tsv(b, r, r->diarized);
}

static void put_json_p(sbuf *b, const hark_result *r, const hark_output_params *p)
{
    (void)p;
    put_json(b, r);
}

static const struct {
    const char *name;
    void (*write)(sbuf *, const hark_result *, const hark_output_params *);
} WRITERS[] = {{"txt", put_txt_p}, {"srt", put_srt}, {"vtt", put_vtt}, {"tsv", put_tsv_p},
               {"json", put_json_p}, {"csv", put_csv}, {"lrc", put_lrc}};

int hark_is_format(const char *name)
{
    for (size_t i = 0; i < sizeof WRITERS / sizeof WRITERS[0]; i++)
        if (strcmp(name, WRITERS[i].name) == 0)
            return 1;
    return 0;
}

char *hark_format_result(const hark_result *r, const hark_output_params *p, const char *format)
{
    static const hark_output_params none = {0};
    if (!p)
        p = &none;
    for (size_t i = 0; i < sizeof WRITERS / sizeof WRITERS[0]; i++)
        if (strcmp(format, WRITERS[i].name) == 0) {
            sbuf b = {0};
            put(&b, "%s", "");
            WRITERS[i].write(&b, r, p);
            if (b.oom) {
                free(b.s);
                return NULL;
            }
            return b.s;
        }
    return NULL;
}

char *hark_format_output(const hark_context *ctx, const char *format,
                         const hark_output_params *layout)
{
    return hark_format_result(hark_context_result(ctx), layout, format);
}

int hark_write_output(const hark_context *ctx, const char *format, const hark_output_params *layout,
                      const char *path, char *err, size_t errlen)
{
    char *text = hark_format_output(ctx, format, layout);
    if (!text) {
        snprintf(err, errlen, "%s: unknown format %s", path, format);
        return HARK_ERR_ARG;
    }
    hark_error e = {{0}};
    int rc = hark_write_file(path, text, strlen(text), &e);
    if (rc)
        snprintf(err, errlen, "%s", e.msg);
    free(text);
    return rc;
}

char *hark_segment_colored(const hark_context *c, int i)
{
    const hark_result *r = c ? hark_context_result(c) : NULL;
    if (!r || i < 0 || i >= r->n)
        return NULL;
    return hark_colored_text(&hark_context_model(c)->vocab, &r->seg[i]);
}
