/* Types shared by hark's stages.  Nothing here is public API. */
#ifndef HARK_INTERNAL_H
#define HARK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hark.h"

/* ------------------------------------------------------------ errors */

typedef struct hark_error {
    char msg[512];
} hark_error;

/* Formats "fmt ..." into e (when e is not NULL) and returns code. */
int hark_fail(hark_error *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------ files */

typedef struct hark_map {
    const uint8_t *data;
    size_t size;
    int mapped;  /* 1: munmap on release, 0: free */
} hark_map;

/* Maps a whole file read-only (falls back to reading it for non-regular files,
 * as much as the memory available holds). */
int hark_map_file(const char *path, hark_map *m, hark_error *e);
void hark_map_release(hark_map *m);
/* Reading a binary file held in memory (ggml models): every read is checked
 * against the bytes left, and a short file fails "path: truncated in what". */
typedef struct hark_cursor {
    const uint8_t *p, *end;
    const char *path;
    hark_error *e;
} hark_cursor;
int hark_need(hark_cursor *c, size_t n, const char *what);
int hark_read_i32(hark_cursor *c, int32_t *v, const char *what); /* little-endian */
/* Reads a whole file into a NUL-terminated buffer (caller frees): JSON and text
 * files, of at most 256 MB. */
int hark_read_file(const char *path, char **data, size_t *size, hark_error *e);
/* Writes data to path under a temporary name, synced, then renamed into place:
 * readers never see a partial file, and a failure leaves none behind. */
int hark_write_file(const char *path, const void *data, size_t size, hark_error *e);
/* The same for a file made of n parts written one after the other. */
int hark_write_parts(const char *path, const void *const *parts, const size_t *sizes, int n,
                     hark_error *e);
/* A file written piece by piece under "<path>.tmp.<pid>" and renamed into place
 * when whole, synced first: after a failure or a crash the name holds the old
 * file or the whole new one, never a part.  Writes after a failure do nothing;
 * hark_out_close reports the first failure ("path: cannot write (reason)"). */
typedef struct hark_out {
    const char *path;
    char *tmp;
    FILE *f;
    int err; /* errno of the first failure; 0 while all is well */
} hark_out;
int hark_out_open(hark_out *o, const char *path, hark_error *e);
void hark_out_write(hark_out *o, const void *data, size_t n);
/* Marks the file failed (err: an errno value) without writing, e.g. out of memory. */
void hark_out_fail(hark_out *o, int err);
/* Renames the file into place, or removes it after a failure; returns 0 or the error. */
int hark_out_close(hark_out *o, hark_error *e);
/* malloc for buffers a window fills whole (free() releases it): its pages
 * are faulted in by one call, not one fault each on first use. */
void *hark_alloc_populated(size_t bytes);
/* Whether bytes exceed the memory this machine has available now (Linux's
 * MemAvailable + SwapFree, else its physical memory; never when neither is
 * known), which *available receives.  Linux's malloc promises more than there
 * is, and the process that touches the pages is killed with no error to
 * report: a length a file claims is checked before its buffers are allocated. */
int hark_memory_short(double bytes, double *available);

/* ------------------------------------------------------------ numbers */

typedef enum {
    HARK_F32 = 0, HARK_F16 = 1, HARK_BF16 = 2,
    HARK_Q4_0, HARK_Q4_1, HARK_Q5_0, HARK_Q5_1, HARK_Q8_0 /* ggml blocks of 32 */
} hark_dtype;

float hark_f16_to_f32(uint16_t h);
uint16_t hark_f32_to_f16(float f);
/* Converts n stored values of type t starting at src (any alignment) to f32. */
void hark_to_f32(float *dst, const void *src, hark_dtype t, size_t n);
size_t hark_dtype_size(hark_dtype t); /* element size; 0 for block types */
/* Bytes of n consecutive values (n a multiple of 32 for block types). */
size_t hark_row_bytes(hark_dtype t, size_t n);
size_t hark_block_bytes(hark_dtype t);   /* 0 for non-block types */
int hark_dtype_is_quantized(hark_dtype t);
void hark_dequantize(float *y, const void *src, hark_dtype t, size_t n);
/* n values as type t (n a multiple of 32 for block types; floats round to nearest even). */
void hark_quantize_row(void *dst, const float *x, hark_dtype t, size_t n);
const char *hark_dtype_name(hark_dtype t);

/* The fields of one ggml block (layouts in quant.c): scale and minimum as f16 bits
 * (minimum 0 but for q4_1 and q5_1), the fifth bits of q5 (0 otherwise) and the
 * packed quants that follow.  Shared by the portable and vector kernels. */
typedef struct hark_qblock {
    uint16_t d, min;
    uint32_t qh;
    const uint8_t *qs;
    int offset; /* subtracted from each quant: 8 for q4_0, 16 for q5_0, else 0 */
} hark_qblock;

/* The types whose blocks carry a minimum (w = q * d + min, q unsigned). */
static inline int hark_block_has_min(hark_dtype t)
{
    return t == HARK_Q4_1 || t == HARK_Q5_1;
}

static inline hark_qblock hark_qblock_fields(const uint8_t *b, hark_dtype t)
{
    hark_qblock q = {0, 0, 0, b + 2, t == HARK_Q4_0 ? 8 : t == HARK_Q5_0 ? 16 : 0};
    memcpy(&q.d, b, 2);
    if (hark_block_has_min(t)) {
        memcpy(&q.min, q.qs, 2);
        q.qs += 2;
    }
    if (t == HARK_Q5_0 || t == HARK_Q5_1) {
        memcpy(&q.qh, q.qs, 4);
        q.qs += 4;
    }
    return q;
}

/* A block's 32 quants as signed integers, the offset (8, 16) taken off: w = u * d
 * (+ min for q4_1 / q5_1, whose u are 0..31). */
void hark_block_quants(int8_t *u, const uint8_t *b, hark_dtype t);

/* A weight matrix [rows = out features][cols = in features], in its stored type. */
typedef struct hark_weight {
    const void *data;
    hark_dtype type;
    int rows, cols;
} hark_weight;

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
    /* ownership */
    hark_map *maps;
    int n_maps;
    void **owned;
    int n_owned, cap_owned;
};

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
/* 0 when hark_vocab_matching takes pattern, else -1 and why not (regcomp's words). */
int hark_pattern_check(const char *pattern, char *why, size_t n);

