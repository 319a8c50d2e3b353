/* Block-quantised weights (q8_0, q4_0, q4_1, q5_0, q5_1) times activations
 * quantised to q8_0, in integers, as ggml's vec_dot_q*_q8_* do (and so
 * whisper.cpp for quantised models).  The float path (simd.c) widens every
 * weight to f32 and multiplies it by its block's scale: on one AMD EPYC core
 * 28 G weights/s for one vector and 44 for five (beam search), so decoding a
 * q8_0 model was bound by arithmetic, not memory.  Here each block is one
 * integer dot product of 32 byte pairs (AVX-512 VNNI's dpbusd, or maddubs +
 * madd) scaled once: 43 and 69 G/s for q8_0.  The price is the activations'
 * rounding, half a step of max|x| / 127 per block, about as large as q8_0
 * weights' own.
 *
 * Weights become bytes first: q8_0's as stored; q4_0 / q5_0 quants minus their
 * offset (8, 16), signed; q4_1 / q5_1 quants as they are (0..31), with the
 * block's minimum times the block's sum of x added in float.  The products are
 * exact integers, so the portable, AVX2 and AVX-512 paths differ only in the
 * order of the float sums over blocks.  dpbusd and maddubs multiply unsigned
 * by signed bytes: a signed weight's magnitude (-128 becomes 128, which fits)
 * by the activation carrying the weight's sign (activations are in [-127,
 * 127], so negating them cannot overflow); a pair of products is at most
 * 2 * 128 * 127, inside maddubs's 16-bit sums.  With VNNI, q4_0 / q5_0 and
 * (for one vector) q8_0 go in unsigned instead, before their offset is taken
 * off (q8_0's w + 128 by one xor), and dpbusd starts from -offset times each
 * lane's four activations, summed once a call: the same integers, fewer
 * instructions a block. */
#include "kernels/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include "kernels/simd_x86.h"
#define Q8_X86 1
#endif

enum { QK = 32 };

/* One block of activations: d = max |x| / 127, q = x / d rounded to nearest
 * even (the rounding the vector paths' conversions do; the scale stays f32). */
static float quantize_block_c(int8_t *q, const float *x)
{
    float amax = 0;
    for (int k = 0; k < QK; k++)
        amax = fmaxf(amax, fabsf(x[k]));
    float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
    for (int k = 0; k < QK; k++)
        q[k] = (int8_t)lrintf(x[k] * id);
    return d;
}

static void matvec_q8_c(float *y, const int8_t *xq, const float *d8, const float *s8, int m,
                        const uint8_t *w, hark_dtype t, int rows, int cols, int r0, int r1)
{
    size_t bb = hark_block_bytes(t), row_bytes = (size_t)cols / QK * bb;
    for (int r = r0; r < r1; r++)
        for (int j = 0; j < m; j++) {
            const uint8_t *b = w + (size_t)r * row_bytes;
            const int8_t *x = xq + (size_t)j * cols;
            size_t at = (size_t)j * cols / 4;
            float acc = 0;
            for (int c = 0; c < cols; c += QK, b += bb) {
                int8_t u[QK];
                hark_block_quants(u, b, t);
                int32_t sum = 0;
                for (int k = 0; k < QK; k++)
                    sum += (int32_t)u[k] * x[c + k]; /* q4_1 / q5_1 bytes are 0..31 */
                hark_qblock q = hark_qblock_fields(b, t);
                acc += hark_f16_to_f32(q.d) * d8[at + c / 4] * (float)sum;
                if (hark_block_has_min(t)) /* s8 holds an eighth of the block's sum in each of 8 places */
                    acc += hark_f16_to_f32(q.min) * (8 * s8[at + c / 4]);
            }
            y[(size_t)j * rows + r] = acc;
        }
}

#ifdef Q8_X86
#define INLINE static inline __attribute__((always_inline))

/* ------------------------------------------------------------ AVX2 */
#define AVX2 __attribute__((target("avx2,f16c,fma")))

/* Byte k is 0x10 where bit k of bits is set. */
AVX2 INLINE __m256i fifth_bits_avx2(uint32_t bits)
{
    const __m256i which = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                           2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32((int)bits), which);
    __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

