/* Text normalisation and word/character error rates (see wer.h for the rules). */
#include "wer.h"

#include <stdlib.h>
#include <string.h>

#include "hark.h"
#include "base/base.h"

/* ------------------------------------------------------------ a growing string */

typedef struct sbuf {
    char *s;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p, b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

static void sb_putc(sbuf *b, char c) { sb_putn(b, &c, 1); }

/* Starts a new word: one space after any earlier word. */
static void sb_sep(sbuf *b)
{
    if (b->n > 0)
        sb_putc(b, ' ');
}

static void sb_word(sbuf *b, const char *w)
{
    sb_sep(b);
    sb_putn(b, w, strlen(w));
}

static void sb_put_cp(sbuf *b, uint32_t c)
{
    char u[4];
    if (c < 0x80) {
        sb_putc(b, (char)c);
    } else if (c < 0x800) {
        u[0] = (char)(0xC0 | c >> 6), u[1] = (char)(0x80 | (c & 0x3F));
        sb_putn(b, u, 2);
    } else if (c < 0x10000) {
        u[0] = (char)(0xE0 | c >> 12), u[1] = (char)(0x80 | (c >> 6 & 0x3F));
        u[2] = (char)(0x80 | (c & 0x3F));
        sb_putn(b, u, 3);
    } else {
        u[0] = (char)(0xF0 | c >> 18), u[1] = (char)(0x80 | (c >> 12 & 0x3F));
        u[2] = (char)(0x80 | (c >> 6 & 0x3F)), u[3] = (char)(0x80 | (c & 0x3F));
        sb_putn(b, u, 4);
    }
}

/* ------------------------------------------------------------ lowercase */

enum { SHIFT, PAIR };

/* PAIR: in [lo, hi] an uppercase letter (at an even distance from lo) is
 * followed by its lowercase.  Earlier rows win, so exceptions come first. */
static const struct {
    uint32_t lo, hi;
    int kind, delta;
} LOWER[] = {
    {0x41, 0x5A, SHIFT, 32},        {0xC0, 0xD6, SHIFT, 32},        {0xD8, 0xDE, SHIFT, 32},
    {0x130, 0x130, SHIFT, -0xC7},   {0x100, 0x12F, PAIR, 1},        {0x132, 0x137, PAIR, 1},
    {0x139, 0x148, PAIR, 1},        {0x14A, 0x177, PAIR, 1},        {0x178, 0x178, SHIFT, -0x79},
    {0x179, 0x17E, PAIR, 1},        {0x1C4, 0x1C4, SHIFT, 2},       {0x1C5, 0x1C5, SHIFT, 1},
    {0x1C7, 0x1C7, SHIFT, 2},       {0x1C8, 0x1C8, SHIFT, 1},       {0x1CA, 0x1CA, SHIFT, 2},
    {0x1CB, 0x1CB, SHIFT, 1},       {0x1F1, 0x1F1, SHIFT, 2},       {0x1F2, 0x1F2, SHIFT, 1},
    {0x1CD, 0x1DC, PAIR, 1},        {0x1DE, 0x1EF, PAIR, 1},        {0x1F4, 0x1F5, PAIR, 1},
    {0x1F8, 0x21F, PAIR, 1},        {0x222, 0x233, PAIR, 1},        {0x386, 0x386, SHIFT, 0x26},
    {0x388, 0x38A, SHIFT, 0x25},    {0x38C, 0x38C, SHIFT, 0x40},    {0x38E, 0x38F, SHIFT, 0x3F},
    {0x391, 0x3A1, SHIFT, 32},      {0x3A3, 0x3AB, SHIFT, 32},      {0x3C2, 0x3C2, SHIFT, 1},
    {0x400, 0x40F, SHIFT, 80},      {0x410, 0x42F, SHIFT, 32},      {0x460, 0x481, PAIR, 1},
    {0x48A, 0x4BF, PAIR, 1},        {0x4C0, 0x4C0, SHIFT, 15},      {0x4C1, 0x4CE, PAIR, 1},
    {0x4D0, 0x52F, PAIR, 1},        {0x531, 0x556, SHIFT, 48},      {0x1E9E, 0x1E9E, SHIFT, -0x1DBF},
    {0x1E00, 0x1E95, PAIR, 1},      {0x1EA0, 0x1EFF, PAIR, 1},      {0xFF21, 0xFF3A, SHIFT, 32},
};

/* Latin Extended-B letters whose lowercase lies elsewhere (Vietnamese ơ ư,
 * African alphabets' ɓ ɗ ɛ ŋ ...). */
static const uint32_t LOWER_B[][2] = {
    {0x181, 0x253}, {0x182, 0x183}, {0x184, 0x185}, {0x186, 0x254},  {0x187, 0x188},
    {0x189, 0x256}, {0x18A, 0x257}, {0x18B, 0x18C}, {0x18E, 0x1DD},  {0x18F, 0x259},
    {0x190, 0x25B}, {0x191, 0x192}, {0x193, 0x260}, {0x194, 0x263},  {0x196, 0x269},
    {0x197, 0x268}, {0x198, 0x199}, {0x19C, 0x26F}, {0x19D, 0x272},  {0x19F, 0x275},
    {0x1A0, 0x1A1}, {0x1A2, 0x1A3}, {0x1A4, 0x1A5}, {0x1A6, 0x280},  {0x1A7, 0x1A8},
    {0x1A9, 0x283}, {0x1AC, 0x1AD}, {0x1AE, 0x288}, {0x1AF, 0x1B0},  {0x1B1, 0x28A},
    {0x1B2, 0x28B}, {0x1B3, 0x1B4}, {0x1B5, 0x1B6}, {0x1B7, 0x292},  {0x1B8, 0x1B9},
    {0x1BC, 0x1BD}, {0x1F6, 0x195}, {0x1F7, 0x1BF}, {0x220, 0x19E},  {0x23A, 0x2C65},
    {0x23B, 0x23C}, {0x23D, 0x19A}, {0x23E, 0x2C66}, {0x241, 0x242}, {0x243, 0x180},
    {0x244, 0x289}, {0x245, 0x28C}, {0x246, 0x247}, {0x248, 0x249},  {0x24A, 0x24B},
    {0x24C, 0x24D}, {0x24E, 0x24F},
};

static uint32_t lower_cp(uint32_t c)
{
    if (c >= 0x181 && c <= 0x24E)
        for (size_t i = 0; i < sizeof LOWER_B / sizeof LOWER_B[0]; i++)
            if (LOWER_B[i][0] == c)
                return LOWER_B[i][1];
    for (size_t i = 0; i < sizeof LOWER / sizeof LOWER[0]; i++) {
        if (c < LOWER[i].lo || c > LOWER[i].hi)
            continue;
        if (LOWER[i].kind == PAIR && (c - LOWER[i].lo) % 2)
            return c; /* already lowercase */
        return (uint32_t)((int32_t)c + LOWER[i].delta);
    }
    return c;
}

/* ------------------------------------------------------------ character classes */

enum { CP_WORD, CP_DIGIT, CP_APOS, CP_BREAK, CP_IGNORE };

/* Code points that are not word characters; everything else is (letters of
 * any script, combining marks, non-ASCII digits).  Earlier rows win. */
static const struct {
    uint32_t lo, hi;
    int cls;
} CLASSES[] = {
    {'0', '9', CP_DIGIT}, {'\'', '\'', CP_APOS}, {0x2BC, 0x2BC, CP_APOS},
    {0x2019, 0x2019, CP_APOS}, {0xAA, 0xAA, CP_WORD}, {0xB5, 0xB5, CP_WORD},
    {0xBA, 0xBA, CP_WORD}, {0xAD, 0xAD, CP_IGNORE}, {0x200C, 0x200D, CP_IGNORE},
    {0x2060, 0x2060, CP_IGNORE}, {0xFEFF, 0xFEFF, CP_IGNORE}, {0x00, 0x2F, CP_BREAK},
    {0x3A, 0x40, CP_BREAK}, {0x5B, 0x60, CP_BREAK}, {0x7B, 0xBF, CP_BREAK},
    {0xD7, 0xD7, CP_BREAK}, {0xF7, 0xF7, CP_BREAK}, {0x37E, 0x37E, CP_BREAK},
    {0x387, 0x387, CP_BREAK}, {0x55A, 0x55F, CP_BREAK}, {0x589, 0x58A, CP_BREAK},
    {0x5BE, 0x5BE, CP_BREAK}, {0x5C0, 0x5C0, CP_BREAK}, {0x5C3, 0x5C3, CP_BREAK},
    {0x5F3, 0x5F4, CP_BREAK}, {0x60C, 0x60D, CP_BREAK}, {0x61B, 0x61F, CP_BREAK},
    {0x66A, 0x66D, CP_BREAK}, {0x6D4, 0x6D4, CP_BREAK}, {0x964, 0x965, CP_BREAK},
    {0x1680, 0x1680, CP_BREAK}, {0x2000, 0x206F, CP_BREAK}, {0x20A0, 0x20CF, CP_BREAK},
    {0x2190, 0x2BFF, CP_BREAK}, {0x2E00, 0x2E7F, CP_BREAK}, {0x3000, 0x303F, CP_BREAK},
    {0xFE10, 0xFE1F, CP_BREAK}, {0xFE30, 0xFE6F, CP_BREAK}, {0xFF00, 0xFF0F, CP_BREAK},
    {0xFF1A, 0xFF20, CP_BREAK}, {0xFF3B, 0xFF40, CP_BREAK}, {0xFF5B, 0xFF65, CP_BREAK},
    {0xFFF0, 0xFFFF, CP_BREAK}, {0x1F000, 0x1FAFF, CP_BREAK},
};

static int class_of(uint32_t c)
{
    for (size_t i = 0; i < sizeof CLASSES / sizeof CLASSES[0]; i++)
        if (c >= CLASSES[i].lo && c <= CLASSES[i].hi)
            return CLASSES[i].cls;
    return CP_WORD;
}

static int is_digit(uint32_t c) { return c >= '0' && c <= '9'; }

/* ------------------------------------------------------------ numbers as words */

static const char *const ONES[20] = {
    "zero", "one",    "two",    "three",    "four",     "five",    "six",
    "seven", "eight", "nine",   "ten",      "eleven",   "twelve",  "thirteen",
    "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
static const char *const TENS[10] = {"",      "",      "twenty",  "thirty", "forty",
                                     "fifty", "sixty", "seventy", "eighty", "ninety"};

/* 1..999; nothing for 0 */
static void put_below_thousand(sbuf *b, unsigned n)
{
    if (n >= 100) {
        sb_word(b, ONES[n / 100]);
        sb_word(b, "hundred");
        n %= 100;
    }
    if (n >= 20) {
        sb_word(b, TENS[n / 10]);
        n %= 10;
    }
    if (n > 0)
        sb_word(b, ONES[n]);
}

/* 0..999,999,999,999 as "one thousand nine hundred ninety nine" */
static void put_number(sbuf *b, unsigned long long n)
{
    static const struct {
        unsigned long long value;
        const char *name;
    } SCALES[] = {{1000000000ULL, "billion"}, {1000000ULL, "million"}, {1000ULL, "thousand"}};
    if (n == 0)
        sb_word(b, "zero");
    for (size_t i = 0; i < 3; i++) {
        if (n >= SCALES[i].value) {
            put_below_thousand(b, (unsigned)(n / SCALES[i].value));
            sb_word(b, SCALES[i].name);
            n %= SCALES[i].value;
        }
    }
    put_below_thousand(b, (unsigned)n);
}

/* Codes and long strings ("007", account numbers) are read digit by digit. */
static void put_integer(sbuf *b, const char *digits, size_t len)
{
    if (len > 12 || (len > 1 && digits[0] == '0')) {
        for (size_t i = 0; i < len; i++)
            sb_word(b, ONES[digits[i] - '0']);
        return;
    }
    put_number(b, strtoull(digits, NULL, 10));
}

/* The last word of b becomes its ordinal: "twenty one" -> "twenty first". */
static void ordinalize_last(sbuf *b)
{
    static const char *const IRREGULAR[][2] = {{"one", "first"},  {"two", "second"},
                                               {"three", "third"}, {"five", "fifth"},
                                               {"eight", "eighth"}, {"nine", "ninth"},
                                               {"twelve", "twelfth"}};
    if (b->oom || b->n == 0)
        return;
    char *last = strrchr(b->s, ' ');
    last = last ? last + 1 : b->s;
    for (size_t i = 0; i < sizeof IRREGULAR / sizeof IRREGULAR[0]; i++) {
        if (strcmp(last, IRREGULAR[i][0]) == 0) {
            b->n = (size_t)(last - b->s);
            sb_putn(b, IRREGULAR[i][1], strlen(IRREGULAR[i][1]));
            return;
        }
    }
    if (b->s[b->n - 1] == 'y') /* twenty -> twentieth */
        b->n--, sb_putn(b, "ieth", 4);
    else
        sb_putn(b, "th", 2);
}

/* "1st", "2nd", "3rd", "4th" ... : the suffix, then the end of the word. */
static int ordinal_suffix_at(const uint32_t *cp, size_t n, size_t j)
{
    static const char SUFFIXES[][3] = {"st", "nd", "rd", "th"};
    if (j + 1 >= n)
        return 0;
    if (j + 2 < n && (class_of(cp[j + 2]) == CP_WORD || class_of(cp[j + 2]) == CP_DIGIT))
        return 0; /* "4thly", "2nd3": not a plain ordinal */
    for (size_t i = 0; i < 4; i++)
        if (cp[j] == (uint32_t)SUFFIXES[i][0] && cp[j + 1] == (uint32_t)SUFFIXES[i][1])
            return 1;
    return 0;
}

/* The digits from cp[i], then ",ddd" thousands groups when the first run has
 * at most three digits and no leading zero ("1,234,567"). */
static size_t take_integer(const uint32_t *cp, size_t n, size_t i, sbuf *digits)
{
    size_t j = i;
    for (; j < n && is_digit(cp[j]); j++)
        sb_putc(digits, (char)cp[j]);
    if (j - i > 3 || cp[i] == '0')
        return j;
    while (j + 3 < n && cp[j] == ',' && is_digit(cp[j + 1]) && is_digit(cp[j + 2]) &&
           is_digit(cp[j + 3]) && (j + 4 == n || !is_digit(cp[j + 4]))) {
        for (size_t k = j + 1; k < j + 4; k++)
            sb_putc(digits, (char)cp[k]);
        j += 4;
    }
    return j;
}

/* Writes the number starting at cp[i] as words; returns the index after it. */
static size_t put_number_token(sbuf *out, const uint32_t *cp, size_t n, size_t i)
{
    sbuf digits = {0};
    size_t j = take_integer(cp, n, i, &digits);
    if (digits.oom) {
        out->oom = 1;
        return n;
    }
    put_integer(out, digits.s, digits.n);
    free(digits.s);
    if (ordinal_suffix_at(cp, n, j)) {
        ordinalize_last(out);
        return j + 2;
    }
    if (j + 1 < n && cp[j] == '.' && is_digit(cp[j + 1])) {
        sb_word(out, "point");
        for (j++; j < n && is_digit(cp[j]); j++)
            sb_word(out, ONES[cp[j] - '0']);
    }
    return j;
}

/* ------------------------------------------------------------ normalisation */

static int word_is(const char *w, size_t n, const char *const *list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (strlen(list[i]) == n && memcmp(w, list[i], n) == 0)
            return 1;
    return 0;
}

static int is_scale_word(const char *w, size_t n)
{
    static const char *const SCALE_WORDS[] = {"hundred", "thousand", "million", "billion"};
    return word_is(w, n, SCALE_WORDS, 4);
}

static int is_small_number_word(const char *w, size_t n)
{
    return word_is(w, n, ONES + 1, 19) || word_is(w, n, TENS + 2, 8);
}

static size_t word_len(const char *w)
{
    const char *sp = strchr(w, ' ');
    return sp ? (size_t)(sp - w) : strlen(w);
}

/* "one hundred and five" -> "one hundred five", so that British and American
 * readings of 105 agree.  In place: the output never overtakes the input. */
static void drop_number_and(char *text)
{
    char *w = text, *prev = NULL;
    size_t prev_n = 0;
    for (const char *r = text; *r;) {
        size_t len = word_len(r);
        const char *next = r[len] ? r + len + 1 : r + len;
        int drop = len == 3 && memcmp(r, "and", 3) == 0 && prev && is_scale_word(prev, prev_n) &&
                   is_small_number_word(next, word_len(next));
        if (!drop) {
            if (w != text)
                *w++ = ' ';
            memmove(w, r, len);
            prev = w, prev_n = len;
            w += len;
        }
        r = next;
    }
    *w = 0;
}

/* The lowercased code points of text. */
static uint32_t *decode_lower(const char *text, size_t *count)
{
    size_t len = strlen(text), n = 0;
    uint32_t *cp = malloc((len + 1) * sizeof *cp);
    if (!cp)
        return NULL;
    for (size_t i = 0; i < len; n++) {
        i += hark_utf8_decode(text + i, len - i, &cp[n]);
        cp[n] = lower_cp(cp[n]);
    }
    *count = n;
    return cp;
}

char *hark_normalize_text(const char *text)
{
    size_t n;
    uint32_t *cp = decode_lower(text ? text : "", &n);
    sbuf out = {0};
    if (!cp)
        return NULL;
    sb_putn(&out, "", 0); /* an empty text still gets a string */
    int in_word = 0;
    for (size_t i = 0; i < n && !out.oom;) {
        int cls = class_of(cp[i]);
        if (cls == CP_DIGIT) {
            i = put_number_token(&out, cp, n, i);
            in_word = 0;
            continue;
        }
        if (cls == CP_WORD) {
            if (!in_word)
                sb_sep(&out);
            sb_put_cp(&out, cp[i]);
            in_word = 1;
        } else if (cls == CP_APOS && in_word && i + 1 < n && class_of(cp[i + 1]) == CP_WORD) {
            sb_putc(&out, '\''); /* inside a word: don't, o'clock */
        } else if (cls != CP_IGNORE) {
            in_word = 0;
        }
        i++;
    }
    free(cp);
    if (out.oom) {
        free(out.s);
        return NULL;
    }
    drop_number_and(out.s);
    return out.s;
}

/* ------------------------------------------------------------ alignment */

typedef struct span {
    const char *s;
    size_t n;
} span;

/* Words separated by single spaces (normalised text has no others). */
static span *split_words(const char *t, long *count)
{
    span *v = malloc((strlen(t) / 2 + 1) * sizeof *v);
    long n = 0;
    if (!v)
        return NULL;
    while (*t) {
        size_t len = word_len(t);
        v[n].s = t, v[n++].n = len;
        t += len;
        if (*t)
            t++;
    }
    *count = n;
    return v;
}

/* One span per UTF-8 character, spaces included. */
static span *split_chars(const char *t, long *count)
{
    size_t len = strlen(t);
    span *v = malloc((len + 1) * sizeof *v);
    long n = 0;
    uint32_t c;
    if (!v)
        return NULL;
    for (size_t i = 0; i < len; n++) {
        v[n].s = t + i;
        v[n].n = hark_utf8_decode(t + i, len - i, &c);
        i += v[n].n;
    }
    *count = n;
    return v;
}

static int span_eq(span a, span b) { return a.n == b.n && memcmp(a.s, b.s, a.n) == 0; }

typedef struct cell {
    long cost, sub, del, ins;
} cell;

/* The cheapest of the three moves into a cell; ties prefer the diagonal, then
 * deletion, so that counts do not depend on anything but the inputs. */
static cell best_move(cell diag, int differ, cell up, cell left)
{
    cell c = diag;
    c.cost += differ, c.sub += differ;
    if (up.cost + 1 < c.cost)
        c = up, c.cost++, c.del++;
    if (left.cost + 1 < c.cost)
        c = left, c.cost++, c.ins++;
    return c;
}

/* Levenshtein distance with its edit counts, two rows at a time. */
static int align(const span *ref, long n, const span *hyp, long m, hark_edits *out)
{
    cell *prev = malloc((size_t)(m + 1) * sizeof *prev);
    cell *row = malloc((size_t)(m + 1) * sizeof *row);
    if (!prev || !row) {
        free(prev), free(row);
        return HARK_ERR_NOMEM;
    }
    for (long j = 0; j <= m; j++)
        prev[j] = (cell){j, 0, 0, j};
    for (long i = 1; i <= n; i++) {
        row[0] = (cell){i, 0, i, 0};
        for (long j = 1; j <= m; j++)
            row[j] = best_move(prev[j - 1], !span_eq(ref[i - 1], hyp[j - 1]), prev[j], row[j - 1]);
        cell *t = prev;
        prev = row, row = t;
    }
    *out = (hark_edits){n, m, prev[m].sub, prev[m].del, prev[m].ins};
    free(prev), free(row);
    return 0;
}

static int edits_of(const char *ref, const char *hyp, hark_edits *out,
                    span *(*split)(const char *, long *))
{
    long n = 0, m = 0;
    span *r = split(ref ? ref : "", &n), *h = split(hyp ? hyp : "", &m);
    int rc = r && h ? align(r, n, h, m, out) : HARK_ERR_NOMEM;
    free(r), free(h);
    return rc;
}

int hark_word_edits(const char *ref, const char *hyp, hark_edits *out)
{
    return edits_of(ref, hyp, out, split_words);
}

int hark_char_edits(const char *ref, const char *hyp, hark_edits *out)
{
    return edits_of(ref, hyp, out, split_chars);
}

long hark_edit_count(const hark_edits *e) { return e->sub + e->del + e->ins; }

double hark_error_rate(long errors, long ref)
{
    if (ref > 0)
        return (double)errors / (double)ref;
    return errors > 0 ? 1.0 : 0.0;
}
