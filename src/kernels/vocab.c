/* The search's passes over a whole vocabulary of logits (decode/search.c):
 * the largest value, the first index of it, and the k largest.  The plain
 * loops took a few cycles an entry, 51864 entries a step and a beam, as long
 * as several of the step's weight matrices; here vector compares skip sixteen
 * entries at a time and only the few that could matter go through the loop.
 * Each gives exactly the plain loop's answer (kept as the portable path, which
 * the tests compare with): ties go to the lower id, -inf is never among the k
 * largest, and NaN is treated as the loops treat it. */
#include "kernels/kernels.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include "kernels/simd_x86.h"
#define VOCAB_X86 1
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))
#endif

static float max_c(const float *x, int n)
{
    float m = -INFINITY;
    for (int i = 0; i < n; i++)
        m = x[i] > m ? x[i] : m;
    return m;
}

/* best moves only on a strictly larger value: the first of equal ones stays,
 * and a NaN never takes its place (nor gives it up, at 0). */
static int argmax_c(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

/* Entry t into top[0..*n) (at most k, by value, then lower id), as the loop
 * of every entry does: -inf and anything no larger than the k-th are left out. */
static void top_insert(const float *x, int t, int k, int *top, int *n)
{
    if (x[t] == -INFINITY || (*n == k && x[t] <= x[top[*n - 1]]))
        return;
    int i = *n < k ? (*n)++ : k - 1;
    while (i > 0 && x[top[i - 1]] < x[t]) {
        top[i] = top[i - 1];
        i--;
    }
    top[i] = t;
}

static int top_k_c(const float *x, int n, int k, int *top)
{
    int count = 0;
    for (int t = 0; t < n; t++)
        top_insert(x, t, k, top, &count);
    return count;
}

#ifdef VOCAB_X86
/* max(v, m) keeps m where v is NaN: NaN is skipped, as in max_c. */
AVX512 static float max_avx512(const float *x, int n)
{
    __m512 m = _mm512_set1_ps(-INFINITY);
    int i = 0;
    for (; i + 16 <= n; i += 16)
        m = _mm512_max_ps(_mm512_loadu_ps(x + i), m);
    float tail = max_c(x + i, n - i), v = _mm512_reduce_max_ps(m);
    return tail > v ? tail : v;
}

/* The first entry equal to the largest non-NaN value (which argmax_c returns
 * unless x[0] is NaN); -0 and +0 compare equal in both. */
AVX512 static int argmax_avx512(const float *x, int n)
{
    if (n <= 0 || isnan(x[0]))
        return 0;
    float m = max_avx512(x, n);
    __m512 mv = _mm512_set1_ps(m);
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __mmask16 eq = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i), mv, _CMP_EQ_OQ);
        if (eq)
            return i + __builtin_ctz(eq);
    }
    for (; i < n; i++)
        if (x[i] == m)
            return i;
    return 0;
}

/* Lanes that could enter the list: not -inf, and above the k-th once there are
 * k (a NaN passes both tests, as in top_insert).  The k-th only grows, so the
 * lanes let through at a vector's start are a superset of those top_insert
 * takes; each is then decided by top_insert itself.  A NaN that enters as the
 * k-th lets the next entry in whatever it is (no compare with NaN is true), so
 * a vector holding NaN goes through top_insert whole. */
AVX512 static int top_k_avx512(const float *x, int n, int k, int *top)
{
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    int count = 0, t = 0;
    for (; t + 16 <= n; t += 16) {
        __m512 v = _mm512_loadu_ps(x + t);
        __mmask16 live = _mm512_cmp_ps_mask(v, ninf, _CMP_NEQ_UQ);
        if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q))
            live = 0xffff;
        else if (count == k)
            live &= _mm512_cmp_ps_mask(v, _mm512_set1_ps(x[top[k - 1]]), _CMP_NLE_UQ);
        for (; live; live &= live - 1)
            top_insert(x, t + __builtin_ctz(live), k, top, &count);
    }
    for (; t < n; t++)
        top_insert(x, t, k, top, &count);
    return count;
}
#endif

static int wide(void)
{
#ifdef VOCAB_X86
    return hark_kernels_level() == HARK_LEVEL_AVX512;
#else
    return 0;
#endif
}

float hark_vocab_max(const float *x, int n)
{
#ifdef VOCAB_X86
    if (wide())
        return max_avx512(x, n);
#endif
    return max_c(x, n);
}

int hark_vocab_argmax(const float *x, int n)
{
#ifdef VOCAB_X86
    if (wide())
        return argmax_avx512(x, n);
#endif
    return argmax_c(x, n);
}

int hark_vocab_top_k(const float *x, int n, int k, int *top)
{
    if (k <= 0)
        return 0;
#ifdef VOCAB_X86
    if (wide())
        return top_k_avx512(x, n, k, top);
#endif
    return top_k_c(x, n, k, top);
}
