/* From Silero's chunk probabilities to the audio transcribed, as whisper.cpp's
 * --vad does it: speech spans by silero-vad's get_speech_timestamps rules
 * (a span opens at threshold, closes after min_silence below threshold - 0.15,
 * is split past max_speech at its last long silence), then whisper.cpp's own
 * steps: gaps under 0.2 s merged (but not across a max_speech cut), spans under
 * min_speech dropped, each padded, times in centiseconds; the spans joined with
 * 0.1 s of silence between, and a map from the joined audio's times back to the
 * file's. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio.h"

enum { RATE = HARK_SAMPLE_RATE, SILENCE = RATE / 10 };

static long long cs_of(long long samples)
{
    return (long long)(samples / (double)RATE * 100.0 + 0.5);
}

static long long samples_of(long long cs)
{
    return (long long)(cs / 100.0 * RATE + 0.5);
}

typedef struct detector {
    float threshold, neg_threshold;
    long long min_silence, min_speech, max_speech, silence_at_max;
    int in_speech;
    long long start, temp_end, prev_end, next_start;
    hark_span *out;
    int n;
} detector;

static void emit(detector *d, long long start, long long end, int cut)
{
    d->out[d->n++] = (hark_span){start, end, cut};
}

/* A span past max_speech: cut at the last silence of 98 ms or more, else here. */
static void split_long_span(detector *d, long long at)
{
    if (d->prev_end) {
        emit(d, d->start, d->prev_end, 1);
        if (d->next_start < d->prev_end)
            d->in_speech = 0;
        else
            d->start = d->next_start;
    } else {
        emit(d, d->start, at, 1);
        d->in_speech = 0;
    }
    d->prev_end = d->next_start = d->temp_end = 0;
}

static void step(detector *d, float prob, long long at)
{
    if (prob >= d->threshold && d->temp_end) {
        d->temp_end = 0;
        if (d->next_start < d->prev_end)
            d->next_start = at;
    }
    if (prob >= d->threshold && !d->in_speech) {
        d->in_speech = 1;
        d->start = at;
        return;
    }
    if (d->in_speech && at - d->start > d->max_speech) {
        int ended = !d->prev_end;
        split_long_span(d, at);
        if (ended)
            return;
    }
    if (prob >= d->neg_threshold || !d->in_speech)
        return;
    if (!d->temp_end)
        d->temp_end = at;
    if (at - d->temp_end > d->silence_at_max)
        d->prev_end = d->temp_end;
    if (at - d->temp_end < d->min_silence)
        return;
    if (d->temp_end - d->start > d->min_speech)
        emit(d, d->start, d->temp_end, 0);
    d->prev_end = d->next_start = d->temp_end = 0;
    d->in_speech = 0;
}

/* whisper.cpp's post-processing: merge gaps under 0.2 s, drop short spans. */
static int merge_and_drop(hark_span *s, int n, long long min_speech)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (k && !s[k - 1].cut && s[i].start - s[k - 1].end < RATE / 5)
            s[k - 1].end = s[i].end, s[k - 1].cut = s[i].cut;
        else
            s[k++] = s[i];
    }
    int kept = 0;
    for (int i = 0; i < k; i++)
        if (s[i].end - s[i].start >= min_speech)
            s[kept++] = s[i];
    return kept;
}

/* Pads each span by pad samples (half the gap where two are closer than
 * 2 pad) and converts them to centiseconds. */
static void pad_spans(hark_span *s, int n, long long pad, long long length)
{
    if (n)
        s[0].start = s[0].start > pad ? s[0].start - pad : 0;
    for (int i = 0; i < n; i++) {
        if (i + 1 < n && s[i + 1].start - s[i].end < 2 * pad) {
            long long half = (s[i + 1].start - s[i].end) / 2;
            s[i].end += half;
            s[i + 1].start = s[i + 1].start > half ? s[i + 1].start - half : 0;
        } else {
            s[i].end = s[i].end + pad < length ? s[i].end + pad : length;
            if (i + 1 < n)
                s[i + 1].start = s[i + 1].start > pad ? s[i + 1].start - pad : 0;
        }
        s[i].start = cs_of(s[i].start);
        s[i].end = cs_of(s[i].end);
    }
}

