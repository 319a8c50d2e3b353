/* attn64.c's attention products in bf16 (AVX512_BF16's vdpbf16ps), for the
 * encoder at a lower precision: queries, keys, values and the softmax's
 * probabilities rounded to bf16, pairs of their products summed in f32, so a
 * step of a tile does two of attn64.c's multiply-adds.  The tiles are attn64.c's
 * (6 queries x 64 columns, 24 accumulators); keys are packed in blocks of 64
 * as [32 dimension pairs][64 keys][2], values as [key pairs][64][2]. */
#include "kernels/kernels.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HARK_ATTN16_X86 1
#endif

enum { HEAD = HARK_ATTN64_HEAD, TILE_Q = 6 };

int hark_attn16_available(void)
{
    return hark_precision_native(HARK_PREC_BF16);
}

#ifdef HARK_ATTN16_X86
#define BF16 __attribute__((target("avx512f,avx512vl,avx512bw,avx512bf16")))
#define TILE static inline __attribute__((always_inline))

static uint32_t pair_at(const uint16_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* acc[r][0..63] += the pair at x[r * ldx] . the 64 column pairs at w. */
BF16 TILE void step16(__m512 acc[][4], const uint16_t *x, int ldx, const uint16_t *w, const int rows)
{
    __m512i w0 = _mm512_loadu_si512(w), w1 = _mm512_loadu_si512(w + 32);
    __m512i w2 = _mm512_loadu_si512(w + 64), w3 = _mm512_loadu_si512(w + 96);
#pragma GCC unroll 6
    for (int r = 0; r < rows; r++) {
        __m512bh xr = (__m512bh)_mm512_set1_epi32((int)pair_at(x + (size_t)r * ldx));
        acc[r][0] = _mm512_dpbf16_ps(acc[r][0], xr, (__m512bh)w0);
        acc[r][1] = _mm512_dpbf16_ps(acc[r][1], xr, (__m512bh)w1);
        acc[r][2] = _mm512_dpbf16_ps(acc[r][2], xr, (__m512bh)w2);
        acc[r][3] = _mm512_dpbf16_ps(acc[r][3], xr, (__m512bh)w3);
    }
}

BF16 TILE void store16(float *dst, int ld, __m512 acc[][4], float scale, const int rows)
{
    __m512 vs = _mm512_set1_ps(scale);
#pragma GCC unroll 6
    for (int r = 0; r < rows; r++)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++)
            _mm512_storeu_ps(dst + (size_t)r * ld + 16 * c, _mm512_mul_ps(acc[r][c], vs));
}

BF16 TILE void scores16_tile(float *s, int lds, const uint16_t *q, const uint16_t *block,
                             float scale, const int rows)
{
    __m512 acc[TILE_Q][4] = {{_mm512_setzero_ps()}};
    for (int d = 0; d < HEAD; d += 2)
        step16(acc, q + d, HEAD, block + (size_t)d * HEAD, rows);
    store16(s, lds, acc, scale, rows);
}

BF16 TILE void mix16_tile(float *out, int ldo, const uint16_t *p, int ldp, const uint16_t *vb,
                          int nk, const int rows)
{
    __m512 acc[TILE_Q][4] = {{_mm512_setzero_ps()}};
    for (int j = 0; j < nk; j += 2)
        step16(acc, p + j, ldp, vb + (size_t)j * HEAD, rows);
    store16(out, ldo, acc, 1.0f, rows);
}

BF16 static void scores16_rows(float *s, int lds, const uint16_t *q, const uint16_t *block,
                               float scale, int rows)
{
    HARK_BY_ROWS_6(rows, scores16_tile, s, lds, q, block, scale)
}

BF16 static void mix16_rows(float *out, int ldo, const uint16_t *p, int ldp, const uint16_t *vb,
                            int nk, int rows)
{
    HARK_BY_ROWS_6(rows, mix16_tile, out, ldo, p, ldp, vb, nk)
}

/* Rows of n floats (stride ld floats) to bf16 in place, each row's bf16 at its
 * start, zero from column nk on: a vector's 16 values are read before its
 * stores, which land on values already read. */
