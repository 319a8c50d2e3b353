/* Every fast kernel against its portable C twin on random shapes with odd
 * sizes and tails; the largest relative error per kernel is printed. */
#include "check.h"
#include "face.h"
#include "kernels/kernels.h"
#include "base/base.h"

static uint64_t rng = 88172645463325252ull;

static float frand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static double rel_err(const float *a, const float *b, size_t n)
{
    double worst = 0, scale = 1e-6;
    for (size_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(b[i]));
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs((double)a[i] - b[i]) / scale);
    return worst;
}

static void test_matvec(hark_dtype t)
{
    const int shapes[][2] = {{1, 1}, {3, 15}, {7, 17}, {64, 384}, {33, 1000}, {5, 1537}};
    double worst = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int m = 1; m <= HARK_MAX_BATCH; m++) { /* each count is its own kernel */
            int rows = shapes[s][0], cols = shapes[s][1];
            uint16_t *w = malloc(sizeof(uint16_t) * rows * cols);
            float *x = malloc(sizeof(float) * m * cols), *fast = malloc(sizeof(float) * m * rows);
            float *slow = malloc(sizeof(float) * m * rows);
            for (int i = 0; i < rows * cols; i++) {
                float f = frand();
                uint32_t bits;
                memcpy(&bits, &f, 4);
                w[i] = t == HARK_F16 ? hark_f32_to_f16(f) : (uint16_t)(bits >> 16);
            }
            for (int i = 0; i < m * cols; i++)
                x[i] = frand();
            hark_matvec16(fast, x, m, w, t, rows, cols, 0, rows);
            hark_kernels_force_portable(1);
            hark_matvec16(slow, x, m, w, t, rows, cols, 0, rows);
            hark_kernels_force_portable(0);
            worst = fmax(worst, rel_err(fast, slow, (size_t)m * rows));
            free(w), free(x), free(fast), free(slow);
        }
    printf("matvec %s (%s): max relative error %.2g\n", hark_dtype_name(t), hark_kernels_name(), worst);
    CHECK(worst < 1e-5, "matvec %s error %g", hark_dtype_name(t), worst);
}

/* Weights [rows][cols] of random values in type t (cols a multiple of 32 for
 * the block types); *wf gets them widened back to f32. */
static void *random_weights(hark_dtype t, int rows, int cols, float **wf)
{
    size_t row_bytes = hark_row_bytes(t, (size_t)cols);
    char *w = malloc(row_bytes * rows);
    float *row = malloc(sizeof(float) * cols);
    *wf = malloc(sizeof(float) * rows * cols);
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++)
            row[c] = frand();
        hark_quantize_row(w + r * row_bytes, row, t, (size_t)cols);
    }
    hark_to_f32(*wf, w, t, (size_t)rows * cols);
    free(row);
    return w;
}

static void test_matvec_quant(void)
{
    const hark_dtype types[] = {HARK_Q8_0, HARK_Q4_0, HARK_Q4_1, HARK_Q5_0, HARK_Q5_1};
    const int shapes[][2] = {{1, 32}, {5, 64}, {33, 384}, {7, 1536}};
    for (int k = 0; k < 5; k++) {
        double worst = 0;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int m = 1; m <= HARK_MAX_BATCH; m++) { /* each count is its own kernel */
                int rows = shapes[s][0], cols = shapes[s][1];
                float *wf, *x = malloc(sizeof(float) * m * cols);
                float *fast = malloc(sizeof(float) * m * rows), *slow = malloc(sizeof(float) * m * rows);
                void *w = random_weights(types[k], rows, cols, &wf);
                for (int i = 0; i < m * cols; i++)
                    x[i] = frand();
                hark_matvec_q(fast, x, m, w, types[k], rows, cols, 0, rows);
                hark_kernels_force_portable(1);
                hark_matvec_q(slow, x, m, w, types[k], rows, cols, 0, rows);
                hark_kernels_force_portable(0);
                worst = fmax(worst, rel_err(fast, slow, (size_t)m * rows));
                free(wf), free(x), free(fast), free(slow), free(w);
            }
        printf("matvec %s (%s): max relative error %.2g\n", hark_dtype_name(types[k]),
               hark_kernels_name(), worst);
        CHECK(worst < 1e-5, "matvec %s error %g", hark_dtype_name(types[k]), worst);
    }
}

/* Block-quantised weights times q8_0-quantised activations: the quantiser is
 * the same bits on every kernel set; the integer products match an exact double
 * sum of the same quantised values (the weights' integers derived here from
 * their f32 values, not by the kernels' unpacking); and the result stays within
 * the quantisation bound of the f32 product (half an activation step per
 * weight).  Errors against the exact sums are relative to the sum of the block
 * terms' magnitudes: q4_1 / q5_1 blocks are a difference of two large terms. */
