/* SIMD kernels with run-time dispatch (AVX-512, AVX2+F16C+FMA, portable C). */
#ifndef HARK_KERNELS_H
#define HARK_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* Converts n stored values of type t starting at src (any alignment) to f32
 * (convert.c). */
void hark_to_f32(float *dst, const void *src, hark_dtype t, size_t n);

/* The arithmetic of a product: f32, bf16 or int8 (the lower ones: lowp.c). */
typedef enum { HARK_PREC_F32, HARK_PREC_BF16, HARK_PREC_INT8 } hark_prec;

enum { HARK_MAX_BATCH = 8 }; /* vectors multiplied per weight-row read */

/* f16 -> f32.  Kernels taking weights accept any alignment. */
void hark_widen_f16(float *dst, const uint16_t *src, size_t n);
/* y[j][r] = W[r] . x[j] for rows r0 <= r < r1, j < m <= HARK_MAX_BATCH, W f16 or bf16
 * [rows][cols]; y is [m][rows]. */
void hark_matvec16(float *y, const float *x, int m, const void *w, hark_dtype t, int rows,
                   int cols, int r0, int r1);
/* The same for block-quantised W (cols a multiple of 32). */
void hark_matvec_q(float *y, const float *x, int m, const void *w, hark_dtype t, int rows,
                   int cols, int r0, int r1);
/* Activations x[m][cols] quantised in blocks of 32 as ggml's q8_0 (q8dot.c;
 * max|x| / 127, nearest even, the scale kept in f32): qs[m][cols] bytes, and
 * each block's scale repeated in eight floats, d8[m][cols / 4]; s8 (same
 * layout, or NULL) gets an eighth of each block's sum of x in each place, which
 * q4_1 and q5_1 weights need. */
void hark_q8_quantize(int8_t *qs, float *d8, float *s8, const float *x, int m, int cols);
/* y[j][r] = W[r] . x[j] for block-quantised W of type t, in integers per block
 * (cols a multiple of 32); s8 is read for q4_1 and q5_1 only. */
void hark_matvec_q8(float *y, const int8_t *xq, const float *d8, const float *s8, int m,
                    const void *w, hark_dtype t, int rows, int cols, int r0, int r1);
/* Tests: 1 makes the AVX-512 path use maddubs + madd even where VNNI is there. */
void hark_q8_refuse_vnni(int on);
void hark_softmax_row(float *x, int n);
void hark_gelu_fast(float *x, size_t n);
/* y[j][c] = sum_r x[j][r] W[r][c] for m <= HARK_MAX_BATCH vectors x[m][rows], W f16
 * [rows][cols]: short rows (a head's d_head) without a reduction per output.
 * y's rows are ldy >= cols floats apart. */
void hark_vecmat16(float *y, size_t ldy, const float *x, int m, const uint16_t *w, int rows,
                   int cols);
/* f32 -> f16, round to nearest even (the same bits as hark_f32_to_f16). */
void hark_narrow_f16(uint16_t *dst, const float *src, size_t n);
/* log(sum(exp(x))), -inf entries ignored (-inf if all are). */
double hark_log_sum_exp(const float *x, size_t n);
void hark_add_fast(float *y, const float *x, size_t n);
/* A product's epilogue on one output row: y += bias (when not NULL), then GELU
 * (when gelu); shared by every product path so that all give the same bits. */
void hark_bias_gelu_row(float *y, size_t n, const float *bias, int gelu);
/* LayerNorm (eps 1e-5) of one row of d values; y may alias x. */
void hark_layer_norm_row(float *y, const float *x, int d, const float *g, const float *b);
/* Which kernels run ("AVX-512", ...): the best this CPU has, or the set that
 * HARK_KERNELS names ("portable", "avx2"), or the portable ones when forced (tests). */
const char *hark_kernels_name(void);
/* The instruction level of that set, for the kernels kept outside its table
 * (attn64.c, gemm512.c, q8dot.c) to pick their own paths by. */
typedef enum { HARK_LEVEL_PORTABLE, HARK_LEVEL_AVX2, HARK_LEVEL_AVX512 } hark_kernel_level;
hark_kernel_level hark_kernels_level(void);
void hark_kernels_force_portable(int on);
/* Tests: makes the named kernel set ("AVX2+F16C+FMA", ...) the one in use, if this
 * CPU runs it; returns -1 otherwise. */
int hark_kernels_select(const char *name);

/* Runs CALL with M a compile-time constant equal to m (1..8; larger m as 8), so that
 * the always-inline kernels it calls keep their m accumulators in registers. */
