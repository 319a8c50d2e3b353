/* Word-level timestamps as openai/whisper computes them: the decoder re-reads
 * [sot sequence, notimestamps, text tokens, eot] once while the cross-attention
 * scores of the alignment heads are kept; those are softmaxed over the audio
 * frames, standardised over the tokens, median-filtered (width 7), averaged
 * over heads, and aligned to the frames by dynamic time warping.  Word
 * boundaries follow the tokens that begin with a space or are punctuation.
 * As openai's add_word_timestamps, word times are rounded to 0.01 s and then
 * each segment's bounds and its first and last words are fitted to each other. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decode.h"
#include "kernels/kernels.h"

enum { MEDIAN_WIDTH = 7, FRAMES_PER_SECOND_TOKENS = 50 };

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median filter along a row of n values, reflect padding (as openai's). */
static void median_row(float *row, int n, float *tmp)
{
    int half = MEDIAN_WIDTH / 2;
    if (n <= half)
        return;
    float win[MEDIAN_WIDTH];
    for (int i = 0; i < n; i++) {
        for (int k = -half; k <= half; k++) {
            int j = i + k;
            j = j < 0 ? -j : j >= n ? 2 * (n - 1) - j : j;
            win[k + half] = row[j];
        }
        qsort(win, MEDIAN_WIDTH, sizeof(float), cmp_float);
        tmp[i] = win[half];
    }
    memcpy(row, tmp, sizeof(float) * (size_t)n);
}

/* weights [heads][rows][frames]: softmax per row, standardise per column,
 * median filter per row, then the mean over heads into out [rows][frames]. */
static void process_weights(float *w, int heads, int rows, int frames, float *out)
{
    float *tmp = malloc(sizeof(float) * (size_t)frames);
    memset(out, 0, sizeof(float) * (size_t)rows * frames);
    for (int h = 0; h < heads; h++) {
        float *wh = w + (size_t)h * rows * frames;
        hark_softmax_rows(wh, rows, frames);
        for (int f = 0; f < frames; f++) {
            double mean = 0, var = 0;
            for (int r = 0; r < rows; r++)
                mean += wh[(size_t)r * frames + f];
            mean /= rows;
            for (int r = 0; r < rows; r++) {
                double d = wh[(size_t)r * frames + f] - mean;
                var += d * d;
            }
            double sd = sqrt(var / rows);
            for (int r = 0; r < rows; r++)
                wh[(size_t)r * frames + f] = (float)((wh[(size_t)r * frames + f] - mean) / sd);
        }
        for (int r = 0; r < rows; r++) {
            median_row(wh + (size_t)r * frames, frames, tmp);
            for (int f = 0; f < frames; f++)
                out[(size_t)r * frames + f] += wh[(size_t)r * frames + f] / heads;
        }
    }
    free(tmp);
}

/* DTW of cost x [n][m]; writes the path's text and time indices, returns its length. */
static int dtw(const float *x, int n, int m, int *ti, int *fi)
{
    size_t W = (size_t)m + 1;
    double *cost = malloc(sizeof(double) * (size_t)(n + 1) * W);
    signed char *trace = malloc((size_t)(n + 1) * W);
    for (size_t k = 0; k < (size_t)(n + 1) * W; k++)
        cost[k] = INFINITY, trace[k] = -1;
    cost[0] = 0;
    for (int j = 1; j <= m; j++)
        for (int i = 1; i <= n; i++) {
            double c0 = cost[(i - 1) * W + j - 1], c1 = cost[(i - 1) * W + j], c2 = cost[i * W + j - 1], c;
            int t;
            if (c0 < c1 && c0 < c2)
                c = c0, t = 0;
            else if (c1 < c0 && c1 < c2)
                c = c1, t = 1;
            else
                c = c2, t = 2;
            cost[i * W + j] = x[(size_t)(i - 1) * m + j - 1] + c;
            trace[i * W + j] = (signed char)t;
        }
    for (int j = 0; j <= m; j++)
        trace[j] = 2;
    for (int i = 0; i <= n; i++)
        trace[i * W] = 1;
    int len = 0, i = n, j = m;
    while (i > 0 || j > 0) {
        ti[len] = i - 1;
        fi[len++] = j - 1;
        int t = trace[i * W + j];
        if (t == 0)
            i--, j--;
        else if (t == 1)
            i--;
        else
            j--;
    }
    for (int a = 0, b = len - 1; a < b; a++, b--) { /* reverse into time order */
        int t = ti[a]; ti[a] = ti[b]; ti[b] = t;
        t = fi[a]; fi[a] = fi[b]; fi[b] = t;
    }
    free(cost);
    free(trace);
    return len;
}