/* A segment's text as the txt writer prints it: stripped, on a line of its own,
 * after "(speaker N) " for a diarized segment's label N (0: none; malloc'd; NULL
 * when out of memory). */
char *hark_txt_line(const char *text, char speaker);
/* whisper.cpp's --print-colors: segment s's text with each character coloured by
 * the probability of the token that chose it (p^3 on a 10-step red-to-green
 * scale; a character split over tokens takes the least likely), for a terminal
 * (malloc'd; NULL when out of memory). */
struct hark_segment;
char *hark_colored_text(const hark_vocab *v, const struct hark_segment *s);
/* The same for segment i of a context's result (NULL: no such segment, or out of memory). */
char *hark_segment_colored(const hark_context *c, int i);
/* Whether hark_format_result writes format name (txt srt vtt tsv json csv lrc). */
int hark_is_format(const char *name);
/* Segment i's speaker label ('0', '1', '?'; 0 for none), as the writers print it. */
char hark_segment_label(const hark_context *c, int i);
/* openai's --verbose line for a segment: "[00:01.000 --> 00:03.400] text\n",
 * hours only past the first, the speaker as whisper.cpp prints it:
 * "[...]  (speaker 1) text" (malloc'd; NULL when out of memory). */
char *hark_verbose_line(double start, double end, const char *text, char speaker);

/* ------------------------------------------------------------ audio and mel */

int hark_audio_read(const char *path, float **samples, size_t *n, hark_error *e);
/* A stereo file's loudness for diarization (speaker.c): each channel's sum of
 * |sample| per 10 ms of the file; n is 0 when the file is not stereo. */
typedef struct hark_levels {
    float *ch[2];
    size_t n, cap;
} hark_levels;
/* hark_audio_read that also fills *levels (zeroed first) when the file has two channels. */
int hark_audio_read_levels(const char *path, float **samples, size_t *n, hark_levels *levels,
                           hark_error *e);
/* Adds n interleaved stereo frames, the first being frame first of the file
 * (lv zeroed before the first); 0 or HARK_ERR_NOMEM. */
int hark_levels_add(hark_levels *lv, const float *frames, size_t n, long long first, int rate);
void hark_levels_free(hark_levels *lv);
/* The speaker of [start, end) seconds as whisper.cpp labels it: '0' or '1' for the
 * louder channel, '?' for neither; 0 without levels. */
char hark_levels_speaker(const hark_levels *lv, double start, double end);
/* The chunk id ("data", "fmt ") in the first n bytes of a RIFF/WAVE file: its
 * body's offset in *at and the length its header claims in *len; 0 when those
 * bytes hold no such chunk header, or are no RIFF/WAVE. */
int hark_wav_chunk(const uint8_t *d, size_t n, const char *id, size_t *at, uint32_t *len);
/* What a file decodes to: its samples downmixed, at rate, and the loudness of
 * its channels when asked for (levels not NULL) and it has two. */
typedef struct hark_decoded {
    float *mono;
    size_t frames;
    int rate;
    hark_levels *levels;
} hark_decoded;
/* Room in d->mono (*cap frames now) for need frames, the capacity doubling but not
 * past most; 0 or HARK_ERR_NOMEM. */
int hark_decoded_room(hark_decoded *d, size_t *cap, size_t need, size_t most);
/* The program that decodes what libsndfile cannot: $HARK_FFMPEG, else "ffmpeg"
 * on PATH; "" (HARK_FFMPEG set empty) for none. */
