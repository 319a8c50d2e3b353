/* ggml's block-quantised weight formats: 32 weights a block with an f16
 * scale (and an f16 minimum for the _1 types); q5 adds one high bit a weight.
 *   q4_0 {d; qs[16]}          w = (nibble - 8) * d
 *   q4_1 {d; m; qs[16]}       w = nibble * d + m
 *   q5_0 {d; qh[4]; qs[16]}   w = (5-bit - 16) * d
 *   q5_1 {d; m; qh[4]; qs[16]} w = 5-bit * d + m
 *   q8_0 {d; qs[32] int8}     w = q * d
 * Nibble j of a block holds weight j (low) and weight j + 16 (high).
 * Quantisation rounds as ggml's reference quantize_row_*_ref does. */
#include <math.h>
#include <string.h>

#include "base/base.h"

enum { QK = 32 };

static void put_half(uint8_t *p, float f)
{
    uint16_t h = hark_f32_to_f16(f);
    memcpy(p, &h, 2);
}

void hark_block_quants(int8_t *u, const uint8_t *b, hark_dtype t)
{
    hark_qblock q = hark_qblock_fields(b, t);
    if (t == HARK_Q8_0) {
        memcpy(u, q.qs, QK);
        return;
    }
    for (int j = 0; j < QK / 2; j++) {
        int lo = q.qs[j] & 0x0f, hi = q.qs[j] >> 4;
        lo |= (int)((q.qh >> j) << 4) & 0x10;
        hi |= (int)(q.qh >> (j + 12)) & 0x10;
        u[j] = (int8_t)(lo - q.offset);
        u[j + QK / 2] = (int8_t)(hi - q.offset);
    }
}

static void dequant_block(float *y, const uint8_t *b, hark_dtype t)
{
    hark_qblock q = hark_qblock_fields(b, t);
    float d = hark_f16_to_f32(q.d), m = hark_f16_to_f32(q.min);
    int8_t u[QK];
    hark_block_quants(u, b, t);
    for (int j = 0; j < QK; j++)
        y[j] = (float)u[j] * d + m;
}

void hark_dequantize(float *y, const void *src, hark_dtype t, size_t n)
{
    const uint8_t *b = src;
    size_t bytes = hark_block_bytes(t);
    for (size_t i = 0; i < n / QK; i++)
        dequant_block(y + i * QK, b + i * bytes, t);
}

/* ---------------------------------------------------------- quantising */

static void quant_q8_0(uint8_t *b, const float *x)
{
    float amax = 0;
    for (int j = 0; j < QK; j++)
        amax = fmaxf(amax, fabsf(x[j]));
    float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
    put_half(b, d);
    for (int j = 0; j < QK; j++)
        b[2 + j] = (uint8_t)(int8_t)roundf(x[j] * id);
}

/* The value of largest magnitude, with its sign. */
static float signed_absmax(const float *x)
{
    float amax = 0, max = 0;
    for (int j = 0; j < QK; j++)
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    return max;
}

static void pack_nibbles(uint8_t *qs, uint32_t *qh, const int *q, int five_bits)
{
    *qh = 0;
    for (int j = 0; j < QK / 2; j++) {
        qs[j] = (uint8_t)((q[j] & 0x0f) | ((q[j + QK / 2] & 0x0f) << 4));
        if (five_bits) {
            *qh |= (uint32_t)((q[j] & 0x10) >> 4) << j;
            *qh |= (uint32_t)((q[j + QK / 2] & 0x10) >> 4) << (j + QK / 2);
        }
    }
}

/* q4_0 and q5_0: a symmetric scale from the signed extreme. */
static void quant_sym(uint8_t *b, const float *x, int five)
{
    int levels = five ? 16 : 8, top = five ? 31 : 15, q[QK];
    float d = signed_absmax(x) / (float)-levels, id = d != 0 ? 1.0f / d : 0.0f;
    put_half(b, d);
    for (int j = 0; j < QK; j++) {
        int v = (int)(int8_t)(x[j] * id + (float)levels + 0.5f);
        q[j] = v < top ? v : top;
    }
    uint32_t qh;
    pack_nibbles(b + (five ? 6 : 2), &qh, q, five);
    if (five)
        memcpy(b + 2, &qh, 4);
}

/* q4_1 and q5_1: scale and minimum. */
static void quant_affine(uint8_t *b, const float *x, int five)
{
    float min = x[0], max = x[0];
    for (int j = 1; j < QK; j++) {
        min = fminf(min, x[j]);
        max = fmaxf(max, x[j]);
    }
    int top = five ? 31 : 15, q[QK];
    float d = (max - min) / (float)top, id = d != 0 ? 1.0f / d : 0.0f;
    put_half(b, d);
    put_half(b + 2, min);
    for (int j = 0; j < QK; j++) {
        int v = (int)(int8_t)((x[j] - min) * id + 0.5f);
        q[j] = v < top ? v : top;
    }
    uint32_t qh;
    pack_nibbles(b + (five ? 8 : 4), &qh, q, five);
    if (five)
        memcpy(b + 4, &qh, 4);
}

/* f32 -> bf16, round to nearest even (NaN stays NaN). */
static uint16_t f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* The float types element by element; n any count. */
static void store_floats(void *dst, const float *x, hark_dtype t, size_t n)
{
    if (t == HARK_F32) {
        memcpy(dst, x, n * sizeof(float));
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint16_t h = t == HARK_F16 ? hark_f32_to_f16(x[i]) : f32_to_bf16(x[i]);
        memcpy((uint8_t *)dst + 2 * i, &h, 2);
    }
}

void hark_quantize_row(void *dst, const float *x, hark_dtype t, size_t n)
{
    uint8_t *b = dst;
    size_t bytes = hark_block_bytes(t);
    if (!bytes) {
        store_floats(dst, x, t, n);
        return;
    }
    for (size_t i = 0; i < n / QK; i++, b += bytes, x += QK) {
        if (t == HARK_Q8_0)
            quant_q8_0(b, x);
        else if (t == HARK_Q4_0 || t == HARK_Q5_0)
            quant_sym(b, x, t == HARK_Q5_0);
        else
            quant_affine(b, x, t == HARK_Q5_1);
    }
}
