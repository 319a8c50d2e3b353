/* whisper.cpp's --max-len with --split-on-word: a segment cut between its words
 * into segments of at most N characters (a longer word stands alone; -ml 1 is a
 * word a segment).  Each piece takes its words' tokens, their bounds and the
 * segment's statistics; the timestamp tokens go with the first and last. */
#include <stdlib.h>
#include <string.h>

#include "decode/decode.h"
#include "base/base.h"

/* Words [from, to) of s as one string (malloc'd). */
static char *words_text(const hark_segment *s, int from, int to)
{
    size_t len = 1;
    for (int w = from; w < to; w++)
        len += strlen(s->words[w].text);
    char *t = malloc(len);
    if (t)
        *t = 0;
    for (int w = from; t && w < to; w++)
        strcat(t, s->words[w].text);
    return t;
}

/* Where the words of each piece end: cut[k] is one past piece k's last word.
 * A piece's length is its text's without the blanks it opens with. */
static int plan_pieces(const hark_segment *s, int max_len, int *cut)
{
    int n = 0;
    size_t len = 0;
    for (int w = 0; w < s->n_words; w++) {
        const char *t = s->words[w].text;
        size_t all = hark_utf8_chars(t), shown = hark_utf8_chars(t + strspn(t, " \t\n\r"));
        if (w > 0 && len + all > (size_t)max_len)
            cut[n++] = w, len = shown;
        else
            len += w > 0 ? all : shown;
    }
    cut[n++] = s->n_words;
    return n;
}

/* Copies tokens [a, b) of s into the piece. */
static int take_tokens(hark_segment *piece, const hark_segment *s, int a, int b)
{
    int n = b - a;
    piece->tokens = malloc(sizeof(int) * (size_t)(n ? n : 1));
    piece->probs = malloc(sizeof(float) * (size_t)(n ? n : 1));
    piece->token_text = calloc((size_t)(n ? n : 1), sizeof(char *));
    if (!piece->tokens || !piece->probs || !piece->token_text)
        return HARK_ERR_NOMEM;
    memcpy(piece->tokens, s->tokens + a, sizeof(int) * (size_t)n);
    memcpy(piece->probs, s->probs + a, sizeof(float) * (size_t)n);
    for (piece->n_tokens = 0; piece->n_tokens < n; piece->n_tokens++)
        if (!(piece->token_text[piece->n_tokens] = strdup(s->token_text[a + piece->n_tokens])))
            return HARK_ERR_NOMEM;
    return 0;
}

static int take_words(hark_segment *piece, const hark_segment *s, int from, int to)
{
    piece->words = calloc((size_t)(to - from), sizeof(hark_word));
    piece->text = words_text(s, from, to);
    if (!piece->words || !piece->text)
        return HARK_ERR_NOMEM;
    for (int w = from; w < to; w++, piece->n_words++) {
        piece->words[piece->n_words] = s->words[w];
        if (!(piece->words[piece->n_words].text = strdup(s->words[w].text)))
            return HARK_ERR_NOMEM;
    }
    piece->start = s->words[from].start;
    piece->end = s->words[to - 1].end;
    return 0;
}

/* The token index where word w's text tokens begin (the ones before the first
 * text token, timestamps, belong to the first piece). */
static int token_of_word(const hark_segment *s, int eot, int w)
{
    int t = 0, words_before = 0;
    while (t < s->n_tokens && s->tokens[t] >= eot)
        t++;
    for (int k = 0; k < w; k++)
        words_before += s->words[k].n_tokens;
    for (int seen = 0; t < s->n_tokens && seen < words_before; t++)
        seen += s->tokens[t] < eot;
    return t;
}

int hark_split_segment(const hark_segment *s, int max_len, int eot, hark_segment **pieces, int *n)
{
    int *cut = malloc(sizeof(int) * (size_t)(s->n_words ? s->n_words : 1)), rc = 0;
    *pieces = NULL, *n = 0;
    if (!cut)
        return HARK_ERR_NOMEM;
    int n_cut = s->n_words ? plan_pieces(s, max_len, cut) : 0;
    if (n_cut > 1 && !(*pieces = calloc((size_t)n_cut, sizeof(hark_segment))))
        rc = HARK_ERR_NOMEM;
    for (int k = 0; !rc && *pieces && k < n_cut; k++) {
        hark_segment *p = &(*pieces)[(*n)++];
        int from = k ? cut[k - 1] : 0;
        int a = k ? token_of_word(s, eot, from) : 0;
        int b = k + 1 < n_cut ? token_of_word(s, eot, cut[k]) : s->n_tokens;
        p->seek = s->seek, p->temperature = s->temperature, p->avg_logprob = s->avg_logprob;
        p->compression_ratio = s->compression_ratio, p->no_speech_prob = s->no_speech_prob;
        rc = take_words(p, s, from, cut[k]);
        if (!rc)
            rc = take_tokens(p, s, a, b);
    }
    free(cut);
    if (rc) {
        for (int k = 0; k < *n; k++)
            hark_segment_free(&(*pieces)[k]);
        free(*pieces);
        *pieces = NULL, *n = 0;
    }
    return rc;
}
