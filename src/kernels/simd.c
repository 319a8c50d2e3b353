/* SIMD kernels chosen at run time from the CPU's features: f16/bf16 widening,
 * matrix-vector products that read each stored weight once, exp for softmax
 * and erf for GELU.  Each has a portable C twin that the tests compare with;
 * hark_kernels_force_portable() selects the twins. */
#include "kernels/kernels.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include "kernels/simd_x86.h"
#define HARK_X86 1
#endif

/* ------------------------------------------------------------ portable */

/* Scalar helpers that the SIMD kernels also call for their tails are inlined
 * there, so that they are VEX-encoded: a legacy SSE instruction run while the
 * upper halves of the vector registers are dirty costs Intel cores (not AMD's)
 * so much that a call per matrix row made f16 decoding several times slower. */
#define SCALAR_TAIL inline __attribute__((always_inline))

static float f16_table[65536];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_f16_table(void)
{
    for (uint32_t i = 0; i < 65536; i++)
        f16_table[i] = hark_f16_to_f32((uint16_t)i);
}

/* Weights inside a ggml file may sit at odd addresses: read them bytewise. */
static inline uint16_t load_u16(const uint16_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static SCALAR_TAIL void widen_f16_c(float *dst, const uint16_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = f16_table[load_u16(src + i)];
}

static SCALAR_TAIL void widen_bf16_c(float *dst, const uint16_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t bits = (uint32_t)load_u16(src + i) << 16;
        memcpy(&dst[i], &bits, 4);
    }
}

/* The scalar end of a row's dot product, columns [from, to). */
static SCALAR_TAIL float tail_dot(const uint16_t *row, const float *x, hark_dtype t, int from, int to)
{
    float s = 0, wf;
    for (int c = from; c < to; c++) {
        if (t == HARK_F16)
            wf = f16_table[load_u16(row + c)];
        else
            widen_bf16_c(&wf, &row[c], 1);
        s += wf * x[c];
    }
    return s;
}

/* y[j][r] = dot(W row r, x[j]) for m vectors: the row is read once. */
static void matvec_c(float *y, const float *x, int m, const void *w, hark_dtype t, int rows,
                     int cols, int r0, int r1)
{
    float row[1024];
    for (int r = r0; r < r1; r++) {
        double acc[HARK_MAX_BATCH] = {0};
        for (int c0 = 0; c0 < cols; c0 += 1024) {
            int nc = cols - c0 < 1024 ? cols - c0 : 1024;
            const uint16_t *src = (const uint16_t *)w + (size_t)r * cols + c0;
            if (t == HARK_F16)
                widen_f16_c(row, src, (size_t)nc);
            else
                widen_bf16_c(row, src, (size_t)nc);
            for (int j = 0; j < m; j++)
                for (int c = 0; c < nc; c++)
                    acc[j] += (double)row[c] * x[(size_t)j * cols + c0 + c];
        }
        for (int j = 0; j < m; j++)
            y[(size_t)j * rows + r] = (float)acc[j];
    }
}

/* Block-quantised rows: dequantised a row at a time, then m dot products. */
static void matvec_q_c(float *y, const float *x, int m, const void *w, hark_dtype t, int rows,
                       int cols, int r0, int r1)
{
    float row[4096];
    size_t bytes = hark_row_bytes(t, (size_t)cols);
    for (int r = r0; r < r1; r++) {
        double acc[HARK_MAX_BATCH] = {0};
        for (int c0 = 0; c0 < cols; c0 += 4096) {
            int nc = cols - c0 < 4096 ? cols - c0 : 4096;
            hark_dequantize(row, (const char *)w + r * bytes + hark_row_bytes(t, (size_t)c0), t,
                            (size_t)nc);
            for (int j = 0; j < m; j++)
                for (int c = 0; c < nc; c++)
                    acc[j] += (double)row[c] * x[(size_t)j * cols + c0 + c];
        }
        for (int j = 0; j < m; j++)
            y[(size_t)j * rows + r] = (float)acc[j];
    }
}

/* y[j][c] = sum_r x[j][r] W[r][c]: f16 rows, each read once for m vectors. */
static void vecmat16_c(float *y, size_t ldy, const float *x, int m, const uint16_t *w, int rows,
                       int cols)
{
    float row[1024];
    for (int c0 = 0; c0 < cols; c0 += 1024) {
        int nc = cols - c0 < 1024 ? cols - c0 : 1024;
        for (int j = 0; j < m; j++)
            memset(y + (size_t)j * ldy + c0, 0, sizeof(float) * (size_t)nc);
        for (int r = 0; r < rows; r++) {
            widen_f16_c(row, w + (size_t)r * cols + c0, (size_t)nc);
            for (int j = 0; j < m; j++) {
                float xr = x[(size_t)j * rows + r], *yj = y + (size_t)j * ldy + c0;
                for (int c = 0; c < nc; c++)
                    yj[c] += xr * row[c];
            }
        }
    }
}

