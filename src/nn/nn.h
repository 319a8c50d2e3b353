/* Whisper's networks: the audio encoder and the text decoder with its KV cache
 * and cross-attention K/V. */
#ifndef HARK_NN_H
#define HARK_NN_H

#include "model/model.h"

/* ------------------------------------------------------------ forward pass */

/* Scratch memory kept between windows, so that long files do not map and
 * fault in fresh buffers for every window. */
typedef struct hark_workspace {
    float *p;
    size_t cap;  /* floats */
} hark_workspace;

/* At least n floats (NULL when out of memory); earlier contents are lost. */
float *hark_workspace_get(hark_workspace *ws, size_t n);
void hark_workspace_free(hark_workspace *ws);

/* An observer of the forward passes (hark explain): each hook is handed the
 * tensors the pass has just computed, to read.  NULL in transcription, where a
 * hook costs one pointer test. */
typedef struct hark_probe {
    void *user;
    /* encoder layer l: q and k [n][d] as projected, before the 1/sqrt(d_head) */
    void (*encoder_qk)(void *user, int l, const float *q, const float *k, int n);
    /* decoder layer l, rows past..past+n-1: self-attention q [n][d] and every key
     * so far, k [past + n][d] */
    void (*self_qk)(void *user, int l, const float *q, const float *k, int n, int past);
    /* decoder layer l: cross-attention q [n][d] (its keys: the window's cross K) */
    void (*cross_q)(void *user, int l, const float *q, int n, int past);
    /* the residual stream x [n][d] after decoder layer l */
    void (*residual)(void *user, int l, const float *x, int n, int past);
} hark_probe;

/* Encoder: mel window [n_mels][2*n_audio_ctx] -> out [n_audio_ctx][d].  ws may be
 * NULL (a temporary one is used). */
int hark_encode(const hark_model *m, const float *mel, float *out, hark_workspace *ws);
/* hark_encode with a probe (NULL: none) shown each layer's q and k. */
int hark_encode_probed(const hark_model *m, const float *mel, float *out, hark_workspace *ws,
                       const hark_probe *probe);

/* Cross-attention K/V of one window, projected once and shared by every
 * sequence decoded against it (beams, samples). */
typedef struct hark_cross {
    float *k, *v;              /* f32 models: [n_layer][n_audio_ctx][d] */
    /* other models: f16, K and V transposed per head, V as
     * [n_layer][head][d_head][n_audio_ctx], K the same in tiles of 128 frames
     * (text_decoder.c): the scores are sums of rows, the output dot products over
     * the frames, and half the bytes are read (whisper.cpp keeps its cross
     * K/V in f16 too) */
    uint16_t *k16, *v16;
    float *staging;            /* [n_audio_ctx][d]: one projection before packing */
    void *lowp;                /* at a lower precision: the encoder output converted */
    long computations;         /* how often they were projected (tests) */
} hark_cross;

/* Where single-sequence decoding's time goes (hark bench --verbose): seconds
 * of each part, summed over the hark_decode calls made while a hark_kv's split
 * points here (clock reads between the parts; NULL in transcription). */
typedef struct hark_decode_split {
    double self_attn, cross_attn, mlp, logits; /* logits: final LayerNorm and projection */
} hark_decode_split;

/* One decoded sequence: its self-attention KV cache and scratch. */
typedef struct hark_kv {
    float *self_k, *self_v;    /* [n_layer][n_text_ctx][d] */
    int n_past;                /* tokens in the cache */
    const hark_cross *cross;
    float *scratch;
    /* when capture is set: pre-softmax cross-attention scores of the model's
     * alignment heads, [n_alignment_heads][n_text_ctx][n_audio_ctx] by position */
    float *capture;
    const hark_probe *probe;   /* NULL, or an observer (hark_decode's path only) */
    hark_decode_split *split;  /* NULL, or where hark_decode adds its parts' times */
} hark_kv;

int hark_cross_init(hark_cross *c, const hark_model *m);
void hark_cross_free(hark_cross *c);
/* Projects the encoder output to cross-attention K/V (once per window). */
void hark_cross_set(const hark_model *m, hark_cross *c, const float *enc_out);
int hark_kv_init(hark_kv *kv, const hark_model *m, const hark_cross *cross);
void hark_kv_free(hark_kv *kv);
/* Makes dst's cache a copy of src's (both from the same model). */
void hark_kv_copy(const hark_model *m, hark_kv *dst, const hark_kv *src);
/* Pre-softmax scores q.k^T / sqrt(d_head) of head h of layer l against the
 * window's cross K, for n queries q [n][d]: out [n][n_audio_ctx]; buf holds
 * HARK_MAX_BATCH * d_head floats. */
void hark_cross_head_scores(const hark_model *m, const hark_cross *c, int l, int h, const float *q,
                            int n, float *out, float *buf);
/* Runs n tokens at position kv->n_past; writes the logits of the last token
 * ([n_vocab]) and advances the cache. */
int hark_decode(const hark_model *m, hark_kv *kv, const int *tokens, int n, float *logits);
/* hark_decode without logits: every row's final layer-normed state ([n][n_text_state]),
 * which hark_linear with tok_emb turns into that row's logits. */
int hark_decode_states(const hark_model *m, hark_kv *kv, const int *tokens, int n, float *states);
/* One token for each of n sequences sharing one cross K/V (beams, samples):
 * logits [n][n_vocab]; the sequences are stepped in groups of HARK_MAX_BATCH. */
int hark_decode_batch(const hark_model *m, hark_kv **kvs, const int *tokens, int n,
                      float *logits);
/* One token for each of n sequences in groups (several windows' beams and
 * samples: a step of several files): group g is the next size[g] <=
 * HARK_MAX_BATCH sequences, sharing the cross K/V of its first.  A row's logits
 * ([n][n_vocab]) are the bits hark_decode_batch gives its group alone, whatever
 * the other groups and however many threads; every weight is read from memory
 * once for all.  scratch: hark_decode_scratch_floats(m, n) floats, sized with
 * the pool in use. */
int hark_decode_groups(const hark_model *m, hark_kv **kvs, const int *tokens, int n,
                       const int *size, int groups, float *logits, float *scratch);
size_t hark_decode_scratch_floats(const hark_model *m, int rows);

#endif
