/* Log-mel front end against the reference filterbanks and jfk.wav's log-mel. */
#include <float.h>
#include <math.h>

#include "check.h"
#include "npy.h"
#include "face.h"

static void test_filters(int n_mels)
{
    char path[1024], rel[64];
    snprintf(rel, sizeof rel, "fixtures/mel_filters_%d.npy", n_mels);
    if (!shared_path(path, sizeof path, rel)) {
        SKIP("%s absent: reference filterbank test not run", path);
        return;
    }
    float *ref, ours[128 * 201];
    int rows, cols;
    hark_error e;
    CHECK(hark_read_npy(path, &ref, &rows, &cols, &e) == 0, "%s", e.msg);
    CHECK(rows == n_mels && cols == 201, "shape %dx%d", rows, cols);
    hark_mel_filters(n_mels, ours);
    double d = max_abs_diff(ours, ref, (size_t)n_mels * 201);
    CHECK(d <= 1e-6, "filterbank %d max diff %g", n_mels, d);
    free(ref);
}

static void test_jfk(void)
{
    char wav[1024], npy[1024];
    if (!shared_path(wav, sizeof wav, "fixtures/ref-tiny.en/jfk.wav") ||
        !shared_path(npy, sizeof npy, "fixtures/ref-tiny.en/jfk_mel80.npy")) {
        SKIP("reference jfk fixtures absent: log-mel parity not run");
        return;
    }
    hark_error e;
    float *x, *ref, *mel;
    size_t n;
    int rows, cols, frames;
    CHECK(hark_audio_read(wav, &x, &n, &e) == 0, "%s", e.msg);
    CHECK(n == 176000, "jfk has %zu samples", n);
    CHECK(hark_read_npy(npy, &ref, &rows, &cols, &e) == 0, "%s", e.msg);
    /* pad_or_trim to 30 s, then log-mel: the same as padding with zeros */
    CHECK(hark_log_mel(x, n, 480000 - n, 80, 1, &mel, &frames, &e) == 0, "%s", e.msg);
    CHECK(frames == 3000 && rows == 80 && cols == 3000, "frames %d", frames);
    double d = max_abs_diff(mel, ref, (size_t)80 * 3000);
    CHECK(d <= 1e-4, "jfk log-mel max diff %g", d);
    printf("jfk log-mel max |diff| = %.3g\n", d);
    free(x);
    free(ref);
    free(mel);
}

static void test_silence(void)
{
    /* All zeros: every value is log10(1e-10) clamped, i.e. (-10 + 4) / 4. */
    float z[3200] = {0};
    float *mel;
    int frames;
    hark_error e;
    CHECK(hark_log_mel(z, 3200, 0, 80, 1, &mel, &frames, &e) == 0, "%s", e.msg);
    CHECK(frames == 20, "frames %d", frames);
    CHECK(fabsf(mel[0] + 1.5f) < 1e-6 && fabsf(mel[80 * 20 - 1] + 1.5f) < 1e-6, "%g", mel[0]);
    free(mel);
}

/* A 1 kHz sine loud enough (2.5e17) that its bin's power overflows float: the
 * log-mel stays finite, the overflow reading as the largest float, so the model
 * never sees inf (which it would turn into NaN, blamed on its weights). */
static void test_overflow(void)
{
    enum { N = 16000 };
    static float x[N];
    for (int i = 0; i < N; i++)
        x[i] = 2.5e17f * (float)sin(2 * M_PI * 1000 * i / 16000.0);
    float *mel, mx = -INFINITY;
    int frames, finite = 1;
    hark_error e;
    CHECK(hark_log_mel(x, N, 0, 80, 1, &mel, &frames, &e) == 0, "%s", e.msg);
    for (int i = 0; i < 80 * frames; i++) {
        finite &= isfinite(mel[i]) != 0;
        mx = mel[i] > mx ? mel[i] : mx;
    }
    CHECK(finite, "the log-mel of an overflowing sine holds inf or NaN");
    CHECK(fabsf(mx - (log10f(FLT_MAX) + 4) / 4) < 1e-5f, "max %g", mx);
    free(mel);
}

/* A length whose log-mel no machine here has memory for is refused before
 * anything is allocated or read (the samples pointer is never touched). */
static void test_too_long(void)
{
    float one = 0, *mel = NULL;
    int frames = 0;
    hark_error e;
    const char *want = "mel: 5208.3 hours of audio need 600.0 GB of memory for the log-mel "
                       "spectrogram, more than is available (";
    CHECK(hark_log_mel(&one, 300000000000, 0, 80, 1, &mel, &frames, &e) == HARK_ERR_NOMEM,
          "a 600 GB log-mel was not refused");
    CHECK(strncmp(e.msg, want, strlen(want)) == 0, "message: %s", e.msg);
    CHECK(!mel && frames == 0, "outputs set on failure");
}

