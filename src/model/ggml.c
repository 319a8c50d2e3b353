/* whisper.cpp ggml .bin files: magic, hparams, mel filters, vocabulary, then
 * tensors until the end of the file.  Every count and size is checked against
 * the bytes that remain before it is used; weights stay in the mapping. */
#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GGML_MAGIC = 0x67676d6c, MAX_TENSORS = 100000 };
#define ZIP_MAGIC 0x04034b50u /* "PK\3\4", read little-endian */

typedef struct ggml_tensor {
    char name[128];
    hark_raw_tensor t;
} ggml_tensor;

typedef struct ggml_file {
    ggml_tensor *tensors;
    int n;
} ggml_file;

static int read_hparams(hark_cursor *c, hark_hparams *hp, int32_t *ftype)
{
    int32_t v[11];
    for (int i = 0; i < 11; i++) {
        int rc = hark_read_i32(c, &v[i], "the header");
        if (rc)
            return rc;
    }
    *hp = (hark_hparams){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]};
    *ftype = v[10];
    return hark_hparams_check(hp, NULL, c->path, c->e);
}

static int skip_filters(hark_cursor *c)
{
    int32_t n_mel, n_fft;
    int rc;
    if ((rc = hark_read_i32(c, &n_mel, "the mel filters")) ||
        (rc = hark_read_i32(c, &n_fft, "the mel filters")))
        return rc;
    if (n_mel < 0 || n_fft < 0 || n_mel > 512 || n_fft > 4096)
        return hark_fail(c->e, HARK_ERR_FORMAT, "%s: mel filters of %d x %d", c->path, n_mel,
                         n_fft);
    size_t bytes = (size_t)n_mel * (size_t)n_fft * 4;
    if ((rc = hark_need(c, bytes, "the mel filters")))
        return rc;
    c->p += bytes; /* hark computes the same Slaney filters itself */
    return 0;
}

/* Text tokens as raw bytes; the specials that follow are laid out by rule. */
static int read_vocab(hark_cursor *c, hark_model *m)
{
    int32_t n;
    int rc = hark_read_i32(c, &n, "the vocabulary");
    if (rc)
        return rc;
    if (n <= 0 || n > m->hp.n_vocab)
        return hark_fail(c->e, HARK_ERR_FORMAT, "%s: vocabulary count %d (n_vocab %d)", c->path,
                         n, m->hp.n_vocab);
    if ((rc = hark_vocab_alloc(&m->vocab, m->hp.n_vocab, c->path, c->e)))
        return rc;
    for (int32_t i = 0; i < n; i++) {
        int32_t len;
        if ((rc = hark_read_i32(c, &len, "the vocabulary")))
            return rc;
        if (len < 0 || len > 1024)
            return hark_fail(c->e, HARK_ERR_FORMAT, "%s: token %d has length %d", c->path, i, len);
        if ((rc = hark_need(c, (size_t)len, "the vocabulary")))
            return rc;
        if (hark_vocab_set(&m->vocab, i, (const char *)c->p, len))
            return hark_fail(c->e, HARK_ERR_NOMEM, "%s: out of memory", c->path);
        m->vocab.rank[i] = i; /* tiktoken: a merge's priority is its token's rank */
        c->p += len;
    }
    int len;
    const char *last = hark_token_bytes(&m->vocab, n - 1, &len);
    int eot = len == 13 && memcmp(last, "<|endoftext|>", 13) == 0 ? n - 1 : n;
    m->vocab.n_text = eot;
    hark_vocab_default_specials(&m->vocab, eot, m->hp.n_audio_ctx);
    if (m->vocab.sp.n_langs < 0)
        return hark_fail(c->e, HARK_ERR_FORMAT, "%s: n_vocab %d leaves no room for the special tokens",
                         c->path, m->hp.n_vocab);
    m->vocab.rank[eot] = INT32_MAX;
    m->vocab.multilingual = m->hp.n_vocab >= 51865 || eot == n;
    if (hark_vocab_name_specials(&m->vocab))
        return hark_fail(c->e, HARK_ERR_NOMEM, "%s: out of memory", c->path);
    return hark_vocab_index(&m->vocab, c->e);
}

/* ggml's type numbers -> hark's; -1 for types hark does not read. */
int hark_type_of_ggml(int32_t t)
{
    switch (t) {
    case 0: return HARK_F32;
    case 1: return HARK_F16;
    case 2: return HARK_Q4_0;
    case 3: return HARK_Q4_1;
    case 6: return HARK_Q5_0;
    case 7: return HARK_Q5_1;
    case 8: return HARK_Q8_0;
    default: return -1;
    }
}

int hark_ggml_of_type(hark_dtype t)
{
    static const int codes[] = {0, 1, -1, 2, 3, 6, 7, 8};
    return (unsigned)t < sizeof codes / sizeof codes[0] ? codes[t] : -1;
}

static const char *ggml_type_name(int32_t t)
{
    static const char *const names[] = {"f32", "f16", "q4_0", "q4_1", "type 4", "type 5",
                                        "q5_0", "q5_1", "q8_0", "q8_1"};
    return t >= 0 && t < 10 ? names[t] : "unknown";
}