static void q8_reference(double *exact, double *mag, double *bound, const uint8_t *w, hark_dtype t,
                         const float *wf, const int8_t *xq, const float *d8, const float *s8,
                         int rows, int cols)
{
    size_t row_bytes = hark_row_bytes(t, (size_t)cols), bb = hark_block_bytes(t);
    int with_min = t == HARK_Q4_1 || t == HARK_Q5_1;
    for (int r = 0; r < rows; r++) {
        double sum = 0, b = 0, size = 0;
        for (int c = 0; c < cols; c += 32) {
            const uint8_t *blk = w + r * row_bytes + c / 32 * bb;
            uint16_t h, hm = 0;
            memcpy(&h, blk, 2);
            if (with_min)
                memcpy(&hm, blk + 2, 2);
            double d = hark_f16_to_f32(h), mw = hark_f16_to_f32(hm);
            long isum = 0;
            for (int k = 0; k < 32; k++) {
                float v = wf[(size_t)r * cols + c + k];
                long u = d != 0 ? lrint((v - mw) / d) : 0;
                isum += u * xq[c + k];
                b += fabs(v) * d8[c / 4] / 2;
            }
            double ints = d * d8[c / 4] * (double)isum, mins = with_min ? mw * 8 * s8[c / 4] : 0;
            sum += ints + mins;
            size += fabs(ints) + fabs(mins);
        }
        exact[r] = sum;
        mag[r] = size;
        bound[r] = b;
    }
}

typedef struct q8_errors {
    double fast, exact, bound;
    int same_quant;
} q8_errors;

/* One shape and vector count of type t into e. */
static void q8_case(q8_errors *e, hark_dtype t, int m, int rows, int cols, int with_128)
{
    size_t nq = (size_t)m * cols, nd = nq / 4;
    float *wf, *x = malloc(sizeof(float) * nq), *d8 = malloc(sizeof(float) * nd);
    float *s8 = malloc(sizeof(float) * nd), *d8p = malloc(sizeof(float) * nd);
    float *s8p = malloc(sizeof(float) * nd), *fast = malloc(sizeof(float) * m * rows);
    float *slow = malloc(sizeof(float) * m * rows), *f32 = malloc(sizeof(float) * m * rows);
    int8_t *xq = malloc(nq), *xqp = malloc(nq);
    double *exact = malloc(sizeof(double) * rows), *bound = malloc(sizeof(double) * rows);
    double *mag = malloc(sizeof(double) * rows);
    uint8_t *w = random_weights(t, rows, cols, &wf);
    if (with_128) /* -128, which ggml's quantiser never writes but a file may hold */
        w[2 + 5] = 0x80, wf[5] = -128 * hark_f16_to_f32((uint16_t)(w[0] | w[1] << 8));
    for (size_t i = 0; i < nq; i++)
        x[i] = frand() * (i % 7 == 0 ? 3.0f : 1.0f);
    hark_q8_quantize(xq, d8, s8, x, m, cols);
    hark_matvec_q8(fast, xq, d8, s8, m, w, t, rows, cols, 0, rows);
    hark_kernels_force_portable(1);
    hark_q8_quantize(xqp, d8p, s8p, x, m, cols);
    hark_matvec_q8(slow, xq, d8, s8, m, w, t, rows, cols, 0, rows);
    hark_matvec_q(f32, x, m, w, t, rows, cols, 0, rows);
    hark_kernels_force_portable(0);
    e->same_quant &= memcmp(xq, xqp, nq) == 0 && memcmp(d8, d8p, sizeof(float) * nd) == 0 &&
                     memcmp(s8, s8p, sizeof(float) * nd) == 0;
    e->fast = fmax(e->fast, rel_err(fast, slow, (size_t)m * rows));
    for (int j = 0; j < m; j++) {
        q8_reference(exact, mag, bound, w, t, wf, xq + j * cols, d8 + j * cols / 4, s8 + j * cols / 4,
                     rows, cols);
        double scale = 1e-6, err = 0;
        for (int r = 0; r < rows; r++) {
            double got = slow[j * rows + r];
            scale = fmax(scale, mag[r]);
            err = fmax(err, fabs(got - exact[r]));
            e->bound = fmax(e->bound, fabs(got - f32[j * rows + r]) / (bound[r] + 1e-6));
        }
        e->exact = fmax(e->exact, err / scale);
    }
    free(wf), free(x), free(d8), free(s8), free(d8p), free(s8p), free(fast), free(slow);
    free(f32), free(xq), free(xqp), free(exact), free(mag), free(bound), free(w);
}

static void test_matvec_q8(void)
{
    const hark_dtype types[] = {HARK_Q8_0, HARK_Q4_0, HARK_Q4_1, HARK_Q5_0, HARK_Q5_1};
    /* the last two: the VNNI path's offset sums on the heap (m x cols > 8 x 2048),
     * for q8_0 with one vector, for q4_0 / q5_0 with eight */
    const int shapes[][2] = {{1, 32}, {5, 64}, {33, 96}, {7, 384}, {70, 1536}, {3, 2112}, {2, 16448}};
    for (int k = 0; k < 5; k++) {
        q8_errors e = {0, 0, 0, 1};
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int m = 1; m <= HARK_MAX_BATCH; m++)
                q8_case(&e, types[k], m, shapes[s][0], shapes[s][1], types[k] == HARK_Q8_0 && s == 2);
        const char *name = hark_dtype_name(types[k]);
        printf("matvec %s x q8_0 (%s): max relative error %.2g against portable, %.2g against "
               "exact sums; error against f32 activations at most %.2f of the quantisation bound\n",
               name, hark_kernels_name(), e.fast, e.exact, e.bound);
        CHECK(e.same_quant, "%s: activation quantisation differs from the portable one",
              hark_kernels_name());
        CHECK(e.fast < 1e-5, "%s x q8 matvec error %g against portable", name, e.fast);
        CHECK(e.exact < 1e-5, "%s x q8 matvec error %g against exact sums", name, e.exact);
        CHECK(e.bound <= 1.0, "%s x q8 matvec outside the quantisation bound (%.2f)", name, e.bound);
    }
}

