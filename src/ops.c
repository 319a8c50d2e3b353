/* Numeric kernels: matrix products on OpenBLAS, LayerNorm, GELU, softmax,
 * attention.  Weights stay in their stored type; f16/bf16 rows are widened to
 * f32 a block at a time so no second full-size copy of a model ever exists. */
#include "ops.h"
#include "kernels.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { WIDEN_ROWS = 64 };

static void linear_f32(float *y, const float *x, int m, const float *w, int rows, int cols,
                       int ldy)
{
    if (m == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, rows, cols, 1.0f, w, cols, x, 1, 0.0f, y, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, rows, cols, 1.0f, x, cols, w,
                    cols, 0.0f, y, ldy);
}

void hark_linear(float *y, const float *x, int m, const hark_weight *w, const float *b)
{
    if ((w->type == HARK_F16 || w->type == HARK_BF16) && m <= HARK_MAX_BATCH) {
        /* bandwidth-bound: each stored weight is read once for all m vectors */
        hark_matvec16(y, x, m, w->data, w->type, w->rows, w->cols, 0, w->rows);
    } else if (w->type == HARK_F32) {
        linear_f32(y, x, m, (const float *)w->data, w->rows, w->cols, w->rows);
    } else {
        /* Widen a block of rows, multiply, move on: bounded scratch. */
        float *block = malloc(sizeof(float) * WIDEN_ROWS * (size_t)w->cols);
        float *ycol = m == 1 ? NULL : y;
        size_t row = hark_row_bytes(w->type, (size_t)w->cols);
        for (int r0 = 0; r0 < w->rows; r0 += WIDEN_ROWS) {
            int nr = w->rows - r0 < WIDEN_ROWS ? w->rows - r0 : WIDEN_ROWS;
            hark_to_f32(block, (const char *)w->data + (size_t)r0 * row, w->type,
                        (size_t)nr * w->cols);
            if (m == 1)
                linear_f32(y + r0, x, 1, block, nr, w->cols, nr);
            else
                linear_f32(ycol + r0, x, m, block, nr, w->cols, w->rows);
        }
        free(block);
    }
    if (b)
        hark_add_bias(y, b, m, w->rows);
}

void hark_add_bias(float *y, const float *b, int m, int n)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            y[(size_t)i * n + j] += b[j];
}

void hark_add(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] += x[i];
}

void hark_layer_norm(float *y, const float *x, int m, int d, const float *g, const float *b)
{
    for (int i = 0; i < m; i++) {
        const float *xr = x + (size_t)i * d;
        float *yr = y + (size_t)i * d;
        double mean = 0, var = 0;
        for (int j = 0; j < d; j++)
            mean += xr[j];
        mean /= d;
        for (int j = 0; j < d; j++)
            var += (xr[j] - mean) * (xr[j] - mean);
        float inv = (float)(1.0 / sqrt(var / d + 1e-5));
        for (int j = 0; j < d; j++)
            yr[j] = (float)(xr[j] - mean) * inv * g[j] + b[j];
    }
}

void hark_gelu(float *x, size_t n)
{
    hark_gelu_fast(x, n);
}

void hark_softmax_rows(float *x, int m, int n)
{
    for (int i = 0; i < m; i++)
        hark_softmax_row(x + (size_t)i * n, n);
}

/* scratch must hold nq * nk floats. */
void hark_attention(float *out, const float *q, const float *k, const float *v, int nq, int nk,
                    int d, int n_head, int causal_offset, float *scratch)
{
    int dh = d / n_head;
    float scale = 1.0f / sqrtf((float)dh);
    for (int h = 0; h < n_head; h++) {
        if (nq == 1) { /* one query (a decoding step): matrix-vector, no packing */
            cblas_sgemv(CblasRowMajor, CblasNoTrans, nk, dh, scale, k + h * dh, d, q + h * dh, 1,
                        0.0f, scratch, 1);
            if (causal_offset >= 0)
                for (int j = causal_offset + 1; j < nk; j++)
                    scratch[j] = -INFINITY;
            hark_softmax_row(scratch, nk);
            cblas_sgemv(CblasRowMajor, CblasTrans, nk, dh, 1.0f, v + h * dh, d, scratch, 1, 0.0f,
                        out + h * dh, 1);
            continue;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, nk, dh, scale, q + h * dh, d,
                    k + h * dh, d, 0.0f, scratch, nk);
        if (causal_offset >= 0)
            for (int i = 0; i < nq; i++)
                for (int j = i + causal_offset + 1; j < nk; j++)
                    scratch[(size_t)i * nk + j] = -INFINITY;
        hark_softmax_rows(scratch, nq, nk);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, dh, nk, 1.0f, scratch, nk,
                    v + h * dh, d, 0.0f, out + h * dh, d);
    }
}