static void softmax_row_c(float *x, int n)
{
    float mx = -INFINITY;
    for (int j = 0; j < n; j++)
        mx = x[j] > mx ? x[j] : mx;
    double sum = 0;
    for (int j = 0; j < n; j++) {
        x[j] = x[j] == -INFINITY ? 0.0f : expf(x[j] - mx);
        sum += x[j];
    }
    float inv = (float)(1.0 / sum);
    for (int j = 0; j < n; j++)
        x[j] *= inv;
}

static SCALAR_TAIL void narrow_f16_c(uint16_t *dst, const float *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = hark_f32_to_f16(src[i]);
}

static double log_sum_exp_c(const float *x, size_t n)
{
    float mx = -INFINITY;
    for (size_t i = 0; i < n; i++)
        mx = x[i] > mx ? x[i] : mx;
    if (mx == -INFINITY)
        return -INFINITY;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += x[i] == -INFINITY ? 0.0 : expf(x[i] - mx);
    return mx + log(sum);
}

static SCALAR_TAIL void add_c(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] += x[i];
}

static void layer_norm_c(float *y, const float *x, int d, const float *g, const float *b)
{
    double mean = 0, var = 0;
    for (int j = 0; j < d; j++)
        mean += x[j];
    mean /= d;
    for (int j = 0; j < d; j++)
        var += (x[j] - mean) * (x[j] - mean);
    float inv = (float)(1.0 / sqrt(var / d + 1e-5)), m = (float)mean;
    for (int j = 0; j < d; j++)
        y[j] = (x[j] - m) * inv * g[j] + b[j];
}

static SCALAR_TAIL void gelu_c(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = 0.5f * x[i] * (1.0f + erff(x[i] * (float)M_SQRT1_2));
}

/* ------------------------------------------------------------ AVX-512 */

#ifdef HARK_X86
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,f16c,fma")))
#define AVX2 __attribute__((target("avx2,f16c,fma")))

AVX512 static inline __m512 load_w16(const uint16_t *p, hark_dtype t)
{
    __m256i h = _mm256_loadu_si256((const __m256i *)p);
    if (t == HARK_F16)
        return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* One vector: four accumulators hide the FMA latency; the row streams once. */
AVX512 static float dot16_avx512(const uint16_t *row, const float *x, hark_dtype t, int cols)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int c = 0;
    for (; c + 64 <= cols; c += 64) {
        HARK_PREFETCH(row + c);
        HARK_PREFETCH(row + c + 32);
        a0 = _mm512_fmadd_ps(load_w16(row + c, t), _mm512_loadu_ps(x + c), a0);
        a1 = _mm512_fmadd_ps(load_w16(row + c + 16, t), _mm512_loadu_ps(x + c + 16), a1);
        a2 = _mm512_fmadd_ps(load_w16(row + c + 32, t), _mm512_loadu_ps(x + c + 32), a2);
        a3 = _mm512_fmadd_ps(load_w16(row + c + 48, t), _mm512_loadu_ps(x + c + 48), a3);
    }
    for (; c + 16 <= cols; c += 16)
        a0 = _mm512_fmadd_ps(load_w16(row + c, t), _mm512_loadu_ps(x + c), a0);
    float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    return s + tail_dot(row, x, t, c, cols);
}

/* m vectors at once; m is a constant after inlining, so the 2m accumulators
 * live in registers (with a run-time m the compiler keeps them in memory). */
AVX512 static inline __attribute__((always_inline)) void
matvec_m_avx512(float *y, const float *x, const int m, const uint16_t *w, hark_dtype t, int rows,
                int cols, int r0, int r1)
{
    int main_cols = cols & ~15;
    for (int r = r0; r < r1; r++) {
        const uint16_t *row = w + (size_t)r * cols;
        __m512 acc[HARK_MAX_BATCH], acc2[HARK_MAX_BATCH];
#pragma GCC unroll 8
        for (int j = 0; j < m; j++)
            acc[j] = acc2[j] = _mm512_setzero_ps();
        int c = 0;
        for (; c + 32 <= main_cols; c += 32) {
            HARK_PREFETCH(row + c);
            __m512 w0 = load_w16(row + c, t), w1 = load_w16(row + c + 16, t);
    #pragma GCC unroll 8
        for (int j = 0; j < m; j++) {
                const float *xj = x + (size_t)j * cols + c;
                acc[j] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(xj), acc[j]);
                acc2[j] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(xj + 16), acc2[j]);
            }
        }
        for (; c < main_cols; c += 16) {
            __m512 wv = load_w16(row + c, t);
    #pragma GCC unroll 8
        for (int j = 0; j < m; j++)
                acc[j] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(x + (size_t)j * cols + c), acc[j]);
        }
