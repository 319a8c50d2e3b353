/* UTF-8 decoding with Python's replacement rule (see base.h). */
#include "base/base.h"

#include <stdlib.h>
#include <string.h>

/* The bytes a character starting with lead takes (0: lead starts none), and
 * the range its second byte must lie in: the narrower ranges after E0, ED, F0
 * and F4 are what rule out overlong forms, surrogates and values past U+10FFFF. */
static size_t sequence_length(unsigned lead, unsigned *lo, unsigned *hi)
{
    *lo = 0x80, *hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF)
        return 2;
    if (lead >= 0xE0 && lead <= 0xEF) {
        if (lead == 0xE0)
            *lo = 0xA0;
        if (lead == 0xED)
            *hi = 0x9F;
        return 3;
    }
    if (lead >= 0xF0 && lead <= 0xF4) {
        if (lead == 0xF0)
            *lo = 0x90;
        if (lead == 0xF4)
            *hi = 0x8F;
        return 4;
    }
    return 0;
}

size_t hark_utf8_next(const char *s, size_t n, uint32_t *cp, int *valid)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] < 0x80) {
        *cp = u[0], *valid = 1;
        return 1;
    }
    unsigned lo, hi;
    size_t len = sequence_length(u[0], &lo, &hi), k = 1;
    uint32_t c = u[0] & (0x7F >> len);
    /* k ends at the first byte that does not fit: past the character when valid */
    for (; k < len && k < n && u[k] >= lo && u[k] <= hi; k++) {
        c = c << 6 | (u[k] & 0x3F);
        lo = 0x80, hi = 0xBF;
    }
    *valid = len > 0 && k == len;
    *cp = *valid ? c : 0xFFFD;
    return k;
}

size_t hark_utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    int valid;
    return hark_utf8_next(s, n, cp, &valid);
}

char *hark_utf8_sanitize(const char *s, size_t n)
{
    char *out = malloc(n * 3 + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int valid;
        size_t len = hark_utf8_next(s + i, n - i, &cp, &valid);
        if (!valid)
            memcpy(o, "\xEF\xBF\xBD", 3), o += 3;
        else
            memcpy(o, s + i, len), o += len;
        i += len;
    }
    *o = 0;
    return out;
}

size_t hark_utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}