/* ---------------------------------------------------------- words */

typedef struct word_span {
    int first, count;     /* text tokens [first, first + count) */
    double start, end;    /* window-relative, from the word's own tokens */
    double probability;   /* count 0: merged into a neighbour */
} word_span;

/* Python's `text.strip() in string.punctuation`: a substring test, so an
 * all-blank token counts too, as it does in openai's word splitting. */
static int is_punctuation_token(const char *s, int len)
{
    static const char PUNCT[] = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    char buf[64];
    int a = 0, b = len;
    while (a < b && strchr(" \t\n\r\v\f", s[a]))
        a++;
    while (b > a && strchr(" \t\n\r\v\f", s[b - 1]))
        b--;
    if (b - a >= (int)sizeof buf)
        return 0;
    memcpy(buf, s + a, (size_t)(b - a));
    buf[b - a] = 0;
    return strstr(PUNCT, buf) != NULL;
}

/* openai's split_tokens_on_spaces, with a token as the unit. */
static int split_words(const hark_vocab *v, const int *t, int n, word_span *w)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        int len;
        const char *b = hark_token_bytes(v, t[i], &len);
        int starts = k == 0 || (len > 0 && b[0] == ' ') || is_punctuation_token(b, len);
        /* a token that continues a multi-byte character never starts a word */
        if (len > 0 && ((unsigned char)b[0] & 0xc0) == 0x80)
            starts = k == 0;
        if (starts)
            w[k++] = (word_span){i, 1, 0, 0, 0};
        else
            w[k - 1].count++;
    }
    return k;
}

/* The text of word w, NUL-terminated; NULL if longer than the buffer. */
static const char *word_text(const hark_vocab *v, const int *t, const word_span *w, char *buf,
                             int cap)
{
    int len = 0;
    for (int k = 0; k < w->count; k++) {
        int l;
        const char *b = hark_token_bytes(v, t[w->first + k], &l);
        if (len + l >= cap)
            return NULL;
        memcpy(buf + len, b, (size_t)l);
        len += l;
    }
    buf[len] = 0;
    return buf;
}

static int ends_with_space(const hark_vocab *v, const int *t, const word_span *w)
{
    int len = 0;
    const char *b = w->count > 0 ? hark_token_bytes(v, t[w->first + w->count - 1], &len) : NULL;
    return len > 0 && b[len - 1] == ' ';
}

/* The characters Python's str.strip() removes that a byte can hold (not the
 * Unicode spaces, which no mark list here holds). */
static int is_py_space(char c)
{
    return c && (strchr(" \t\n\v\f\r", c) || (c >= 0x1c && c <= 0x1f));
}

/* Python's `word.strip() in marks` (strip set) or `word in marks`: a
 * substring test, so a word found inside the list counts, and so does an
 * empty one. */
static int is_mark(const char *word, const char *marks, int strip)
{
    if (!word)
        return 0;
    size_t a = 0, b = strlen(word);
    while (strip && a < b && is_py_space(word[a]))
        a++;
    while (strip && b > a && is_py_space(word[b - 1]))
        b--;
    return memmem(marks, strlen(marks), word + a, b - a) != NULL; /* "" is found too */
}

/* openai's merge_punctuations: opening marks join the next word, closing
 * ones the previous; the word that stays keeps its own timing.  prepend and
 * append: the caller's lists, NULL for openai's defaults. */