static void test_widen(void)
{
    uint16_t all[65536];
    float fast[65536], slow[65536];
    for (int i = 0; i < 65536; i++)
        all[i] = (uint16_t)i;
    hark_widen_f16(fast, all + 1, 65535); /* odd length, every value */
    for (int i = 0; i < 65535; i++)
        slow[i] = hark_f16_to_f32(all[i + 1]);
    int same = 1;
    for (int i = 0; i < 65535; i++)
        same &= (isnan(fast[i]) && isnan(slow[i])) || fast[i] == slow[i];
    CHECK(same, "f16 widening is exact for all 65536 values");
    for (int i = 0; i < 65536; i++) /* and narrowing round-trips */
        if (!isnan(slow[i > 0 ? i - 1 : 0]) && i > 0)
            same &= hark_f32_to_f16(slow[i - 1]) == all[i] || (all[i] & 0x7fff) == 0;
    CHECK(same, "f32 -> f16 -> f32 round-trips");
    /* vectorised narrowing: the same bits as the scalar conversion, odd length */
    float src[1000];
    uint16_t fast16[1000];
    for (int i = 0; i < 1000; i++)
        src[i] = frand() * (i % 7 == 0 ? 1e-6f : i % 5 == 0 ? 7e4f : 3.0f);
    hark_narrow_f16(fast16, src, 999);
    same = 1;
    for (int i = 0; i < 999; i++)
        same &= fast16[i] == hark_f32_to_f16(src[i]);
    CHECK(same, "f16 narrowing matches the scalar conversion bit for bit");
}

static void test_softmax_gelu(void)
{
    const int sizes[] = {1, 7, 16, 31, 100, 1500, 1501};
    double worst_s = 0, worst_g = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int n = sizes[s];
        float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
        for (int i = 0; i < n; i++)
            a[i] = b[i] = frand() * 30;
        if (n > 3)
            a[2] = b[2] = -INFINITY; /* masked */
        hark_softmax_row(a, n);
        hark_kernels_force_portable(1);
        hark_softmax_row(b, n);
        hark_kernels_force_portable(0);
        worst_s = fmax(worst_s, rel_err(a, b, n));
        CHECK(n <= 3 || a[2] == 0.0f, "masked entry is zero");
        for (int i = 0; i < n; i++)
            a[i] = b[i] = frand() * 8;
        hark_gelu_fast(a, n);
        hark_kernels_force_portable(1);
        hark_gelu_fast(b, n);
        hark_kernels_force_portable(0);
        worst_g = fmax(worst_g, rel_err(a, b, n));
        free(a), free(b);
    }
    printf("softmax: max relative error %.2g; gelu: %.2g\n", worst_s, worst_g);
    CHECK(worst_s < 1e-5, "softmax error %g", worst_s);
    CHECK(worst_g < 1e-5, "gelu error %g", worst_g);
}

static void test_vecmat(void)
{
    const int shapes[][2] = {{64, 1500}, {1, 1}, {7, 33}, {64, 100}, {20, 47}};
    double worst = 0;
    int tail_diff = 0;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (int m = 1; m <= HARK_MAX_BATCH; m++) { /* each count is its own kernel */
            int rows = shapes[k][0], cols = shapes[k][1];
            uint16_t *w = malloc(sizeof(uint16_t) * rows * cols);
            float *x = malloc(sizeof(float) * m * rows), *a = malloc(sizeof(float) * m * cols);
            float *b = malloc(sizeof(float) * m * cols);
            for (int i = 0; i < rows * cols; i++)
                w[i] = hark_f32_to_f16(frand());
            for (int i = 0; i < m * rows; i++)
                x[i] = frand();
            hark_vecmat16(a, cols, x, m, w, rows, cols);
            hark_kernels_force_portable(1);
            hark_vecmat16(b, cols, x, m, w, rows, cols);
            hark_kernels_force_portable(0);
            worst = fmax(worst, rel_err(a, b, (size_t)m * cols));
            /* with 1 to 3 vectors the last cols % 16 columns add in the portable
             * order, multiply and add rounded apart: the same bits */
            for (int j = 0; m <= 3 && j < m; j++)
                for (int c = cols - cols % 16; c < cols; c++)
                    tail_diff += a[j * cols + c] != b[j * cols + c];
            free(w), free(x), free(a), free(b);
        }
    printf("vecmat f16 (%s): max relative error %.2g; %d last columns not the portable bits\n",
           hark_kernels_name(), worst, tail_diff);
    CHECK(worst < 1e-5, "vecmat error %g", worst);
    CHECK(tail_diff == 0, "%d last columns differ from the portable path", tail_diff);
}