int hark_vad_spans(const float *probs, int n, const hark_params *p, hark_span *spans)
{
    long long pad = (long long)RATE * p->vad.speech_pad_ms / 1000;
    detector d = {.threshold = p->vad.threshold,
                  .neg_threshold = fmaxf(p->vad.threshold - 0.15f, 0.01f),
                  .min_silence = (long long)RATE * p->vad.min_silence_ms / 1000,
                  .min_speech = (long long)RATE * p->vad.min_speech_ms / 1000,
                  .max_speech = LLONG_MAX / 2,
                  .silence_at_max = RATE * 98 / 1000,
                  .out = spans};
    if (p->vad.max_speech_s > 0 && p->vad.max_speech_s < 100000) {
        long long max = (long long)(RATE * (double)p->vad.max_speech_s) - HARK_VAD_CHUNK - 2 * pad;
        d.max_speech = max < 0 ? LLONG_MAX / 2 : max;
    }
    for (int i = 0; i < n; i++)
        step(&d, probs[i], (long long)i * HARK_VAD_CHUNK);
    long long length = (long long)n * HARK_VAD_CHUNK;
    if (d.in_speech && length - d.start > d.min_speech)
        emit(&d, d.start, length, 0);
    int k = merge_and_drop(spans, d.n, d.min_speech);
    pad_spans(spans, k, pad, length);
    return k;
}

static long long min_ll(long long a, long long b)
{
    return a < b ? a : b;
}

/* A map point; gap: the silence put between two spans starts here. */
static void add_point(hark_time_map *m, long long proc, long long orig, int gap)
{
    if (m->n && m->proc[m->n - 1] == proc) { /* whisper.cpp keeps the first of equal times */
        m->gap[m->n - 1] |= (unsigned char)gap;
        return;
    }
    m->proc[m->n] = proc;
    m->orig[m->n] = orig;
    m->gap[m->n++] = (unsigned char)gap;
}

/* Samples [a, stop) of in, then zeros (in == NULL) for stop - a, onto out. */
static int copy_span(const hark_source *in, long long a, long long stop, hark_source *out,
                     float *buf, size_t cap)
{
    int rc = 0;
    for (long long at = a; !rc && at < stop; at += (long long)cap) {
        size_t k = stop - at < (long long)cap ? (size_t)(stop - at) : cap;
        if (in)
            rc = hark_source_read(in, at, k, buf);
        else
            memset(buf, 0, sizeof(float) * k);
        rc = rc ? rc : hark_source_append(out, buf, k, NULL) ? HARK_ERR_IO : 0;
    }
    return rc;
}

int hark_vad_join_source(const hark_source *in, const hark_span *spans, int n_spans,
                         float overlap, hark_source *out, hark_time_map *map)
{
    enum { CAP = 1 << 15 };
    long long last = (long long)in->n - 1, extra = (long long)(overlap * RATE), at = 0;
    map->n = 0;
    map->proc = malloc(sizeof(long long) * (size_t)(4 * n_spans + 1));
    map->orig = malloc(sizeof(long long) * (size_t)(4 * n_spans + 1));
    map->gap = malloc((size_t)(4 * n_spans + 1));
    float *buf = malloc(sizeof(float) * CAP);
    int rc = map->proc && map->orig && map->gap && buf ? 0 : HARK_ERR_NOMEM;
    for (int i = 0; !rc && i < n_spans; i++) {
        int more = i + 1 < n_spans;
        long long a = min_ll(samples_of(spans[i].start), last);
        long long b = min_ll(samples_of(spans[i].end), last);
        long long stop = more ? min_ll(b + extra, last) : b; /* the overlap: not mapped */
        if (stop <= a)
            continue;
        add_point(map, cs_of(at), spans[i].start, 0);
        add_point(map, cs_of(at + b - a), spans[i].end, 0);
        rc = copy_span(in, a, stop, out, buf, CAP);
        at += stop - a;
        if (!rc && more) {
            add_point(map, cs_of(at), spans[i].end, 1);
            add_point(map, cs_of(at + SILENCE), spans[i + 1].start, 0);
            rc = copy_span(NULL, 0, SILENCE, out, buf, CAP);
            at += SILENCE;
        }
    }
    free(buf);
    return rc ? rc : hark_source_finish(out, NULL) ? HARK_ERR_IO : 0;
}