BF16 static void probs_to_bf16(float *p, int ld, int rows, int nk, int n)
{
    for (int r = 0; r < rows; r++) {
        float *row = p + (size_t)r * ld;
        for (int c = 0; c < n; c += 16) {
            int left = nk - c;
            __mmask16 k = (__mmask16)(left >= 16 ? 0xffff : left <= 0 ? 0 : (1u << left) - 1);
            __m256i b = (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(k, row + c));
            _mm256_storeu_si256((__m256i *)(void *)((uint16_t *)(void *)row + c), b);
        }
    }
}
#endif

size_t hark_attn16_keys_u16(int nk)
{
    return (size_t)HEAD * hark_attn64_keys(nk);
}

void hark_attn16_pack_keys(uint16_t *kb, const float *k, int ldk, int nk)
{
    int nkp = hark_attn64_keys(nk);
    uint16_t row[HEAD];
    for (int j = 0; j < nkp; j++) {
        if (j < nk)
            hark_lowp_to_bf16(row, HEAD, k + (size_t)j * ldk, HEAD, 1, HEAD);
        else
            memset(row, 0, sizeof row);
        uint16_t *block = kb + (size_t)(j / HEAD) * HEAD * HEAD + 2 * (j % HEAD);
        for (int d = 0; d < HEAD; d += 2) /* pair d / 2 of key j */
            memcpy(block + (size_t)d * HEAD, row + d, 4);
    }
}

void hark_attn16_pack_values(uint16_t *vb, const float *v, int ldv, int nk)
{
    int nkp = hark_attn64_keys(nk);
    uint16_t row[HEAD];
    for (int j = 0; j < nkp; j++) {
        if (j < nk)
            hark_lowp_to_bf16(row, HEAD, v + (size_t)j * ldv, HEAD, 1, HEAD);
        else
            memset(row, 0, sizeof row);
        for (int c = 0; c < HEAD; c++)
            vb[(size_t)(j / 2) * 2 * HEAD + 2 * c + j % 2] = row[c];
    }
}

void hark_attn16_scores(float *s, int lds, const float *q, int ldq, int nq, const uint16_t *kb,
                        int nk, float scale)
{
#ifdef HARK_ATTN16_X86
    enum { Q_ROWS = 128 };
    uint16_t qb[Q_ROWS * HEAD]; /* 16 KB */
    int nkp = hark_attn64_keys(nk);
    for (int i1 = 0; i1 < nq; i1 += Q_ROWS) {
        int n = nq - i1 < Q_ROWS ? nq - i1 : Q_ROWS;
        hark_lowp_to_bf16(qb, HEAD, q + (size_t)i1 * ldq, ldq, n, HEAD);
        /* a block of keys (8 KB) stays in L1 while every query tile passes over it */
        for (int j0 = 0; j0 < nkp; j0 += HEAD)
            for (int i0 = 0; i0 < n; i0 += TILE_Q)
                scores16_rows(s + (size_t)(i1 + i0) * lds + j0, lds, qb + (size_t)i0 * HEAD,
                              kb + (size_t)j0 * HEAD, scale, n - i0 < TILE_Q ? n - i0 : TILE_Q);
    }
#else
    (void)s, (void)lds, (void)q, (void)ldq, (void)nq, (void)kb, (void)nk, (void)scale;
#endif
}

void hark_attn16_mix(float *out, int ldo, float *p, int lds, int nq, const uint16_t *vb, int nk)
{
#ifdef HARK_ATTN16_X86
    int nkp = hark_attn64_keys(nk);
    probs_to_bf16(p, lds, nq, nk, nkp);
    for (int i0 = 0; i0 < nq; i0 += TILE_Q)
        mix16_rows(out + (size_t)i0 * ldo, ldo, (const uint16_t *)(const void *)(p + (size_t)i0 * lds),
                   2 * lds, vb, nk + nk % 2, nq - i0 < TILE_Q ? nq - i0 : TILE_Q);
#else
    (void)out, (void)ldo, (void)p, (void)lds, (void)nq, (void)vb, (void)nk;
#endif
}