static void test_rows(void)
{
    const int sizes[] = {1, 15, 16, 33, 384, 1766, 51864};
    double worst_l = 0, worst_a = 0, worst_n = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int n = sizes[k];
        float *x = malloc(sizeof(float) * n), *y1 = malloc(sizeof(float) * n), *y2 = malloc(sizeof(float) * n);
        float *g = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
        for (int i = 0; i < n; i++)
            x[i] = frand() * 20, g[i] = 1 + frand() * 0.1f, b[i] = frand() * 0.1f;
        if (n > 5)
            x[3] = -INFINITY; /* suppressed tokens */
        double fast = hark_log_sum_exp(x, n);
        hark_kernels_force_portable(1);
        double slow = hark_log_sum_exp(x, n);
        hark_kernels_force_portable(0);
        worst_l = fmax(worst_l, fabs(fast - slow) / fmax(1, fabs(slow)));
        if (n > 5)
            x[3] = 1.0f;
        memcpy(y1, x, sizeof(float) * n), memcpy(y2, x, sizeof(float) * n);
        hark_add_fast(y1, g, n);
        hark_kernels_force_portable(1);
        hark_add_fast(y2, g, n);
        hark_kernels_force_portable(0);
        worst_a = fmax(worst_a, rel_err(y1, y2, n));
        hark_layer_norm_row(y1, x, n, g, b);
        hark_kernels_force_portable(1);
        hark_layer_norm_row(y2, x, n, g, b);
        hark_kernels_force_portable(0);
        worst_n = fmax(worst_n, rel_err(y1, y2, n));
        free(x), free(y1), free(y2), free(g), free(b);
    }
    printf("log-sum-exp: max relative error %.2g; add %.2g; layer norm %.2g\n", worst_l, worst_a, worst_n);
    CHECK(worst_l < 1e-6, "log-sum-exp error %g", worst_l);
    CHECK(worst_a == 0, "add error %g", worst_a);
    CHECK(worst_n < 1e-5, "layer norm error %g", worst_n);
    float none[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    CHECK(hark_log_sum_exp(none, 4) == -INFINITY, "all suppressed");
}

static void test_linear_paths(void)
{
    /* hark_linear: the matvec path (m <= 8) and the widened sgemm path agree */
    int rows = 37, cols = 129;
    uint16_t *w16 = malloc(sizeof(uint16_t) * rows * cols);
    float *wf = malloc(sizeof(float) * rows * cols), *x = malloc(sizeof(float) * 20 * cols);
    float *y1 = malloc(sizeof(float) * 20 * rows), *y2 = malloc(sizeof(float) * 20 * rows);
    for (int i = 0; i < rows * cols; i++) {
        w16[i] = hark_f32_to_f16(frand());
        wf[i] = hark_f16_to_f32(w16[i]);
    }
    for (int i = 0; i < 20 * cols; i++)
        x[i] = frand();
    hark_weight a = {w16, HARK_F16, rows, cols}, b = {wf, HARK_F32, rows, cols};
    int ms[] = {1, 5, 8, 9, 20};
    double worst = 0;
    for (int k = 0; k < 5; k++) {
        hark_linear(y1, x, ms[k], &a, NULL);
        hark_linear(y2, x, ms[k], &b, NULL);
        worst = fmax(worst, rel_err(y1, y2, (size_t)ms[k] * rows));
    }
    printf("linear f16 vs f32 weights: max relative error %.2g\n", worst);
    CHECK(worst < 1e-5, "linear paths differ by %g", worst);
    free(w16), free(wf), free(x), free(y1), free(y2);
}

/* hark_linear_gelu against the portable hark_linear then an exact (erf, double)
 * GELU, on the stored-type path (m <= 8), the OpenBLAS grid and the packed path
 * (several weight blocks and activation tiles, tails in both); and the same bits
 * on one thread and on two. */
static void test_linear_gelu(void)
{
    const hark_dtype types[] = {HARK_F16, HARK_F32, HARK_F16, HARK_Q8_0, HARK_F16};
    const int shapes[][3] = {/* m, rows, cols */
                             {5, 200, 64}, {300, 300, 100}, {400, 129, 96}, {70, 160, 64},
                             {200, 600, 96}};
    double worst = 0;
    int same = 1;
    hark_pool *two = hark_pool_new(2);
    for (int s = 0; s < 5; s++) {
        int m = shapes[s][0], rows = shapes[s][1], cols = shapes[s][2];
        float *wf, *x = malloc(sizeof(float) * m * cols), *b = malloc(sizeof(float) * rows);
        float *y = malloc(sizeof(float) * m * rows), *ref = malloc(sizeof(float) * m * rows);
        float *y2 = malloc(sizeof(float) * m * rows);
        void *w = random_weights(types[s], rows, cols, &wf);
        for (int i = 0; i < m * cols; i++)
            x[i] = frand();
        for (int r = 0; r < rows; r++)
            b[r] = frand();
        hark_weight hw = {w, types[s], rows, cols};
        hark_kernels_force_portable(1);
        hark_linear(ref, x, m, &hw, b);
        hark_kernels_force_portable(0);
        for (int i = 0; i < m * rows; i++)
            ref[i] = (float)(0.5 * ref[i] * (1.0 + erf(ref[i] / sqrt(2.0))));
        hark_linear_gelu(y, x, m, &hw, b);
        worst = fmax(worst, rel_err(y, ref, (size_t)m * rows));
        hark_pool_use(two);
        hark_linear_gelu(y2, x, m, &hw, b);
        hark_pool_use(NULL);
        same &= memcmp(y, y2, sizeof(float) * m * rows) == 0;
        free(wf), free(x), free(b), free(y), free(ref), free(y2), free(w);
    }
    hark_pool_free(two);
    printf("linear + GELU (%s): max relative error %.2g against an exact GELU\n",
           hark_kernels_name(), worst);
    CHECK(worst < 1e-5, "linear + GELU error %g", worst);
    CHECK(same, "linear + GELU: one thread and two differ");
}

