/* Attention products of one head of width 64 (the head width of every Whisper
 * size) in AVX-512 or AVX2 register tiles.  With k = 64 OpenBLAS packs the same
 * keys and values again for every block of queries and stores each score tile
 * after only 64 multiply-adds: the encoder's attention ran at about half the
 * speed of its projections.  Here keys and values are packed once per head and
 * the tiles (6 queries x 64 columns with AVX-512, x 16 with AVX2) stay in
 * registers.  The portable kernel set keeps OpenBLAS (ops.c). */
#include "kernels/kernels.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HARK_ATTN64_X86 1
#endif

enum { HEAD = HARK_ATTN64_HEAD, TILE_Q = 6 };

#ifdef HARK_ATTN64_X86
static int use_avx512(void)
{
    return hark_kernels_level() == HARK_LEVEL_AVX512;
}
#endif

int hark_attn64_available(void)
{
#ifdef HARK_ATTN64_X86
    return use_avx512() || hark_kernels_level() == HARK_LEVEL_AVX2;
#else
    return 0;
#endif
}

int hark_attn64_keys(int nk)
{
    return (nk + HEAD - 1) / HEAD * HEAD;
}

/* Blocks of 64 keys, each [64 dims][64 keys] contiguous (16 KB): strided rows
 * would share a few L1 sets (a row stride of 1536 floats maps to 8 of 64). */
void hark_attn64_pack_keys(float *kt, const float *k, int ldk, int nk)
{
    int nkp = hark_attn64_keys(nk);
    for (int j0 = 0; j0 < nkp; j0 += HEAD) {
        float *block = kt + (size_t)j0 * HEAD;
        for (int d = 0; d < HEAD; d++)
            for (int j = 0; j < HEAD; j++)
                block[d * HEAD + j] = j0 + j < nk ? k[(size_t)(j0 + j) * ldk + d] : 0.0f;
    }
}

/* Values in contiguous rows of 64: with the model's row stride (2048 floats in
 * base) the rows of a head fall into a sixteenth of the L2 cache's sets. */
void hark_attn64_pack_values(float *vp, const float *v, int ldv, int nk)
{
    for (int j = 0; j < nk; j++)
        memcpy(vp + (size_t)j * HEAD, v + (size_t)j * ldv, sizeof(float) * HEAD);
}

#ifdef HARK_ATTN64_X86
#define AVX512 __attribute__((target("avx512f,avx512vl,fma")))
#define TILE static inline __attribute__((always_inline))

/* The tiles' one step: acc[r][0..63] += x[r * ldx] * w[0..63] for each row. */
AVX512 TILE void tile_step(__m512 acc[][4], const float *x, int ldx, const float *w, const int rows)
{
    __m512 w0 = _mm512_loadu_ps(w), w1 = _mm512_loadu_ps(w + 16);
    __m512 w2 = _mm512_loadu_ps(w + 32), w3 = _mm512_loadu_ps(w + 48);
#pragma GCC unroll 6
    for (int r = 0; r < rows; r++) {
        __m512 xr = _mm512_set1_ps(x[(size_t)r * ldx]);
        acc[r][0] = _mm512_fmadd_ps(xr, w0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(xr, w1, acc[r][1]);
        acc[r][2] = _mm512_fmadd_ps(xr, w2, acc[r][2]);
        acc[r][3] = _mm512_fmadd_ps(xr, w3, acc[r][3]);
    }
}

/* dst[r][0..63] = scale * acc[r] (rows at stride ld). */
AVX512 TILE void tile_store(float *dst, int ld, __m512 acc[][4], float scale, const int rows)
{
    __m512 vs = _mm512_set1_ps(scale);
#pragma GCC unroll 6
    for (int r = 0; r < rows; r++)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++)
            _mm512_storeu_ps(dst + (size_t)r * ld + 16 * c, _mm512_mul_ps(acc[r][c], vs));
}

/* s[r][0..63] = scale * q_r . keys of one packed block, for ROWS (constant) queries. */
AVX512 TILE void scores_tile(float *s, int lds, const float *q, int ldq, const float *block,
                             float scale, const int rows)
{
    __m512 acc[TILE_Q][4] = {{_mm512_setzero_ps()}};
    for (int d = 0; d < HEAD; d++)
        tile_step(acc, q + d, ldq, block + d * HEAD, rows);
    tile_store(s, lds, acc, scale, rows);
}

/* out[r][0..63] = sum_{j < nk} p[r][j] v_j, for ROWS (constant) queries. */
AVX512 TILE void mix_tile(float *out, int ldo, const float *p, int ldp, const float *vp, int nk,
                          const int rows)
{
    __m512 acc[TILE_Q][4] = {{_mm512_setzero_ps()}};
    for (int j = 0; j < nk; j++)
        tile_step(acc, p + j, ldp, vp + (size_t)j * HEAD, rows);
    tile_store(out, ldo, acc, 1.0f, rows);
}

AVX512 static void scores_rows(float *s, int lds, const float *q, int ldq, const float *block,
                               float scale, int rows)
{
    HARK_BY_ROWS_6(rows, scores_tile, s, lds, q, ldq, block, scale)
}

AVX512 static void mix_rows(float *out, int ldo, const float *p, int ldp, const float *vp, int nk,
                            int rows)
{
    HARK_BY_ROWS_6(rows, mix_tile, out, ldo, p, ldp, vp, nk)
}

/* Key blocks outside, query tiles inside: a block of transposed keys (16 KB)
 * stays in L1 while every query tile passes over it. */
