/* Log-mel spectrogram, numerically Whisper's: periodic Hann window of 400,
 * hop 160, reflect padding of 200 on both sides, |STFT|^2 without the last
 * frame, Slaney mel filterbank, log10, clamp to max - 8, (x + 4) / 4. */
#include "audio/audio.h"

/* fftw3.h first: it must not see <complex.h>, which cblas.h pulls in. */
#include <fftw3.h>
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { N_FFT = 400, HOP = 160, N_BINS = N_FFT / 2 + 1, CHUNK_FRAMES = 512 };

static double hz_to_mel(double f)
{
    const double f_sp = 200.0 / 3, min_log_hz = 1000.0, logstep = log(6.4) / 27.0;
    if (f < min_log_hz)
        return f / f_sp;
    return min_log_hz / f_sp + log(f / min_log_hz) / logstep;
}

static double mel_to_hz(double m)
{
    const double f_sp = 200.0 / 3, min_log_hz = 1000.0, logstep = log(6.4) / 27.0;
    const double min_log_mel = min_log_hz / f_sp;
    if (m < min_log_mel)
        return f_sp * m;
    return min_log_hz * exp(logstep * (m - min_log_mel));
}

/* librosa.filters.mel(sr=16000, n_fft=400, n_mels, htk=False, norm="slaney"). */
void hark_mel_filters(int n_mels, float *filters)
{
    double *mel_f = malloc(sizeof(double) * (size_t)(n_mels + 2));
    double lo = hz_to_mel(0.0), hi = hz_to_mel(HARK_SAMPLE_RATE / 2.0);
    for (int i = 0; i < n_mels + 2; i++)
        mel_f[i] = mel_to_hz(lo + (hi - lo) * i / (n_mels + 1));
    for (int i = 0; i < n_mels; i++) {
        double enorm = 2.0 / (mel_f[i + 2] - mel_f[i]);
        for (int k = 0; k < N_BINS; k++) {
            double freq = (HARK_SAMPLE_RATE / 2.0) * k / (N_BINS - 1);
            double lower = (freq - mel_f[i]) / (mel_f[i + 1] - mel_f[i]);
            double upper = (mel_f[i + 2] - freq) / (mel_f[i + 2] - mel_f[i + 1]);
            double w = fmax(0.0, fmin(lower, upper));
            filters[i * N_BINS + k] = (float)((float)w * enorm);
        }
    }
    free(mel_f);
}

/* FFTW planning is not thread-safe; executing a plan on new arrays is. */
static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;
static fftwf_plan plan;

static fftwf_plan get_plan(void)
{
    pthread_mutex_lock(&plan_lock);
    if (!plan) {
        float *in = fftwf_malloc(sizeof(float) * N_FFT);
        fftwf_complex *out = fftwf_malloc(sizeof(fftwf_complex) * N_BINS);
        plan = fftwf_plan_dft_r2c_1d(N_FFT, in, out, FFTW_ESTIMATE | FFTW_UNALIGNED);
        fftwf_free(in);
        fftwf_free(out);
    }
    pthread_mutex_unlock(&plan_lock);
    return plan;
}

/* Sample i of the zero-padded signal after torch's reflect padding of 200, from
 * x, which holds the samples from a on (to n, the input's end). */
static float padded_sample(const float *x, long a, size_t n, size_t total, long i)
{
    long j = i - N_FFT / 2;
    long last = (long)total - 1;
    while (j < 0 || j > last)
        j = j < 0 ? -j : 2 * last - j;
    return (size_t)j < n ? x[j - a] : 0.0f;
}

static void power_frames(const float *x, long a, size_t n, size_t total, int t0, int nt,
                         const float *hann, float *power, float *frame, fftwf_complex *spec)
{
    fftwf_plan p = get_plan();
    for (int t = 0; t < nt; t++) {
        long start = (long)(t0 + t) * HOP;
        for (int i = 0; i < N_FFT; i++)
            frame[i] = padded_sample(x, a, n, total, start + i) * hann[i];
        fftwf_execute_dft_r2c(p, frame, spec);
        for (int k = 0; k < N_BINS; k++)
            power[(size_t)t * N_BINS + k] = spec[k][0] * spec[k][0] + spec[k][1] * spec[k][1];
    }
}

