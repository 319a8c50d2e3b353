/* The encoder's products in bf16 and int8: weights packed once into panels
 * of 32 rows, activations converted a block of MC rows at a time, and the
 * portable C twins of lowp512.c's kernels (tests compare the two; a CPU
 * without the instructions runs these when a precision is asked for by name).
 * int8 is W8A8 with dynamic scales: each weight row by its max |w| / 127, each
 * activation row by its own, stored as u8 with an offset of 128 (vpdpbusd
 * multiplies u8 by s8) whose share, 128 * sum_k q[r][k], comes off at the end.
 * The int32 sums are exact, so the C and the vector kernels give the same bits. */
#include "kernels/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { PANEL = HARK_PACK_PANEL, MC = 192, KC = 256 }; /* KC: lowp512.c's bf16 slices */

static _Thread_local hark_prec thread_precision = HARK_PREC_F32;
static int portable_forced;

void hark_precision_use(hark_prec prec) { thread_precision = prec; }
hark_prec hark_precision_current(void) { return thread_precision; }
void hark_precision_force_portable(int on) { portable_forced = on; }

const char *hark_precision_name(hark_prec prec)
{
    return prec == HARK_PREC_BF16 ? "bf16" : prec == HARK_PREC_INT8 ? "int8" : "f32";
}

int hark_precision_native(hark_prec prec)
{
    if (prec == HARK_PREC_F32)
        return 1;
    if (portable_forced || hark_kernels_level() != HARK_LEVEL_AVX512)
        return 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return prec == HARK_PREC_BF16 ? __builtin_cpu_supports("avx512bf16")
                                  : __builtin_cpu_supports("avx512vnni");
#else
    return 0;
#endif
}

/* What AUTO runs where the CPU has its instructions: the fastest precision
 * whose tokens equal f32's on hark's checks (docs/perf-log.md, issue 50). */
static const hark_prec AUTO_CHOICE = HARK_PREC_F32;

hark_prec hark_precision_resolve(int asked)
{
    if (asked == HARK_PRECISION_BF16)
        return HARK_PREC_BF16;
    if (asked == HARK_PRECISION_INT8)
        return HARK_PREC_INT8;
    if (asked == HARK_PRECISION_AUTO && hark_precision_native(AUTO_CHOICE))
        return AUTO_CHOICE;
    return HARK_PREC_F32;
}