#pragma GCC unroll 8
        for (int j = 0; j < m; j++)
            y[(size_t)j * rows + r] = _mm512_reduce_add_ps(_mm512_add_ps(acc[j], acc2[j])) +
                                      tail_dot(row, x + (size_t)j * cols, t, main_cols, cols);
    }
}

AVX512 static void matvec_avx512(float *y, const float *x, int m, const void *w, hark_dtype t,
                                 int rows, int cols, int r0, int r1)
{
    const uint16_t *w16 = w;
    if (m == 1) { /* one vector: four accumulators of one row (dot16) */
        for (int r = r0; r < r1; r++)
            y[r] = dot16_avx512(w16 + (size_t)r * cols, x, t, cols);
        return;
    }
    WITH_CONSTANT_M(m, matvec_m_avx512(y, x, M, w16, t, rows, cols, r0, r1));
}

/* The 32 weights of one block as two vectors: weights 0-15 and 16-31. */
AVX512 static inline void block512(const uint8_t *b, hark_dtype t, __m512 *w0, __m512 *w1)
{
    hark_qblock q = hark_qblock_fields(b, t);
    /* F16C, not the table: a table lookup per block was most of a q8_0 step */
    __m512 d = _mm512_set1_ps(_cvtsh_ss(q.d)), m = _mm512_set1_ps(_cvtsh_ss(q.min));
    if (t == HARK_Q8_0) {
        __m128i q0 = _mm_loadu_si128((const __m128i *)q.qs);
        __m128i q1 = _mm_loadu_si128((const __m128i *)(q.qs + 16));
        *w0 = _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q0)));
        *w1 = _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q1)));
        return;
    }
    int five = t == HARK_Q5_0 || t == HARK_Q5_1;
    __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)q.qs));
    __m512i lo = _mm512_and_si512(bytes, _mm512_set1_epi32(0x0f)), hi = _mm512_srli_epi32(bytes, 4);
    if (five) {
        const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
        __m512i bits = _mm512_set1_epi32((int)q.qh), one = _mm512_set1_epi32(1);
        lo = _mm512_or_si512(lo, _mm512_slli_epi32(_mm512_and_si512(_mm512_srlv_epi32(bits, lane), one), 4));
        hi = _mm512_or_si512(hi, _mm512_slli_epi32(_mm512_and_si512(
                                      _mm512_srlv_epi32(bits, _mm512_add_epi32(lane, _mm512_set1_epi32(16))), one), 4));
    }
    __m512i off = _mm512_set1_epi32(q.offset);
    *w0 = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(_mm512_sub_epi32(lo, off)), m);
    *w1 = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(_mm512_sub_epi32(hi, off)), m);
}

/* One vector: two blocks a step into four accumulators (no FMA latency chain). */
AVX512 static inline __attribute__((always_inline)) float dot_q_avx512(const uint8_t *row, const float *x, hark_dtype t, int cols,
                                 size_t bb)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, w0, w1, w2, w3;
    int c = 0;
    for (; c + 64 <= cols; c += 64) {
        block512(row + (size_t)c / 32 * bb, t, &w0, &w1);
        block512(row + (size_t)c / 32 * bb + bb, t, &w2, &w3);
        a0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x + c), a0);
        a1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x + c + 16), a1);
        a2 = _mm512_fmadd_ps(w2, _mm512_loadu_ps(x + c + 32), a2);
        a3 = _mm512_fmadd_ps(w3, _mm512_loadu_ps(x + c + 48), a3);
    }
    if (c < cols) {
        block512(row + (size_t)c / 32 * bb, t, &w0, &w1);
        a0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x + c), a0);
        a1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x + c + 16), a1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

/* m vectors at once, m constant after inlining (accumulators in registers). */
AVX512 static inline __attribute__((always_inline)) void
matvec_qm_avx512(float *y, const float *x, const int m, const uint8_t *w, hark_dtype t, int rows,
                 int cols, int r0, int r1)
{
    size_t bb = hark_block_bytes(t), row_bytes = (size_t)cols / 32 * bb;
    for (int r = r0; r < r1; r++) {
        const uint8_t *row = w + (size_t)r * row_bytes;
        __m512 acc[HARK_MAX_BATCH], acc2[HARK_MAX_BATCH];
#pragma GCC unroll 8
        for (int j = 0; j < m; j++)
            acc[j] = acc2[j] = _mm512_setzero_ps();
        for (int c = 0; c < cols; c += 32) {
            __m512 w0, w1;
            block512(row + (size_t)c / 32 * bb, t, &w0, &w1);
#pragma GCC unroll 8
            for (int j = 0; j < m; j++) {
                const float *xj = x + (size_t)j * cols + c;
                acc[j] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(xj), acc[j]);
                acc2[j] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(xj + 16), acc2[j]);
            }
        }
