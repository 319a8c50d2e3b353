/* Block quantisation (ggml's formats) and `hark quantize`: error bounds per
 * type, exact round trips through the writer, and how close quantised models
 * stay to the f32 one (token agreement is printed). */
#include <unistd.h>

#include "check.h"
#include "face.h"
#include "kernels/kernels.h"

static const hark_dtype TYPES[] = {HARK_Q8_0, HARK_Q5_1, HARK_Q5_0, HARK_Q4_1, HARK_Q4_0};

static void test_blocks(void)
{
    float x[64], y[64];
    uint8_t packed[64 * 2];
    for (int i = 0; i < 64; i++)
        x[i] = sinf(i * 0.7f) * (i < 32 ? 1.0f : 0.01f);
    for (int k = 0; k < 5; k++) {
        hark_dtype t = TYPES[k];
        hark_quantize_row(packed, x, t, 64);
        hark_dequantize(y, packed, t, 64);
        int levels = t == HARK_Q8_0 ? 254 : t == HARK_Q5_0 || t == HARK_Q5_1 ? 31 : 15;
        for (int b = 0; b < 2; b++) {
            float lo = x[b * 32], hi = x[b * 32];
            double worst = 0;
            for (int j = 0; j < 32; j++) {
                lo = fminf(lo, x[b * 32 + j]), hi = fmaxf(hi, x[b * 32 + j]);
                worst = fmax(worst, fabs(x[b * 32 + j] - y[b * 32 + j]));
            }
            /* affine types: half a step of (max - min) / levels; symmetric ones
             * (q4_0, q5_0): a full step amax / 8 or / 16, since the extreme
             * opposite the scale's sign is clipped one level short */
            double amax = fmax(fabs(lo), fabs(hi)), bound;
            if (t == HARK_Q4_0 || t == HARK_Q5_0)
                bound = amax / (t == HARK_Q4_0 ? 8 : 16);
            else if (t == HARK_Q8_0)
                bound = amax / 127 / 2;
            else
                bound = (hi - lo) / levels / 2;
            /* plus the f16 rounding of the scale, times up to 127 levels */
            CHECK(worst <= bound * 1.01 + amax * 1e-3, "%s block %d error %g > %g", hark_dtype_name(t), b,
                  worst, bound);
        }
    }
    /* q8_0 by hand: d = 3.1 / 127, q = round(x / d) */
    for (int i = 0; i < 32; i++)
        x[i] = i * 0.1f;
    hark_quantize_row(packed, x, HARK_Q8_0, 32);
    uint16_t dh;
    memcpy(&dh, packed, 2);
    CHECK(dh == hark_f32_to_f16(3.1f / 127.0f), "q8_0 scale");
    CHECK((int8_t)packed[2 + 31] == 127 && (int8_t)packed[2 + 10] == (int8_t)roundf(1.0f / (3.1f / 127.0f)),
          "q8_0 values %d %d", (int8_t)packed[33], (int8_t)packed[12]);
}

/* The float types through the same entry: exact where representable, ties to
 * even, and every value back within half a unit of the last place. */