#define WITH_CONSTANT_M(m, CALL)                                                     \
    switch (m) {                                                                     \
    case 1: { enum { M = 1 }; CALL; } break;                                         \
    case 2: { enum { M = 2 }; CALL; } break;                                         \
    case 3: { enum { M = 3 }; CALL; } break;                                         \
    case 4: { enum { M = 4 }; CALL; } break;                                         \
    case 5: { enum { M = 5 }; CALL; } break;                                         \
    case 6: { enum { M = 6 }; CALL; } break;                                         \
    case 7: { enum { M = 7 }; CALL; } break;                                         \
    default: { enum { M = 8 }; CALL; } break;                                        \
    }

/* CALL in a switch over the block types t, with T the constant type in each case
 * (simd.c, q8dot.c: the unpacking then has no branches). */
#define WITH_CONSTANT_T(t, CALL)                                                     \
    switch (t) {                                                                     \
    case HARK_Q4_0: { const hark_dtype T = HARK_Q4_0; CALL; } break;                 \
    case HARK_Q4_1: { const hark_dtype T = HARK_Q4_1; CALL; } break;                 \
    case HARK_Q5_0: { const hark_dtype T = HARK_Q5_0; CALL; } break;                 \
    case HARK_Q5_1: { const hark_dtype T = HARK_Q5_1; CALL; } break;                 \
    default: { const hark_dtype T = HARK_Q8_0; CALL; } break;                        \
    }

/* TILE(args..., R) with R the compile-time constant 1..6 (or 1..12) equal to
 * rows: register tiles take their row count as a constant, so that their
 * accumulators stay in registers (attn64.c, gemm512.c). */
#define HARK_ROWS_CASES_6(tile, ...)                                                     \
    case 6: tile(__VA_ARGS__, 6); break;                                                 \
    case 5: tile(__VA_ARGS__, 5); break;                                                 \
    case 4: tile(__VA_ARGS__, 4); break;                                                 \
    case 3: tile(__VA_ARGS__, 3); break;                                                 \
    case 2: tile(__VA_ARGS__, 2); break;                                                 \
    default: tile(__VA_ARGS__, 1); break;
#define HARK_BY_ROWS_6(rows, tile, ...)                                                  \
    switch (rows) { HARK_ROWS_CASES_6(tile, __VA_ARGS__) }
#define HARK_BY_ROWS_12(rows, tile, ...)                                                 \
    switch (rows) {                                                                      \
    case 12: tile(__VA_ARGS__, 12); break;                                               \
    case 11: tile(__VA_ARGS__, 11); break;                                               \
    case 10: tile(__VA_ARGS__, 10); break;                                               \
    case 9: tile(__VA_ARGS__, 9); break;                                                 \
    case 8: tile(__VA_ARGS__, 8); break;                                                 \
    case 7: tile(__VA_ARGS__, 7); break;                                                 \
    HARK_ROWS_CASES_6(tile, __VA_ARGS__)                                                 \
    }

/* Attention of one head of width 64 in register tiles (attn64.c): available
 * when the AVX-512 or the AVX2 kernel set is the one in use.  Keys are padded to
 * hark_attn64_keys(nk) (a multiple of 64); score rows have that stride. */
enum { HARK_ATTN64_HEAD = 64 }; /* the head width the tiles take */
int hark_attn64_available(void);
int hark_attn64_keys(int nk);
/* Keys k[nk] (row stride ldk) into kt (64 * hark_attn64_keys(nk) floats), zero-padded. */
void hark_attn64_pack_keys(float *kt, const float *k, int ldk, int nk);
/* Values v[nk] (row stride ldv) into contiguous rows vp[nk][64]. */
void hark_attn64_pack_values(float *vp, const float *v, int ldv, int nk);
/* s[i][j] = scale * q_i . k_j for i < nq (q rows at stride ldq), every padded j. */
void hark_attn64_scores(float *s, const float *q, int ldq, int nq, const float *kt, int nk,
                        float scale);
/* out_i (stride ldo) = sum_{j < nk} p[i][j] vp_j, p as s above. */
void hark_attn64_mix(float *out, int ldo, const float *p, int nq, const float *vp, int nk);

/* The same products in bf16 (attn16.c; AVX512_BF16 only): the encoder's
 * attention at a lower precision.  Keys packed in blocks of 64 as [32 pairs of
 * dimensions][64 keys][2] (hark_attn16_keys_u16(nk) bf16 values), values as
 * [pairs of keys][64][2] (as many); the padding is zero. */
