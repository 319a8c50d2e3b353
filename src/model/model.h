/* The model as every stage after loading sees it (struct hark_model), its
 * loaders, the ggml writer, the vocabulary and the tokenizer.  Nothing after
 * loading knows which file format a model came from. */
#ifndef HARK_MODEL_H
#define HARK_MODEL_H

#include "base/base.h"
#include "kernels/kernels.h" /* hark_packed */

/* ------------------------------------------------------------ vocabulary */

typedef struct hark_specials {
    int eot, sot, first_lang, n_langs, translate, transcribe, startoflm, startofprev,
        nospeech, notimestamps, timestamp_begin, n_timestamps;
} hark_specials;

typedef struct hark_vocab {
    int n_vocab;          /* all ids, specials included                       */
    int n_text;           /* ids below this are byte-level text tokens        */
    char *bytes;          /* all token bytes, each NUL-terminated              */
    size_t bytes_used, bytes_cap;
    size_t *offset;       /* token id -> offset into bytes                      */
    int *length;          /* token id -> byte length                            */
    int *rank;            /* BPE merge priority of a token's bytes (INT32_MAX: none) */
    int *table;           /* open-addressing hash: bytes -> id (-1 empty)       */
    size_t table_size;
    hark_specials sp;
    int multilingual;
    int blank_id;         /* the token of a single space, -1 if none             */
} hark_vocab;

/* ------------------------------------------------------------ model */

typedef struct hark_hparams {
    int n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer;
    int n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels;
} hark_hparams;

typedef struct hark_attn {
    const float *ln_w, *ln_b;
    hark_weight q, k, v, o;
    const float *q_b, *v_b, *o_b;
} hark_attn;

typedef struct hark_block {
    hark_attn attn;
    hark_attn cross;  /* decoder only */
    const float *mlp_ln_w, *mlp_ln_b;
    hark_weight fc1, fc2;
    const float *fc1_b, *fc2_b;
} hark_block;

struct hark_model {
    char path[1024];
    hark_hparams hp;
    /* encoder */
    hark_weight conv1, conv2;  /* [d][n_in * 3] */
    const float *conv1_b, *conv2_b;
    const float *enc_pos;      /* [n_audio_ctx][d] */
    hark_block *enc;
    const float *enc_ln_w, *enc_ln_b;
    /* decoder */
    hark_weight tok_emb;       /* [n_vocab][d], also the output projection */
    const float *dec_pos;      /* [n_text_ctx][d] */
    hark_block *dec;
    const float *dec_ln_w, *dec_ln_b;
    int *suppress;             /* suppress_tokens from the model, or -1 defaults */
    int n_suppress;
    int alignment_heads[64][2];
    int n_alignment_heads;
    hark_vocab vocab;
    struct hark_packed_cache *packed; /* lower-precision encoder weights (packed.c) */
    /* ownership */
    hark_map *maps;
    int n_maps;
    void **owned;
    int n_owned, cap_owned;
};

/* The encoder's matrices packed for a lower precision (packed.c), made on the
 * first call for prec and kept until the model is freed: conv1, conv2, then
 * HARK_ENC_PACKED a layer (q, k, v, o, fc1, fc2), then each decoder layer's
 * cross-attention K and V projections (which run once a window, on the
 * encoder's output).  NULL for f32, out of memory, or a model without a cache
 * (one hark_model_load did not make). */
enum { HARK_ENC_PACKED = 6 };
typedef struct hark_packed_cache hark_packed_cache;
hark_packed_cache *hark_packed_cache_new(void);
void hark_packed_cache_free(hark_packed_cache *c);
const hark_packed *hark_model_packed(const hark_model *m, hark_prec prec);
int hark_model_packed_count(const hark_model *m); /* matrices in such a set */
/* Bytes of that set (packing it if not yet done). */
size_t hark_model_packed_bytes(const hark_model *m, hark_prec prec);

/* A tensor as a loader found it: torch-order shape, stored type, raw bytes. */
typedef struct hark_raw_tensor {
    const void *data;
    hark_dtype type;
    int ndim;
    int64_t shape[4];
} hark_raw_tensor;

/* Looks up a tensor by its openai/ggml name; returns 0 if found. */
typedef int (*hark_tensor_lookup)(void *source, const char *name, hark_raw_tensor *t);

/* Fills model's tensors from a lookup after checking every name, type and shape
 * against model->hp.  what names the file in error messages. */
int hark_model_bind(hark_model *model, hark_tensor_lookup lookup, void *source,
                    const char *what, hark_error *e);
/* Checks hyper-parameters read from a file: every dimension in range; names:
 * what the file calls them, in the order n_vocab, n_audio_ctx/state/head/layer,
 * n_text_ctx/state/head/layer, n_mels (NULL: those, whisper's own names, as
 * ggml files hold them). */
int hark_hparams_check(const hark_hparams *hp, const char *const names[10], const char *what,
                       hark_error *e);
void *hark_model_own(hark_model *model, size_t bytes);
int hark_model_add_map(hark_model *model, const hark_map *m);

int hark_load_hf(hark_model *model, const char *dir, hark_error *e);
int hark_load_ggml(hark_model *model, const char *path, hark_error *e);
int hark_type_of_ggml(int32_t ggml_type); /* -1: unsupported */
/* Writes m as a ggml file with its matrices in type (hark quantize). */
int hark_model_write_ggml(const hark_model *m, const char *path, hark_dtype type, hark_error *e);
int hark_dtype_parse(const char *name); /* "q8_0" -> HARK_Q8_0; -1 if unknown */
int hark_ggml_of_type(hark_dtype t);      /* -1: none (bf16) */
/* ggml files without tensors load for their header and vocabulary only. */
int hark_load_ggml_vocab_only(hark_model *model, const char *path, hark_error *e);

/* ------------------------------------------------------------ tokenizer */

/* Allocates n_vocab empty tokens, then sets each one's bytes. */
int hark_vocab_alloc(hark_vocab *v, int n_vocab, const char *what, hark_error *e);
int hark_vocab_set(hark_vocab *v, int id, const char *bytes, int len);
/* Names the special and timestamp ids that have no bytes yet ("<|sot|>"...). */
int hark_vocab_name_specials(hark_vocab *v);
/* Builds the hash table once all tokens are in. */
int hark_vocab_index(hark_vocab *v, hark_error *e);
void hark_vocab_free(hark_vocab *v);
int hark_vocab_lookup(const hark_vocab *v, const char *bytes, int len);
/* Lays out Whisper's specials after the text tokens (n_text = eot for .en). */
void hark_vocab_default_specials(hark_vocab *v, int eot, int n_audio_ctx);
/* ids -> bytes; returns malloc'd NUL-terminated string.  Special ids are skipped. */
char *hark_detokenize(const hark_vocab *v, const int *ids, int n);
/* text -> ids with the byte-level BPE; returns count or negative; *ids malloc'd. */
int hark_tokenize(const hark_vocab *v, const char *text, int **ids);
const char *hark_lang_code(int index); /* "en", "zh", ... in token order (langs.c) */
/* The index of a code, or of openai's name or alias of a language (any case); -1: none. */
int hark_lang_index(const char *code_or_name);
const char *hark_token_bytes(const hark_vocab *v, int id, int *len);
/* The text tokens whose whole bytes match the POSIX extended regular expression
 * pattern, into *ids (malloc'd, *n of them); HARK_ERR_ARG for a pattern regcomp
 * refuses, with its reason. */
int hark_vocab_matching(const hark_vocab *v, const char *pattern, int **ids, int *n,
                        hark_error *e);

#endif
