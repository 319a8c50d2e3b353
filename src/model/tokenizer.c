/* Byte-level BPE vocabulary: ids <-> bytes, the GPT-2 pre-tokenizer, merges
 * ranked as tiktoken ranks them (the rank of the merged bytes), and Whisper's
 * special and timestamp tokens. */
#include "model/model.h"
#include "base/base.h"

#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hark_vocab_free(hark_vocab *v)
{
    free(v->bytes);
    free(v->offset);
    free(v->length);
    free(v->rank);
    free(v->table);
    memset(v, 0, sizeof *v);
}

int hark_vocab_alloc(hark_vocab *v, int n_vocab, const char *what, hark_error *e)
{
    memset(v, 0, sizeof *v);
    v->n_vocab = n_vocab;
    v->offset = calloc((size_t)n_vocab, sizeof(size_t));
    v->length = calloc((size_t)n_vocab, sizeof(int));
    v->rank = malloc(sizeof(int) * (size_t)n_vocab);
    v->bytes_cap = 4096;
    v->bytes = malloc(v->bytes_cap);
    if (!v->offset || !v->length || !v->rank || !v->bytes)
        return hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory for %d tokens", what, n_vocab);
    v->bytes[0] = 0; /* offset 0: the empty string every unset id points at */
    v->bytes_used = 1;
    for (int i = 0; i < n_vocab; i++)
        v->rank[i] = INT32_MAX;
    return 0;
}

int hark_vocab_set(hark_vocab *v, int id, const char *bytes, int len)
{
    if (id < 0 || id >= v->n_vocab || len < 0)
        return -1;
    size_t need = v->bytes_used + (size_t)len + 1;
    if (need > v->bytes_cap) {
        size_t cap = v->bytes_cap * 2;
        while (cap < need)
            cap *= 2;
        char *p = realloc(v->bytes, cap);
        if (!p)
            return -1;
        v->bytes = p;
        v->bytes_cap = cap;
    }
    memcpy(v->bytes + v->bytes_used, bytes, (size_t)len);
    v->bytes[v->bytes_used + (size_t)len] = 0;
    v->offset[id] = v->bytes_used;
    v->length[id] = len;
    v->bytes_used = need;
    return 0;
}

static int name_if_empty(hark_vocab *v, int id, const char *name)
{
    if (id < 0 || id >= v->n_vocab || v->length[id] > 0)
        return 0;
    return hark_vocab_set(v, id, name, (int)strlen(name));
}

int hark_vocab_name_specials(hark_vocab *v)
{
    const hark_specials *s = &v->sp;
    const struct { int id; const char *name; } fixed[] = {
        {s->eot, "<|endoftext|>"}, {s->sot, "<|startoftranscript|>"},
        {s->translate, "<|translate|>"}, {s->transcribe, "<|transcribe|>"},
        {s->startoflm, "<|startoflm|>"}, {s->startofprev, "<|startofprev|>"},
        {s->nospeech, "<|nospeech|>"}, {s->notimestamps, "<|notimestamps|>"}};
    int rc = 0;
    char name[32];
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        rc |= name_if_empty(v, fixed[i].id, fixed[i].name);
    for (int i = 0; i < s->n_langs; i++) {
        const char *code = hark_lang_code(i);
        if (code)
            snprintf(name, sizeof name, "<|%s|>", code);
        else
            snprintf(name, sizeof name, "<|lang%d|>", i);
        rc |= name_if_empty(v, s->first_lang + i, name);
    }
    for (int i = 0; i < s->n_timestamps; i++) {
        snprintf(name, sizeof name, "<|%.2f|>", i * 0.02);
        rc |= name_if_empty(v, s->timestamp_begin + i, name);
    }
    return rc;
}

static uint64_t hash_bytes(const char *s, int n)
{
    return hark_hash(HARK_HASH_START, s, (size_t)n);
}

const char *hark_token_bytes(const hark_vocab *v, int id, int *len)
{
    if (id < 0 || id >= v->n_vocab || !v->offset) {
        *len = 0;
        return "";
    }
    *len = v->length[id];
    return v->bytes + v->offset[id];
}

int hark_vocab_lookup(const hark_vocab *v, const char *s, int n)
{
    if (!v->table)
        return -1;
    size_t mask = v->table_size - 1;
    for (size_t i = hash_bytes(s, n) & mask;; i = (i + 1) & mask) {
        int id = v->table[i];
        if (id < 0)
            return -1;
        if (v->length[id] == n && memcmp(v->bytes + v->offset[id], s, (size_t)n) == 0)
            return id;
    }
}