static int read_tensor(hark_cursor *c, ggml_tensor *g)
{
    int32_t n_dims, name_len, ttype, ne[4] = {1, 1, 1, 1};
    int rc;
    if ((rc = hark_read_i32(c, &n_dims, "a tensor header")) ||
        (rc = hark_read_i32(c, &name_len, "a tensor header")) ||
        (rc = hark_read_i32(c, &ttype, "a tensor header")))
        return rc;
    if (n_dims < 1 || n_dims > 4 || name_len <= 0 || name_len >= (int)sizeof g->name)
        return hark_fail(c->e, HARK_ERR_FORMAT, "%s: bad tensor header (%d dims, name length %d)",
                         c->path, n_dims, name_len);
    size_t count = 1;
    for (int i = 0; i < n_dims; i++) {
        if ((rc = hark_read_i32(c, &ne[i], "a tensor header")))
            return rc;
        if (ne[i] <= 0 || ne[i] > (1 << 24) || count > ((size_t)1 << 34) / (size_t)ne[i])
            return hark_fail(c->e, HARK_ERR_FORMAT, "%s: bad tensor dimension %d", c->path, ne[i]);
        count *= (size_t)ne[i];
    }
    if ((rc = hark_need(c, (size_t)name_len, "a tensor name")))
        return rc;
    memcpy(g->name, c->p, (size_t)name_len);
    g->name[name_len] = 0;
    c->p += name_len;
    int type = hark_type_of_ggml(ttype);
    if (type < 0)
        return hark_fail(c->e, HARK_ERR_FORMAT,
                         "%s: tensor %s has type %s; hark reads f32, f16, q4_0, q4_1, q5_0, q5_1 and q8_0",
                         c->path, g->name, ggml_type_name(ttype));
    if (hark_dtype_is_quantized((hark_dtype)type) && ne[0] % 32 != 0)
        return hark_fail(c->e, HARK_ERR_FORMAT, "%s: tensor %s: rows of %d are not whole %s blocks",
                         c->path, g->name, ne[0], ggml_type_name(ttype));
    size_t bytes = hark_row_bytes((hark_dtype)type, count);
    char what[160];
    snprintf(what, sizeof what, "tensor %s", g->name);
    if ((rc = hark_need(c, bytes, what)))
        return rc;
    g->t.data = c->p;
    g->t.type = (hark_dtype)type;
    g->t.ndim = n_dims;
    for (int i = 0; i < n_dims; i++) /* ggml lists the innermost dimension first */
        g->t.shape[i] = ne[n_dims - 1 - i];
    c->p += bytes;
    return 0;
}

static int read_tensors(hark_cursor *c, ggml_file *f)
{
    int cap = 0;
    while (c->p < c->end) {
        if (f->n == MAX_TENSORS)
            return hark_fail(c->e, HARK_ERR_FORMAT, "%s: too many tensors", c->path);
        if (f->n == cap) {
            cap = cap ? cap * 2 : 256;
            ggml_tensor *p = realloc(f->tensors, sizeof(ggml_tensor) * (size_t)cap);
            if (!p)
                return hark_fail(c->e, HARK_ERR_NOMEM, "%s: out of memory", c->path);
            f->tensors = p;
        }
        int rc = read_tensor(c, &f->tensors[f->n]);
        if (rc)
            return rc;
        f->n++;
    }
    return 0;
}

static int lookup(void *source, const char *name, hark_raw_tensor *t)
{
    ggml_file *f = source;
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->tensors[i].name, name) == 0) {
            *t = f->tensors[i].t;
            return 0;
        }
    return -1;
}

static int load(hark_model *m, const char *path, int need_tensors, hark_error *e)
{
    hark_map map;
    int rc = hark_map_file(path, &map, e);
    if (rc)
        return rc;
    if (hark_model_add_map(m, &map)) {
        hark_map_release(&map);
        return hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", path);
    }
    hark_cursor c = {map.data, map.data + map.size, path, e};
    int32_t magic, ftype;
    if ((rc = hark_read_i32(&c, &magic, "the magic")))
        return rc;
    if ((uint32_t)magic == ZIP_MAGIC) /* torch.save's format: openai-whisper's .pt files */
        return hark_fail(e, HARK_ERR_FORMAT, "%s: a zip archive, as PyTorch checkpoints are "
                         "(openai-whisper's .pt), not a whisper.cpp ggml file: "
                         "scripts/convert/openai-pt-to-ggml converts one", path);
    if ((uint32_t)magic != GGML_MAGIC)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: bad magic 0x%08x (not a whisper.cpp ggml file)",
                         path, (uint32_t)magic);
    if ((rc = read_hparams(&c, &m->hp, &ftype)) || (rc = skip_filters(&c)) ||
        (rc = read_vocab(&c, m)))
        return rc;
    ggml_file f = {NULL, 0};
    rc = read_tensors(&c, &f);
    if (!rc && f.n == 0 && need_tensors)
        rc = hark_fail(e, HARK_ERR_MODEL, "%s: no tensors: this file holds a vocabulary only",
                       path);
    if (!rc && need_tensors)
        rc = hark_model_bind(m, lookup, &f, path, e);
    free(f.tensors);
    return rc;
}

int hark_load_ggml(hark_model *m, const char *path, hark_error *e)
{
    return load(m, path, 1, e);
}

int hark_load_ggml_vocab_only(hark_model *m, const char *path, hark_error *e)
{
    return load(m, path, 0, e);
}