/* Attention with heads of 64: the AVX-512 register tiles against the OpenBLAS
 * path, across query blocks (128), query tiles (6) and key blocks (64), with
 * and without the causal mask; heads of 32 take the OpenBLAS path in both. */
static void test_attention(void)
{
    const int shapes[][5] = {/* nq, nk, heads, head width, causal offset */
                             {2, 1, 1, 64, -1},   {7, 5, 2, 64, -1},  {130, 301, 3, 64, -1},
                             {13, 13, 2, 64, 0},  {5, 20, 1, 64, 15}, {64, 64, 1, 64, -1},
                             {9, 70, 2, 32, -1}};
    double worst = 0;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        int nq = shapes[k][0], nk = shapes[k][1], heads = shapes[k][2], d = heads * shapes[k][3];
        float *q = malloc(sizeof(float) * nq * d), *kv = malloc(sizeof(float) * 2 * nk * d);
        float *a = malloc(sizeof(float) * nq * d), *b = malloc(sizeof(float) * nq * d);
        float *scratch = malloc(sizeof(float) * hark_attention_scratch(nq, nk, heads));
        for (int i = 0; i < nq * d; i++)
            q[i] = 4 * frand();
        for (int i = 0; i < 2 * nk * d; i++)
            kv[i] = frand();
        hark_attention(a, q, kv, kv + nk * d, nq, nk, d, heads, shapes[k][4], scratch);
        hark_kernels_force_portable(1);
        hark_attention(b, q, kv, kv + nk * d, nq, nk, d, heads, shapes[k][4], scratch);
        hark_kernels_force_portable(0);
        worst = fmax(worst, rel_err(a, b, (size_t)nq * d));
        free(q), free(kv), free(a), free(b), free(scratch);
    }
    printf("attention (%s, register tiles: %s): max relative error %.2g\n", hark_kernels_name(),
           hark_attn64_available() ? "yes" : "no", worst);
    CHECK(worst < 1e-5, "attention error %g", worst);
}

/* hark_linear's products with block-quantised weights, with the quantised
 * vectors on its stack and (over 8 x 2048 values) on the heap, give the
 * kernel's own result bit for bit. */
static void test_linear_q8(void)
{
    const hark_dtype types[] = {HARK_Q8_0, HARK_Q4_1};
    const int m = HARK_MAX_BATCH, rows = 24, widths[] = {2048, 2080};
    int same = 1;
    for (int s = 0; s < 4; s++) {
        int cols = widths[s % 2];
        hark_dtype t = types[s / 2];
        float *wf, *x = malloc(sizeof(float) * m * cols), *d8 = malloc(sizeof(float) * m * cols / 4);
        float *s8 = malloc(sizeof(float) * m * cols / 4);
        float *y = malloc(sizeof(float) * m * rows), *ref = malloc(sizeof(float) * m * rows);
        int8_t *xq = malloc((size_t)m * cols);
        uint8_t *w = random_weights(t, rows, cols, &wf);
        for (int i = 0; i < m * cols; i++)
            x[i] = frand();
        hark_weight hw = {w, t, rows, cols};
        hark_linear(y, x, m, &hw, NULL);
        hark_q8_quantize(xq, d8, s8, x, m, cols);
        hark_matvec_q8(ref, xq, d8, s8, m, w, t, rows, cols, 0, rows);
        same &= memcmp(y, ref, sizeof(float) * m * rows) == 0;
        free(wf), free(x), free(d8), free(s8), free(y), free(ref), free(xq), free(w);
    }
    CHECK(same, "%s: hark_linear's block-quantised products differ from hark_matvec_q8's",
          hark_kernels_name());
}

/* The AVX-512 register tiles (packed from every stored type, tails in rows,
 * in panel columns and in column slices) against double-precision sums, and
 * hark_linear's packed path against the portable OpenBLAS path. */
static void test_gemm512(void)
{
    if (!hark_gemm512_available()) {
        printf("gemm512: not with the %s kernels\n", hark_kernels_name());
        return;
    }
    const hark_dtype types[] = {HARK_F32, HARK_F16, HARK_BF16, HARK_Q8_0, HARK_Q4_1};
    const int shapes[][3] = {/* m, rows, cols */
                             {1, 1, 1},     {12, 32, 16},   {13, 33, 257}, {25, 70, 600},
                             {64, 16, 3},   {200, 45, 513}, {7, 96, 32},   {191, 65, 1024}};
    double worst = 0, worst_linear = 0;
    for (int ti = 0; ti < 5; ti++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int m = shapes[s][0], rows = shapes[s][1], cols = shapes[s][2];
            if (hark_block_bytes(types[ti]) && cols % 32)
                cols = (cols + 31) / 32 * 32;
            float *wf, *x = malloc(sizeof(float) * m * cols), *y = malloc(sizeof(float) * m * rows);
            float *ref = malloc(sizeof(float) * m * rows), *lin = malloc(sizeof(float) * m * rows);
            void *w = random_weights(types[ti], rows, cols, &wf);
            for (int i = 0; i < m * cols; i++)
                x[i] = frand();
            for (int i = 0; i < m; i++)
                for (int r = 0; r < rows; r++) {
                    double sum = 0;
                    for (int c = 0; c < cols; c++)
                        sum += (double)x[i * cols + c] * wf[r * cols + c];
                    ref[i * rows + r] = (float)sum;
                }
            float *bp = aligned_alloc(64, sizeof(float) * hark_gemm512_packed_floats(rows, cols));
            hark_gemm512_pack(bp, w, types[ti], 0, rows, cols);
            hark_gemm512(y, rows, x, m, cols, bp, rows, NULL, 0);
            worst = fmax(worst, rel_err(y, ref, (size_t)m * rows));
            hark_weight hw = {w, types[ti], rows, cols};
            hark_linear(lin, x, m, &hw, NULL);
            hark_kernels_force_portable(1);
            hark_linear(y, x, m, &hw, NULL);
            hark_kernels_force_portable(0);
            worst_linear = fmax(worst_linear, rel_err(lin, y, (size_t)m * rows));
            free(bp), free(w), free(wf), free(x), free(y), free(ref), free(lin);
        }
    printf("gemm512 (f32, f16, bf16, q8_0, q4_1 weights): max relative error %.2g against double "
           "sums, %.2g against the OpenBLAS path\n", worst, worst_linear);
    CHECK(worst < 1e-5, "gemm512 error %g", worst);
    CHECK(worst_linear < 1e-5, "linear packed path differs by %g", worst_linear);
}