AVX512 static void scores_avx512(float *s, const float *q, int ldq, int nq, const float *kt, int nk,
                                 float scale)
{
    int nkp = hark_attn64_keys(nk);
    for (int j0 = 0; j0 < nkp; j0 += HEAD)
        for (int i0 = 0; i0 < nq; i0 += TILE_Q)
            scores_rows(s + (size_t)i0 * nkp + j0, nkp, q + (size_t)i0 * ldq, ldq,
                        kt + (size_t)j0 * HEAD, scale, nq - i0 < TILE_Q ? nq - i0 : TILE_Q);
}

AVX512 static void mix_avx512(float *out, int ldo, const float *p, int nq, const float *vp, int nk)
{
    int nkp = hark_attn64_keys(nk);
    for (int i0 = 0; i0 < nq; i0 += TILE_Q)
        mix_rows(out + (size_t)i0 * ldo, ldo, p + (size_t)i0 * nkp, nkp, vp, nk,
                 nq - i0 < TILE_Q ? nq - i0 : TILE_Q);
}

/* AVX2 has 16 registers: tiles of 6 queries x 16 columns (12 accumulators),
 * four passes across a head. */
#define AVX2 __attribute__((target("avx2,fma")))
enum { COLS2 = 16 };

AVX2 TILE void tile2_step(__m256 acc[][2], const float *x, int ldx, const float *w, const int rows)
{
    __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8);
#pragma GCC unroll 6
    for (int r = 0; r < rows; r++) {
        __m256 xr = _mm256_broadcast_ss(x + (size_t)r * ldx);
        acc[r][0] = _mm256_fmadd_ps(xr, w0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(xr, w1, acc[r][1]);
    }
}

AVX2 TILE void tile2_store(float *dst, int ld, __m256 acc[][2], float scale, const int rows)
{
    __m256 vs = _mm256_set1_ps(scale);
#pragma GCC unroll 6
    for (int r = 0; r < rows; r++) {
        _mm256_storeu_ps(dst + (size_t)r * ld, _mm256_mul_ps(acc[r][0], vs));
        _mm256_storeu_ps(dst + (size_t)r * ld + 8, _mm256_mul_ps(acc[r][1], vs));
    }
}

/* s[r][0..15] = scale * q_r . 16 keys of a packed block (columns c0.. of it). */
AVX2 TILE void scores2_tile(float *s, int lds, const float *q, int ldq, const float *block,
                            float scale, const int rows)
{
    __m256 acc[TILE_Q][2] = {{_mm256_setzero_ps()}};
    for (int d = 0; d < HEAD; d++)
        tile2_step(acc, q + d, ldq, block + d * HEAD, rows);
    tile2_store(s, lds, acc, scale, rows);
}

AVX2 TILE void mix2_tile(float *out, int ldo, const float *p, int ldp, const float *vp, int nk,
                         const int rows)
{
    __m256 acc[TILE_Q][2] = {{_mm256_setzero_ps()}};
    for (int j = 0; j < nk; j++)
        tile2_step(acc, p + j, ldp, vp + (size_t)j * HEAD, rows);
    tile2_store(out, ldo, acc, 1.0f, rows);
}

AVX2 static void scores2_rows(float *s, int lds, const float *q, int ldq, const float *block,
                              float scale, int rows)
{
    for (int c = 0; c < HEAD; c += COLS2)
        HARK_BY_ROWS_6(rows, scores2_tile, s + c, lds, q, ldq, block + c, scale)
}

AVX2 static void mix2_rows(float *out, int ldo, const float *p, int ldp, const float *vp, int nk,
                           int rows)
{
    for (int c = 0; c < HEAD; c += COLS2)
        HARK_BY_ROWS_6(rows, mix2_tile, out + c, ldo, p, ldp, vp + c, nk)
}

AVX2 static void scores_avx2(float *s, const float *q, int ldq, int nq, const float *kt, int nk,
                             float scale)
{
    int nkp = hark_attn64_keys(nk);
    for (int j0 = 0; j0 < nkp; j0 += HEAD)
        for (int i0 = 0; i0 < nq; i0 += TILE_Q)
            scores2_rows(s + (size_t)i0 * nkp + j0, nkp, q + (size_t)i0 * ldq, ldq,
                         kt + (size_t)j0 * HEAD, scale, nq - i0 < TILE_Q ? nq - i0 : TILE_Q);
}

AVX2 static void mix_avx2(float *out, int ldo, const float *p, int nq, const float *vp, int nk)
{
    int nkp = hark_attn64_keys(nk);
    for (int i0 = 0; i0 < nq; i0 += TILE_Q)
        mix2_rows(out + (size_t)i0 * ldo, ldo, p + (size_t)i0 * nkp, nkp, vp, nk,
                  nq - i0 < TILE_Q ? nq - i0 : TILE_Q);
}
#endif

void hark_attn64_scores(float *s, const float *q, int ldq, int nq, const float *kt, int nk,
                        float scale)
{
#ifdef HARK_ATTN64_X86
    if (use_avx512())
        scores_avx512(s, q, ldq, nq, kt, nk, scale);
    else
        scores_avx2(s, q, ldq, nq, kt, nk, scale);
#else
    (void)s, (void)q, (void)ldq, (void)nq, (void)kt, (void)nk, (void)scale;
#endif
}

void hark_attn64_mix(float *out, int ldo, const float *p, int nq, const float *vp, int nk)
{
#ifdef HARK_ATTN64_X86
    if (use_avx512())
        mix_avx512(out, ldo, p, nq, vp, nk);
    else
        mix_avx2(out, ldo, p, nq, vp, nk);
#else
    (void)out, (void)ldo, (void)p, (void)nq, (void)vp, (void)nk;
#endif
}