static void merge_punctuation(const hark_vocab *v, const int *t, word_span *w, int n,
                              const char *prepend, const char *append)
{
    prepend = prepend ? prepend : HARK_PREPEND_PUNCTUATIONS;
    append = append ? append : HARK_APPEND_PUNCTUATIONS;
    char buf[256];
    for (int i = n - 2, j = n - 1; i >= 0; i--) {
        const char *word = word_text(v, t, &w[i], buf, sizeof buf);
        if (word && word[0] == ' ' && is_mark(word, prepend, 1)) {
            w[j].first = w[i].first;
            w[j].count += w[i].count;
            w[i].count = 0;
        } else {
            j = i;
        }
    }
    for (int i = 0, j = 1; j < n; j++) {
        const char *next = word_text(v, t, &w[j], buf, sizeof buf);
        /* as Python's lists: an emptied word takes a mark's tokens too, at its
         * own timing, and an emptied follower ("" is in every list) is skipped */
        if (!ends_with_space(v, t, &w[i]) && is_mark(next, append, 0)) {
            if (w[i].count == 0)
                w[i].first = w[j].first;
            w[i].count += w[j].count;
            w[j].count = 0;
        } else {
            i = j;
        }
    }
}

typedef struct align_in {
    const hark_model *m;
    const int *text;   /* all text tokens of the window's segments */
    float *probs;      /* each one's probability in the alignment pass */
    int n_text, frames;
    double t0;
} align_in;

/* openai's word probabilities: each text token's probability among the text
 * tokens (logits below eot) in the alignment pass itself, without the prompt
 * and the timestamps decoding had; states: the rows from notimestamps on. */
static int text_token_probs(const align_in *a, const float *states)
{
    const hark_model *m = a->m;
    int d = m->hp.n_text_state, V = m->hp.n_vocab, eot = m->vocab.sp.eot, chunk = 8;
    float *logits = malloc(sizeof(float) * (size_t)V * chunk);
    if (!logits)
        return HARK_ERR_NOMEM;
    for (int r = 0; r < a->n_text; r += chunk) {
        int rows = a->n_text - r < chunk ? a->n_text - r : chunk;
        hark_linear(logits, states + (size_t)r * d, rows, &m->tok_emb, NULL);
        for (int i = 0; i < rows; i++) {
            const float *l = logits + (size_t)i * V;
            float top = l[0];
            for (int j = 1; j < eot; j++)
                top = l[j] > top ? l[j] : top;
            double sum = 0;
            for (int j = 0; j < eot; j++)
                sum += exp((double)l[j] - top);
            a->probs[r + i] = (float)(exp((double)l[a->text[r + i]] - top) / sum);
        }
    }
    free(logits);
    return 0;
}

/* Runs the decoder over the alignment sequence and returns the processed
 * [n_text + 1][frames / 2] matrix (rows: notimestamps and each text token);
 * sets a->probs. */
static float *attention_matrix(const align_in *a, const hark_cross *cross,
                               const hark_decode_opts *o, int *cols)
{
    const hark_model *m = a->m;
    const hark_specials *s = &m->vocab.sp;
    int H = m->n_alignment_heads, ac = m->hp.n_audio_ctx, tc = m->hp.n_text_ctx;
    int *seq = malloc(sizeof(int) * (size_t)(a->n_text + 8)), S = 0;
    seq[S++] = s->sot;
    if (o->lang_token >= 0)
        seq[S++] = o->lang_token;
    if (o->task_token >= 0)
        seq[S++] = o->task_token;
    int n = S;
    seq[n++] = s->notimestamps;
    memcpy(seq + n, a->text, sizeof(int) * (size_t)a->n_text);
    n += a->n_text;
    seq[n++] = s->eot;
    float *out = NULL;
    hark_kv kv;
    if (n > tc || hark_kv_init(&kv, m, cross)) {
        free(seq);
        return NULL;
    }
    kv.capture = malloc(sizeof(float) * (size_t)H * tc * ac);
    int F = a->frames / 2 < ac ? a->frames / 2 : ac;
    float *w = malloc(sizeof(float) * (size_t)H * n * (F ? F : 1));
    float *mat = malloc(sizeof(float) * (size_t)n * (F ? F : 1));
    float *states = malloc(sizeof(float) * (size_t)n * m->hp.n_text_state);
    if (kv.capture && w && mat && states && F > 0 &&
        hark_decode_states(m, &kv, seq, n, states) == 0 &&
        text_token_probs(a, states + (size_t)S * m->hp.n_text_state) == 0) {
        for (int h = 0; h < H; h++)
            for (int r = 0; r < n; r++)
                memcpy(w + ((size_t)h * n + r) * F, kv.capture + ((size_t)h * tc + r) * ac,
                       sizeof(float) * (size_t)F);
        process_weights(w, H, n, F, mat);
        out = malloc(sizeof(float) * (size_t)(a->n_text + 1) * F);
        if (out)
            memcpy(out, mat + (size_t)S * F, sizeof(float) * (size_t)(a->n_text + 1) * F);
        *cols = F;
    }
    free(kv.capture);
    kv.capture = NULL;
    hark_kv_free(&kv);
    free(seq), free(w), free(mat), free(states);
    return out;
}