int hark_attn16_available(void);
size_t hark_attn16_keys_u16(int nk);
void hark_attn16_pack_keys(uint16_t *kb, const float *k, int ldk, int nk);
void hark_attn16_pack_values(uint16_t *vb, const float *v, int ldv, int nk);
/* s[i][j] (row stride lds) = scale * q_i . k_j, q rounded to bf16. */
void hark_attn16_scores(float *s, int lds, const float *q, int ldq, int nq, const uint16_t *kb,
                        int nk, float scale);
/* out_i = sum_{j < nk} p[i][j] v_j; p (rows at stride lds floats) is rounded to
 * bf16 in place, each row's bf16 values at its start. */
void hark_attn16_mix(float *out, int ldo, float *p, int lds, int nq, const uint16_t *vb, int nk);

/* Products y = x . W^T in AVX-512 register tiles (gemm512.c): available when the
 * AVX-512 kernel set is the one in use.  Rows [r0, r0 + nr) of W [rows][k], in
 * any stored type, are packed first into hark_gemm512_packed_floats(nr, k) floats
 * of panels of HARK_GEMM512_PANEL rows. */
enum { HARK_GEMM512_PANEL = 32 };
int hark_gemm512_available(void);
size_t hark_gemm512_packed_floats(int nr, int k);
void hark_gemm512_pack(float *bp, const void *w, hark_dtype t, int r0, int nr, int k);
/* y[i][r] (row stride ldy) = x_i . w_r (+ bias[r] when not NULL; then GELU when
 * gelu) for i < m, r < nr; x [m][k] contiguous. */
void hark_gemm512(float *y, int ldy, const float *x, int m, int k, const float *bp, int nr,
                  const float *bias, int gelu);

/* The search's passes over a vocabulary of logits x[n] (vocab.c), each the
 * exact answer of a plain loop: the largest non-NaN value (-inf if none); the
 * first index of it (0 when x[0] is NaN: a NaN never wins); the k largest
 * entries that are not -inf into top (by value, ties to the lower id), their
 * count returned. */
float hark_vocab_max(const float *x, int n);
int hark_vocab_argmax(const float *x, int n);
int hark_vocab_top_k(const float *x, int n, int k, int *top);

/* ------------------------------------------------------------ operations */
/* The few numeric kernels hark needs.  They know nothing about Whisper. */

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
/* Products of groups of rows, each group as if alone: group g is x's next m[g]
 * rows, and product k's outputs for it (at the same rows of p[k].y) are the bits
 * that hark_linear_many (gelu, n = 1: hark_linear_gelu) gives for those rows
 * alone, whatever the other groups.  Stored-type weights, m[g] <= HARK_MAX_BATCH:
 * the weights come from memory once for all groups (a step of sequences of
 * several files, hark_decode_groups). */
void hark_linear_groups(const hark_product *p, int n, const float *x, const int *m, int groups,
                        int gelu);
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
/* The same with its products in bf16 (attn16.c) when prec is lower than f32, the
 * CPU has AVX512_BF16 and the heads are 64 wide; else hark_attention. */
void hark_attention_at(float *out, const float *q, const float *k, const float *v, int nq, int nk,
                       int d, int n_head, int causal_offset, float *scratch, hark_prec prec);
void hark_add(float *y, const float *x, size_t n);

/* ------------------------------------------------------------ lower precisions */
/* The encoder's products in bf16 or int8 (lowp.c, lowp512.c): the weights packed
 * once, the activations converted per block of rows, sums in f32 (bf16) or int32
 * (int8).  AVX512_BF16's vdpbf16ps and AVX512_VNNI's vpdpbusd where the CPU has
 * them and the AVX-512 set is in use; elsewhere portable C doing the same
 * arithmetic (int8: the same bits; bf16: the same products, summed in another
 * order), slower than f32. */
enum { HARK_PACK_PANEL = 32 }; /* weight rows a panel interleaves */
typedef struct hark_packed {
    hark_prec prec;
    int rows, cols, kp; /* kp: cols padded to pairs (bf16) or quads (int8) with zeros */
    /* panels of 32 rows (rows past the last zero): bf16 [kp / 2][32][2] uint16,
     * int8 [kp / 4][32][4] int8 */
    void *data;
    float *scale;  /* int8: w[r][k] ~ q[r][k] * scale[r], scale = max |w[r]| / 127 */
    int32_t *comp; /* int8: 128 * sum_k q[r][k], what the activations' u8 offset adds */
} hark_packed;
/* Packs w (any stored type) for prec (bf16 or int8): 0, or HARK_ERR_NOMEM. */
int hark_pack(hark_packed *p, const hark_weight *w, hark_prec prec);
void hark_packed_free(hark_packed *p);
size_t hark_packed_bytes(const hark_packed *p);
/* Whether this CPU runs prec's instructions with the kernel set in use (f32: 1). */
int hark_precision_native(hark_prec prec);
/* Tests: 1 makes the lower precisions run their portable C even where native. */
void hark_precision_force_portable(int on);
const char *hark_precision_name(hark_prec prec); /* "f32", "bf16", "int8" */
/* The precision the calling thread's encoder products run in (as hark_pool_use):
 * f32 unless set. */
