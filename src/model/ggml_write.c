/* Writes a loaded model as a whisper.cpp ggml file, converting its matrices
 * to one type (f32, f16 or a block type): `hark quantize`.  Conv weights stay
 * f16 and vectors and positional embeddings f32, as whisper.cpp's own
 * quantiser leaves them.  The file is written under a temporary name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audio/audio.h" /* hark_mel_filters */
#include "kernels/kernels.h" /* hark_to_f32 */
#include "model/model.h"

typedef struct writer {
    hark_out out;
    hark_dtype type;  /* for 2-D matrices */
} writer;

static void put_i32(writer *w, int32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    hark_out_write(&w->out, b, 4);
}

static void put_bytes(writer *w, const void *p, size_t n)
{
    hark_out_write(&w->out, p, n);
}

static void header(writer *w, const hark_model *m)
{
    const hark_hparams *hp = &m->hp;
    int ftype = w->type == HARK_F32 ? 0 : w->type == HARK_F16 ? 1
              : 2000 + (w->type == HARK_Q4_0 ? 2 : w->type == HARK_Q4_1 ? 3 : w->type == HARK_Q8_0 ? 7
                        : w->type == HARK_Q5_0 ? 8 : 9);
    put_i32(w, 0x67676d6c);
    int32_t v[11] = {hp->n_vocab, hp->n_audio_ctx, hp->n_audio_state, hp->n_audio_head,
                     hp->n_audio_layer, hp->n_text_ctx, hp->n_text_state, hp->n_text_head,
                     hp->n_text_layer, hp->n_mels, ftype};
    for (int i = 0; i < 11; i++)
        put_i32(w, v[i]);
    float *filters = malloc(sizeof(float) * (size_t)hp->n_mels * 201);
    if (!filters) {
        hark_out_fail(&w->out, ENOMEM);
        return;
    }
    hark_mel_filters(hp->n_mels, filters);
    put_i32(w, hp->n_mels);
    put_i32(w, 201);
    put_bytes(w, filters, sizeof(float) * (size_t)hp->n_mels * 201);
    free(filters);
}

/* Text tokens, then eot itself for English-only models (how the loader tells them apart). */
static void vocabulary(writer *w, const hark_model *m)
{
    int eot = m->vocab.sp.eot, n = m->vocab.multilingual ? eot : eot + 1;
    put_i32(w, n);
    for (int id = 0; id < n; id++) {
        int len;
        const char *b = hark_token_bytes(&m->vocab, id, &len);
        put_i32(w, len);
        put_bytes(w, b, (size_t)len);
    }
}

/* One tensor: torch-order shape, data converted from (src, stype) to out type. */
static void tensor(writer *w, const char *name, const int64_t *shape, int ndim, const void *src,
                   hark_dtype stype, hark_dtype out)
{
    size_t cols = (size_t)shape[ndim - 1], rows = 1;
    for (int i = 0; i < ndim - 1; i++)
        rows *= (size_t)shape[i];
    if (hark_dtype_is_quantized(out) && cols % 32 != 0)
        out = HARK_F16; /* rows that are not whole blocks stay f16 */
    int code = hark_ggml_of_type(out);
    put_i32(w, ndim);
    put_i32(w, (int32_t)strlen(name));
    put_i32(w, code);
    for (int i = ndim - 1; i >= 0; i--)
        put_i32(w, (int32_t)shape[i]);
    put_bytes(w, name, strlen(name));
    float *row = malloc(sizeof(float) * cols);
    void *packed = malloc(hark_row_bytes(out, cols) + 4);
    size_t in_row = hark_row_bytes(stype, cols), out_row = hark_row_bytes(out, cols);
    for (size_t r = 0; row && packed && !w->out.err && r < rows; r++) { /* none after a failure */
        hark_to_f32(row, (const char *)src + r * in_row, stype, cols);
        hark_quantize_row(packed, row, out, cols);
        put_bytes(w, packed, out_row);
    }
    if (!row || !packed)
        hark_out_fail(&w->out, ENOMEM);
    free(row);
    free(packed);
}

static hark_dtype small_type(const writer *w)
{
    return w->type == HARK_F32 ? HARK_F32 : HARK_F16;
}

static void vec(writer *w, const char *name, const float *v, int64_t n, int column)
{
    int64_t shape[2] = {n, 1};
    tensor(w, name, shape, column ? 2 : 1, v, HARK_F32, HARK_F32);
}

static void mat(writer *w, const char *name, const hark_weight *x, hark_dtype out)
{
    int64_t shape[2] = {x->rows, x->cols};
    tensor(w, name, shape, 2, x->data, x->type, out);
}

