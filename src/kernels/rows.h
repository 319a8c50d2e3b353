/* Row operations (f16 widen / narrow, add, layer norm, softmax, log-sum-exp, GELU)
 * written once for any vector width.  simd.c includes this file once per
 * instruction set after defining:
 *   ROWS_TARGET        the function attribute that enables the instruction set
 *   ROWS_NAME(f)       f with the set's suffix (f##_avx512)
 *   ROWS_W             floats per vector;  VEC  the vector type
 *   V_LOAD V_STORE V_SET1 V_ZERO V_ADD V_SUB V_MUL V_DIV V_FMA V_FNMA V_MAX V_ABS V_NEG
 *   V_SIGN_OF(y, x)    y with the sign bit of x set where x's is
 *   V_HSUM V_HMAX      horizontal sum and maximum, to a float
 *   V_EXP              exp on every lane
 *   V_WIDEN16 V_NARROW16   f16 <-> f32 of one vector
 * Each set computes in the same order as it did when written out by hand, so
 * results are bit-identical to that; the tails use the portable functions.
 * The parameters are undefined at the end, ready for the next set. */

ROWS_TARGET static void ROWS_NAME(widen_f16)(float *dst, const uint16_t *src, size_t n)
{
    size_t i = 0;
    for (; i + ROWS_W <= n; i += ROWS_W)
        V_STORE(dst + i, V_WIDEN16(src + i));
    widen_f16_c(dst + i, src + i, n - i);
}

/* f32 -> f16, round to nearest even: the same bits as hark_f32_to_f16. */
ROWS_TARGET static void ROWS_NAME(narrow_f16)(uint16_t *dst, const float *src, size_t n)
{
    size_t i = 0;
    for (; i + ROWS_W <= n; i += ROWS_W)
        V_NARROW16(dst + i, V_LOAD(src + i));
    narrow_f16_c(dst + i, src + i, n - i);
}

ROWS_TARGET static void ROWS_NAME(add)(float *y, const float *x, size_t n)
{
    size_t i = 0;
    for (; i + ROWS_W <= n; i += ROWS_W)
        V_STORE(y + i, V_ADD(V_LOAD(y + i), V_LOAD(x + i)));
    add_c(y + i, x + i, n - i);
}

/* Mean and variance in f32 lanes, summed in double at the end. */
ROWS_TARGET static void ROWS_NAME(layer_norm)(float *y, const float *x, int d, const float *g,
                                              const float *b)
{
    int i = 0;
    VEC s = V_ZERO();
    for (; i + ROWS_W <= d; i += ROWS_W)
        s = V_ADD(s, V_LOAD(x + i));
    double sum = V_HSUM(s);
    for (int k = i; k < d; k++)
        sum += x[k];
    float mean = (float)(sum / d);
    VEC vm = V_SET1(mean), v = V_ZERO();
    for (i = 0; i + ROWS_W <= d; i += ROWS_W) {
        VEC c = V_SUB(V_LOAD(x + i), vm);
        v = V_FMA(c, c, v);
    }
    double var = V_HSUM(v);
    for (int k = i; k < d; k++)
        var += (double)(x[k] - mean) * (x[k] - mean);
    float inv = (float)(1.0 / sqrt(var / d + 1e-5));
    VEC vi = V_SET1(inv);
    for (i = 0; i + ROWS_W <= d; i += ROWS_W) {
        VEC c = V_MUL(V_SUB(V_LOAD(x + i), vm), vi);
        V_STORE(y + i, V_FMA(c, V_LOAD(g + i), V_LOAD(b + i)));
    }
    for (int k = i; k < d; k++)
        y[k] = (x[k] - mean) * inv * g[k] + b[k];
}