void hark_precision_use(hark_prec prec);
hark_prec hark_precision_current(void);
/* hark_params.precision (enum hark_precision; AUTO decided on this CPU) -> hark_prec;
 * a value out of range: f32. */
hark_prec hark_precision_resolve(int asked);
/* Activations x [m][p->cols] converted for p's products, once for all its
 * rows: into xc (hark_lowp_x_bytes) and, for int8, each row's scale into sx[m]. */
size_t hark_lowp_x_bytes(const hark_packed *p, int m);
void hark_lowp_convert(void *xc, float *sx, const float *x, int m, const hark_packed *p);
/* y[i][r] (row stride ldy) = x_i . w_r for i < m and rows [r0, r0 + nr) of p
 * (r0 a multiple of 32), then + bias[r] (bias points at r0's, or NULL) and GELU
 * when gelu; xc, sx: the m rows as hark_lowp_convert left them.  Each output's
 * sum runs over k in one fixed order, so any split of rows and outputs gives
 * the same bits. */
void hark_lowp_product(float *y, int ldy, const void *xc, const float *sx, int m,
                       const hark_packed *p, int r0, int nr, const float *bias, int gelu);
/* The chunk kernels behind it (lowp512.c: native; 0 when this build or CPU has
 * none): y (+)= x . panels over kc columns from c0, x already converted, mc rows
 * at stride ldx; int8 sums land in y's memory as int32. */
int hark_lowp512_bf16(float *y, int ldy, const uint16_t *x, int ldx, int mc, const uint16_t *panels,
                      int kp, int nr);
int hark_lowp512_int8(int32_t *y, int ldy, const uint8_t *x, int ldx, int mc, const int8_t *panels,
                      int kp, int nr);
/* Activation rows converted as the kernels take them (vectorised where the
 * AVX-512 set runs, the same bits as the C): bf16 by round to nearest even;
 * int8 as u8 = round(x / s) + 128 with s = max |x_i| / 127 per row, in sx. */
void hark_lowp_to_bf16(uint16_t *dst, int ldd, const float *x, int ldx, int m, int k);
void hark_lowp_to_u8(uint8_t *dst, int ldd, float *sx, const float *x, int ldx, int m, int k);
/* Their AVX-512 forms (lowp512.c; 0 when this build has none). */
int hark_lowp512_to_bf16(uint16_t *dst, int ldd, const float *x, int ldx, int m, int k);
int hark_lowp512_to_u8(uint8_t *dst, int ldd, float *sx, const float *x, int ldx, int m, int k);
/* int32 sums (in y's memory) -> f32: (sum - comp[r]) * sx[i] * scale[r]. */
int hark_lowp512_int8_finish(float *y, int ldy, int mc, const float *sx, const float *scale,
                             const int32_t *comp, int nr);
/* Products by a packed weight over the thread pool (ops.c): as hark_linear (then
 * GELU when gelu).  scratch: hark_linear_packed_scratch(p, m) bytes, 64-byte
 * aligned, for x converted (a fresh allocation of megabytes each time is pages
 * faulted in each time: a third of the int8 product's time); NULL: allocated. */
size_t hark_linear_packed_scratch(const hark_packed *p, int m);
void hark_linear_packed(float *y, const float *x, int m, const hark_packed *p, const float *b,
                        int gelu, void *scratch);
/* Several of them on one input, converted once: products of one precision and
 * width (the encoder's q, k, v: converting h three times was a sixth of bf16's
 * encoder, every pass a read of x from beyond L2). */
typedef struct hark_packed_product {
    float *y;
    const hark_packed *w;
    const float *b;
    int gelu;
} hark_packed_product;
void hark_linear_packed_many(const hark_packed_product *p, int n, const float *x, int m,
                             void *scratch);
/* Its two halves, for products whose outputs are used in between: x converted
 * into scratch for p's precision and width, then products over that. */
void hark_linear_packed_convert(const float *x, int m, const hark_packed *p, void *scratch);
void hark_linear_packed_run(const hark_packed_product *p, int n, int m, void *scratch);

#endif
