/* The few numeric kernels hark needs.  They know nothing about Whisper. */
#ifndef HARK_OPS_H
#define HARK_OPS_H

#include "internal.h"

/* y[m][w->rows] = x[m][w->cols] . w^T (+ b when not NULL). */
void hark_linear(float *y, const float *x, int m, const hark_weight *w, const float *b);
/* The same, then exact (erf) GELU, each tile while it is in cache. */
void hark_linear_gelu(float *y, const float *x, int m, const hark_weight *w, const float *b);
/* Several products of the same input x[m][cols] (y = x W^T + b each), as one
 * job where they can be (one stored type and width, m <= HARK_MAX_BATCH), else
 * one after another; results the same either way. */
enum { HARK_LINEAR_MANY = 4 };
typedef struct hark_product {
    float *y;
    const hark_weight *w;
    const float *b;
} hark_product;
void hark_linear_many(const hark_product *p, int n, const float *x, int m);
/* Row-wise LayerNorm (eps 1e-5) of x[m][d] into y (may alias x). */
void hark_layer_norm(float *y, const float *x, int m, int d, const float *g, const float *b);
/* Softmax of each row of x[m][n] in place. */
void hark_softmax_rows(float *x, int m, int n);
/* Floats of scratch hark_attention needs with the current thread pool. */
size_t hark_attention_scratch(int nq, int nk, int n_head);
/* out[nq][d] = multi-head attention of q[nq][d] over k,v[nk][d] (row stride d);
 * causal_offset >= 0 masks key j > i + causal_offset; -1 for no mask. */
void hark_attention(float *out, const float *q, const float *k, const float *v,
                    int nq, int nk, int d, int n_head, int causal_offset, float *scratch);
void hark_add(float *y, const float *x, size_t n);

#endif
