/* Audio in: formats libsndfile writes come back as the same samples; tones
 * keep their level through the resampler and out-of-band tones are removed. */
#include <sndfile.h>
#include <unistd.h>

#include "check.h"
#include "internal.h"

static double rms(const float *x, size_t from, size_t to)
{
    double s = 0;
    for (size_t i = from; i < to; i++)
        s += (double)x[i] * x[i];
    return sqrt(s / (double)(to - from));
}

static float *tone(double freq, double rate, size_t n, double amp)
{
    float *x = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(amp * sin(2 * M_PI * freq * (double)i / rate));
    return x;
}

static void test_resampler_levels(void)
{
    const double rates[] = {44100, 48000, 22050, 8000};
    for (int r = 0; r < 4; r++) {
        size_t n = (size_t)rates[r] * 2;
        float *x = tone(1000, rates[r], n, 0.5), *y;
        size_t m;
        hark_error e;
        CHECK(hark_resample(x, n, rates[r], &y, &m, &e) == 0, "%s", e.msg);
        CHECK(labs((long)m - 32000) <= 1, "%g Hz: %zu samples out", rates[r], m);
        double db = 20 * log10(rms(y, 1600, m - 1600) / (0.5 / sqrt(2)));
        printf("1 kHz tone from %g Hz: level change %.4f dB\n", rates[r], db);
        CHECK(fabs(db) <= 0.1, "1 kHz from %g Hz changed level by %g dB", rates[r], db);
        free(x), free(y);
    }
    size_t n = 44100 * 2;
    float *x = tone(10000, 44100, n, 0.5), *y;
    size_t m;
    hark_error e;
    CHECK(hark_resample(x, n, 44100, &y, &m, &e) == 0, "%s", e.msg);
    double db = 20 * log10(rms(y, 1600, m - 1600) / (0.5 / sqrt(2)));
    printf("10 kHz tone from 44.1 kHz: %.1f dB\n", db);
    CHECK(db <= -60, "10 kHz tone only %g dB down", db);
    free(x), free(y);
}

/* Writes samples (mono or interleaved) in a format and reads them back. */
static void roundtrip(int format, int channels, int rate, double tol, const char *what)
{
    char path[] = "/tmp/hark-audio-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    size_t n = (size_t)rate; /* one second */
    float *x = tone(440, rate, n * channels, 0.25);
    SF_INFO info = {0};
    info.samplerate = rate;
    info.channels = channels;
    info.format = format;
    SNDFILE *sf = sf_open(path, SFM_WRITE, &info);
    CHECK(sf != NULL, "%s: %s", what, sf_strerror(NULL));
    if (!sf) {
        free(x);
        return;
    }
    sf_writef_float(sf, x, (sf_count_t)n);
    sf_close(sf);
    float *y = NULL;
    size_t m = 0;
    hark_error e;
    CHECK(hark_audio_read(path, &y, &m, &e) == 0, "%s: %s", what, e.msg);
    if (rate == 16000)
        CHECK(m == n, "%s: %zu samples", what, m);
    else
        CHECK(labs((long)m - 16000) <= 1, "%s: %zu samples", what, m);
    if (rate == 16000 && tol > 0) { /* lossless at 16 kHz: the same samples, downmixed */
        double worst = 0;
        for (size_t i = 0; i < n && i < m; i++) {
            double mean = 0;
            for (int c = 0; c < channels; c++)
                mean += x[i * channels + c];
            mean /= channels;
            worst = fmax(worst, fabs(mean - y[i]));
        }
        CHECK(worst <= tol, "%s: max sample error %g", what, worst);
    }
    if (tol == 0 && m > 8000) { /* lossy or resampled: the tone keeps its level */
        double level = rms(y, m / 4, m * 3 / 4);
        CHECK(fabs(level - 0.25 / sqrt(2)) < 0.01, "%s: tone rms %g", what, level);
    }
    free(x), free(y);
    unlink(path);
}

int main(void)
{
    test_resampler_levels();
    roundtrip(SF_FORMAT_WAV | SF_FORMAT_PCM_16, 1, 16000, 1.0 / 32768, "wav pcm16");
    roundtrip(SF_FORMAT_WAV | SF_FORMAT_PCM_U8, 1, 16000, 1.0 / 128, "wav pcm8");
    roundtrip(SF_FORMAT_WAV | SF_FORMAT_PCM_24, 1, 16000, 1e-6, "wav pcm24");
    roundtrip(SF_FORMAT_WAV | SF_FORMAT_PCM_32, 1, 16000, 1e-7, "wav pcm32");
    roundtrip(SF_FORMAT_WAV | SF_FORMAT_FLOAT, 2, 16000, 1e-7, "wav float stereo");
    roundtrip(SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 6, 16000, 1.0 / 32768, "flac 6 channels");
    roundtrip(SF_FORMAT_AIFF | SF_FORMAT_PCM_16, 1, 16000, 1.0 / 32768, "aiff");
    roundtrip(SF_FORMAT_OGG | SF_FORMAT_VORBIS, 1, 48000, 0, "ogg vorbis 48 kHz");
    roundtrip(SF_FORMAT_WAV | SF_FORMAT_PCM_16, 1, 96000, 0, "wav 96 kHz");
    /* libsndfile's MPEG writer (LAME) and reader (mpg123) keep the length exact */
    roundtrip(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III, 1, 16000, 0, "mp3 16 kHz");
    roundtrip(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III, 2, 44100, 0, "mp3 44.1 kHz stereo");
    roundtrip(SF_FORMAT_OGG | SF_FORMAT_OPUS, 1, 48000, 0, "opus 48 kHz");
    return check_summary("audio");
}