#pragma GCC unroll 8
        for (int j = 0; j < m; j++)
            y[(size_t)j * rows + r] = _mm512_reduce_add_ps(_mm512_add_ps(acc[j], acc2[j]));
    }
}

AVX512 static inline __attribute__((always_inline)) void
matvec_qt_avx512(float *y, const float *x, int m, const uint8_t *q, hark_dtype t, int rows,
                 int cols, int r0, int r1)
{
    size_t bb = hark_block_bytes(t), row_bytes = (size_t)cols / 32 * bb;
    if (m == 1) {
        for (int r = r0; r < r1; r++)
            y[r] = dot_q_avx512(q + (size_t)r * row_bytes, x, t, cols, bb);
        return;
    }
    WITH_CONSTANT_M(m, matvec_qm_avx512(y, x, M, q, t, rows, cols, r0, r1));
}

AVX512 static void matvec_q_avx512(float *y, const float *x, int m, const void *w, hark_dtype t,
                                   int rows, int cols, int r0, int r1)
{
    WITH_CONSTANT_T(t, matvec_qt_avx512(y, x, m, w, T, rows, cols, r0, r1));
}

/* 16 columns at c of y[j][c] += sum over rows [r0, r1) of x[j][r] W[r][c]
 * (y starts from zero at row 0); LOADW / LOADY / STOREY: whole or masked. */
#define VECMAT16_STEP(LOADW, LOADY, STOREY)                                               \
    {                                                                                    \
        __m512 acc[HARK_MAX_BATCH];                                                      \
        _Pragma("GCC unroll 8") for (int j = 0; j < m; j++)                              \
            acc[j] = r0 ? LOADY(y + (size_t)j * ldy + c) : _mm512_setzero_ps();         \
        for (int r = r0; r < r1; r++) {                                                  \
            __m512 wv = _mm512_cvtph_ps(LOADW(w + (size_t)r * cols + c));                \
            _Pragma("GCC unroll 8") for (int j = 0; j < m; j++)                          \
                acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(x[(size_t)j * rows + r]), wv, acc[j]); \
        }                                                                                \
        _Pragma("GCC unroll 8") for (int j = 0; j < m; j++)                              \
            STOREY(y + (size_t)j * ldy + c, acc[j]);                                    \
    }
#define LOADW_WHOLE(p) _mm256_loadu_si256((const __m256i *)(p))
#define LOADW_MASKED(p) _mm256_maskz_loadu_epi16(tail, p)
#define LOADY_MASKED(p) _mm512_maskz_loadu_ps(tail, p)
#define STOREY_MASKED(p, v) _mm512_mask_storeu_ps(p, tail, v)

/* y[j][c] = sum_r x[j][r] W[r][c], VECMAT16_ROWS rows of W at a time swept
 * across all columns, y holding the sums between sweeps (in L1): the rows
 * stream side by side, where a block of columns down all rows (a head's 64)
 * was 64 strided streams, and every column's FMAs run in the order of r. */
enum { VECMAT16_ROWS = 8 };
AVX512 static inline __attribute__((always_inline)) void
vecmat16_sweep_avx512(float *y, size_t ldy, const float *x, const int m, const uint16_t *w,
                      int rows, int cols)
{
    __mmask16 tail = (__mmask16)((1u << (cols % 16)) - 1);
    for (int r0 = 0; r0 < rows; r0 += VECMAT16_ROWS) {
        int r1 = rows - r0 < VECMAT16_ROWS ? rows : r0 + VECMAT16_ROWS, c = 0;
        for (; c + 16 <= cols; c += 16)
            VECMAT16_STEP(LOADW_WHOLE, _mm512_loadu_ps, _mm512_storeu_ps)
        if (c < cols)
            VECMAT16_STEP(LOADW_MASKED, LOADY_MASKED, STOREY_MASKED)
    }
}

/* Columns [c, c + 16 * NB) of y[j][c] = sum_r x[j][r] W[r][c]: NB chunks of 16
 * columns side by side, so that each vector has NB independent accumulators (one
 * chain of FMAs waited 4 cycles a row: a 64-row head's scores ran at a quarter
 * of the FMA rate). */