/* log10 of a mel power: overflowed power (inf, or NaN from inf * 0 in the
 * filterbank) reads as the largest and the smallest value, so the log-mel stays
 * finite and NaN from the model always means its weights. */
static float log_power(float v)
{
    return log10f(v > 1e-10f ? fminf(v, FLT_MAX) : 1e-10f);
}

/* Whisper's clamp to 8 below the maximum of the whole input, and scale. */
static float clamp_scale(float v, float mx)
{
    return ((v > mx - 8.0f ? v : mx - 8.0f) + 4.0f) / 4.0f;
}

static void log_scale(float *mel, size_t count)
{
    float mx = -INFINITY;
    for (size_t i = 0; i < count; i++) {
        mel[i] = log_power(mel[i]);
        mx = mel[i] > mx ? mel[i] : mx;
    }
    for (size_t i = 0; i < count; i++)
        mel[i] = clamp_scale(mel[i], mx);
}

static void periodic_hann(float *hann)
{
    for (int i = 0; i < N_FFT; i++) /* as torch.hann_window */
        hann[i] = (float)(0.5 - 0.5 * cos(2.0 * M_PI * i / N_FFT));
}

int hark_log_mel(const float *samples, size_t n, size_t pad_samples, int n_mels, int n_threads,
                 float **mel_out, int *n_frames, hark_error *e)
{
    (void)n_threads;
    size_t total = n + pad_samples;
    if (total < 2 || total / HOP > 0x7fffffff)
        return hark_fail(e, HARK_ERR_ARG, "mel: %zu samples is not a usable length", total);
    int frames = (int)(total / HOP);
    double bytes = sizeof(float) * (double)n_mels * frames, available;
    if (hark_memory_short(bytes, &available))
        return hark_fail(e, HARK_ERR_NOMEM, "mel: %.1f hours of audio need %.1f GB of memory for "
                         "the log-mel spectrogram, more than is available (%.1f GB)",
                         n / (3600.0 * HARK_SAMPLE_RATE), bytes / 1e9, available / 1e9);
    float *filters = malloc(sizeof(float) * (size_t)n_mels * N_BINS);
    float *mel = malloc(sizeof(float) * (size_t)n_mels * frames);
    float *power = malloc(sizeof(float) * CHUNK_FRAMES * N_BINS);
    float *frame = fftwf_malloc(sizeof(float) * N_FFT);
    fftwf_complex *spec = fftwf_malloc(sizeof(fftwf_complex) * N_BINS);
    int rc = 0;
    if (!filters || !mel || !power || !frame || !spec) {
        rc = hark_fail(e, HARK_ERR_NOMEM, "mel: out of memory for %d frames", frames);
        free(mel);
        goto out;
    }
    hark_mel_filters(n_mels, filters);
    float hann[N_FFT];
    periodic_hann(hann);
    for (int t0 = 0; t0 < frames; t0 += CHUNK_FRAMES) {
        int nt = frames - t0 < CHUNK_FRAMES ? frames - t0 : CHUNK_FRAMES;
        power_frames(samples, 0, n, total, t0, nt, hann, power, frame, spec);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n_mels, nt, N_BINS, 1.0f, filters,
                    N_BINS, power, N_BINS, 0.0f, mel + t0, frames);
    }
    log_scale(mel, (size_t)n_mels * frames);
    *mel_out = mel;
    *n_frames = frames;
out:
    free(filters);
    free(power);
    fftwf_free(frame);
    fftwf_free(spec);
    return rc;
}

/* ---------------------------------------------------------- window by window */