/* Start time (seconds, window-relative) of each matrix row along the DTW path. */
static double *row_times(const float *mat, int rows, int cols)
{
    float *neg = malloc(sizeof(float) * (size_t)rows * cols);
    int *ti = malloc(sizeof(int) * (size_t)(rows + cols + 2)), *fi = malloc(sizeof(int) * (size_t)(rows + cols + 2));
    double *t = malloc(sizeof(double) * (size_t)(rows + 1));
    for (size_t k = 0; k < (size_t)rows * cols; k++)
        neg[k] = -mat[k];
    int len = dtw(neg, rows, cols, ti, fi), r = 0;
    for (int k = 0; k < len && r <= rows; k++)
        if (k == 0 || ti[k] != ti[k - 1])
            t[r++] = (double)fi[k] / FRAMES_PER_SECOND_TOKENS;
    while (r <= rows)
        t[r++] = (double)cols / FRAMES_PER_SECOND_TOKENS;
    free(neg), free(ti), free(fi);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the non-zero word durations, at most 0.7 s (openai's). */
static double median_duration(const word_span *ws, int n)
{
    double *d = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)), med = 0;
    int k = 0;
    for (int i = 0; d && i < n; i++)
        if (ws[i].end - ws[i].start != 0)
            d[k++] = ws[i].end - ws[i].start;
    if (k > 0) {
        qsort(d, (size_t)k, sizeof(double), cmp_double);
        med = k % 2 ? d[k / 2] : (d[k / 2 - 1] + d[k / 2]) / 2;
    }
    free(d);
    return med < 0.7 ? med : 0.7;
}

/* openai's hack for sentence ends: a word after or at one is at most twice the
 * median duration long (`word in ".!?..."`, a substring test as in Python). */
static void clip_sentence_ends(const hark_vocab *v, const int *t, word_span *ws, int n,
                               double median)
{
    static const char MARKS[] = ".\xe3\x80\x82!\xef\xbc\x81?\xef\xbc\x9f";
    char buf[256], prev[256];
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= ws[i].end - ws[i].start != 0;
    if (!any)
        return;
    double max_duration = 2 * median;
    for (int i = 1; i < n; i++) {
        if (ws[i].end - ws[i].start <= max_duration)
            continue;
        if (is_mark(word_text(v, t, &ws[i], buf, sizeof buf), MARKS, 0))
            ws[i].end = ws[i].start + max_duration;
        else if (is_mark(word_text(v, t, &ws[i - 1], prev, sizeof prev), MARKS, 0))
            ws[i].start = ws[i].end - max_duration;
    }
}

/* Timing and probability of each word from its own tokens (before merging). */
static void time_words(const align_in *a, const double *times, word_span *ws, int n_words)
{
    for (int i = 0; i < n_words; i++) {
        word_span *w = &ws[i];
        w->start = times[w->first];
        w->end = times[w->first + w->count];
        double p = 0;
        for (int k = 0; k < w->count; k++)
            p += a->probs[w->first + k];
        w->probability = p / w->count;
    }
}