#define VECMAT16_COLUMNS(NB)                                                             \
    for (; c + 16 * (NB) <= cols; c += 16 * (NB)) {                                      \
        __m512 acc[NB][HARK_MAX_BATCH];                                                  \
        _Pragma("GCC unroll 8") for (int b = 0; b < (NB); b++)                           \
            _Pragma("GCC unroll 8") for (int j = 0; j < m; j++) acc[b][j] = _mm512_setzero_ps(); \
        for (int r = 0; r < rows; r++) {                                                 \
            const uint16_t *wr = w + (size_t)r * cols + c;                               \
            _Pragma("GCC unroll 8") for (int b = 0; b < (NB); b += 2)                    \
                HARK_PREFETCH(wr + 16 * b);                                              \
            _Pragma("GCC unroll 8") for (int b = 0; b < (NB); b++) {                     \
                __m512 wv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(wr + 16 * b))); \
                _Pragma("GCC unroll 8") for (int j = 0; j < m; j++)                      \
                    acc[b][j] = _mm512_fmadd_ps(_mm512_set1_ps(x[(size_t)j * rows + r]), wv, acc[b][j]); \
            }                                                                            \
        }                                                                                \
        _Pragma("GCC unroll 8") for (int b = 0; b < (NB); b++)                           \
            _Pragma("GCC unroll 8") for (int j = 0; j < m; j++)                          \
                _mm512_storeu_ps(y + (size_t)j * ldy + c + 16 * b, acc[b][j]);          \
    }

/* The last n < 16 columns (w and y point at the first of them), masked, one
 * vector per x: each lane sums its column in the order of r with a multiply,
 * then an add, rounded apart, as the scalar loop this replaced did (the same
 * bits; a fused multiply-add would round once).  That loop's chains of adds,
 * 64 long a column, made a head's last tile of keys (1500 % 128 = 92 frames:
 * 12 columns after the chunks) slower than two whole tiles (figures:
 * docs/perf-log.md, "Figures behind code comments"). */
AVX512 static inline __attribute__((always_inline)) void
vecmat16_last_avx512(float *y, size_t ldy, const float *x, const int m, const uint16_t *w,
                     int rows, int cols, int n)
{
    __mmask16 tail = (__mmask16)((1u << n) - 1);
    __m512 acc[HARK_MAX_BATCH];
#pragma GCC unroll 8
    for (int j = 0; j < m; j++)
        acc[j] = _mm512_setzero_ps();
    for (int r = 0; r < rows; r++) {
        __m512 wv = _mm512_cvtph_ps(LOADW_MASKED(w + (size_t)r * cols));
#pragma GCC unroll 8
        for (int j = 0; j < m; j++)
            acc[j] = _mm512_add_ps(acc[j], _mm512_mul_ps(_mm512_set1_ps(x[(size_t)j * rows + r]), wv));
    }
#pragma GCC unroll 8
    for (int j = 0; j < m; j++)
        STOREY_MASKED(y + (size_t)j * ldy, acc[j]);
}

/* y[j][c] = sum_r x[j][r] W[r][c] in registers: as many column chunks at once as
 * keep 8 or more accumulators within the 32 registers, then fewer.  From 4
 * vectors on the sweep is faster; for 1 to 3 it was slower (a head's scores,
 * 64 x 1500; figures: docs/perf-log.md, "Figures behind code comments"). */
AVX512 static inline __attribute__((always_inline)) void
vecmat16_m_avx512(float *y, size_t ldy, const float *x, const int m, const uint16_t *w,
                  int rows, int cols)
{
    int c = 0;
    if (m == 1)
        VECMAT16_COLUMNS(8)
    else if (m <= 3)
        VECMAT16_COLUMNS(4)
    else { /* 4 or more vectors: fewer chunks than FMA latency needs */
        vecmat16_sweep_avx512(y, ldy, x, m, w, rows, cols);
        return;
    }
    VECMAT16_COLUMNS(2)
    VECMAT16_COLUMNS(1)
    if (c < cols)
        vecmat16_last_avx512(y + c, ldy, x, m, w + c, rows, cols, cols - c);
}

AVX512 static void vecmat16_avx512(float *y, size_t ldy, const float *x, int m, const uint16_t *w,
                                   int rows, int cols)
{
    WITH_CONSTANT_M(m, vecmat16_m_avx512(y, ldy, x, M, w, rows, cols));
}

/* exp on 16 lanes: x = k ln2 + r, |r| <= ln2/2, degree-6 polynomial, 2^k by scalef. */
AVX512 static inline __m512 exp512(__m512 x)
{
    const __m512 log2e = _mm512_set1_ps(1.44269504088896341f);
    const __m512 ln2_hi = _mm512_set1_ps(0.693359375f), ln2_lo = _mm512_set1_ps(-2.12194440e-4f);
    /* below -87.3 the result is denormal or zero: return exactly zero there */
    __mmask16 live = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.3f), _CMP_GE_OQ);
    x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(88.3762626647949f)), _mm512_set1_ps(-87.3f));
    __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, log2e), _MM_FROUND_TO_NEAREST_INT);
    __m512 r = _mm512_fnmadd_ps(k, ln2_hi, x);
    r = _mm512_fnmadd_ps(k, ln2_lo, r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_maskz_mov_ps(live, _mm512_scalef_ps(p, k));
}