/* Frames [t0, t0 + nt) of the log10 mel power (before the clamp) into out
 * [n_mels][nt], from the samples they need.  The frames are computed in the
 * chunks hark_log_mel computes (CHUNK_FRAMES from a multiple of it), so that
 * each product has the same shape and the values are the same bits. */
static int stream_chunk(hark_mel_stream *ms, int t0, int nt, float *out)
{
    long long total = (long long)ms->total, last = total - 1;
    long long lo = (long long)t0 * HOP - N_FFT / 2, hi = (long long)(t0 + nt - 1) * HOP + N_FFT / 2;
    long long a = lo < 0 ? 0 : lo, b = hi > total ? total : hi; /* [a, b): the samples read */
    if (lo < 0 && b < -lo + 1) /* the reflection at the start reads forward */
        b = -lo + 1 < total ? -lo + 1 : total;
    if (hi > total && a > 2 * last - (hi - 1)) /* and at the end, back */
        a = 2 * last - (hi - 1) > 0 ? 2 * last - (hi - 1) : 0;
    if (hark_source_read(ms->src, a, (size_t)(b - a), ms->x))
        return HARK_ERR_IO;
    power_frames(ms->x, (long)a, ms->src->n, ms->total, t0, nt, ms->hann, ms->power, ms->frame,
                 ms->spec);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, ms->n_mels, nt, N_BINS, 1.0f,
                ms->filters, N_BINS, ms->power, N_BINS, 0.0f, out, nt);
    for (size_t i = 0; i < (size_t)ms->n_mels * nt; i++)
        out[i] = log_power(out[i]);
    return 0;
}

static int chunk_frames(const hark_mel_stream *ms, int c)
{
    int t0 = c * CHUNK_FRAMES;
    return ms->frames - t0 < CHUNK_FRAMES ? ms->frames - t0 : CHUNK_FRAMES;
}

/* Whisper clamps to 8 below the maximum of the whole input, so a first pass
 * finds it (and the last frame, which frames past the audio read as). */
static int find_max(hark_mel_stream *ms)
{
    float mx = -INFINITY, *out = ms->chunk[0];
    int chunks = (ms->frames + CHUNK_FRAMES - 1) / CHUNK_FRAMES;
    for (int c = 0; c < chunks; c++) {
        int nt = chunk_frames(ms, c);
        if (stream_chunk(ms, c * CHUNK_FRAMES, nt, out))
            return HARK_ERR_IO;
        for (size_t i = 0; i < (size_t)ms->n_mels * nt; i++)
            mx = out[i] > mx ? out[i] : mx;
        if (c == chunks - 1)
            for (int m = 0; m < ms->n_mels; m++)
                ms->last[m] = out[(size_t)m * nt + nt - 1];
    }
    ms->max = mx;
    return 0;
}

int hark_mel_stream_open(hark_mel_stream *ms, const hark_source *src, size_t pad_samples,
                         int n_mels, hark_error *e)
{
    memset(ms, 0, sizeof *ms);
    ms->src = src, ms->n_mels = n_mels, ms->total = src->n + pad_samples;
    if (ms->total < 2 || ms->total / HOP > 0x7fffffff)
        return hark_fail(e, HARK_ERR_ARG, "mel: %zu samples is not a usable length", ms->total);
    ms->frames = (int)(ms->total / HOP);
    size_t chunk = sizeof(float) * (size_t)n_mels * CHUNK_FRAMES;
    ms->filters = malloc(sizeof(float) * (size_t)n_mels * N_BINS);
    ms->power = malloc(sizeof(float) * CHUNK_FRAMES * N_BINS);
    ms->x = malloc(sizeof(float) * ((CHUNK_FRAMES - 1) * HOP + N_FFT + 1));
    ms->last = malloc(sizeof(float) * (size_t)n_mels);
    ms->frame = fftwf_malloc(sizeof(float) * N_FFT);
    ms->spec = fftwf_malloc(sizeof(fftwf_complex) * N_BINS);
    int ok = ms->filters && ms->power && ms->x && ms->last && ms->frame && ms->spec;
    for (int i = 0; i < HARK_MEL_CACHE; i++)
        ok = ok && (ms->chunk[i] = malloc(chunk)), ms->id[i] = -1;
    if (!ok)
        return hark_fail(e, HARK_ERR_NOMEM, "mel: out of memory");
    hark_mel_filters(n_mels, ms->filters);
    periodic_hann(ms->hann);
    return find_max(ms) ? hark_fail(e, HARK_ERR_IO, "mel: cannot read the samples back") : 0;
}

