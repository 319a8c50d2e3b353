/* lowp.c's products in AVX-512 register tiles: vdpbf16ps (AVX512_BF16) sums
 * pairs of bf16 products into f32, vpdpbusd (AVX512_VNNI) quads of u8 x s8 into
 * int32, so each instruction does two or four of the f32 tiles' (gemm512.c)
 * multiply-adds.  The layout is gemm512.c's: tiles of 12 activation rows x 32
 * outputs (24 accumulators), a panel's slice of KC columns (16 KB) kept in L1
 * with the tile's slice of x (6 KB) while every tile of a chunk of rows passes
 * over it (slices of 32 KB, which with x's filled a 48 KB L1, ran at 0.7 the
 * speed on fc2's 1536 columns); slices of bf16 add to y,
 * slices of int8 add their exact int32 sums in y's memory. */
#include "kernels/kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <string.h>

enum { PANEL = HARK_PACK_PANEL, TILE_M = 12, KC_BF16 = 256, KC_INT8 = 512 };

#define AVX512 __attribute__((target("avx512f,avx512vl,avx512bw")))
#define BF16 __attribute__((target("avx512f,avx512vl,avx512bw,avx512bf16")))
#define VNNI __attribute__((target("avx512f,avx512vl,avx512bw,avx512vnni")))
#define TILE static inline __attribute__((always_inline))

static __mmask16 mask_of(int n) /* the first n (0..16) lanes */
{
    return (__mmask16)(n >= 16 ? 0xffff : n <= 0 ? 0 : (1u << n) - 1);
}

static uint32_t pair_at(const void *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

BF16 TILE void bf16_tile(float *y, int ldy, const uint16_t *x, int ldx, const uint16_t *panel,
                         int kc, __mmask16 m0, __mmask16 m1, int accumulate, const int rows)
{
    __m512 acc[TILE_M][2];
#pragma GCC unroll 12
    for (int r = 0; r < rows; r++)
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int c = 0; c < kc; c += 2) {
        __m512i w0 = _mm512_loadu_si512(panel + (size_t)c * PANEL);
        __m512i w1 = _mm512_loadu_si512(panel + (size_t)c * PANEL + 32);
#pragma GCC unroll 12
        for (int r = 0; r < rows; r++) {
            __m512i xr = _mm512_set1_epi32((int)pair_at(x + (size_t)r * ldx + c));
            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], (__m512bh)xr, (__m512bh)w0);
            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], (__m512bh)xr, (__m512bh)w1);
        }
    }
#pragma GCC unroll 12
    for (int r = 0; r < rows; r++) {
        float *out = y + (size_t)r * ldy;
        if (accumulate) {
            acc[r][0] = _mm512_add_ps(acc[r][0], _mm512_maskz_loadu_ps(m0, out));
            acc[r][1] = _mm512_add_ps(acc[r][1], _mm512_maskz_loadu_ps(m1, out + 16));
        }
        _mm512_mask_storeu_ps(out, m0, acc[r][0]);
        _mm512_mask_storeu_ps(out + 16, m1, acc[r][1]);
    }
}

/* acc += u8 x s8 in quads.  In asm: GCC 12 copies each accumulator of the
 * intrinsic's form in and out of a spare register, and spills them, which ran
 * the tiles at a third of their speed. */
#define DPBUSD(acc, x, w) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w))