/* The largest element; -inf for an empty or all -inf row. */
ROWS_TARGET static inline float ROWS_NAME(row_max)(const float *x, size_t n, size_t *vec_end)
{
    VEC vm = V_SET1(-INFINITY);
    size_t i = 0;
    for (; i + ROWS_W <= n; i += ROWS_W)
        vm = V_MAX(vm, V_LOAD(x + i));
    float m = V_HMAX(vm);
    for (size_t k = i; k < n; k++)
        m = x[k] > m ? x[k] : m;
    *vec_end = i;
    return m;
}

ROWS_TARGET static void ROWS_NAME(softmax_row)(float *x, int n)
{
    size_t end, i;
    float m = ROWS_NAME(row_max)(x, (size_t)n, &end);
    VEC vm = V_SET1(m), vs = V_ZERO();
    for (i = 0; i < end; i += ROWS_W) {
        VEC e = V_EXP(V_SUB(V_LOAD(x + i), vm));
        V_STORE(x + i, e);
        vs = V_ADD(vs, e);
    }
    double sum = V_HSUM(vs);
    for (size_t j = end; j < (size_t)n; j++) {
        x[j] = x[j] == -INFINITY ? 0.0f : expf(x[j] - m);
        sum += x[j];
    }
    VEC inv = V_SET1((float)(1.0 / sum));
    for (i = 0; i < end; i += ROWS_W)
        V_STORE(x + i, V_MUL(V_LOAD(x + i), inv));
    for (size_t j = end; j < (size_t)n; j++)
        x[j] *= (float)(1.0 / sum);
}

ROWS_TARGET static double ROWS_NAME(log_sum_exp)(const float *x, size_t n)
{
    size_t end, i;
    float mx = ROWS_NAME(row_max)(x, n, &end);
    if (mx == -INFINITY)
        return -INFINITY;
    VEC vs = V_ZERO(), m = V_SET1(mx);
    for (i = 0; i < end; i += ROWS_W)
        vs = V_ADD(vs, V_EXP(V_SUB(V_LOAD(x + i), m)));
    double sum = V_HSUM(vs);
    for (size_t k = end; k < n; k++)
        sum += x[k] == -INFINITY ? 0.0 : expf(x[k] - mx);
    return mx + log(sum);
}

/* erf by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), odd symmetric. */
ROWS_TARGET static inline VEC ROWS_NAME(erf)(VEC x)
{
    const VEC one = V_SET1(1.0f);
    VEC a = V_ABS(x);
    VEC t = V_DIV(one, V_FMA(V_SET1(0.3275911f), a, one));
    VEC p = V_SET1(1.061405429f);
    p = V_FMA(p, t, V_SET1(-1.453152027f));
    p = V_FMA(p, t, V_SET1(1.421413741f));
    p = V_FMA(p, t, V_SET1(-0.284496736f));
    p = V_FMA(p, t, V_SET1(0.254829592f));
    p = V_MUL(p, t);
    return V_SIGN_OF(V_FNMA(p, V_EXP(V_MUL(V_NEG(a), a)), one), x);
}

ROWS_TARGET static void ROWS_NAME(gelu)(float *x, size_t n)
{
    size_t i = 0;
    const VEC half = V_SET1(0.5f), s = V_SET1((float)M_SQRT1_2), one = V_SET1(1.0f);
    for (; i + ROWS_W <= n; i += ROWS_W) {
        VEC v = V_LOAD(x + i);
        V_STORE(x + i, V_MUL(V_MUL(half, v), V_ADD(one, ROWS_NAME(erf)(V_MUL(v, s)))));
    }
    gelu_c(x + i, n - i);
}

#undef ROWS_TARGET
#undef ROWS_NAME
#undef ROWS_W
#undef VEC
#undef V_LOAD
#undef V_STORE
#undef V_SET1
#undef V_ZERO
#undef V_ADD
#undef V_SUB
#undef V_MUL
#undef V_DIV
#undef V_FMA
#undef V_FNMA
#undef V_MAX
#undef V_ABS
#undef V_NEG
#undef V_SIGN_OF
#undef V_HSUM
#undef V_HMAX
#undef V_EXP
#undef V_WIDEN16
#undef V_NARROW16