const char *hark_ffmpeg_program(void);
enum { HARK_FFMPEG_MISSING = 1 };
/* Decodes the file open as fd in with ffmpeg into *d (16 kHz, d->levels as
 * hark_audio_read_levels); errors read "path: what; ffmpeg: its reason".
 * Returns 0, HARK_FFMPEG_MISSING when there is no ffmpeg to run, or an error. */
int hark_ffmpeg_decode(int in, const char *path, const char *what, hark_decoded *d,
                       hark_error *e);
/* MPEG decoding mutes stderr (fd 2) for its decoder's chatter; a program that
 * writes to stderr from other threads meanwhile takes this lock first. */
void hark_stderr_lock(void);
void hark_stderr_unlock(void);
/* Resamples mono audio from rate_in to 16 kHz (band-limited). */
int hark_resample(const float *in, size_t n_in, double rate_in, float **out, size_t *n_out,
                  hark_error *e);

void hark_mel_filters(int n_mels, float *filters /* [n_mels][201] */);
/* Log-mel of samples (padded with pad_samples zeros): [n_mels][*n_frames]. */
int hark_log_mel(const float *samples, size_t n, size_t pad_samples, int n_mels, int n_threads,
                 float **mel, int *n_frames, hark_error *e);
/* Frames [seek, seek + len) of mel [n_mels][frames] into out [n_mels][len], the frames at
 * or past stop (at most frames) as the last frame (the padding's silence). */
void hark_mel_window(const float *mel, int frames, int n_mels, int seek, int stop, int len,
                     float *out);

int hark_write_npy(const char *path, const float *data, int rows, int cols, hark_error *e);
int hark_read_npy(const char *path, float **data, int *rows, int *cols, hark_error *e);

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

/* Encoder: mel window [n_mels][2*n_audio_ctx] -> out [n_audio_ctx][d].  ws may be
 * NULL (a temporary one is used). */
int hark_encode(const hark_model *m, const float *mel, float *out, hark_workspace *ws);

/* Cross-attention K/V of one window, projected once and shared by every
 * sequence decoded against it (beams, samples). */
typedef struct hark_cross {
    float *k, *v;              /* f32 models: [n_layer][n_audio_ctx][d] */
    /* other models: f16, K and V transposed per head, V as
     * [n_layer][head][d_head][n_audio_ctx], K the same in tiles of 128 frames
     * (decoder.c): the scores are sums of rows, the output dot products over
     * the frames, and half the bytes are read (whisper.cpp keeps its cross
     * K/V in f16 too) */
    uint16_t *k16, *v16;
    float *staging;            /* [n_audio_ctx][d]: one projection before packing */
    long computations;         /* how often they were projected (tests) */
} hark_cross;

/* One decoded sequence: its self-attention KV cache and scratch. */
typedef struct hark_kv {
    float *self_k, *self_v;    /* [n_layer][n_text_ctx][d] */
    int n_past;                /* tokens in the cache */
    const hark_cross *cross;
    float *scratch;
    /* when capture is set: pre-softmax cross-attention scores of the model's
     * alignment heads, [n_alignment_heads][n_text_ctx][n_audio_ctx] by position */
    float *capture;
} hark_kv;

int hark_cross_init(hark_cross *c, const hark_model *m);
void hark_cross_free(hark_cross *c);
/* Projects the encoder output to cross-attention K/V (once per window). */
void hark_cross_set(const hark_model *m, hark_cross *c, const float *enc_out);
int hark_kv_init(hark_kv *kv, const hark_model *m, const hark_cross *cross);
void hark_kv_free(hark_kv *kv);
/* Makes dst's cache a copy of src's (both from the same model). */
void hark_kv_copy(const hark_model *m, hark_kv *dst, const hark_kv *src);
/* Runs n tokens at position kv->n_past; writes the logits of the last token
 * ([n_vocab]) and advances the cache. */
int hark_decode(const hark_model *m, hark_kv *kv, const int *tokens, int n, float *logits);
/* hark_decode without logits: every row's final layer-normed state ([n][n_text_state]),
 * which hark_linear with tok_emb turns into that row's logits. */
int hark_decode_states(const hark_model *m, hark_kv *kv, const int *tokens, int n, float *states);
/* One token for each of n sequences sharing one cross K/V (beams, samples):
 * logits [n][n_vocab]. */
int hark_decode_batch(const hark_model *m, hark_kv **kvs, const int *tokens, int n,
                      float *logits);

/* ------------------------------------------------------------ language */

/* The language token for params->language, or the most likely one when it is
 * NULL or "auto" (encodes the mel window into enc and sets cross). */
int hark_select_language(const hark_model *m, const hark_params *p, const float *mel_window,
                         float *enc, hark_cross *cross, char *code, size_t code_len,
                         int *lang_token, hark_error *e);
/* Language probabilities of a mel window, most likely first. */
int hark_rank_languages(const hark_model *m, const float *mel_window, float *enc,
                        hark_cross *cross, int *order, float *probs);

#endif