/* The activations' conversions, vector against C, bit for bit: ties to even,
 * NaN, infinities, subnormals, a tail past the last 16 and zero padding. */
static void test_lowp_convert(void)
{
    enum { M = 3, K = 37, LD = 40 };
    float x[M * K], finite[M * K];
    uint32_t special[] = {0x3f808000u, 0x3f818000u, 0x7fc00001u, 0x7f800000u, 0xff800000u,
                          0x00000001u, 0x807fffffu, 0x7f7fffffu, 0x3f80ffffu};
    for (int i = 0; i < M * K; i++)
        x[i] = frand() * 3;
    memcpy(finite, x, sizeof x); /* the int8 rows: no NaN or infinities */
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        memcpy(&x[4 * i + 1], &special[i], 4);
    uint16_t b[2][M * LD];
    uint8_t u[2][M * LD];
    float s[2][M];
    for (int portable = 0; portable < 2; portable++) {
        hark_precision_force_portable(portable);
        hark_lowp_to_bf16(b[portable], LD, x, K, M, K);
        hark_lowp_to_u8(u[portable], LD, s[portable], finite, K, M, K);
    }
    hark_precision_force_portable(0);
    CHECK(memcmp(b[0], b[1], sizeof b[0]) == 0, "bf16 conversions differ");
    CHECK(memcmp(u[0], u[1], sizeof u[0]) == 0 && memcmp(s[0], s[1], sizeof s[0]) == 0,
          "u8 conversions differ");
    CHECK(b[1][1] == 0x3f80 && b[1][5] == 0x3f82 && b[1][LD - 1] == 0 && u[1][LD - 1] == 128,
          "ties to even and padding: %04x %04x", b[1][1], b[1][5]);
}

/* Attention in bf16 against f32: q, k rounded to bf16 move each score by at
 * most E = 2^-7 scale sum_d |q_d k_d|, which moves each probability by a factor
 * within e^{+-2E}; rounding p and v adds 2^-8 each: |err| <= (2^-7 + e^{2E} - 1)
 * max |v| (+ the f32 sums' 1e-5). */
static void test_attention16(void)
{
    if (!hark_attn16_available()) {
        printf("attention bf16: not with the %s kernels on this CPU\n", hark_kernels_name());
        return;
    }
    const int shapes[][3] = {{2, 1, 1}, {7, 5, 2}, {130, 301, 3}, {13, 13, 2}, {64, 64, 1}, {129, 67, 1}};
    double worst = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int nq = shapes[s][0], nk = shapes[s][1], heads = shapes[s][2], d = heads * 64;
        float *q = malloc(sizeof(float) * nq * d), *kv = malloc(sizeof(float) * 2 * nk * d);
        float *a = malloc(sizeof(float) * nq * d), *b = malloc(sizeof(float) * nq * d);
        float *scratch = malloc(sizeof(float) * hark_attention_scratch(nq, nk, heads));
        double e = 0, vmax = 0;
        for (int i = 0; i < nq * d; i++)
            q[i] = 4 * frand();
        for (int i = 0; i < 2 * nk * d; i++)
            kv[i] = frand();
        for (int i = 0; i < nk * d; i++)
            vmax = fmax(vmax, fabsf(kv[nk * d + i]));
        for (int i = 0; i < nq; i++) /* the largest E of any score (all heads at once: larger) */
            for (int j = 0; j < nk; j++) {
                double sum = 0;
                for (int c = 0; c < d; c++)
                    sum += fabs((double)q[i * d + c] * kv[j * d + c]);
                e = fmax(e, ldexp(1, -7) * sum / 8.0); /* scale 1/sqrt(64) */
            }
        hark_attention_at(a, q, kv, kv + nk * d, nq, nk, d, heads, -1, scratch, HARK_PREC_BF16);
        hark_attention(b, q, kv, kv + nk * d, nq, nk, d, heads, -1, scratch);
        double bound = (ldexp(1, -7) + expm1(2 * e)) * vmax + 1e-5;
        worst = fmax(worst, max_abs_diff(a, b, (size_t)nq * d) / bound);
        free(q), free(kv), free(a), free(b), free(scratch);
    }
    printf("attention bf16 (%s): worst error %.2f of its bound against f32\n", hark_kernels_name(),
           worst);
    CHECK(worst <= 1.0, "bf16 attention error %.3f of its bound", worst);
}

