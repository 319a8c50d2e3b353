/* The format-independent half of model loading: the memory and mapped files a
 * model owns, its hyper-parameters checked, and every tensor a loader found checked
 * against them and bound into struct hark_model, so nothing after loading knows
 * which file format the weights came from.  The loaders (hf.c, ggml.c) call it. */
#include "kernels/kernels.h" /* hark_to_f32 */
#include "model/model.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *hark_model_own(hark_model *m, size_t bytes)
{
    if (m->n_owned == m->cap_owned) {
        int cap = m->cap_owned ? m->cap_owned * 2 : 64;
        void **p = realloc(m->owned, sizeof(void *) * (size_t)cap);
        if (!p)
            return NULL;
        m->owned = p;
        m->cap_owned = cap;
    }
    void *p = calloc(1, bytes ? bytes : 1);
    if (p)
        m->owned[m->n_owned++] = p;
    return p;
}

int hark_model_add_map(hark_model *m, const hark_map *map)
{
    hark_map *p = realloc(m->maps, sizeof(hark_map) * (size_t)(m->n_maps + 1));
    if (!p)
        return -1;
    m->maps = p;
    m->maps[m->n_maps++] = *map;
    return 0;
}

void hark_model_free(hark_model *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_owned; i++)
        free(m->owned[i]);
    free(m->owned);
    for (int i = 0; i < m->n_maps; i++)
        hark_map_release(&m->maps[i]);
    free(m->maps);
    free(m->enc);
    free(m->dec);
    free(m->suppress);
    hark_packed_cache_free(m->packed);
    hark_vocab_free(&m->vocab);
    free(m);
}

int hark_hparams_check(const hark_hparams *hp, const char *const names[10], const char *what,
                       hark_error *e)
{
    static const char *const whisper_names[10] = {
        "n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer",
        "n_text_ctx", "n_text_state", "n_text_head", "n_text_layer", "n_mels"};
    const struct { int value, lo, hi; } f[10] = {
        {hp->n_vocab, 1, 1 << 20},     {hp->n_audio_ctx, 1, 1 << 14}, {hp->n_audio_state, 1, 1 << 14},
        {hp->n_audio_head, 1, 256},    {hp->n_audio_layer, 1, 256},   {hp->n_text_ctx, 4, 1 << 14},
        {hp->n_text_state, 1, 1 << 14}, {hp->n_text_head, 1, 256},    {hp->n_text_layer, 1, 256},
        {hp->n_mels, 1, 512},
    };
    for (size_t i = 0; i < 10; i++)
        if (f[i].value < f[i].lo || f[i].value > f[i].hi)
            return hark_fail(e, HARK_ERR_FORMAT, "%s: %s = %d is out of range [%d, %d]", what,
                             (names ? names : whisper_names)[i], f[i].value, f[i].lo, f[i].hi);
    if (hp->n_audio_state % hp->n_audio_head || hp->n_text_state % hp->n_text_head)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: width is not a multiple of the head count",
                         what);
    if (hp->n_audio_state != hp->n_text_state)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: encoder width %d differs from decoder width %d",
                         what, hp->n_audio_state, hp->n_text_state);
    return 0;
}

typedef struct binder {
    hark_model *m;
    hark_tensor_lookup lookup;
    void *source;
    const char *what;
    hark_error *e;
    char name[160];
} binder;

static int shape_str(char *out, size_t n, const int64_t *s, int ndim)
{
    int k = snprintf(out, n, "[");
    for (int i = 0; i < ndim; i++)
        k += snprintf(out + k, n - (size_t)k, i ? ", %lld" : "%lld", (long long)s[i]);
    return snprintf(out + k, n - (size_t)k, "]");
}

/* Finds b->name and checks its shape against want (ndim entries; a conv bias
 * may also come as [n, 1], as whisper.cpp stores it). */
static int find(binder *b, const int64_t *want, int ndim, hark_raw_tensor *t)
{
    int found = b->lookup(b->source, b->name, t);
    if (found == -2) /* present in a type hark cannot use; the loader said why */
        return HARK_ERR_FORMAT;
    if (found != 0)
        return hark_fail(b->e, HARK_ERR_FORMAT, "%s: missing tensor %s", b->what, b->name);
    int ok = t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++)
        ok = t->shape[i] == want[i];
    if (!ok && ndim == 1 && t->ndim == 2 && t->shape[0] == want[0] && t->shape[1] == 1)
        ok = 1;
    if (!ok) {
        char got[96], exp[96];
        shape_str(got, sizeof got, t->shape, t->ndim);
        shape_str(exp, sizeof exp, want, ndim);
        return hark_fail(b->e, HARK_ERR_FORMAT, "%s: tensor %s has shape %s, expected %s",
                         b->what, b->name, got, exp);
    }
    return 0;
}