static void attention(writer *w, const char *pre, const hark_attn *a, int d)
{
    char n[160];
    const struct { const char *part; const hark_weight *wt; const float *b; } p[] = {
        {"query", &a->q, a->q_b}, {"key", &a->k, NULL}, {"value", &a->v, a->v_b}, {"out", &a->o, a->o_b}};
    for (int i = 0; i < 4; i++) {
        snprintf(n, sizeof n, "%s.%s.weight", pre, p[i].part);
        mat(w, n, p[i].wt, w->type);
        if (p[i].b) {
            snprintf(n, sizeof n, "%s.%s.bias", pre, p[i].part);
            vec(w, n, p[i].b, d, 0);
        }
    }
    snprintf(n, sizeof n, "%s_ln.weight", pre);
    vec(w, n, a->ln_w, d, 0);
    snprintf(n, sizeof n, "%s_ln.bias", pre);
    vec(w, n, a->ln_b, d, 0);
}

static void block(writer *w, const char *side, int l, const hark_block *b, int d, int cross)
{
    char pre[96], n[160];
    snprintf(pre, sizeof pre, "%s.blocks.%d.attn", side, l);
    attention(w, pre, &b->attn, d);
    if (cross) {
        snprintf(pre, sizeof pre, "%s.blocks.%d.cross_attn", side, l);
        attention(w, pre, &b->cross, d);
    }
    snprintf(n, sizeof n, "%s.blocks.%d.mlp.0.weight", side, l);
    mat(w, n, &b->fc1, w->type);
    snprintf(n, sizeof n, "%s.blocks.%d.mlp.0.bias", side, l);
    vec(w, n, b->fc1_b, 4 * d, 0);
    snprintf(n, sizeof n, "%s.blocks.%d.mlp.2.weight", side, l);
    mat(w, n, &b->fc2, w->type);
    snprintf(n, sizeof n, "%s.blocks.%d.mlp.2.bias", side, l);
    vec(w, n, b->fc2_b, d, 0);
    snprintf(n, sizeof n, "%s.blocks.%d.mlp_ln.weight", side, l);
    vec(w, n, b->mlp_ln_w, d, 0);
    snprintf(n, sizeof n, "%s.blocks.%d.mlp_ln.bias", side, l);
    vec(w, n, b->mlp_ln_b, d, 0);
}

static void tensors(writer *w, const hark_model *m)
{
    const hark_hparams *hp = &m->hp;
    int d = hp->n_audio_state;
    int64_t c1[3] = {d, hp->n_mels, 3}, c2[3] = {d, d, 3};
    int64_t epos[2] = {hp->n_audio_ctx, d}, dpos[2] = {hp->n_text_ctx, d};
    tensor(w, "encoder.conv1.weight", c1, 3, m->conv1.data, m->conv1.type, small_type(w));
    vec(w, "encoder.conv1.bias", m->conv1_b, d, 1);
    tensor(w, "encoder.conv2.weight", c2, 3, m->conv2.data, m->conv2.type, small_type(w));
    vec(w, "encoder.conv2.bias", m->conv2_b, d, 1);
    tensor(w, "encoder.positional_embedding", epos, 2, m->enc_pos, HARK_F32, HARK_F32);
    for (int l = 0; l < hp->n_audio_layer; l++)
        block(w, "encoder", l, &m->enc[l], d, 0);
    vec(w, "encoder.ln_post.weight", m->enc_ln_w, d, 0);
    vec(w, "encoder.ln_post.bias", m->enc_ln_b, d, 0);
    mat(w, "decoder.token_embedding.weight", &m->tok_emb, w->type);
    tensor(w, "decoder.positional_embedding", dpos, 2, m->dec_pos, HARK_F32, HARK_F32);
    for (int l = 0; l < hp->n_text_layer; l++)
        block(w, "decoder", l, &m->dec[l], d, 1);
    vec(w, "decoder.ln.weight", m->dec_ln_w, d, 0);
    vec(w, "decoder.ln.bias", m->dec_ln_b, d, 0);
}

int hark_model_write_ggml(const hark_model *m, const char *path, hark_dtype type, hark_error *e)
{
    if (type == HARK_BF16)
        return hark_fail(e, HARK_ERR_ARG, "%s: ggml files have no bf16 type", path);
    writer w = {.type = type};
    int rc = hark_out_open(&w.out, path, e);
    if (rc)
        return rc;
    header(&w, m);
    vocabulary(&w, m);
    tensors(&w, m);
    return hark_out_close(&w.out, e);
}

int hark_dtype_parse(const char *name)
{
    static const char *const names[] = {"f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0"};
    for (int i = 0; i < 8; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

int hark_model_write_type(const char *type)
{
    int t = type ? hark_dtype_parse(type) : -1;
    return t >= 0 && t != HARK_BF16; /* ggml has no bf16 */
}

int hark_model_write(const hark_model *m, const char *path, const char *type, char *err,
                     size_t errlen)
{
    hark_error e = {{0}};
    int rc = hark_model_write_type(type)
                 ? hark_model_write_ggml(m, path, (hark_dtype)hark_dtype_parse(type), &e)
                 : hark_fail(&e, HARK_ERR_ARG, "%s: not a type hark writes", type ? type : "(null)");
    if (rc && err && errlen)
        snprintf(err, errlen, "%s", e.msg);
    return rc;
}
