/* hark — Whisper speech-to-text in C.  The public API, the library's only door.
 *
 * A model is loaded once (from a Hugging Face Whisper directory or a whisper.cpp
 * ggml .bin) and may be shared read-only by many contexts, one per thread.  A
 * context transcribes samples or a file with a params struct; results are read
 * back through getters.  Functions that can fail return a negative code and
 * leave a one-line message ("file: problem") retrievable from the context (or,
 * for loading, written to the caller's buffer).  The library never prints, never
 * exits and never aborts on bad input.
 */
#ifndef HARK_H
#define HARK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HARK_VERSION "0.1.0"
#define HARK_SAMPLE_RATE 16000

enum hark_status {
    HARK_OK = 0,
    HARK_ERR_IO = -1,      /* a file could not be opened or read          */
    HARK_ERR_FORMAT = -2,  /* a file's contents are malformed             */
    HARK_ERR_MODEL = -3,   /* the model cannot do what was asked          */
    HARK_ERR_ARG = -4,     /* the caller passed something invalid         */
    HARK_ERR_NOMEM = -5,
};

typedef struct hark_model hark_model;
typedef struct hark_context hark_context;

typedef struct hark_params {
    int n_threads;          /* threads for the numeric kernels; default 1          */
    int timestamps;         /* 1: predict timestamp tokens and segment by them     */
    int max_tokens;         /* tokens sampled per window; 0 = n_text_ctx / 2       */
    const char *language;   /* language code for multilingual models; NULL = "en" */
    int translate;          /* task translate instead of transcribe               */
} hark_params;

typedef struct hark_token_info {
    int id;
    float p;                /* probability of the token when it was chosen */
    const char *text;       /* its bytes, NUL-terminated (may be a partial UTF-8 character) */
} hark_token_info;

hark_params hark_default_params(void);

/* Loads a model from a directory (Hugging Face) or a file (ggml).  On failure
 * returns NULL and writes "path: problem" into err (errlen bytes). */
hark_model *hark_model_load(const char *path, char *err, size_t errlen);
void hark_model_free(hark_model *model);
/* Model facts: n_mels, window length in samples, vocabulary size. */
int hark_model_n_mels(const hark_model *model);
int hark_model_n_vocab(const hark_model *model);
int hark_model_window_samples(const hark_model *model);
int hark_model_is_multilingual(const hark_model *model);

hark_context *hark_context_new(const hark_model *model, const hark_params *params);
void hark_context_free(hark_context *ctx);
const char *hark_last_error(const hark_context *ctx);

/* Transcribes mono 16 kHz float samples, or any audio file libsndfile reads
 * ("-" for stdin).  Replaces the context's previous results. */
int hark_transcribe(hark_context *ctx, const float *samples, size_t n_samples);
int hark_transcribe_file(hark_context *ctx, const char *path);

/* Results of the last transcription. */
const char *hark_text(const hark_context *ctx);  /* all segments, joined */
const char *hark_language(const hark_context *ctx);
double hark_audio_seconds(const hark_context *ctx);
int hark_n_segments(const hark_context *ctx);
const char *hark_segment_text(const hark_context *ctx, int i);
double hark_segment_start(const hark_context *ctx, int i);
double hark_segment_end(const hark_context *ctx, int i);
int hark_segment_n_tokens(const hark_context *ctx, int i);
hark_token_info hark_segment_token(const hark_context *ctx, int i, int j);

/* The last results as "txt", "srt", "vtt", "tsv" or "json" (malloc'd; NULL
 * for an unknown format). */
char *hark_format_output(const hark_context *ctx, const char *format);
/* Writes them to path through a temporary file renamed into place. */
int hark_write_output(const hark_context *ctx, const char *format, const char *path, char *err,
                      size_t errlen);

/* Reads an audio file into mono 16 kHz float samples (caller frees with free()). */
int hark_read_audio(const char *path, float **samples, size_t *n_samples, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