/* Error bounds of the lower precisions against exact sums, per output y_ir =
 * sum_k x_ik w_rk with A = sum_k |x_ik| |w_rk|:
 *   bf16: x and w each rounded to 8 significant bits (relative 2^-8), so each
 *         product is off by at most 2^-7 of itself, and f32 sums add k 2^-24:
 *         |err| <= (2^-7 + (k + 2) 2^-24) A;
 *   int8: x off by at most half its row's step sx (max |x_i| / 127), w by half
 *         its row's step sw: |err| <= sum_k (|x_ik| sw + |w_rk| sx + sx sw / 2) / 2,
 *         plus a few f32 roundings of the result (2^-20 A);
 * and for both, the rounding of the bias's addition, 2^-23 (|b_r| + A).
 * The vector kernels against their C twins: int8 the same bits, bf16 within
 * the summation's k 2^-23 A. */
static double lowp_bound(hark_prec prec, const float *x, const float *w, int k, double *mag)
{
    double a = 0, sx = 0, sw = 0, sum_x = 0, sum_w = 0;
    for (int c = 0; c < k; c++) {
        a += fabs((double)x[c] * w[c]);
        sx = fmax(sx, fabsf(x[c])), sw = fmax(sw, fabsf(w[c]));
        sum_x += fabsf(x[c]), sum_w += fabsf(w[c]);
    }
    *mag = a;
    if (prec == HARK_PREC_BF16)
        return (ldexp(1, -7) + (k + 2) * ldexp(1, -24)) * a;
    sx /= 127, sw /= 127; /* the steps */
    return (sum_x * sw + sum_w * sx + k * sx * sw / 2) / 2 + ldexp(1, -20) * a;
}

typedef struct lowp_errors {
    double vs_exact;    /* worst error / its bound against double sums */
    double vs_portable; /* worst |native - C| / A */
    int same_bits;      /* int8: native and C agree bit for bit */
} lowp_errors;

/* One shape: packed product (bias, no GELU) against double sums, and the
 * native kernels (with GELU) against the portable C. */
static void lowp_case(lowp_errors *e, hark_prec prec, hark_dtype t, int m, int rows, int cols)
{
    float *wf, *x = malloc(sizeof(float) * m * cols), *bias = malloc(sizeof(float) * rows);
    float *y = malloc(sizeof(float) * m * rows), *yc = malloc(sizeof(float) * m * rows);
    void *w = random_weights(t, rows, cols, &wf);
    for (int i = 0; i < m * cols; i++)
        x[i] = frand() * (i % 7 == 0 ? 4.0f : 1.0f); /* some outliers, as activations have */
    for (int r = 0; r < rows; r++)
        bias[r] = frand();
    hark_weight hw = {w, t, rows, cols};
    hark_packed p;
    CHECK(hark_pack(&p, &hw, prec) == 0, "pack");
    hark_linear_packed(y, x, m, &p, bias, 0, NULL);
    for (int i = 0; i < m; i++)
        for (int r = 0; r < rows; r++) {
            double exact = bias[r], mag;
            for (int c = 0; c < cols; c++)
                exact += (double)x[i * cols + c] * wf[r * cols + c];
            double bound = lowp_bound(prec, x + i * cols, wf + r * cols, cols, &mag);
            bound += ldexp(1, -23) * (fabs(bias[r]) + mag) + 1e-30;
            e->vs_exact = fmax(e->vs_exact, fabs(y[i * rows + r] - exact) / bound);
        }
    hark_linear_packed(y, x, m, &p, bias, 1, NULL);
    hark_precision_force_portable(1);
    hark_linear_packed(yc, x, m, &p, bias, 1, NULL);
    hark_precision_force_portable(0);
    e->same_bits &= memcmp(y, yc, sizeof(float) * m * rows) == 0;
    for (int i = 0; i < m; i++)
        for (int r = 0; r < rows; r++) {
            double mag;
            lowp_bound(prec, x + i * cols, wf + r * cols, cols, &mag);
            e->vs_portable = fmax(e->vs_portable, fabs(y[i * rows + r] - yc[i * rows + r]) / (mag + 1e-30));
        }
    hark_packed_free(&p);
    free(w), free(wf), free(x), free(bias), free(y), free(yc);
}

/* Odd shapes and tails: rows under 16 and past a panel, columns odd (padded to
 * pairs, quads), past a slice (256 bf16, 512 int8), rows of x past a tile
 * (12) and a chunk (192). */
static void test_lowp(hark_prec prec)
{
    const int shapes[][3] = {/* m, rows, cols */
                             {1, 1, 1},     {3, 5, 7},      {13, 33, 19},  {25, 65, 130},
                             {200, 47, 513}, {7, 32, 1030}, {195, 70, 1100}, {12, 17, 2053}};
    lowp_errors e = {0, 0, 1};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        lowp_case(&e, prec, s % 2 ? HARK_F16 : HARK_F32, shapes[s][0], shapes[s][1], shapes[s][2]);
    const char *how = hark_precision_native(prec) ? "native" : "portable C";
    printf("%s products (%s, %s kernels): worst error %.2f of its bound, %.2g of sum |x w| from "
           "the C\n", hark_precision_name(prec), how, hark_kernels_name(), e.vs_exact, e.vs_portable);
    CHECK(e.vs_exact <= 1.0, "%s error %.3f of its bound", hark_precision_name(prec), e.vs_exact);
    if (prec == HARK_PREC_INT8)
        CHECK(e.same_bits, "int8 vector and C kernels differ");
    else
        CHECK(e.vs_portable <= 2100 * ldexp(1, -23), "bf16 vector and C differ by %g", e.vs_portable);
}