VNNI TILE void int8_tile(int32_t *y, int ldy, const uint8_t *x, int ldx, const int8_t *panel,
                         int kc, __mmask16 m0, __mmask16 m1, int accumulate, const int rows)
{
    __m512i acc[TILE_M][2];
#pragma GCC unroll 12
    for (int r = 0; r < rows; r++)
        acc[r][0] = acc[r][1] = _mm512_setzero_si512();
    for (int c = 0; c < kc; c += 4) {
        __m512i w0 = _mm512_loadu_si512(panel + (size_t)c * PANEL);
        __m512i w1 = _mm512_loadu_si512(panel + (size_t)c * PANEL + 64);
#pragma GCC unroll 12
        for (int r = 0; r < rows; r++) {
            __m512i xr = _mm512_set1_epi32((int)pair_at(x + (size_t)r * ldx + c));
            DPBUSD(acc[r][0], xr, w0);
            DPBUSD(acc[r][1], xr, w1);
        }
    }
#pragma GCC unroll 12
    for (int r = 0; r < rows; r++) {
        int32_t *out = y + (size_t)r * ldy;
        if (accumulate) {
            acc[r][0] = _mm512_add_epi32(acc[r][0], _mm512_maskz_loadu_epi32(m0, out));
            acc[r][1] = _mm512_add_epi32(acc[r][1], _mm512_maskz_loadu_epi32(m1, out + 16));
        }
        _mm512_mask_storeu_epi32(out, m0, acc[r][0]);
        _mm512_mask_storeu_epi32(out + 16, m1, acc[r][1]);
    }
}

BF16 static void bf16_rows(float *y, int ldy, const uint16_t *x, int ldx, const uint16_t *panel,
                           int kc, __mmask16 m0, __mmask16 m1, int accumulate, int rows)
{
    HARK_BY_ROWS_12(rows, bf16_tile, y, ldy, x, ldx, panel, kc, m0, m1, accumulate)
}

VNNI static void int8_rows(int32_t *y, int ldy, const uint8_t *x, int ldx, const int8_t *panel,
                           int kc, __mmask16 m0, __mmask16 m1, int accumulate, int rows)
{
    HARK_BY_ROWS_12(rows, int8_tile, y, ldy, x, ldx, panel, kc, m0, m1, accumulate)
}

/* One loop nest for both: slices of KC columns, panels of 32 outputs, tiles
 * of 12 rows (the rows' slice of x, at most 192 KB, stays in L2). */
#define LOWP_BLOCK(ROWS_FN, KC)                                                          \
    for (int c0 = 0; c0 < kp; c0 += KC) {                                                \
        int kc = kp - c0 < KC ? kp - c0 : KC;                                            \
        for (int r0 = 0; r0 < nr; r0 += PANEL) {                                         \
            __mmask16 m0 = mask_of(nr - r0), m1 = mask_of(nr - r0 - 16);                 \
            for (int i0 = 0; i0 < mc; i0 += TILE_M)                                      \
                ROWS_FN(y + (size_t)i0 * ldy + r0, ldy, x + (size_t)i0 * ldx + c0, ldx,  \
                        panels + (size_t)r0 * kp + (size_t)c0 * PANEL, kc, m0, m1, c0 > 0, \
                        mc - i0 < TILE_M ? mc - i0 : TILE_M);                            \
        }                                                                                \
    }

int hark_lowp512_bf16(float *y, int ldy, const uint16_t *x, int ldx, int mc, const uint16_t *panels,
                      int kp, int nr)
{
    LOWP_BLOCK(bf16_rows, KC_BF16)
    return 1;
}

int hark_lowp512_int8(int32_t *y, int ldy, const uint8_t *x, int ldx, int mc, const int8_t *panels,
                      int kp, int nr)
{
    LOWP_BLOCK(int8_rows, KC_INT8)
    return 1;
}

/* lowp.c's int8_finish: the same operations in the same order, 16 at a time. */
AVX512 static void int8_finish_avx512(float *y, int ldy, int mc, const float *sx,
                                      const float *scale, const int32_t *comp, int nr)
{
    for (int i = 0; i < mc; i++)
        for (int r = 0; r < nr; r += 16) {
            __mmask16 k = mask_of(nr - r);
            float *out = y + (size_t)i * ldy + r;
            __m512i s = _mm512_sub_epi32(_mm512_maskz_loadu_epi32(k, out),
                                         _mm512_maskz_loadu_epi32(k, comp + r));
            __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(s), _mm512_set1_ps(sx[i]));
            _mm512_mask_storeu_ps(out, k, _mm512_mul_ps(v, _mm512_maskz_loadu_ps(k, scale + r)));
        }
}

int hark_lowp512_int8_finish(float *y, int ldy, int mc, const float *sx, const float *scale,
                             const int32_t *comp, int nr)
{
    int8_finish_avx512(y, ldy, mc, sx, scale, comp, nr);
    return 1;
}

