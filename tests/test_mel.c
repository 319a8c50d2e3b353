/* Log-mel front end against the reference filterbanks and jfk.wav's log-mel. */
#include "check.h"
#include "internal.h"

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

int main(void)
{
    test_filters(80);
    test_filters(128);
    test_jfk();
    test_silence();
    return check_summary("mel");
}
