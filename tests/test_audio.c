/* Audio in: formats libsndfile writes come back as the same samples; tones
 * keep their level through the resampler and out-of-band tones are removed. */
#include <sndfile.h>
#include <unistd.h>

#include "check.h"
#include "face.h"

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

/* A stereo file at rate: 1 s with the left channel at amplitude a and the right
 * at b, then 1 s with them swapped; its levels and samples read back. */
static size_t stereo_levels(int rate, int channels, double a, double b, hark_levels *lv)
{
    char path[] = "/tmp/hark-audio-XXXXXX";
    close(mkstemp(path));
    size_t n = 2 * (size_t)rate;
    float *x = calloc(n * (size_t)channels, sizeof(float));
    for (size_t i = 0; i < n; i++) {
        double s = sin(2 * M_PI * 300 * (double)i / rate), first = i < (size_t)rate;
        x[i * channels] = (float)(s * (first ? a : b));
        if (channels > 1)
            x[i * channels + 1] = (float)(s * (first ? b : a));
    }
    SF_INFO info = {.samplerate = rate, .channels = channels,
                    .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT};
    SNDFILE *sf = sf_open(path, SFM_WRITE, &info);
    sf_writef_float(sf, x, (sf_count_t)n);
    sf_close(sf);
    float *y = NULL;
    size_t m = 0;
    hark_error e;
    CHECK(hark_audio_read_levels(path, &y, &m, lv, &e) == 0, "levels: %s", e.msg);
    free(x), free(y);
    unlink(path);
    return m;
}

/* whisper.cpp's --diarize rule: the channel whose sum of |sample| over a span is
 * more than 1.1 times the other's speaks. */
static void test_speaker_levels(void)
{
    hark_levels lv;
    size_t m = stereo_levels(44100, 2, 0.5, 0.45, &lv); /* 0.5 / 0.45 = 1.11 */
    CHECK(m == 32000 && lv.n == 200, "stereo levels: %zu samples, %zu bins", m, lv.n);
    CHECK(hark_levels_speaker(&lv, 0, 1) == '0', "left louder by 11 %%: speaker 0");
    CHECK(hark_levels_speaker(&lv, 1, 2) == '1', "right louder by 11 %%: speaker 1");
    CHECK(hark_levels_speaker(&lv, 0.5, 1.5) == '?', "balanced: unsure");
    /* summed over the span, not voted per 10 ms: left 0.7 * 0.5 + 0.1 * 0.45, right
     * 0.7 * 0.45 + 0.1 * 0.5, louder by 8 % */
    CHECK(hark_levels_speaker(&lv, 0.3, 1.1) == '?', "0.3-1.1 s: unsure");
    CHECK(hark_levels_speaker(&lv, 0, 1.02) == '0', "0-1.02 s: louder by 10.7 %%, speaker 0");
    CHECK(hark_levels_speaker(&lv, 1.5, 9) == '1', "an end past the file: its last half second");
    CHECK(hark_levels_speaker(&lv, 3, 4) == '?', "past the end: nothing louder");
    hark_levels_free(&lv);
    stereo_levels(16000, 2, 0.5, 0.46, &lv); /* 0.5 / 0.46 = 1.087 */
    CHECK(hark_levels_speaker(&lv, 0, 1) == '?', "louder by 9 %%: unsure");
    hark_levels_free(&lv);
    stereo_levels(16000, 1, 0.5, 0.1, &lv);
    CHECK(lv.n == 0 && hark_levels_speaker(&lv, 0, 1) == 0, "mono: no levels");
    stereo_levels(16000, 3, 0.5, 0.1, &lv);
    CHECK(lv.n == 0 && !lv.ch[0], "three channels: no levels");
    CHECK(hark_levels_speaker(NULL, 0, 1) == 0, "no levels: no speaker");
}

int main(void)
{
    test_speaker_levels();
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