/* Hashes every token once its bytes are in place.  A byte string held by two
 * ids maps to the lower id. */
int hark_vocab_index(hark_vocab *v, hark_error *e)
{
    size_t size = 16;
    while (size < (size_t)v->n_vocab * 2)
        size *= 2;
    v->table = malloc(sizeof(int) * size);
    if (!v->table)
        return hark_fail(e, HARK_ERR_NOMEM, "vocabulary: out of memory");
    memset(v->table, 0xff, sizeof(int) * size);
    v->table_size = size;
    for (int id = 0; id < v->n_vocab; id++) {
        const char *s = v->bytes + v->offset[id];
        if (hark_vocab_lookup(v, s, v->length[id]) >= 0)
            continue;
        size_t i = hash_bytes(s, v->length[id]) & (size - 1);
        while (v->table[i] >= 0)
            i = (i + 1) & (size - 1);
        v->table[i] = id;
    }
    v->blank_id = hark_vocab_lookup(v, " ", 1);
    return 0;
}

void hark_vocab_default_specials(hark_vocab *v, int eot, int n_audio_ctx)
{
    hark_specials *s = &v->sp;
    s->eot = eot;
    s->sot = eot + 1;
    s->first_lang = eot + 2;
    s->n_timestamps = n_audio_ctx + 1;
    s->n_langs = v->n_vocab - eot - 8 - s->n_timestamps;
    int base = s->first_lang + s->n_langs;
    s->translate = base;
    s->transcribe = base + 1;
    s->startoflm = base + 2;
    s->startofprev = base + 3;
    s->nospeech = base + 4;
    s->notimestamps = base + 5;
    s->timestamp_begin = base + 6;
}

/* ---------------------------------------------------------- decoding */

char *hark_detokenize(const hark_vocab *v, const int *ids, int n)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] < v->sp.eot)
            total += (size_t)v->length[ids[i]];
    char *raw = malloc(total + 1), *p = raw;
    if (!raw)
        return NULL;
    for (int i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] < v->sp.eot) {
            memcpy(p, v->bytes + v->offset[ids[i]], (size_t)v->length[ids[i]]);
            p += v->length[ids[i]];
        }
    /* bytes that are not whole characters: U+FFFD as openai's and HF's decoders give */
    char *text = hark_utf8_sanitize(raw, total);
    free(raw);
    return text;
}

/* pattern compiled to match whole strings, as whisper.cpp's regex_match; 0, or
 * -1 with regcomp's reason in why. */
static int compile_whole(regex_t *re, const char *pattern, char *why, size_t n)
{
    size_t len = strlen(pattern) + 5;
    char *whole = malloc(len);
    if (!whole)
        return snprintf(why, n, "out of memory"), -1;
    snprintf(whole, len, "^(%s)$", pattern);
    int rc = regcomp(re, whole, REG_EXTENDED | REG_NOSUB);
    free(whole);
    if (rc)
        regerror(rc, re, why, n);
    return rc ? -1 : 0;
}

int hark_suppress_regex_check(const char *pattern, char *why, size_t n)
{
    regex_t re;
    int rc = compile_whole(&re, pattern, why, n);
    if (!rc)
        regfree(&re);
    return rc;
}

int hark_vocab_matching(const hark_vocab *v, const char *pattern, int **ids, int *n,
                        hark_error *e)
{
    regex_t re;
    char text[1024];
    if (compile_whole(&re, pattern, text, sizeof text))
        return hark_fail(e, HARK_ERR_ARG, "bad parameters: suppress regex \"%s\": %s", pattern,
                         text);
    *n = 0;
    *ids = malloc(sizeof(int) * (size_t)(v->sp.eot > 0 ? v->sp.eot : 1));
    for (int id = 0; *ids && id < v->sp.eot; id++) {
        int k = v->length[id] < (int)sizeof text ? v->length[id] : (int)sizeof text - 1;
        memcpy(text, v->bytes + v->offset[id], (size_t)k);
        text[k] = 0;
        if (regexec(&re, text, 0, NULL, 0) == 0)
            (*ids)[(*n)++] = id;
    }
    regfree(&re);
    return *ids ? 0 : hark_fail(e, HARK_ERR_NOMEM, "out of memory");
}

/* ---------------------------------------------------------- encoding */

enum { C_SPACE, C_LETTER, C_NUMBER, C_OTHER };

/* Unicode classes by block: enough for the GPT-2 pattern on common scripts.
 * Any split still round-trips; only the token count depends on this. */
