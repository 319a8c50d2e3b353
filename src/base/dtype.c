/* Stored number types: f16 <-> f32, element and row sizes, names.  The
 * conversion of whole rows to f32 is kernels/convert.c (it uses the SIMD widening). */
#include <string.h>

#include "base/base.h"

float hark_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int shift = 0;
            while (!(man & 0x400)) {
                man <<= 1;
                shift++;
            }
            man &= 0x3ff;
            bits = sign | ((uint32_t)(127 - 15 - shift + 1) << 23) | (man << 13);
        }
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t hark_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000;
    int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t man = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff)
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    if (exp >= 0x1f)
        return (uint16_t)(sign | 0x7c00);
    if (exp <= 0) {
        if (exp < -10)
            return (uint16_t)sign;
        man |= 0x800000;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)exp << 10) | (man >> 13);
    uint32_t rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
        half++;
    return (uint16_t)half;
}

size_t hark_dtype_size(hark_dtype t)
{
    return t == HARK_F32 ? 4 : t == HARK_F16 || t == HARK_BF16 ? 2 : 0;
}

size_t hark_row_bytes(hark_dtype t, size_t n)
{
    return hark_dtype_is_quantized(t) ? n / 32 * hark_block_bytes(t) : n * hark_dtype_size(t);
}

const char *hark_dtype_name(hark_dtype t)
{
    static const char *const names[] = {"F32", "F16", "BF16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

size_t hark_block_bytes(hark_dtype t)
{
    switch (t) {
    case HARK_Q4_0: return 18;
    case HARK_Q4_1: return 20;
    case HARK_Q5_0: return 22;
    case HARK_Q5_1: return 24;
    case HARK_Q8_0: return 34;
    default: return 0;
    }
}

int hark_dtype_is_quantized(hark_dtype t)
{
    return hark_block_bytes(t) != 0;
}