int hark_vad_join(const float *s, size_t n, const hark_span *spans, int n_spans, float overlap,
                  float **out, size_t *n_out, hark_time_map *map)
{
    hark_source in, joined;
    hark_source_memory(&in, s, n);
    *out = NULL;
    *n_out = 0;
    int rc = hark_source_spool(&joined, NULL) ? HARK_ERR_IO : 0;
    if (!rc)
        rc = hark_vad_join_source(&in, spans, n_spans, overlap, &joined, map);
    if (!rc)
        rc = hark_source_all(&joined, out, n_out, NULL);
    hark_source_close(&joined);
    return rc;
}

double hark_time_map_apply(const hark_time_map *m, double seconds, int is_end)
{
    long long t = llround(seconds * 100);
    if (m->n == 0)
        return seconds;
    if (t <= m->proc[0])
        return m->orig[0] / 100.0;
    if (t >= m->proc[m->n - 1])
        return m->orig[m->n - 1] / 100.0;
    int lo = 0, hi = m->n - 1; /* proc[lo] <= t < proc[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (m->proc[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    if (m->gap[lo]) /* no speech in the silence: a start is the next span's, an end the last's */
        return (is_end ? m->orig[lo] : m->orig[hi]) / 100.0;
    long long dp = m->proc[hi] - m->proc[lo], dorig = m->orig[hi] - m->orig[lo];
    return (m->orig[lo] + (t - m->proc[lo]) * dorig / dp) / 100.0;
}

void hark_time_map_free(hark_time_map *m)
{
    free(m->proc);
    free(m->orig);
    free(m->gap);
    *m = (hark_time_map){0};
}

/* The spans of src under p (its vad the model): *spans malloc'd, their count in *n. */
static int find_spans(const hark_vad *vad, const hark_params *p, const hark_source *src,
                      hark_span **spans, int *count)
{
    size_t chunks = hark_vad_n_chunks(src->n);
    *spans = NULL;
    if (chunks > INT_MAX / 2 - 1)
        return HARK_ERR_ARG;
    float *probs = malloc(sizeof(float) * (chunks ? chunks : 1));
    *spans = malloc(sizeof(hark_span) * (2 * chunks + 2));
    int rc = probs && *spans ? hark_vad_probs_of(vad, src, probs) : HARK_ERR_NOMEM;
    if (!rc)
        *count = hark_vad_spans(probs, (int)chunks, p, *spans);
    free(probs);
    return rc;
}

int hark_vad_speech_spans(const hark_vad *vad, const hark_params *params, const float *samples,
                          size_t n_samples, double *start, double *end, int max)
{
    hark_span *spans = NULL;
    hark_source src;
    hark_source_memory(&src, samples, n_samples);
    int n = 0, rc = vad && params && (samples || !n_samples) && max >= 0
                        ? find_spans(vad, params, &src, &spans, &n)
                        : HARK_ERR_ARG;
    for (int i = 0; !rc && i < n && i < max; i++) {
        start[i] = spans[i].start / 100.0;
        end[i] = spans[i].end / 100.0;
    }
    free(spans);
    return rc ? rc : n;
}

int hark_vad_speech(const hark_params *p, const hark_source *in, hark_source *out,
                    hark_time_map *map, hark_error *e)
{
    hark_span *spans;
    int count = 0, rc = find_spans(p->vad.model, p, in, &spans, &count);
    if (!rc)
        rc = hark_vad_join_source(in, spans, count, p->vad.samples_overlap, out, map);
    free(spans);
    if (rc == HARK_ERR_ARG)
        return hark_fail(e, rc, "too long for voice activity detection");
    if (rc == HARK_ERR_IO)
        return hark_fail(e, rc, "voice activity detection: cannot read or write the samples' "
                         "temporary files");
    return rc ? hark_fail(e, rc, "out of memory for voice activity detection") : 0;
}