int hark_precision_parse(const char *name)
{
    static const char *const names[] = {"auto", "f32", "bf16", "int8"};
    for (int i = 0; name && i < 4; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

const char *hark_precision_effective(int precision)
{
    if (precision < HARK_PRECISION_AUTO || precision > HARK_PRECISION_INT8)
        return NULL;
    return hark_precision_name(hark_precision_resolve(precision));
}

static int round_up(int n, int to) { return (n + to - 1) / to * to; }

/* f32 -> bf16, round to nearest even; NaN stays NaN (quiet). */
static uint16_t bf16_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

static float f32_of_bf16(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Row r's values (f32, kp of them, zero past cols) into the panel layout. */
static void place_row(hark_packed *p, const float *row, int r)
{
    size_t panel = (size_t)(r / PANEL) * PANEL * p->kp;
    int in = r % PANEL;
    if (p->prec == HARK_PREC_BF16) {
        uint16_t *d = (uint16_t *)p->data + panel;
        for (int k = 0; k < p->kp; k++)
            d[(size_t)(k / 2) * 2 * PANEL + in * 2 + k % 2] = bf16_of(row[k]);
        return;
    }
    int8_t *d = (int8_t *)p->data + panel;
    float amax = 0.0f;
    for (int k = 0; k < p->cols; k++)
        amax = fmaxf(amax, fabsf(row[k]));
    float s = amax / 127.0f, inv = s != 0.0f ? 1.0f / s : 0.0f;
    int32_t sum = 0;
    for (int k = 0; k < p->kp; k++) {
        int q = (int)rintf(row[k] * inv);
        d[(size_t)(k / 4) * 4 * PANEL + in * 4 + k % 4] = (int8_t)q;
        sum += q;
    }
    p->scale[r] = s;
    p->comp[r] = 128 * sum;
}

int hark_pack(hark_packed *p, const hark_weight *w, hark_prec prec)
{
    memset(p, 0, sizeof *p);
    p->prec = prec;
    p->rows = w->rows, p->cols = w->cols;
    p->kp = round_up(w->cols, prec == HARK_PREC_INT8 ? 4 : 2);
    int rows_p = round_up(w->rows, PANEL);
    size_t n = (size_t)rows_p * p->kp;
    p->data = calloc(n, prec == HARK_PREC_INT8 ? 1 : 2);
    float *row = calloc((size_t)p->kp, sizeof(float));
    if (prec == HARK_PREC_INT8) {
        p->scale = calloc((size_t)rows_p, sizeof(float));
        p->comp = calloc((size_t)rows_p, sizeof(int32_t));
    }
    if (!p->data || !row || (prec == HARK_PREC_INT8 && (!p->scale || !p->comp))) {
        free(row);
        hark_packed_free(p);
        return HARK_ERR_NOMEM;
    }
    size_t row_bytes = hark_row_bytes(w->type, (size_t)w->cols);
    for (int r = 0; r < w->rows; r++) {
        hark_to_f32(row, (const char *)w->data + (size_t)r * row_bytes, w->type, (size_t)w->cols);
        place_row(p, row, r);
    }
    free(row);
    return 0;
}

void hark_packed_free(hark_packed *p)
{
    free(p->data);
    free(p->scale);
    free(p->comp);
    p->data = NULL, p->scale = NULL, p->comp = NULL;
}

size_t hark_packed_bytes(const hark_packed *p)
{
    size_t rows_p = (size_t)round_up(p->rows, PANEL);
    return p->prec == HARK_PREC_INT8 ? rows_p * (p->kp + 8) : rows_p * p->kp * 2;
}

/* ------------------------------------------------------------ portable twins */

/* bf16: each KC slice summed from zero in pairs, then added to y (as lowp512.c
 * does; within a pair the order may differ from vdpbf16ps's). */
static void bf16_chunk_c(float *y, int ldy, const uint16_t *x, int ldx, int mc,
                         const uint16_t *panels, int kp, int nr)
{
    for (int c0 = 0; c0 < kp; c0 += KC) {
        int kc = kp - c0 < KC ? kp - c0 : KC;
        for (int i = 0; i < mc; i++)
            for (int r = 0; r < nr; r++) {
                const uint16_t *w = panels + (size_t)(r / PANEL) * PANEL * kp + (size_t)c0 * PANEL;
                const uint16_t *xi = x + (size_t)i * ldx + c0;
                float s = 0.0f;
                for (int c = 0; c < kc; c += 2) {
                    const uint16_t *wp = w + (size_t)c * PANEL + (r % PANEL) * 2;
                    s += f32_of_bf16(xi[c]) * f32_of_bf16(wp[0]) +
                         f32_of_bf16(xi[c + 1]) * f32_of_bf16(wp[1]);
                }
                float *out = y + (size_t)i * ldy + r;
                *out = c0 ? *out + s : s;
            }
    }
}

/* int8: exact int32 sums of u8 x s8, whole rows at once. */
static void int8_chunk_c(int32_t *y, int ldy, const uint8_t *x, int ldx, int mc,
                         const int8_t *panels, int kp, int nr)
{
    for (int i = 0; i < mc; i++)
        for (int r = 0; r < nr; r++) {
            const int8_t *w = panels + (size_t)(r / PANEL) * PANEL * kp + (r % PANEL) * 4;
            int32_t s = 0;
            for (int c = 0; c < kp; c++)
                s += (int32_t)x[(size_t)i * ldx + c] * w[(size_t)(c / 4) * 4 * PANEL + c % 4];
            y[(size_t)i * ldy + r] = s;
        }
}

static void to_bf16_c(uint16_t *dst, int ldd, const float *x, int ldx, int m, int k)
{
    for (int i = 0; i < m; i++)
        for (int c = 0; c < ldd; c++)
            dst[(size_t)i * ldd + c] = c < k ? bf16_of(x[(size_t)i * ldx + c]) : 0;
}

static void to_u8_c(uint8_t *dst, int ldd, float *sx, const float *x, int ldx, int m, int k)
{
    for (int i = 0; i < m; i++) {
        const float *xi = x + (size_t)i * ldx;
        float amax = 0.0f;
        for (int c = 0; c < k; c++)
            amax = fmaxf(amax, fabsf(xi[c]));
        float s = amax / 127.0f, inv = s != 0.0f ? 1.0f / s : 0.0f;
        for (int c = 0; c < ldd; c++)
            dst[(size_t)i * ldd + c] = (uint8_t)(c < k ? (int)rintf(xi[c] * inv) + 128 : 128);
        sx[i] = s;
    }
}

void hark_lowp_to_bf16(uint16_t *dst, int ldd, const float *x, int ldx, int m, int k)
{
    if (portable_forced || hark_kernels_level() != HARK_LEVEL_AVX512 ||
        !hark_lowp512_to_bf16(dst, ldd, x, ldx, m, k))
        to_bf16_c(dst, ldd, x, ldx, m, k);
}

void hark_lowp_to_u8(uint8_t *dst, int ldd, float *sx, const float *x, int ldx, int m, int k)
{
    if (portable_forced || hark_kernels_level() != HARK_LEVEL_AVX512 ||
        !hark_lowp512_to_u8(dst, ldd, sx, x, ldx, m, k))
        to_u8_c(dst, ldd, sx, x, ldx, m, k);
}

/* ------------------------------------------------------------ products */

/* int32 sums (in y's memory) -> f32: (sum - comp[r]) * sx[i] * scale[r]. */
static void int8_finish(float *y, int ldy, int mc, const float *sx, const hark_packed *p, int r0,
                        int nr)
{
    if (!portable_forced && hark_kernels_level() == HARK_LEVEL_AVX512 &&
        hark_lowp512_int8_finish(y, ldy, mc, sx, p->scale + r0, p->comp + r0, nr))
        return;
    for (int i = 0; i < mc; i++)
        for (int r = 0; r < nr; r++) {
            float *out = y + (size_t)i * ldy + r;
            int32_t s;
            memcpy(&s, out, 4);
            *out = (float)(s - p->comp[r0 + r]) * sx[i] * p->scale[r0 + r];
        }
}

size_t hark_lowp_x_bytes(const hark_packed *p, int m)
{
    return (size_t)m * p->kp * (p->prec == HARK_PREC_INT8 ? 1 : 2);
}

void hark_lowp_convert(void *xc, float *sx, const float *x, int m, const hark_packed *p)
{
    if (p->prec == HARK_PREC_BF16)
        hark_lowp_to_bf16(xc, p->kp, x, p->cols, m, p->cols);
    else
        hark_lowp_to_u8(xc, p->kp, sx, x, p->cols, m, p->cols);
}

/* mc rows of converted x (at the chunk's row) times rows [r0, r0 + nr). */
static void chunk(float *y, int ldy, const void *xc, const float *sx, int mc, const hark_packed *p,
                  int r0, int nr)
{
    int native = hark_precision_native(p->prec);
    if (p->prec == HARK_PREC_BF16) {
        const uint16_t *panels = (const uint16_t *)p->data + (size_t)r0 * p->kp;
        if (!native || !hark_lowp512_bf16(y, ldy, xc, p->kp, mc, panels, p->kp, nr))
            bf16_chunk_c(y, ldy, xc, p->kp, mc, panels, p->kp, nr);
        return;
    }
    const int8_t *panels = (const int8_t *)p->data + (size_t)r0 * p->kp;
    if (!native || !hark_lowp512_int8((int32_t *)(void *)y, ldy, xc, p->kp, mc, panels, p->kp, nr))
        int8_chunk_c((int32_t *)(void *)y, ldy, xc, p->kp, mc, panels, p->kp, nr);
    int8_finish(y, ldy, mc, sx, p, r0, nr);
}

void hark_lowp_product(float *y, int ldy, const void *xc, const float *sx, int m,
                       const hark_packed *p, int r0, int nr, const float *bias, int gelu)
{
    size_t row_bytes = hark_lowp_x_bytes(p, 1);
    for (int i1 = 0; i1 < m; i1 += MC) {
        int mc = m - i1 < MC ? m - i1 : MC;
        float *yc = y + (size_t)i1 * ldy;
        chunk(yc, ldy, (const char *)xc + (size_t)i1 * row_bytes, sx ? sx + i1 : NULL, mc, p, r0, nr);
        for (int i = 0; i < mc; i++) /* while the chunk is in L2 */
            hark_bias_gelu_row(yc + (size_t)i * ldy, (size_t)nr, bias, gelu);
    }
}
