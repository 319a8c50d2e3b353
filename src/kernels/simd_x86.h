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

/* Decoding reads each weight once, in one stream per thread: with the hardware
 * prefetcher alone one core read f16 rows a fifth slower than when it also
 * asks for the line HARK_AHEAD bytes on as it reaches each (4 KB ahead or less
 * gained little or lost; the q8_0 products, bound by their instructions, gained
 * nothing and do without; figures: docs/perf-log.md, "Figures behind code
 * comments").  A prefetch never faults, so running past the end of the weights
 * is harmless, and it changes no result. */
enum { HARK_AHEAD = 12288 };
#define HARK_PREFETCH(p) _mm_prefetch((const char *)(p) + HARK_AHEAD, _MM_HINT_T0)
#endif

#endif
