/* Stereo diarization, as whisper.cpp's --diarize: when two parties are recorded a
 * channel each (a phone call, an interview with two microphones), the louder
 * channel over a segment names its speaker.  The file's loudness is kept per
 * 10 ms (the resolution of segment bounds) instead of as two more sample
 * arrays: 200 floats a second rather than 32000. */
#include "audio/audio.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* whisper.cpp's margin: a channel speaks when its sum of |sample| is more than
 * 1.1 times the other's */
#define LOUDER 1.1

/* Zeroed room for bins [0, n), doubling as the file is read. */
static int room_for(hark_levels *lv, size_t n)
{
    if (n <= lv->cap)
        return 0;
    size_t cap = lv->cap * 2 > n ? lv->cap * 2 : n + 1024;
    for (int c = 0; c < 2; c++) {
        float *p = realloc(lv->ch[c], sizeof(float) * cap);
        if (!p)
            return HARK_ERR_NOMEM;
        memset(p + lv->cap, 0, sizeof(float) * (cap - lv->cap));
        lv->ch[c] = p;
    }
    lv->cap = cap;
    return 0;
}

int hark_levels_add(hark_levels *lv, const float *frames, size_t n, long long first, int rate)
{
    size_t last = n ? (size_t)((first + (long long)n - 1) * 100 / rate) : 0;
    if (n && room_for(lv, last + 1))
        return HARK_ERR_NOMEM;
    lv->n = n && last + 1 > lv->n ? last + 1 : lv->n;
    /* a run of frames a bin: one division a bin, not one a sample; bin b+1 starts at
     * the first frame f with f * 100 >= (b + 1) * rate */
    for (size_t i = 0; i < n;) {
        long long bin = (first + (long long)i) * 100 / rate;
        long long next = ((bin + 1) * rate + 99) / 100 - first;
        size_t end = next < (long long)n ? (size_t)next : n;
        float *left = &lv->ch[0][bin], *right = &lv->ch[1][bin];
        for (; i < end; i++) {
            *left += fabsf(frames[2 * i]);
            *right += fabsf(frames[2 * i + 1]);
        }
    }
    return 0;
}

void hark_levels_free(hark_levels *lv)
{
    free(lv->ch[0]);
    free(lv->ch[1]);
    lv->ch[0] = lv->ch[1] = NULL;
    lv->n = lv->cap = 0;
}

char hark_levels_speaker(const hark_levels *lv, double start, double end)
{
    if (!lv || lv->n == 0)
        return 0;
    double a = fmax(0, nearbyint(start * 100)), b = fmin((double)lv->n, nearbyint(end * 100));
    double left = 0, right = 0;
    for (size_t i = (size_t)a; i < (size_t)fmax(a, b); i++) {
        left += lv->ch[0][i];
        right += lv->ch[1][i];
    }
    return left > LOUDER * right ? '0' : right > LOUDER * left ? '1' : '?';
}