/* Windows of a 2-channel, 6-frame log-mel whose value at (c, t) is 10c + t. */
static void test_window(void)
{
    float mel[12], out[10];
    for (int c = 0; c < 2; c++)
        for (int t = 0; t < 6; t++)
            mel[c * 6 + t] = 10.0f * c + t;
    /* inside: frames 1..5 of each channel */
    hark_mel_window(mel, 6, 2, 1, 6, 5, out);
    CHECK(out[0] == 1 && out[4] == 5 && out[5] == 11 && out[9] == 15, "%g %g %g %g", out[0],
          out[4], out[5], out[9]);
    /* past the end: the last frame, the padding's silence */
    hark_mel_window(mel, 6, 2, 3, 6, 5, out);
    CHECK(out[2] == 5 && out[3] == 5 && out[4] == 5 && out[8] == 15, "%g %g %g", out[2], out[3],
          out[8]);
    /* a clip ending at frame 3: frames from 3 on read as the last frame, not as frame 3 */
    hark_mel_window(mel, 6, 2, 1, 3, 5, out);
    CHECK(out[0] == 1 && out[1] == 2 && out[2] == 5 && out[4] == 5 && out[6] == 12 && out[7] == 15,
          "%g %g %g %g", out[1], out[2], out[6], out[7]);
    /* a stop past the frames is the end of the frames */
    hark_mel_window(mel, 6, 2, 4, 99, 5, out);
    CHECK(out[0] == 4 && out[1] == 5 && out[4] == 5, "%g %g", out[0], out[4]);
}

/* The log-mel window by window (the long-form loop's) holds hark_log_mel's
 * values bit for bit: lengths of one chunk and less, across chunk edges, a
 * window past the end, backwards, and 128 bands; from memory and from a spool. */
static void check_stream(const float *x, size_t n, size_t pad, int n_mels, int spooled)
{
    float *mel;
    int frames, len = 3000;
    hark_error e;
    CHECK(hark_log_mel(x, n, pad, n_mels, 1, &mel, &frames, &e) == 0, "%s", e.msg);
    hark_source src;
    hark_mel_stream ms;
    if (spooled) {
        CHECK(hark_source_spool(&src, &e) == 0 && hark_source_append(&src, x, n, &e) == 0 &&
              hark_source_finish(&src, &e) == 0, "%s", e.msg);
    } else {
        hark_source_memory(&src, x, n);
    }
    CHECK(hark_mel_stream_open(&ms, &src, pad, n_mels, &e) == 0, "%s", e.msg);
    float *a = malloc(sizeof(float) * (size_t)n_mels * len), *b = malloc(sizeof(float) * (size_t)n_mels * len);
    const int seeks[] = {0, 1, 511, 512, 1000, frames - 10, frames + 5, 3, frames / 2};
    for (size_t i = 0; i < sizeof seeks / sizeof *seeks; i++) {
        int seek = seeks[i] < 0 ? 0 : seeks[i], stop = i == 4 ? seek + 700 : frames;
        hark_mel_window(mel, frames, n_mels, seek, stop, len, a);
        CHECK(hark_mel_stream_window(&ms, seek, stop, len, b) == 0, "read");
        CHECK(memcmp(a, b, sizeof(float) * (size_t)n_mels * len) == 0,
              "n %zu pad %zu mels %d spooled %d: window at %d differs", n, pad, n_mels, spooled, seek);
    }
    hark_mel_stream_close(&ms);
    hark_source_close(&src);
    free(a), free(b), free(mel);
}

static void test_stream(void)
{
    size_t n = 16000 * 47 + 123;
    float *x = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++) /* a chirp with noise, and one loud burst */
        x[i] = 0.3f * sinf(0.001f * (float)i * (float)(i % 9000) / 9000.0f) +
               (float)((i * 2654435761u) % 1000) / 20000.0f + (i / 16000 == 20 ? 0.5f : 0.0f);
    const size_t lengths[] = {n, 5000, 81920, 81921, 16000 * 30};
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++)
        check_stream(x, lengths[i], 30 * 16000, 80, i % 2);
    check_stream(x, 300, 0, 80, 0); /* reflected at both ends */
    check_stream(x, n, 30 * 16000, 128, 1);
    free(x);
}

int main(void)
{
    test_stream();
    test_window();
    test_filters(80);
    test_filters(128);
    test_jfk();
    test_silence();
    test_too_long();
    test_overflow();
    return check_summary("mel");
}
