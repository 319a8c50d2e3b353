/* What a file decodes to (hark_decoded): its mono frames as they are decoded,
 * whichever decoder (libsndfile in read.c, ffmpeg in ffmpeg.c) reads them,
 * checked, resampled to 16 kHz by soxr as a stream (the same samples as one
 * call over the whole file: soxr's output does not depend on how its input is
 * cut) and appended to a source, up to the duration limit. */
#include "audio/audio.h"

#include <math.h>
#include <soxr.h>
#include <stdlib.h>

enum { RESAMPLE_BLOCK = 1 << 14 };

int hark_decoded_start(hark_decoded *d, int rate, const char *path, hark_error *e)
{
    d->rate = rate;
    d->limit = d->max_seconds > 0 ? (long long)ceil(d->max_seconds * rate) : -1;
    if (rate == HARK_SAMPLE_RATE)
        return 0;
    soxr_error_t err = NULL;
    soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
    soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
    d->resampler = soxr_create(rate, HARK_SAMPLE_RATE, 1, &err, &io, &q, NULL);
    return err ? hark_fail(e, HARK_ERR_FORMAT, "%s: resample: %s", path, err) : 0;
}

/* Resamples n frames (none: the resampler's tail) into the source. */
static int resample(hark_decoded *d, const float *x, size_t n, const char *path, hark_error *e)
{
    float out[RESAMPLE_BLOCK];
    int rc = 0;
    for (int tail = x == NULL; !rc && (n || tail);) {
        size_t used = 0, made = 0;
        soxr_error_t err = soxr_process(d->resampler, x, n, x ? &used : NULL, out,
                                        RESAMPLE_BLOCK, &made);
        if (err)
            return hark_fail(e, HARK_ERR_FORMAT, "%s: resample: %s", path, err);
        rc = hark_source_append(d->out, out, made, e);
        if (x)
            x += used, n -= used;
        tail = tail && made;
    }
    return rc;
}

int hark_decoded_add(hark_decoded *d, const float *mono, size_t n, const char *path,
                     hark_error *e)
{
    if (d->limit >= 0 && d->frames + (long long)n > d->limit) {
        n = (size_t)(d->limit - d->frames);
        d->cut = 1;
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(mono[i]))
            return hark_fail(e, HARK_ERR_FORMAT, "%s: sample %lld is NaN or infinite", path,
                             d->frames + (long long)i);
    d->frames += (long long)n;
    return d->resampler ? resample(d, mono, n, path, e) : hark_source_append(d->out, mono, n, e);
}

int hark_decoded_end(hark_decoded *d, const char *path, hark_error *e)
{
    int rc = d->resampler ? resample(d, NULL, 0, path, e) : 0;
    soxr_delete(d->resampler);
    d->resampler = NULL;
    return rc ? rc : hark_source_finish(d->out, e);
}

void hark_decoded_drop(hark_decoded *d)
{
    soxr_delete(d->resampler);
    d->resampler = NULL;
    if (d->levels)
        hark_levels_free(d->levels);
}