/* The same products on 1 and 3 threads: the same bits. */
static void test_lowp_threads(hark_prec prec)
{
    int m = 301, rows = 300, cols = 200;
    float *wf, *x = malloc(sizeof(float) * m * cols);
    float *one = malloc(sizeof(float) * m * rows), *three = malloc(sizeof(float) * m * rows);
    void *w = random_weights(HARK_F16, rows, cols, &wf);
    for (int i = 0; i < m * cols; i++)
        x[i] = frand();
    hark_weight hw = {w, HARK_F16, rows, cols};
    hark_packed p;
    CHECK(hark_pack(&p, &hw, prec) == 0, "pack");
    hark_linear_packed(one, x, m, &p, NULL, 1, NULL);
    hark_pool *pool = hark_pool_new(3);
    hark_pool_use(pool);
    hark_linear_packed(three, x, m, &p, NULL, 1, NULL);
    hark_pool_use(NULL);
    hark_pool_free(pool);
    CHECK(memcmp(one, three, sizeof(float) * m * rows) == 0, "%s: 1 and 3 threads differ",
          hark_precision_name(prec));
    hark_packed_free(&p);
    free(w), free(wf), free(x), free(one), free(three);
}

/* Logits of case c: coarse values (many ties), -inf entries, NaN placed
 * where it matters, ascending runs (the top-k's worst case), all -inf, signed
 * zeros, NaN scattered. */
static void vocab_case(float *x, int n, int c)
{
    for (int i = 0; i < n; i++) {
        float v = roundf(frand() * 8) / 8;
        x[i] = c == 1 && frand() < 0 ? -INFINITY : c == 4 ? (float)i / 16 : c == 5 ? -INFINITY : v;
    }
    if (c == 2)
        x[n / 2] = NAN; /* NaN amid the values, and where the largest would be */
    if (c == 3)
        x[0] = NAN;
    if (c == 6 && n > 1)
        x[0] = -0.0f, x[n - 1] = 0.0f, x[n / 2] = 5; /* signed zeros, one clear winner */
    for (int i = 0; c == 7 && i < n; i++) /* NaN here and there, in the list and out */
        x[i] = frand() > 0.8f ? NAN : x[i];
}

/* The vocabulary passes against the portable loops: the same index, value and
 * list exactly (the error bound is zero), on lengths with every tail. */
static void test_vocab(void)
{
    const int lengths[] = {1, 2, 15, 16, 17, 33, 1000, 51864}, ks[] = {1, 2, 6, 65};
    int cases = 0, wrong = 0;
    float *x = malloc(sizeof(float) * 51864);
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
        for (int c = 0; c < 8; c++) {
            int n = lengths[l], top[65], slow_top[65];
            vocab_case(x, n, c);
            float mx = hark_vocab_max(x, n);
            int am = hark_vocab_argmax(x, n);
            hark_kernels_force_portable(1);
            wrong += mx != hark_vocab_max(x, n) || am != hark_vocab_argmax(x, n);
            hark_kernels_force_portable(0);
            for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++, cases++) {
                int got = hark_vocab_top_k(x, n, ks[k], top);
                hark_kernels_force_portable(1);
                int want = hark_vocab_top_k(x, n, ks[k], slow_top);
                hark_kernels_force_portable(0);
                wrong += got != want || memcmp(top, slow_top, sizeof(int) * (size_t)want) != 0;
            }
        }
    free(x);
    printf("vocabulary max / argmax / top-k (%s): %d of %d cases differ from the loops\n",
           hark_kernels_name(), wrong, cases);
    CHECK(wrong == 0, "%d vocabulary cases differ", wrong);
}

int main(void)
{
    /* every kernel set this CPU runs, fastest first, against the portable twins */
    const char *sets[] = {"AVX-512", "AVX2+F16C+FMA"};
    for (int i = 0; i < 2; i++) {
        if (hark_kernels_select(sets[i]) != 0) {
            SKIP("%s kernels: not on this CPU", sets[i]);
            continue;
        }
        test_widen();
        test_matvec(HARK_F16);
        test_matvec(HARK_BF16);
        test_matvec_quant();
        test_matvec_q8();
        test_linear_q8();
        if (strcmp(sets[i], "AVX-512") == 0) { /* and without VNNI's dpbusd */
            hark_q8_refuse_vnni(1);
            test_matvec_q8();
            hark_q8_refuse_vnni(0);
        }
        test_softmax_gelu();
        test_rows();
        test_vecmat();
        test_linear_paths();
        test_linear_gelu();
        test_attention();
        test_gemm512();
        test_attention16();
        test_lowp_convert();
        for (hark_prec p = HARK_PREC_BF16; p <= HARK_PREC_INT8; p++) {
            test_lowp(p);
            test_lowp_threads(p);
        }
        test_vocab();
    }
    return check_summary("kernels");
}
