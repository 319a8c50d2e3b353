/* Where the next window starts when words are timed, as openai/whisper's
 * transcribe() with word_timestamps: after the last word rather than at the
 * last timestamp pair, and, with a hallucination silence threshold, past the
 * silence before a segment that looks hallucinated (improbable, very short
 * or very long words) and is surrounded by silence or more of the same. */
#include <math.h>
#include <string.h>

#include "decode/decode.h"

/* openai's transcribe() punctuation (its default prepend and append marks, one
 * after the other): words that are one of these (a substring test, as
 * Python's `in`) are not scored */
static const char PUNCTUATION[] = HARK_PREPEND_PUNCTUATIONS HARK_APPEND_PUNCTUATIONS;

static double word_anomaly(const hark_word *w)
{
    double duration = w->end - w->start, score = 0;
    if (w->probability < 0.15)
        score += 1.0;
    if (duration < 0.133)
        score += (0.133 - duration) * 15;
    if (duration > 2.0)
        score += duration - 2.0;
    return score;
}

/* openai's is_segment_anomaly, over the first 8 scored words. */
int hark_segment_anomaly(const hark_segment *s)
{
    if (!s || s->n_words == 0)
        return 0;
    double score = 0;
    int n = 0;
    for (int i = 0; i < s->n_words && n < 8; i++) {
        if (strstr(PUNCTUATION, s->words[i].text))
            continue;
        score += word_anomaly(&s->words[i]);
        n++;
    }
    return score >= 3 || score + 0.01 >= n;
}

/* The first of segs[0..n) that has words, or NULL. */
static const hark_segment *next_with_words(const hark_segment *segs, int n)
{
    for (int i = 0; i < n; i++)
        if (segs[i].n_words > 0)
            return &segs[i];
    return NULL;
}

int hark_segments_end(const hark_segment *segs, int n, double *end)
{
    for (int i = n - 1; i >= 0; i--)
        if (segs[i].n_words > 0) {
            *end = segs[i].words[segs[i].n_words - 1].end;
            return 1;
        }
    if (n > 0)
        *end = segs[n - 1].end;
    return n > 0;
}

/* The frame after the last word, or next when the words end at the window's start. */
static int after_last_word(const hark_word_window *w, const hark_segment *segs, int n, int next)
{
    double end;
    if (!w->single_end && hark_segments_end(segs, n, &end) && end > w->seek / 100.0)
        return (int)nearbyint(end * 100);
    return next;
}

/* The hallucination that starts the window after a silence: the frame to skip to,
 * or -1 when there is none. */
static int leading_hallucination(const hark_word_window *w, double threshold,
                                 const hark_segment *segs, int n)
{
    const hark_segment *first = next_with_words(segs, n);
    if (!first || !hark_segment_anomaly(first))
        return -1;
    double gap = first->start - w->seek / 100.0;
    return gap > threshold ? w->seek + (int)nearbyint(gap * 100) : -1;
}

/* The first anomalous segment with silence (or anomalies) on both sides: its
 * index, with the frame to go on from in *next; n when there is none. */
static int surrounded_hallucination(const hark_word_window *w, double threshold,
                                    const hark_segment *segs, int n, int *next)
{
    double t0 = w->seek / 100.0, window_end = (w->seek + w->window) / 100.0;
    double last_end = w->last_speech;
    for (int i = 0; i < n; i++) {
        const hark_segment *s = &segs[i];
        if (s->n_words == 0)
            continue;
        if (hark_segment_anomaly(s)) {
            const hark_segment *after = next_with_words(segs + i + 1, n - i - 1);
            double next_start = after ? after->words[0].start : t0 + w->size / 100.0;
            int before_quiet = s->start - last_end > threshold || s->start < threshold ||
                               s->start - t0 < 2.0;
            int after_quiet = next_start - s->end > threshold || hark_segment_anomaly(after) ||
                              window_end - s->end < 2.0;
            if (before_quiet && after_quiet) {
                *next = (int)nearbyint(fmax(t0 + 1, s->start) * 100);
                if (w->content / 100.0 - s->end < threshold)
                    *next = w->content;
                return i;
            }
        }
        last_end = s->end;
    }
    return n;
}

int hark_word_seek(const hark_word_window *w, double threshold, const hark_segment *segs, int n,
                   int next, int *keep)
{
    *keep = n;
    next = after_last_word(w, segs, n, next);
    if (threshold <= 0)
        return next;
    if (!w->single_end) {
        double end;
        if (hark_segments_end(segs, n, &end) && end > w->seek / 100.0)
            next = (w->seek + w->window) / 100.0 - end > threshold ? (int)nearbyint(end * 100)
                                                                   : w->seek + w->size;
    }
    int skip_to = leading_hallucination(w, threshold, segs, n);
    if (skip_to >= 0) {
        *keep = -1;
        return skip_to;
    }
    *keep = surrounded_hallucination(w, threshold, segs, n, &next);
    return next;
}
