/* Matrix products y = x . W^T in AVX-512 register tiles, for the encoder's
 * projections when OpenBLAS runs narrower kernels.  OpenBLAS takes its kernels
 * from the CPU it recognises or from OPENBLAS_CORETYPE; on AVX-512 machines that
 * it holds to its AVX2 "Haswell" kernels (an unknown AMD core, or the variable
 * set so by the system) its sgemm reaches half of what the cores can do.  Here
 * a block of weight rows is packed once into panels of 32 rows, interleaved by
 * column, and tiles of 12 activation rows x 32 outputs stay in registers
 * (24 accumulators of the 32 registers).  Each output is a plain left-to-right
 * sum over k, so results do not depend on the thread count. */
#include "kernels/kernels.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HARK_GEMM512_X86 1
#endif

enum { PANEL = HARK_GEMM512_PANEL, TILE_M = 12, KC = 256, MC = 192 };

int hark_gemm512_available(void)
{
#ifdef HARK_GEMM512_X86
    return hark_kernels_level() == HARK_LEVEL_AVX512;
#else
    return 0;
#endif
}

size_t hark_gemm512_packed_floats(int nr, int k)
{
    return (size_t)(nr + PANEL - 1) / PANEL * PANEL * (size_t)k;
}

/* Panel p holds rows 32p..32p+31 of the block as [k][32]: one column of the
 * panel is two vectors.  Rows past nr are zero.  The rows are widened KC
 * columns at a time into a scratch of 32 x KC floats (in L1), so that the
 * panel is written in order. */
void hark_gemm512_pack(float *bp, const void *w, hark_dtype t, int r0, int nr, int k)
{
    float chunk[PANEL][KC];
    size_t row_bytes = hark_row_bytes(t, (size_t)k);
    for (int p0 = 0; p0 < nr; p0 += PANEL) {
        float *panel = bp + (size_t)p0 * k;
        int rows = nr - p0 < PANEL ? nr - p0 : PANEL;
        for (int c0 = 0; c0 < k; c0 += KC) {
            int kc = k - c0 < KC ? k - c0 : KC;
            for (int r = 0; r < rows; r++)
                hark_to_f32(chunk[r], (const char *)w + (size_t)(r0 + p0 + r) * row_bytes +
                                          hark_row_bytes(t, (size_t)c0), t, (size_t)kc);
            for (int c = 0; c < kc; c++)
                for (int r = 0; r < PANEL; r++)
                    panel[(size_t)(c0 + c) * PANEL + r] = r < rows ? chunk[r][c] : 0.0f;
        }
    }
}

#ifdef HARK_GEMM512_X86
#define AVX512 __attribute__((target("avx512f,avx512vl,fma")))
#define TILE static inline __attribute__((always_inline))

/* y[r][0..31] (+)= x_r . panel columns over kc, for ROWS (constant) rows; the
 * masks cut the last panel of a block whose rows are not a multiple of 32. */
AVX512 TILE void gemm_tile(float *y, int ldy, const float *x, int ldx, const float *panel, int kc,
                           __mmask16 m0, __mmask16 m1, int accumulate, const int rows)
{
    __m512 acc[TILE_M][2];
#pragma GCC unroll 12
    for (int r = 0; r < rows; r++)
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int c = 0; c < kc; c++) {
        __m512 w0 = _mm512_loadu_ps(panel + (size_t)c * PANEL);
        __m512 w1 = _mm512_loadu_ps(panel + (size_t)c * PANEL + 16);
#pragma GCC unroll 12
        for (int r = 0; r < rows; r++) {
            __m512 xr = _mm512_set1_ps(x[(size_t)r * ldx + c]);
            acc[r][0] = _mm512_fmadd_ps(xr, w0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(xr, w1, acc[r][1]);
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


AVX512 static void gemm_rows(float *y, int ldy, const float *x, int ldx, const float *panel,
                             int kc, __mmask16 m0, __mmask16 m1, int accumulate, int rows)
{
    HARK_BY_ROWS_12(rows, gemm_tile, y, ldy, x, ldx, panel, kc, m0, m1, accumulate)
}

/* Chunks of MC rows (their slice of x, 192 KB, stays in L2), slices of KC
 * columns inside, so that a panel's slice (32 KB) stays in L1 while every row
 * tile of the chunk passes over it; each slice adds to the last. */
AVX512 static void gemm_avx512(float *y, int ldy, const float *x, int m, int k, const float *bp,
                               int nr, const float *bias, int gelu)
{
    for (int i1 = 0; i1 < m; i1 += MC) {
        int mc = m - i1 < MC ? m - i1 : MC;
        for (int c0 = 0; c0 < k; c0 += KC) {
            int kc = k - c0 < KC ? k - c0 : KC;
            for (int r0 = 0; r0 < nr; r0 += PANEL) {
                int cols = nr - r0 < PANEL ? nr - r0 : PANEL;
                __mmask16 m0 = (__mmask16)(cols >= 16 ? 0xffff : (1u << cols) - 1);
                __mmask16 m1 = (__mmask16)(cols >= 32 ? 0xffff : cols <= 16 ? 0 : (1u << (cols - 16)) - 1);
                const float *panel = bp + (size_t)r0 * k + (size_t)c0 * PANEL;
                for (int i0 = i1; i0 < i1 + mc; i0 += TILE_M)
                    gemm_rows(y + (size_t)i0 * ldy + r0, ldy, x + (size_t)i0 * k + c0, k, panel,
                              kc, m0, m1, c0 > 0, i1 + mc - i0 < TILE_M ? i1 + mc - i0 : TILE_M);
            }
        }
        for (int i = i1; i < i1 + mc; i++) /* while the chunk is in L2, not a pass of its own */
            hark_bias_gelu_row(y + (size_t)i * ldy, (size_t)nr, bias, gelu);
    }
}
#endif

void hark_gemm512(float *y, int ldy, const float *x, int m, int k, const float *bp, int nr,
                  const float *bias, int gelu)
{
#ifdef HARK_GEMM512_X86
    gemm_avx512(y, ldy, x, m, k, bp, nr, bias, gelu);
#else
    (void)y, (void)ldy, (void)x, (void)m, (void)k, (void)bp, (void)nr, (void)bias, (void)gelu;
#endif
}