/* The row operations of rows.h in 16 lanes. */
#define ROWS_TARGET AVX512
#define ROWS_NAME(f) f##_avx512
#define ROWS_W 16
#define VEC __m512
#define V_LOAD _mm512_loadu_ps
#define V_STORE _mm512_storeu_ps
#define V_SET1 _mm512_set1_ps
#define V_ZERO _mm512_setzero_ps
#define V_ADD _mm512_add_ps
#define V_SUB _mm512_sub_ps
#define V_MUL _mm512_mul_ps
#define V_DIV _mm512_div_ps
#define V_FMA _mm512_fmadd_ps
#define V_FNMA _mm512_fnmadd_ps
#define V_MAX _mm512_max_ps
#define V_ABS _mm512_abs_ps
#define V_NEG(a) _mm512_sub_ps(_mm512_setzero_ps(), (a))
#define V_SIGN_OF(y, x) _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(y), \
    _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u))))
#define V_HSUM _mm512_reduce_add_ps
#define V_HMAX _mm512_reduce_max_ps
#define V_EXP exp512
#define V_WIDEN16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define V_NARROW16(p, v) \
    _mm256_storeu_si256((__m256i *)(p), _mm512_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT))
#include "kernels/rows.h"

/* ------------------------------------------------------------ AVX2 */

/* exp on 8 lanes: the same reduction and polynomial as exp512; 2^k built in
 * the exponent bits; zero below -87.3. */
AVX2 static inline __m256 exp256(__m256 x)
{
    __m256 live = _mm256_cmp_ps(x, _mm256_set1_ps(-87.3f), _CMP_GE_OQ);
    x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.3762626647949f)), _mm256_set1_ps(-87.3f));
    __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    /* k in [-126, 128): 2^k as (k + 127) << 23, split in two for k = 128 */
    __m256i ki = _mm256_cvtps_epi32(k);
    __m256i half = _mm256_srai_epi32(ki, 1);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, _mm256_set1_epi32(127)), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_add_epi32(_mm256_sub_epi32(ki, half), _mm256_set1_epi32(127)), 23));
    return _mm256_and_ps(live, _mm256_mul_ps(_mm256_mul_ps(p, s1), s2));
}

AVX2 static inline float hmax256(__m256 v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

/* The row operations of rows.h in 8 lanes. */
#define ROWS_TARGET AVX2
#define ROWS_NAME(f) f##_avx2
#define ROWS_W 8
#define VEC __m256
#define V_LOAD _mm256_loadu_ps
#define V_STORE _mm256_storeu_ps
#define V_SET1 _mm256_set1_ps
#define V_ZERO _mm256_setzero_ps
#define V_ADD _mm256_add_ps
#define V_SUB _mm256_sub_ps
#define V_MUL _mm256_mul_ps
#define V_DIV _mm256_div_ps
#define V_FMA _mm256_fmadd_ps
#define V_FNMA _mm256_fnmadd_ps
#define V_MAX _mm256_max_ps
#define V_ABS(a) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), (a))
#define V_NEG(a) _mm256_xor_ps((a), _mm256_set1_ps(-0.0f))
#define V_SIGN_OF(y, x) _mm256_or_ps((y), _mm256_and_ps((x), _mm256_set1_ps(-0.0f)))
#define V_HSUM hark_hsum256
#define V_HMAX hmax256
#define V_EXP exp256
#define V_WIDEN16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define V_NARROW16(p, v) \
    _mm_storeu_si128((__m128i *)(p), _mm256_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT))
#include "kernels/rows.h"

/* The 32 weights of one block as four 8-lane vectors: weights 0-7, 8-15, 16-23, 24-31. */
AVX2 static inline void block256(const uint8_t *b, hark_dtype t, __m256 *w)
{
    hark_qblock q = hark_qblock_fields(b, t);
    __m256 d = _mm256_set1_ps(_cvtsh_ss(q.d)), m = _mm256_set1_ps(_cvtsh_ss(q.min));
    if (t == HARK_Q8_0) {
        for (int k = 0; k < 4; k++)
            w[k] = _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
                                        _mm_loadl_epi64((const __m128i *)(q.qs + 8 * k)))));
        return;
    }
    int five = t == HARK_Q5_0 || t == HARK_Q5_1;
    const __m256i lane = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0), one = _mm256_set1_epi32(1);
    __m256i off = _mm256_set1_epi32(q.offset);
    for (int half = 0; half < 2; half++) { /* bytes 0-7, then 8-15 */
        __m256i bytes = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(q.qs + 8 * half)));
        __m256i nib[2] = {_mm256_and_si256(bytes, _mm256_set1_epi32(0x0f)), _mm256_srli_epi32(bytes, 4)};
        for (int k = 0; k < 2; k++) { /* low nibbles: weights 8h..; high: 16 + 8h.. */
            int first = 16 * k + 8 * half;
            if (five) {
                __m256i bit = _mm256_srlv_epi32(_mm256_set1_epi32((int)q.qh),
                                                _mm256_add_epi32(lane, _mm256_set1_epi32(first)));
                nib[k] = _mm256_or_si256(nib[k], _mm256_slli_epi32(_mm256_and_si256(bit, one), 4));
            }
            w[first / 8] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(_mm256_sub_epi32(nib[k], off)), m);
        }
    }
}