static int char_class(unsigned c)
{
    if (c == ' ' || (c >= 9 && c <= 13) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
        (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
        c == 0x205f || c == 0x3000)
        return C_SPACE;
    if ((c | 32) >= 'a' && (c | 32) <= 'z')
        return C_LETTER;
    if (c >= '0' && c <= '9')
        return C_NUMBER;
    if (c < 0xc0 || (c >= 0x2000 && c <= 0x2bff) || (c >= 0x3000 && c <= 0x303f) ||
        (c >= 0xff00 && c <= 0xff0f) || (c >= 0x1f000 && c <= 0x1faff) || c == 0xd7 || c == 0xf7)
        return C_OTHER;
    return C_LETTER;
}

/* The class of the character at s + i and its bytes (an invalid part counts as
 * one "other" character, U+FFFD). */
static int class_at(const char *s, size_t n, size_t i, int *len)
{
    uint32_t cp;
    *len = (int)hark_utf8_decode(s + i, n - i, &cp);
    return char_class(cp);
}

static size_t contraction(const char *s, size_t n, size_t i)
{
    static const char *const forms[] = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"};
    for (int k = 0; k < 7; k++) {
        size_t l = strlen(forms[k]);
        if (n - i >= l && memcmp(s + i, forms[k], l) == 0)
            return l;
    }
    return 0;
}

static size_t run_of(const char *s, size_t n, size_t i, int cls)
{
    size_t j = i;
    int len;
    while (j < n && class_at(s, n, j, &len) == cls)
        j += (size_t)len;
    return j;
}

/* Length of the GPT-2 pre-token starting at i:
 * 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static size_t pretoken(const char *s, size_t n, size_t i)
{
    size_t l = contraction(s, n, i);
    if (l)
        return l;
    int len, cls = class_at(s, n, i, &len);
    size_t start = i;
    if (s[i] == ' ' && i + 1 < n) {
        int len2, cls2 = class_at(s, n, i + 1, &len2);
        if (cls2 != C_SPACE) {
            start = i + 1;
            cls = cls2;
        }
    }
    if (cls != C_SPACE)
        return run_of(s, n, start, cls) - i;
    size_t end = run_of(s, n, i, C_SPACE);
    if (end == n)
        return end - i;
    /* leave the last blank to prefix the next word, unless it is the only one */
    size_t last = i, j = i;
    while (j < end) {
        last = j;
        j += hark_utf8_decode(s + j, n - j, &(uint32_t){0});
    }
    return last > i ? last - i : end - i;
}

typedef struct part {
    int start, len;
} part;

static int pair_rank(const hark_vocab *v, const char *s, const part *a, const part *b, int *id)
{
    *id = hark_vocab_lookup(v, s + a->start, a->len + b->len);
    return *id >= 0 ? v->rank[*id] : INT32_MAX;
}

/* BPE of one pre-token: merge the lowest-ranked adjacent pair until none is left. */
static int bpe_piece(const hark_vocab *v, const char *s, int n, int *out)
{
    part *p = malloc(sizeof(part) * (size_t)n);
    if (!p)
        return -1;
    int np = n;
    for (int i = 0; i < n; i++)
        p[i] = (part){i, 1};
    for (;;) {
        int best = INT32_MAX, at = -1, id;
        for (int i = 0; i + 1 < np; i++) {
            int r = pair_rank(v, s, &p[i], &p[i + 1], &id);
            if (r < best) {
                best = r;
                at = i;
            }
        }
        if (at < 0)
            break;
        p[at].len += p[at + 1].len;
        memmove(&p[at + 1], &p[at + 2], sizeof(part) * (size_t)(np - at - 2));
        np--;
    }
    int count = 0;
    for (int i = 0; i < np; i++) {
        int id = hark_vocab_lookup(v, s + p[i].start, p[i].len);
        if (id >= 0) {
            out[count++] = id;
            continue;
        }
        for (int k = 0; k < p[i].len; k++) { /* bytes the vocabulary lacks as merged */
            int b = hark_vocab_lookup(v, s + p[i].start + k, 1);
            if (b >= 0)
                out[count++] = b;
        }
    }
    free(p);
    return count;
}

int hark_tokenize(const hark_vocab *v, const char *text, int **ids)
{
    size_t n = strlen(text);
    int *out = malloc(sizeof(int) * (n + 1)), count = 0;
    if (!out)
        return -1;
    for (size_t i = 0; i < n;) {
        size_t l = pretoken(text, n, i);
        int got = bpe_piece(v, text + i, (int)l, out + count);
        if (got < 0) {
            free(out);
            return -1;
        }
        count += got;
        i += l;
    }
    *ids = out;
    return count;
}