/* A vector or table the kernels read as f32: used in place when possible. */
static int bind_f32(binder *b, const float **out, const int64_t *want, int ndim)
{
    hark_raw_tensor t;
    int rc = find(b, want, ndim, &t);
    if (rc)
        return rc;
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)want[i];
    if (t.type == HARK_F32 && ((uintptr_t)t.data & 3) == 0) {
        *out = t.data;
        return 0;
    }
    float *p = hark_model_own(b->m, n * sizeof(float));
    if (!p)
        return hark_fail(b->e, HARK_ERR_NOMEM, "%s: out of memory", b->what);
    hark_to_f32(p, t.data, t.type, n);
    *out = p;
    return 0;
}

static int bind_vec(binder *b, const float **out, const char *fmt, int layer, int64_t n)
{
    snprintf(b->name, sizeof b->name, fmt, layer);
    return bind_f32(b, out, &n, 1);
}

/* A matrix used in its stored type (misaligned f32 is copied). */
static int bind_mat(binder *b, hark_weight *w, const char *fmt, int layer, const int64_t *want,
                    int ndim)
{
    hark_raw_tensor t;
    snprintf(b->name, sizeof b->name, fmt, layer);
    int rc = find(b, want, ndim, &t);
    if (rc)
        return rc;
    w->rows = (int)want[0];
    w->cols = (int)(want[1] * (ndim == 3 ? want[2] : 1));
    w->type = t.type;
    w->data = t.data;
    if (hark_dtype_is_quantized(t.type) && (ndim != 2 || w->cols % 32 != 0))
        return hark_fail(b->e, HARK_ERR_FORMAT, "%s: tensor %s: %s needs a 2-D shape whose rows are a multiple of 32",
                         b->what, b->name, hark_dtype_name(t.type));
    /* only f32 goes to OpenBLAS as it is; the other kernels read any alignment */
    size_t align = t.type == HARK_F32 ? 4 : 1;
    if (((uintptr_t)t.data & (align - 1)) != 0) {
        size_t bytes = hark_row_bytes(t.type, (size_t)w->cols) * w->rows;
        void *p = hark_model_own(b->m, bytes);
        if (!p)
            return hark_fail(b->e, HARK_ERR_NOMEM, "%s: out of memory", b->what);
        memcpy(p, t.data, bytes);
        w->data = p;
    }
    return 0;
}

static int bind_attn(binder *b, hark_attn *a, const char *pre, int layer, int64_t d)
{
    char fmt[128];
    int64_t sq[2] = {d, d};
    const struct { const char *suffix; hark_weight *w; const float **bias; } parts[] = {
        {"query", &a->q, &a->q_b}, {"key", &a->k, NULL}, {"value", &a->v, &a->v_b},
        {"out", &a->o, &a->o_b}};
    for (int i = 0; i < 4; i++) {
        int rc;
        snprintf(fmt, sizeof fmt, "%s.%s.weight", pre, parts[i].suffix);
        if ((rc = bind_mat(b, parts[i].w, fmt, layer, sq, 2)))
            return rc;
        if (!parts[i].bias)
            continue;
        snprintf(fmt, sizeof fmt, "%s.%s.bias", pre, parts[i].suffix);
        if ((rc = bind_vec(b, parts[i].bias, fmt, layer, d)))
            return rc;
    }
    int rc;
    snprintf(fmt, sizeof fmt, "%s_ln.weight", pre);
    if ((rc = bind_vec(b, &a->ln_w, fmt, layer, d)))
        return rc;
    snprintf(fmt, sizeof fmt, "%s_ln.bias", pre);
    return bind_vec(b, &a->ln_b, fmt, layer, d);
}