/* Block b's weights as bytes (block_bytes_c). */
AVX2 INLINE __m256i block_bytes_avx2(const uint8_t *b, const hark_dtype T)
{
    hark_qblock q = hark_qblock_fields(b, T);
    if (T == HARK_Q8_0)
        return _mm256_loadu_si256((const __m256i *)q.qs);
    __m128i packed = _mm_loadu_si128((const __m128i *)q.qs);
    __m256i u = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
    u = _mm256_and_si256(u, _mm256_set1_epi8(0x0f));
    if (T == HARK_Q5_0 || T == HARK_Q5_1)
        u = _mm256_or_si256(u, fifth_bits_avx2(q.qh));
    if (q.offset)
        u = _mm256_sub_epi8(u, _mm256_set1_epi8((char)q.offset));
    return u;
}

AVX2 INLINE __m256 block_dot_avx2(const uint8_t *b, const hark_dtype T, const int8_t *x,
                                  const float *d8, const float *s8)
{
    __m256i w = block_bytes_avx2(b, T), xv = _mm256_loadu_si256((const __m256i *)x), pairs;
    if (hark_block_has_min(T))
        pairs = _mm256_maddubs_epi16(w, xv);
    else
        pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(xv, w));
    __m256i sum = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
    hark_qblock q = hark_qblock_fields(b, T);
    __m256 scale = _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(q.d)), _mm256_loadu_ps(d8));
    __m256 dot = _mm256_mul_ps(scale, _mm256_cvtepi32_ps(sum));
    if (hark_block_has_min(T))
        dot = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(q.min)), _mm256_loadu_ps(s8), dot);
    return dot;
}

AVX2 INLINE void matvec_q8t_avx2(float *y, const int8_t *xq, const float *d8, const float *s8,
                                 int m, const uint8_t *w, const hark_dtype T, int rows, int cols,
                                 int r0, int r1)
{
    size_t bb = hark_block_bytes(T), row_bytes = (size_t)cols / QK * bb;
    for (int r = r0; r < r1; r++)
        for (int j = 0; j < m; j++) {
            const uint8_t *b = w + (size_t)r * row_bytes;
            const int8_t *x = xq + (size_t)j * cols;
            const float *d = d8 + (size_t)j * cols / 4, *s = s8 + (size_t)j * cols / 4;
            __m256 a0 = _mm256_setzero_ps(), a1 = a0;
            int c = 0;
            for (; c + 2 * QK <= cols; c += 2 * QK, b += 2 * bb) {
                a0 = _mm256_add_ps(a0, block_dot_avx2(b, T, x + c, d + c / 4, s + c / 4));
                a1 = _mm256_add_ps(a1, block_dot_avx2(b + bb, T, x + c + QK, d + c / 4 + 8,
                                                      s + c / 4 + 8));
            }
            if (c < cols)
                a0 = _mm256_add_ps(a0, block_dot_avx2(b, T, x + c, d + c / 4, s + c / 4));
            y[(size_t)j * rows + r] = hark_hsum256(_mm256_add_ps(a0, a1));
        }
}

AVX2 static void matvec_q8_avx2(float *y, const int8_t *xq, const float *d8, const float *s8,
                                int m, const uint8_t *w, hark_dtype t, int rows, int cols,
                                int r0, int r1)
{
    WITH_CONSTANT_T(t, matvec_q8t_avx2(y, xq, d8, s8, m, w, T, rows, cols, r0, r1));
}

/* ------------------------------------------------------------ AVX-512 */
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,f16c,fma")))
#define AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,f16c,fma")))

/* Two blocks' weights as bytes in one vector: block 0 in the low half.  RAW:
 * unsigned, before the offset is taken off (q8_0's w + 128, q4_0 / q5_0's
 * quants as stored), for dpbusd starting from -offset times the activations. */
AVX512 INLINE __m512i pair_bytes(const uint8_t *b, size_t bb, const hark_dtype T, const int RAW)
{
    hark_qblock q0 = hark_qblock_fields(b, T), q1 = hark_qblock_fields(b + bb, T);
    if (T == HARK_Q8_0) {
        __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)q0.qs)),
                                       _mm256_loadu_si256((const __m256i *)q1.qs), 1);
        return RAW ? _mm512_xor_si512(v, _mm512_set1_epi8((char)0x80)) : v;
    }
    __m256i packed = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)q1.qs),
                                      _mm_loadu_si128((const __m128i *)q0.qs));
    __m512i u = _mm512_inserti64x4(_mm512_castsi256_si512(packed), _mm256_srli_epi16(packed, 4), 1);
    /* [lo0 lo1 hi0 hi1] -> [lo0 hi0 lo1 hi1]: weights 0-15, 16-31 of each block */
    u = _mm512_and_si512(_mm512_shuffle_i64x2(u, u, _MM_SHUFFLE(3, 1, 2, 0)), _mm512_set1_epi8(0x0f));
    if (T == HARK_Q5_0 || T == HARK_Q5_1) {
        __mmask64 fifth = (__mmask64)q0.qh | (__mmask64)q1.qh << 32;
        u = _mm512_or_si512(u, _mm512_maskz_mov_epi8(fifth, _mm512_set1_epi8(0x10)));
    }
    if (q0.offset && !RAW)
        u = _mm512_sub_epi8(u, _mm512_set1_epi8((char)q0.offset));
    return u;
}

