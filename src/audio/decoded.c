/* What a file decodes to (hark_decoded): its mono samples grow as they are
 * decoded, whichever decoder (libsndfile in read.c, ffmpeg in ffmpeg.c) reads them. */
#include <stdlib.h>

#include "audio/audio.h"

/* Room for libsndfile's frames doubles up to the length the header claims:
 * memory follows the samples decoded, not the claim (a few hundred bytes of FLAC
 * can claim gigabytes that the check of its length lets through on a big machine). */
int hark_decoded_room(hark_decoded *d, size_t *cap, size_t need, size_t claimed)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : (size_t)1 << 16;
    c = c < need ? need : c > claimed ? claimed : c;
    float *p = realloc(d->mono, sizeof(float) * c);
    if (!p)
        return HARK_ERR_NOMEM;
    d->mono = p;
    *cap = c;
    return 0;
}