AVX2 static inline __attribute__((always_inline)) void
matvec_qm_avx2(float *y, const float *x, const int m, const uint8_t *w, hark_dtype t, int rows,
               int cols, int r0, int r1)
{
    size_t bb = hark_block_bytes(t), row_bytes = (size_t)cols / 32 * bb;
    for (int r = r0; r < r1; r++) {
        const uint8_t *row = w + (size_t)r * row_bytes;
        __m256 acc[HARK_MAX_BATCH], acc2[HARK_MAX_BATCH], wv[4];
#pragma GCC unroll 8
        for (int j = 0; j < m; j++)
            acc[j] = acc2[j] = _mm256_setzero_ps();
        for (int c = 0; c < cols; c += 32) {
            block256(row + (size_t)c / 32 * bb, t, wv);
#pragma GCC unroll 8
            for (int j = 0; j < m; j++) {
                const float *xj = x + (size_t)j * cols + c;
                acc[j] = _mm256_fmadd_ps(wv[0], _mm256_loadu_ps(xj), acc[j]);
                acc2[j] = _mm256_fmadd_ps(wv[1], _mm256_loadu_ps(xj + 8), acc2[j]);
                acc[j] = _mm256_fmadd_ps(wv[2], _mm256_loadu_ps(xj + 16), acc[j]);
                acc2[j] = _mm256_fmadd_ps(wv[3], _mm256_loadu_ps(xj + 24), acc2[j]);
            }
        }
#pragma GCC unroll 8
        for (int j = 0; j < m; j++)
            y[(size_t)j * rows + r] = hark_hsum256(_mm256_add_ps(acc[j], acc2[j]));
    }
}

AVX2 static void matvec_q_avx2(float *y, const float *x, int m, const void *w, hark_dtype t,
                               int rows, int cols, int r0, int r1)
{
    const uint8_t *q = w;
    WITH_CONSTANT_T(t, WITH_CONSTANT_M(m, matvec_qm_avx2(y, x, M, q, T, rows, cols, r0, r1)));
}

AVX2 static inline __attribute__((always_inline)) void
matvec_m_avx2(float *y, const float *x, const int m, const uint16_t *w, hark_dtype t, int rows,
              int cols, int r0, int r1)
{
    int main_cols = cols & ~7;
    for (int r = r0; r < r1; r++) {
        const uint16_t *row = w + (size_t)r * cols;
        __m256 acc[HARK_MAX_BATCH];
#pragma GCC unroll 8
        for (int j = 0; j < m; j++)
            acc[j] = _mm256_setzero_ps();
        for (int c = 0; c < main_cols; c += 8) {
            if (c % 32 == 0)
                HARK_PREFETCH(row + c);
            __m128i h = _mm_loadu_si128((const __m128i *)(row + c));
            __m256 wv = t == HARK_F16 ? _mm256_cvtph_ps(h)
                                      : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
#pragma GCC unroll 8
            for (int j = 0; j < m; j++)
                acc[j] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + (size_t)j * cols + c), acc[j]);
        }
#pragma GCC unroll 8
        for (int j = 0; j < m; j++)
            y[(size_t)j * rows + r] = hark_hsum256(acc[j]) + tail_dot(row, x + (size_t)j * cols, t, main_cols, cols);
    }
}

AVX2 static void matvec_avx2(float *y, const float *x, int m, const void *w, hark_dtype t,
                             int rows, int cols, int r0, int r1)
{
    const uint16_t *w16 = w;
    WITH_CONSTANT_M(m, matvec_m_avx2(y, x, M, w16, t, rows, cols, r0, r1));
}
#endif

/* ------------------------------------------------------------ dispatch */

typedef struct kernel_set {
    const char *name;
    hark_kernel_level level;
    void (*widen_f16)(float *, const uint16_t *, size_t);
    void (*matvec)(float *, const float *, int, const void *, hark_dtype, int, int, int, int);
    void (*softmax_row)(float *, int);
    void (*gelu)(float *, size_t);
    void (*matvec_q)(float *, const float *, int, const void *, hark_dtype, int, int, int, int);
    double (*log_sum_exp)(const float *, size_t);
    void (*add)(float *, const float *, size_t);
    void (*layer_norm)(float *, const float *, int, const float *, const float *);
    void (*narrow_f16)(uint16_t *, const float *, size_t);
    void (*vecmat16)(float *, size_t, const float *, int, const uint16_t *, int, int);
} kernel_set;