/* The offset RAW weights carry: sum w x = sum (w + offset) x - offset sum x. */
static int raw_offset(hark_dtype t)
{
    return t == HARK_Q8_0 ? 128 : t == HARK_Q4_0 ? 8 : t == HARK_Q5_0 ? 16 : 0;
}

/* Two blocks' f16 fields at byte `at` of each, each in eight lanes. */
AVX512 INLINE __m512 pair_halves(const uint8_t *b, size_t bb, size_t at)
{
    uint16_t h0, h1;
    memcpy(&h0, b + at, 2);
    memcpy(&h1, b + bb + at, 2);
    __m128 s = _mm_cvtph_ps(_mm_cvtsi32_si128((int)((uint32_t)h0 | (uint32_t)h1 << 16)));
    const __m512i lanes = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_permutexvar_ps(lanes, _mm512_castps128_ps512(s));
}

/* x with the signs of the weights it meets when SIGNED (aw holds |w|). */
AVX512 INLINE __m512i signed_x(const int8_t *x, __mmask64 neg, const int SIGNED)
{
    __m512i v = _mm512_loadu_si512((const void *)x);
    return SIGNED ? _mm512_mask_sub_epi8(v, neg, _mm512_setzero_si512(), v) : v;
}

/* Sums of four byte products a lane, aw unsigned (xc unused). */
AVX512 INLINE __m512i pair_dot_bw(__m512i aw, __mmask64 neg, const int8_t *x, const int32_t *xc,
                                  const int SIGNED)
{
    (void)xc;
    return _mm512_madd_epi16(_mm512_maddubs_epi16(aw, signed_x(x, neg, SIGNED)), _mm512_set1_epi16(1));
}

/* The same by dpbusd, starting from xc's -offset sums for RAW weights (NULL:
 * from zero).  RAW weights need one xor (q8_0) or nothing (q4_0, q5_0) where
 * signed ones need abs, a sign mask and a masked negate (or an offset taken
 * off); the sums stay exact integers, so the result is the same to the bit. */
AVX512_VNNI INLINE __m512i pair_dot_vnni(__m512i aw, __mmask64 neg, const int8_t *x,
                                         const int32_t *xc, const int SIGNED)
{
    __m512i start = xc ? _mm512_loadu_si512((const void *)xc) : _mm512_setzero_si512();
    return _mm512_dpbusd_epi32(start, aw, signed_x(x, neg, SIGNED));
}

/* Rows r0..r1 for M (constant) vectors: each pair of weight blocks is read and
 * prepared once for all of them.  cols a multiple of 64.  RAW: unsigned weights
 * with xc[m][cols / 4], the -offset sums of each lane's four activations. */
