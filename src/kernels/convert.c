/* Stored weights and activations to f32, whatever their type: f16 widened by the
 * SIMD kernels, block types dequantised, bf16 by its bits. */
#include <string.h>

#include "kernels/kernels.h"

void hark_to_f32(float *dst, const void *src, hark_dtype t, size_t n)
{
    const uint8_t *s = src;
    if (t == HARK_F32) {
        memcpy(dst, src, n * sizeof(float));
        return;
    }
    if (hark_dtype_is_quantized(t)) {
        hark_dequantize(dst, src, t, n);
        return;
    }
    if (t == HARK_F16) {
        hark_widen_f16(dst, src, n);
        return;
    }
    for (size_t i = 0; i < n; i++) { /* bf16: the high half of an f32 */
        uint16_t h;
        memcpy(&h, s + 2 * i, 2);
        uint32_t bits = (uint32_t)h << 16;
        memcpy(&dst[i], &bits, 4);
    }
}