/* 16 floats -> bf16 by round to nearest even, as lowp.c's bf16_of (NaN quiet). */
AVX512 static __m256i bf16_of16(__m512 v)
{
    __m512i u = _mm512_castps_si512(v), hi = _mm512_srli_epi32(u, 16);
    __m512i bias = _mm512_add_epi32(_mm512_and_si512(hi, _mm512_set1_epi32(1)),
                                    _mm512_set1_epi32(0x7fff));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
    __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    r = _mm512_mask_or_epi32(r, nan, hi, _mm512_set1_epi32(0x40));
    return _mm512_cvtepi32_epi16(r);
}

AVX512 static void to_bf16_avx512(uint16_t *dst, int ldd, const float *x, int ldx, int m, int k)
{
    for (int i = 0; i < m; i++)
        for (int c = 0; c < ldd; c += 16) {
            __m512 v = _mm512_maskz_loadu_ps(mask_of(k - c), x + (size_t)i * ldx + c);
            _mm256_mask_storeu_epi16(dst + (size_t)i * ldd + c, mask_of(ldd - c), bf16_of16(v));
        }
}

AVX512 static void to_u8_avx512(uint8_t *dst, int ldd, float *sx, const float *x, int ldx, int m,
                                int k)
{
    for (int i = 0; i < m; i++) {
        const float *xi = x + (size_t)i * ldx;
        __m512 amax = _mm512_setzero_ps();
        for (int c = 0; c < k; c += 16)
            amax = _mm512_max_ps(amax, _mm512_abs_ps(_mm512_maskz_loadu_ps(mask_of(k - c), xi + c)));
        float s = _mm512_reduce_max_ps(amax) / 127.0f, inv = s != 0.0f ? 1.0f / s : 0.0f;
        for (int c = 0; c < ldd; c += 16) {
            __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask_of(k - c), xi + c), _mm512_set1_ps(inv));
            __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), _mm512_set1_epi32(128));
            _mm_mask_storeu_epi8(dst + (size_t)i * ldd + c, mask_of(ldd - c), _mm512_cvtepi32_epi8(q));
        }
        sx[i] = s;
    }
}

int hark_lowp512_to_bf16(uint16_t *dst, int ldd, const float *x, int ldx, int m, int k)
{
    to_bf16_avx512(dst, ldd, x, ldx, m, k);
    return 1;
}

int hark_lowp512_to_u8(uint8_t *dst, int ldd, float *sx, const float *x, int ldx, int m, int k)
{
    to_u8_avx512(dst, ldd, sx, x, ldx, m, k);
    return 1;
}
#else
int hark_lowp512_bf16(float *y, int ldy, const uint16_t *x, int ldx, int mc, const uint16_t *panels,
                      int kp, int nr)
{
    (void)y, (void)ldy, (void)x, (void)ldx, (void)mc, (void)panels, (void)kp, (void)nr;
    return 0;
}

int hark_lowp512_int8(int32_t *y, int ldy, const uint8_t *x, int ldx, int mc, const int8_t *panels,
                      int kp, int nr)
{
    (void)y, (void)ldy, (void)x, (void)ldx, (void)mc, (void)panels, (void)kp, (void)nr;
    return 0;
}

int hark_lowp512_int8_finish(float *y, int ldy, int mc, const float *sx, const float *scale,
                             const int32_t *comp, int nr)
{
    (void)y, (void)ldy, (void)mc, (void)sx, (void)scale, (void)comp, (void)nr;
    return 0;
}

int hark_lowp512_to_bf16(uint16_t *dst, int ldd, const float *x, int ldx, int m, int k)
{
    (void)dst, (void)ldd, (void)x, (void)ldx, (void)m, (void)k;
    return 0;
}

int hark_lowp512_to_u8(uint8_t *dst, int ldd, float *sx, const float *x, int ldx, int m, int k)
{
    (void)dst, (void)ldd, (void)sx, (void)x, (void)ldx, (void)m, (void)k;
    return 0;
}
#endif