/* Chunk c's log10 values, computed when not held (a window's chunks are
 * consecutive and fewer than HARK_MEL_CACHE, so they never evict each other). */
static const float *chunk_of(hark_mel_stream *ms, int c)
{
    int slot = c % HARK_MEL_CACHE;
    if (ms->id[slot] != c) {
        ms->id[slot] = -1;
        if (stream_chunk(ms, c * CHUNK_FRAMES, chunk_frames(ms, c), ms->chunk[slot]))
            return NULL;
        ms->id[slot] = c;
    }
    return ms->chunk[slot];
}

int hark_mel_stream_window(hark_mel_stream *ms, int seek, int stop, int len, float *out)
{
    int have = (stop < ms->frames ? stop : ms->frames) - seek; /* frames as they are */
    have = have < 0 ? 0 : have > len ? len : have;
    for (int t = 0; t < have;) {
        int c = (seek + t) / CHUNK_FRAMES, nt = chunk_frames(ms, c), from = seek + t - c * CHUNK_FRAMES;
        int k = nt - from < have - t ? nt - from : have - t;
        const float *chunk = chunk_of(ms, c);
        if (!chunk)
            return HARK_ERR_IO;
        for (int m = 0; m < ms->n_mels; m++)
            for (int i = 0; i < k; i++)
                out[(size_t)m * len + t + i] = clamp_scale(chunk[(size_t)m * nt + from + i], ms->max);
        t += k;
    }
    for (int m = 0; m < ms->n_mels; m++)
        for (int t = have; t < len; t++)
            out[(size_t)m * len + t] = clamp_scale(ms->last[m], ms->max);
    return 0;
}

void hark_mel_stream_close(hark_mel_stream *ms)
{
    free(ms->filters);
    free(ms->power);
    free(ms->x);
    free(ms->last);
    fftwf_free(ms->frame);
    fftwf_free(ms->spec);
    for (int i = 0; i < HARK_MEL_CACHE; i++)
        free(ms->chunk[i]);
    memset(ms, 0, sizeof *ms);
}

/* Frames [seek, seek + len) of a [n_mels][frames] log-mel into out [n_mels][len]. Frames at
 * or past stop read as the last frame: the padding's floor value, so that a window past the
 * end of the audio, or past the end of a clip inside it, sees silence there. */
void hark_mel_window(const float *mel, int frames, int n_mels, int seek, int stop, int len,
                     float *out)
{
    int have = (stop < frames ? stop : frames) - seek; /* frames copied as they are */
    have = have < 0 ? 0 : have > len ? len : have;
    for (int c = 0; c < n_mels; c++) {
        const float *row = mel + (size_t)c * frames;
        float *dst = out + (size_t)c * len;
        if (have) /* seek may lie past the frames */
            memcpy(dst, row + seek, sizeof(float) * (size_t)have);
        for (int t = have; t < len; t++)
            dst[t] = row[frames - 1];
    }
}

int hark_log_mel_spectrogram(const float *samples, size_t n, size_t pad_samples, int n_mels,
                             float **mel, int *n_frames, char *err, size_t errlen)
{
    hark_error e = {{0}};
    int rc = n_mels == 80 || n_mels == 128
                 ? hark_log_mel(samples, n, pad_samples, n_mels, 1, mel, n_frames, &e)
                 : hark_fail(&e, HARK_ERR_ARG, "%d mel bands: Whisper's are 80 or 128", n_mels);
    if (rc && err && errlen)
        snprintf(err, errlen, "%s", e.msg);
    return rc;
}
