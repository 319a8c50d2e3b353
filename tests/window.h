/* Test helper: an audio file's log-mel as transcription makes it (padded with
 * one window of silence) and one window of it encoded into cross K/V, for the
 * tests that decode windows themselves. */
#ifndef HARK_TEST_WINDOW_H
#define HARK_TEST_WINDOW_H
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "face.h"

typedef struct test_mel {
    float *mel; /* [n_mels][frames] */
    int frames;
    size_t samples;
} test_mel;

static int test_file_mel(const hark_model *m, const char *path, test_mel *t)
{
    float *x;
    hark_error e;
    memset(t, 0, sizeof *t);
    int read = hark_audio_read(path, &x, &t->samples, &e);
    CHECK(read == 0, "%s", e.msg);
    if (read != 0)
        return -1;
    int rc = hark_log_mel(x, t->samples, (size_t)m->hp.n_audio_ctx * 320, m->hp.n_mels, 1,
                          &t->mel, &t->frames, &e);
    CHECK(rc == 0, "%s", e.msg);
    free(x);
    return rc;
}

/* Frames [seek, seek + 2 * n_audio_ctx) encoded, their K/V set in cross. */
static void test_encode_window(const hark_model *m, const test_mel *t, int seek, hark_cross *cross)
{
    int len = 2 * m->hp.n_audio_ctx, nm = m->hp.n_mels;
    float *win = malloc(sizeof(float) * nm * len);
    float *enc = malloc(sizeof(float) * m->hp.n_audio_ctx * m->hp.n_audio_state);
    hark_mel_window(t->mel, t->frames, nm, seek, t->frames, len, win);
    hark_encode(m, win, enc, NULL);
    hark_cross_set(m, cross, enc);
    free(win), free(enc);
}
#endif