static void test_float_rows(void)
{
    /* 1 + 2^-11 is halfway between f16 neighbours 1 and 1 + 2^-10: stays 1;
     * 1 + 3 * 2^-11 is halfway up from an odd mantissa: goes to 1 + 2^-9 */
    const float x[6] = {1.0f, -2.5f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 1.0f + 0x1p-8f, 0.1f};
    const float f16[6] = {1.0f, -2.5f, 1.0f, 1.0f + 0x1p-9f, 1.0f + 0x1p-8f, 0.0999755859375f};
    const float bf16[6] = {1.0f, -2.5f, 1.0f, 1.0f, 1.0f, 0.10009765625f};
    float y[6];
    uint8_t packed[6 * 4];
    hark_quantize_row(packed, x, HARK_F32, 6);
    hark_to_f32(y, packed, HARK_F32, 6);
    CHECK(memcmp(x, y, sizeof x) == 0, "f32 rows are copied");
    hark_quantize_row(packed, x, HARK_F16, 6);
    hark_to_f32(y, packed, HARK_F16, 6);
    CHECK(memcmp(y, f16, sizeof y) == 0, "f16 rows: %.9g %.9g %.9g", y[2], y[3], y[5]);
    hark_quantize_row(packed, x, HARK_BF16, 6);
    hark_to_f32(y, packed, HARK_BF16, 6);
    CHECK(memcmp(y, bf16, sizeof y) == 0, "bf16 rows: %.9g %.9g %.9g", y[3], y[4], y[5]);
    const float nan = NAN;
    hark_quantize_row(packed, &nan, HARK_BF16, 1);
    hark_to_f32(y, packed, HARK_BF16, 1);
    CHECK(isnan(y[0]), "bf16 keeps NaN");
}

/* Greedy tokens of the clip under a model, flattened. */
static int clip_tokens(hark_model *m, int *out, int cap)
{
    hark_params p = hark_default_params();
    p.timestamps = 0, p.search.beam_size = 1, p.fallback.n_temperatures = 1, p.prompt.condition_on_previous_text = 0;
    hark_context *c = hark_context_new(m, &p);
    int n = 0;
    if (hark_transcribe_file(c, "tests/data/clip.wav") == 0)
        for (int i = 0; i < hark_n_segments(c); i++)
            for (int j = 0; j < hark_segment_n_tokens(c, i) && n < cap; j++)
                out[n++] = hark_segment_token(c, i, j).id;
    hark_context_free(c);
    return n;
}

static void test_writer(void)
{
    char err[512], path[64];
    hark_error e;
    hark_model *src = hark_model_load("tests/data/tiny-random/hf-f32", err, sizeof err);
    CHECK(src != NULL, "%s", err);
    if (!src)
        return;
    int ref[512], got[512], n_ref = clip_tokens(src, ref, 512);
    snprintf(path, sizeof path, "/tmp/hark-quant-%d.bin", (int)getpid());
    const hark_dtype exact[] = {HARK_F32, HARK_F16};
    for (int k = 0; k < 2; k++) { /* the test model's weights are f16-representable */
        CHECK(hark_model_write_ggml(src, path, exact[k], &e) == 0, "%s", e.msg);
        hark_model *m = hark_model_load(path, err, sizeof err);
        CHECK(m != NULL, "%s", err);
        int n = m ? clip_tokens(m, got, 512) : 0;
        CHECK(n == n_ref && memcmp(got, ref, sizeof(int) * n) == 0, "%s: tokens differ",
              hark_dtype_name(exact[k]));
        hark_model_free(m);
    }
    for (int k = 0; k < 5; k++) {
        CHECK(hark_model_write_ggml(src, path, TYPES[k], &e) == 0, "%s", e.msg);
        hark_model *m = hark_model_load(path, err, sizeof err);
        CHECK(m != NULL && m->dec[0].fc1.type == TYPES[k], "%s: %s", hark_dtype_name(TYPES[k]), err);
        if (!m)
            continue;
        int n = clip_tokens(m, got, 512), same = 0;
        for (int i = 0; i < n && i < n_ref; i++)
            same += got[i] == ref[i];
        printf("%s: %d of %d greedy tokens agree with f32 on the test clip\n",
               hark_dtype_name(TYPES[k]), same, n_ref);
        CHECK(n > 0, "%s transcribes", hark_dtype_name(TYPES[k]));
        if (TYPES[k] == HARK_Q8_0)
            CHECK(same * 10 >= n_ref * 5, "q8_0 agrees on %d of %d", same, n_ref);
        hark_model_free(m);
    }
    unlink(path);
    hark_model_free(src);
}

int main(void)
{
    test_float_rows();
    test_blocks();
    test_writer();
    return check_summary("quant");
}