static const kernel_set PORTABLE = {"portable C", HARK_LEVEL_PORTABLE, widen_f16_c, matvec_c, softmax_row_c, gelu_c,
                                    matvec_q_c, log_sum_exp_c, add_c, layer_norm_c, narrow_f16_c,
                                    vecmat16_c};
#ifdef HARK_X86
static const kernel_set K_AVX512 = {"AVX-512", HARK_LEVEL_AVX512, widen_f16_avx512, matvec_avx512,
                                    softmax_row_avx512, gelu_avx512, matvec_q_avx512,
                                    log_sum_exp_avx512, add_avx512, layer_norm_avx512,
                                    narrow_f16_avx512, vecmat16_avx512};
static const kernel_set K_AVX2 = {"AVX2+F16C+FMA", HARK_LEVEL_AVX2, widen_f16_avx2, matvec_avx2, softmax_row_avx2,
                                  gelu_avx2, matvec_q_avx2, log_sum_exp_avx2, add_avx2,
                                  layer_norm_avx2, narrow_f16_avx2, vecmat16_c};
#endif

static const kernel_set *best, *active;
static pthread_once_t select_once = PTHREAD_ONCE_INIT;

static void select_kernels(void)
{
    pthread_once(&table_once, build_f16_table);
    best = &PORTABLE;
#ifdef HARK_X86
    __builtin_cpu_init();
    unsigned a, b, c, d; /* F16C from CPUID: not every compiler's builtin knows it */
    int f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma") && f16c)
        best = &K_AVX512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c)
        best = &K_AVX2;
#endif
    active = best;
    /* HARK_KERNELS=portable|avx2 asks for a slower set (tests, comparisons) */
    const char *want = getenv("HARK_KERNELS");
    if (want && strcmp(want, "portable") == 0)
        active = &PORTABLE;
#ifdef HARK_X86
    if (want && strcmp(want, "avx2") == 0 && best != &PORTABLE)
        active = &K_AVX2;
#endif
}

static const kernel_set *kernels(void)
{
    pthread_once(&select_once, select_kernels);
    return active;
}

/* For tests only: not to be called while other threads compute. */
void hark_kernels_force_portable(int on)
{
    kernels();
    active = on ? &PORTABLE : best;
}

int hark_kernels_select(const char *name)
{
    kernels();
    const kernel_set *all[] = {&PORTABLE,
#ifdef HARK_X86
                               &K_AVX2, &K_AVX512
#endif
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        /* only sets no faster than the best this CPU runs */
        if (strcmp(all[i]->name, name) == 0 && (all[i] == best || all[i] == &PORTABLE ||
                                                 (best == &K_AVX512 && all[i] == &K_AVX2))) {
            best = all[i];
            active = all[i];
            return 0;
        }
    }
    return -1;
}

const char *hark_kernels_name(void)
{
    return kernels()->name;
}

hark_kernel_level hark_kernels_level(void)
{
    return kernels()->level;
}

void hark_widen_f16(float *dst, const uint16_t *src, size_t n)
{
    kernels()->widen_f16(dst, src, n);
}

void hark_matvec16(float *y, const float *x, int m, const void *w, hark_dtype t, int rows,
                   int cols, int r0, int r1)
{
    kernels()->matvec(y, x, m, w, t, rows, cols, r0, r1);
}

void hark_matvec_q(float *y, const float *x, int m, const void *w, hark_dtype t, int rows,
                   int cols, int r0, int r1)
{
    kernels()->matvec_q(y, x, m, w, t, rows, cols, r0, r1);
}

void hark_softmax_row(float *x, int n)
{
    kernels()->softmax_row(x, n);
}

void hark_vecmat16(float *y, size_t ldy, const float *x, int m, const uint16_t *w, int rows,
                   int cols)
{
    kernels()->vecmat16(y, ldy, x, m, w, rows, cols);
}

void hark_narrow_f16(uint16_t *dst, const float *src, size_t n)
{
    kernels()->narrow_f16(dst, src, n);
}

double hark_log_sum_exp(const float *x, size_t n)
{
    return kernels()->log_sum_exp(x, n);
}

void hark_add_fast(float *y, const float *x, size_t n)
{
    kernels()->add(y, x, n);
}

void hark_layer_norm_row(float *y, const float *x, int d, const float *g, const float *b)
{
    kernels()->layer_norm(y, x, d, g, b);
}

void hark_gelu_fast(float *x, size_t n)
{
    kernels()->gelu(x, n);
}

void hark_bias_gelu_row(float *y, size_t n, const float *bias, int gelu)
{
    if (bias)
        hark_add_fast(y, bias, n);
    if (gelu)
        hark_gelu_fast(y, n);
}