static int bind_block(binder *b, hark_block *blk, const char *side, int layer, int64_t d,
                      int cross)
{
    char pre[64], fmt[128];
    int rc;
    snprintf(pre, sizeof pre, "%s.blocks.%%d.attn", side);
    if ((rc = bind_attn(b, &blk->attn, pre, layer, d)))
        return rc;
    snprintf(pre, sizeof pre, "%s.blocks.%%d.cross_attn", side);
    if (cross && (rc = bind_attn(b, &blk->cross, pre, layer, d)))
        return rc;
    int64_t fc1[2] = {4 * d, d}, fc2[2] = {d, 4 * d};
    const struct { const char *suffix; const float **v; int64_t n; } vecs[] = {
        {"mlp_ln.weight", &blk->mlp_ln_w, d}, {"mlp_ln.bias", &blk->mlp_ln_b, d},
        {"mlp.0.bias", &blk->fc1_b, 4 * d}, {"mlp.2.bias", &blk->fc2_b, d}};
    for (int i = 0; i < 4; i++) {
        snprintf(fmt, sizeof fmt, "%s.blocks.%%d.%s", side, vecs[i].suffix);
        if ((rc = bind_vec(b, vecs[i].v, fmt, layer, vecs[i].n)))
            return rc;
    }
    snprintf(fmt, sizeof fmt, "%s.blocks.%%d.mlp.0.weight", side);
    if ((rc = bind_mat(b, &blk->fc1, fmt, layer, fc1, 2)))
        return rc;
    snprintf(fmt, sizeof fmt, "%s.blocks.%%d.mlp.2.weight", side);
    return bind_mat(b, &blk->fc2, fmt, layer, fc2, 2);
}

static int bind_encoder(binder *b)
{
    hark_model *m = b->m;
    const hark_hparams *hp = &m->hp;
    int64_t d = hp->n_audio_state;
    int64_t c1[3] = {d, hp->n_mels, 3}, c2[3] = {d, d, 3}, pos[2] = {hp->n_audio_ctx, d};
    int rc;
    if ((rc = bind_mat(b, &m->conv1, "encoder.conv1.weight", 0, c1, 3)) ||
        (rc = bind_vec(b, &m->conv1_b, "encoder.conv1.bias", 0, d)) ||
        (rc = bind_mat(b, &m->conv2, "encoder.conv2.weight", 0, c2, 3)) ||
        (rc = bind_vec(b, &m->conv2_b, "encoder.conv2.bias", 0, d)))
        return rc;
    snprintf(b->name, sizeof b->name, "encoder.positional_embedding");
    if ((rc = bind_f32(b, &m->enc_pos, pos, 2)))
        return rc;
    for (int l = 0; l < hp->n_audio_layer; l++)
        if ((rc = bind_block(b, &m->enc[l], "encoder", l, d, 0)))
            return rc;
    if ((rc = bind_vec(b, &m->enc_ln_w, "encoder.ln_post.weight", 0, d)))
        return rc;
    return bind_vec(b, &m->enc_ln_b, "encoder.ln_post.bias", 0, d);
}

static int bind_decoder(binder *b)
{
    hark_model *m = b->m;
    const hark_hparams *hp = &m->hp;
    int64_t d = hp->n_text_state;
    int64_t emb[2] = {hp->n_vocab, d}, pos[2] = {hp->n_text_ctx, d};
    int rc;
    if ((rc = bind_mat(b, &m->tok_emb, "decoder.token_embedding.weight", 0, emb, 2)))
        return rc;
    snprintf(b->name, sizeof b->name, "decoder.positional_embedding");
    if ((rc = bind_f32(b, &m->dec_pos, pos, 2)))
        return rc;
    for (int l = 0; l < hp->n_text_layer; l++)
        if ((rc = bind_block(b, &m->dec[l], "decoder", l, d, 1)))
            return rc;
    if ((rc = bind_vec(b, &m->dec_ln_w, "decoder.ln.weight", 0, d)))
        return rc;
    return bind_vec(b, &m->dec_ln_b, "decoder.ln.bias", 0, d);
}

int hark_model_bind(hark_model *m, hark_tensor_lookup lookup, void *source, const char *what,
                    hark_error *e)
{
    binder b = {m, lookup, source, what, e, {0}};
    m->enc = calloc((size_t)m->hp.n_audio_layer, sizeof(hark_block));
    m->dec = calloc((size_t)m->hp.n_text_layer, sizeof(hark_block));
    if (!m->enc || !m->dec)
        return hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", what);
    int rc = bind_encoder(&b);
    return rc ? rc : bind_decoder(&b);
}
