/* x86 helpers shared by the files that hold AVX2 / AVX-512 kernels (simd.c,
 * q8dot.c).  Each function carries its own target attribute, so including this
 * header compiles for any x86 CPU; callers run them only where the kernel set in
 * use (hark_kernels_level) has the instructions. */
#ifndef HARK_SIMD_X86_H
#define HARK_SIMD_X86_H

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/* The sum of the eight lanes. */
__attribute__((target("avx2"))) static inline float hark_hsum256(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}
#endif

#endif