static int attach_words(const align_in *a, const word_span *ws, int n_words, hark_segment *segs,
                        int n_segs)
{
    int word = 0;
    for (int si = 0; si < n_segs; si++) {
        hark_segment *s = &segs[si];
        int n_text = 0;
        for (int j = 0; j < s->n_tokens; j++)
            n_text += s->tokens[j] < a->m->vocab.sp.eot;
        s->words = calloc((size_t)(n_words ? n_words : 1), sizeof(hark_word));
        if (!s->words)
            return HARK_ERR_NOMEM;
        for (int used = 0; word < n_words && used < n_text; word++) {
            const word_span *w = &ws[word];
            used += w->count;
            if (w->count == 0)
                continue;
            hark_word *out = &s->words[s->n_words++];
            out->text = hark_detokenize(&a->m->vocab, a->text + w->first, w->count);
            out->start = hark_round2(a->t0 + w->start);
            out->end = hark_round2(a->t0 + w->end);
            out->probability = (float)w->probability;
            out->n_tokens = w->count;
        }
    }
    return 0;
}

/* Python's round(x, 2): correctly rounded, ties to even (as glibc's printf). */
double hark_round2(double x)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.2f", x);
    return strtod(buf, NULL);
}

void hark_fit_segment_bounds(hark_segment *s, double median, double *last_speech)
{
    hark_word *w = s->words;
    int n = s->n_words;
    double max_duration = 2 * median;
    if (n == 0)
        return;
    /* the first and second word after a pause: at most twice the median long */
    if (w[0].end - *last_speech > median * 4 &&
        (w[0].end - w[0].start > max_duration ||
         (n > 1 && w[1].end - w[0].start > max_duration * 2))) {
        if (n > 1 && w[1].end - w[1].start > max_duration) {
            /* openai halves an absolute time here; followed as it is */
            double boundary = fmax(w[1].end / 2, w[1].end - max_duration);
            w[0].end = w[1].start = boundary;
        }
        w[0].start = fmax(0, w[0].end - max_duration);
    }
    /* a first or last word far longer than its segment's bound gives way to it;
     * otherwise the segment takes its words' bounds */
    if (s->start < w[0].end && s->start - 0.5 > w[0].start)
        w[0].start = fmax(0, fmin(w[0].end - median, s->start));
    else
        s->start = w[0].start;
    if (s->end > w[n - 1].start && s->end + 0.5 < w[n - 1].end)
        w[n - 1].end = fmax(w[n - 1].start + median, s->end);
    else
        s->end = w[n - 1].end;
    *last_speech = s->end;
}

int hark_align_words(const hark_model *m, const hark_cross *cross, const hark_decode_opts *o,
                     int n_frames, double t0, double last_speech, hark_segment *segs, int n_segs)
{
    int total = 0;
    for (int i = 0; i < n_segs; i++)
        total += segs[i].n_tokens;
    int *text = malloc(sizeof(int) * (size_t)(total + 1));
    float *probs = malloc(sizeof(float) * (size_t)(total + 1));
    word_span *ws = malloc(sizeof(word_span) * (size_t)(total + 1));
    int n = 0, rc = HARK_ERR_NOMEM, cols = 0;
    for (int i = 0; text && i < n_segs; i++)
        for (int j = 0; j < segs[i].n_tokens; j++)
            if (segs[i].tokens[j] < m->vocab.sp.eot)
                text[n++] = segs[i].tokens[j];
    align_in a = {m, text, probs, n, n_frames, t0};
    float *mat = n > 0 && m->n_alignment_heads > 0 && ws && probs
                     ? attention_matrix(&a, cross, o, &cols)
                     : NULL;
    if (mat) {
        double *times = row_times(mat, n + 1, cols);
        int n_words = split_words(&m->vocab, text, n, ws);
        double median = 0;
        if (times) {
            time_words(&a, times, ws, n_words);
            median = median_duration(ws, n_words);
            clip_sentence_ends(&m->vocab, text, ws, n_words, median);
            merge_punctuation(&m->vocab, text, ws, n_words, o->prepend_punctuations,
                              o->append_punctuations);
        }
        rc = times ? attach_words(&a, ws, n_words, segs, n_segs) : HARK_ERR_NOMEM;
        for (int i = 0; rc == 0 && i < n_segs; i++)
            hark_fit_segment_bounds(&segs[i], median, &last_speech);
        free(times);
    } else if (n == 0) {
        rc = 0;
    }
    free(mat), free(text), free(probs), free(ws);
    return rc;
}