#define MATVEC_Q8_512(name, target, dot, RAW)                                            \
    target INLINE void name(float *y, const int8_t *xq, const float *d8, const float *s8, \
                            const int32_t *xc, const int M, const uint8_t *w,            \
                            const hark_dtype T, int rows, int cols, int r0, int r1)      \
    {                                                                                    \
        size_t bb = hark_block_bytes(T), row_bytes = (size_t)cols / QK * bb;             \
        const int plain = RAW || hark_block_has_min(T); /* bytes as they come */         \
        for (int r = r0; r < r1; r++) {                                                  \
            const uint8_t *b = w + (size_t)r * row_bytes;                                \
            __m512 acc[HARK_MAX_BATCH];                                                  \
            _Pragma("GCC unroll 8") for (int j = 0; j < M; j++) acc[j] = _mm512_setzero_ps(); \
            for (int c = 0; c < cols; c += 2 * QK, b += 2 * bb) {                        \
                __m512i wv = pair_bytes(b, bb, T, RAW);                                  \
                __m512i aw = plain ? wv : _mm512_abs_epi8(wv);                           \
                __mmask64 neg = plain ? 0 : _mm512_movepi8_mask(wv);                     \
                __m512 dw = pair_halves(b, bb, 0);                                       \
                __m512 mw = hark_block_has_min(T) ? pair_halves(b, bb, 2) : _mm512_setzero_ps();    \
                _Pragma("GCC unroll 8") for (int j = 0; j < M; j++) {                    \
                    size_t at = (size_t)j * cols + c;                                    \
                    const int32_t *xcj = RAW && raw_offset(T) ? xc + at / 4 : NULL;       \
                    __m512 s = _mm512_cvtepi32_ps(dot(aw, neg, xq + at, xcj, !plain));   \
                    s = _mm512_mul_ps(s, _mm512_loadu_ps(d8 + at / 4));                  \
                    acc[j] = _mm512_fmadd_ps(s, dw, acc[j]);                             \
                    if (hark_block_has_min(T))                                                      \
                        acc[j] = _mm512_fmadd_ps(mw, _mm512_loadu_ps(s8 + at / 4), acc[j]); \
                }                                                                        \
            }                                                                            \
            _Pragma("GCC unroll 8") for (int j = 0; j < M; j++)                          \
                y[(size_t)j * rows + r] = _mm512_reduce_add_ps(acc[j]);                  \
        }                                                                                \
    }
MATVEC_Q8_512(matvec_q8m_bw, AVX512, pair_dot_bw, 0)
MATVEC_Q8_512(matvec_q8m_vnni, AVX512_VNNI, pair_dot_vnni, 0)
MATVEC_Q8_512(matvec_q8m_vnni_raw, AVX512_VNNI, pair_dot_vnni, 1)

AVX512 static void matvec_q8_bw(float *y, const int8_t *xq, const float *d8, const float *s8,
                                int m, const uint8_t *w, hark_dtype t, int rows, int cols,
                                int r0, int r1)
{
    WITH_CONSTANT_M(m, WITH_CONSTANT_T(t, matvec_q8m_bw(y, xq, d8, s8, NULL, M, w, T, rows, cols, r0, r1)));
}

/* xc[i] = -offset times the sum of xq[4i..4i+3], for n values (a multiple of 64). */
AVX512_VNNI static void offset_sums(int32_t *xc, const int8_t *xq, size_t n, int offset)
{
    const __m512i ones = _mm512_set1_epi8(1), k = _mm512_set1_epi32(-offset);
    for (size_t i = 0; i < n; i += 64) {
        __m512i sums = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones,
                                           _mm512_loadu_si512((const void *)(xq + i)));
        _mm512_storeu_si512((void *)(xc + i / 4), _mm512_mullo_epi32(sums, k));
    }
}

/* The offset sums are made once a call (a few hundred bytes of activations
 * against every row's weights). */
enum { XC_STACK = HARK_MAX_BATCH * 2048 / 4 };

AVX512_VNNI static void matvec_q8_vnni_signed(float *y, const int8_t *xq, const float *d8,
                                              const float *s8, int m, const uint8_t *w,
                                              hark_dtype t, int rows, int cols, int r0, int r1)
{
    WITH_CONSTANT_M(m, WITH_CONSTANT_T(t, matvec_q8m_vnni(y, xq, d8, s8, NULL, M, w, T, rows, cols, r0, r1)));
}

/* RAW weights: the offset sums made first, on the stack up to 8 x 2048 values. */
AVX512_VNNI static void matvec_q8_vnni_raw(float *y, const int8_t *xq, const float *d8,
                                           const float *s8, int m, const uint8_t *w,
                                           hark_dtype t, int rows, int cols, int r0, int r1)
{
    size_t n = (size_t)m * cols;
    int32_t stack[XC_STACK], *xc = n / 4 <= XC_STACK ? stack : malloc(n);
    if (!xc) { /* out of memory: the signed form needs no sums */
        matvec_q8_vnni_signed(y, xq, d8, s8, m, w, t, rows, cols, r0, r1);
        return;
    }
    offset_sums(xc, xq, n, raw_offset(t));
    WITH_CONSTANT_M(m, WITH_CONSTANT_T(t, matvec_q8m_vnni_raw(y, xq, d8, s8, xc, M, w, T, rows, cols, r0, r1)));
    if (xc != stack)
        free(xc);
}

/* RAW weights where they measured faster (interleaved, AMD EPYC): q8_0 for one
 * vector (not two: the signed form's abs and mask are then shared by both),
 * q4_0 and q5_0 for any number (their offset comes off for free); figures:
 * docs/perf-log.md, "Figures behind code comments". */
AVX512_VNNI static void matvec_q8_vnni(float *y, const int8_t *xq, const float *d8,
                                       const float *s8, int m, const uint8_t *w, hark_dtype t,
                                       int rows, int cols, int r0, int r1)
{
    if (raw_offset(t) && (t != HARK_Q8_0 || m == 1))
        matvec_q8_vnni_raw(y, xq, d8, s8, m, w, t, rows, cols, r0, r1);
    else
        matvec_q8_vnni_signed(y, xq, d8, s8, m, w, t, rows, cols, r0, r1);
}
#endif

#ifdef Q8_X86
AVX512 static float quantize_block_avx512(int8_t *q, const float *x)
{
    __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
    float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
    float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
    __m512 s = _mm512_set1_ps(id);
    _mm_storeu_si128((__m128i *)q, _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v0, s))));
    _mm_storeu_si128((__m128i *)(q + 16),
                     _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v1, s))));
    return d;
}

AVX2 static float quantize_block_avx2(int8_t *q, const float *x)
{
    __m256 v[4], amax = _mm256_setzero_ps();
    for (int k = 0; k < 4; k++) {
        v[k] = _mm256_loadu_ps(x + 8 * k);
        amax = _mm256_max_ps(amax, _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v[k]));
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    float d = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4))) / 127.0f;
    __m256 s = _mm256_set1_ps(d != 0 ? 1.0f / d : 0.0f);
    __m256i i[4];
    for (int k = 0; k < 4; k++)
        i[k] = _mm256_cvtps_epi32(_mm256_mul_ps(v[k], s));
    /* the packs work per 128-bit lane: the permute puts the bytes back in order */
    __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(i[0], i[1]), _mm256_packs_epi32(i[2], i[3]));
    bytes = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)q, bytes);
    return d;
}
#endif

/* An eighth of the sum of x's 32 values, in each of the 8 places of d8's layout:
 * the 8 lanes that hold a block's products each add one eighth. */
static void block_sums(float *s8, const float *x)
{
    float sum = 0;
    for (int k = 0; k < QK; k++)
        sum += x[k];
    for (int k = 0; k < 8; k++)
        s8[k] = sum / 8;
}

void hark_q8_quantize(int8_t *qs, float *d8, float *s8, const float *x, int m, int cols)
{
#ifdef Q8_X86
    hark_kernel_level level = hark_kernels_level();
    int wide = level == HARK_LEVEL_AVX512, avx2 = level == HARK_LEVEL_AVX2;
#endif
    for (size_t at = 0; at < (size_t)m * cols; at += QK) {
        float d;
#ifdef Q8_X86
        if (wide)
            d = quantize_block_avx512(qs + at, x + at);
        else if (avx2)
            d = quantize_block_avx2(qs + at, x + at);
        else
#endif
            d = quantize_block_c(qs + at, x + at);
        for (int k = 0; k < 8; k++)
            d8[at / 4 + k] = d;
        if (s8)
            block_sums(s8 + at / 4, x + at);
    }
}

static int vnni_refused; /* tests: the maddubs path on a VNNI CPU */

void hark_q8_refuse_vnni(int on)
{
    vnni_refused = on;
}

void hark_matvec_q8(float *y, const int8_t *xq, const float *d8, const float *s8, int m,
                    const void *w, hark_dtype t, int rows, int cols, int r0, int r1)
{
#ifdef Q8_X86
    hark_kernel_level level = hark_kernels_level();
    if (level == HARK_LEVEL_AVX512 && cols % (2 * QK) == 0) {
        /* __builtin_cpu_init ran when the kernel set was chosen */
        if (!vnni_refused && __builtin_cpu_supports("avx512vnni"))
            matvec_q8_vnni(y, xq, d8, s8, m, w, t, rows, cols, r0, r1);
        else
            matvec_q8_bw(y, xq, d8, s8, m, w, t, rows, cols, r0, r1);
        return;
    }
    if (level != HARK_LEVEL_PORTABLE) { /* AVX2, or AVX-512 with an odd block count */
        matvec_q8_avx2(y, xq, d8, s8, m, w, t, rows, cols, r0, r1);
        return;
    }
#endif
    matvec_q8_c(y, xq, d8, s8, m, w, t, rows, cols, r0, r1);
}
