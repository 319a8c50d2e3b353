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

/* libhark.so exports what this header declares and nothing else: the library is
 * built with -fvisibility=hidden, and these declarations make their definitions
 * visible. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* Threads: a context runs its work on a pool of params.n_threads, and every OpenBLAS
 * call hark makes runs inside one of those threads.  The library leaves OpenBLAS's
 * own thread count alone (a process-wide setting): a program sets it to one, with
 * openblas_set_num_threads(1) or OPENBLAS_NUM_THREADS=1, as hark's CLI does, so that
 * n_threads means that many busy cores and results are the same for every count. */

#define HARK_VERSION "0.1.0"
#define HARK_SAMPLE_RATE 16000

enum hark_status {
    HARK_OK = 0,
    HARK_ERR_IO = -1,      /* a file could not be opened or read          */
    HARK_ERR_FORMAT = -2,  /* a file's contents are malformed             */
    HARK_ERR_MODEL = -3,   /* the model cannot do what was asked          */
    HARK_ERR_ARG = -4,     /* the caller passed something invalid         */
    HARK_ERR_NOMEM = -5,
    HARK_ERR_ABORTED = -6, /* params.should_abort asked to stop           */
    HARK_ERR_TOO_LONG = -7, /* the input went on past params.max_duration: the
                             * results hold the transcript of the part before */
};

typedef struct hark_model hark_model;
typedef struct hark_context hark_context;
typedef struct hark_vad hark_vad;

/* openai's default prepend_punctuations and append_punctuations (UTF-8) */
#define HARK_PREPEND_PUNCTUATIONS "\"'\xe2\x80\x9c\xc2\xbf([{-"
#define HARK_APPEND_PUNCTUATIONS                                                              \
    "\"'.\xe3\x80\x82,\xef\xbc\x8c!\xef\xbc\x81?\xef\xbc\x9f:\xef\xbc\x9a\xe2\x80\x9d)]}\xe3\x80\x81"
/* beam_size and best_of at most: the sequences one window decodes together */
#define HARK_MAX_BEAMS 64
#define HARK_MAX_TEMPERATURES 16
#define HARK_MAX_CLIP_TIMESTAMPS 64
#define HARK_MAX_SUPPRESS_TOKENS 256

/* The arithmetic of the encoder's matrix products (hark_params.precision): f32, or
 * bf16 products summed in f32 (AVX512_BF16), or int8 weights (a scale per row) and
 * activations (a scale per frame) summed in int32 (AVX512_VNNI); attention,
 * LayerNorm and the decoder stay f32.  A CPU without the instructions runs a
 * named lower precision in portable C (the same results, slower than f32).
 * AUTO: the fastest precision whose tokens equal f32's on hark's checks
 * (docs/perf-log.md) that this CPU runs natively, else f32. */
enum hark_precision {
    HARK_PRECISION_AUTO = 0,
    HARK_PRECISION_F32 = 1,
    HARK_PRECISION_BF16 = 2,
    HARK_PRECISION_INT8 = 3,
};
/* "auto", "f32", "bf16", "int8" -> its value; -1 for another name. */
int hark_precision_parse(const char *name);
/* The precision asked for runs as (AUTO resolved on this CPU): "f32", "bf16",
 * "int8"; NULL for a value that is none of them. */
const char *hark_precision_effective(int precision);

typedef struct hark_params {
    int n_threads;          /* threads for the numeric kernels; default 1                 */
    int precision;          /* enum hark_precision of the encoder (default AUTO)          */
    const char *language;   /* multilingual models: a code ("de") or openai's name ("German",
                             * any case), or NULL/"auto" to detect; English-only models
                             * take any and transcribe English, as openai's do */
    int translate;          /* task translate instead of transcribe (multilingual only)   */
    int timestamps;         /* 1 (default): timestamp tokens, segments from their pairs  */
    /* openai's clip_timestamps: start,end,start,end... seconds to transcribe (an odd
     * count: the last clip runs to the end); none: the whole file */
    float clip_timestamps[HARK_MAX_CLIP_TIMESTAMPS];
    int n_clip_timestamps;
    /* whisper.cpp's max_len with split_on_word: with words.enabled, each segment cut
     * between its words into segments of at most this many characters (a longer word
     * alone; 1: a word a segment), in every output (0: off) */
    int max_len;
    /* whisper.cpp's --diarize: in a two-channel file (hark_transcribe_file), each segment's
     * speaker is the channel louder over it by 10 % (two parties recorded a channel each);
     * the writers label segments with it (0) */
    int diarize;
    /* seconds of a file's audio read at most (hark_transcribe_file; default 86400, a
     * day; 0: no limit): an input going on past it (an endless stream, a recording left
     * running) is transcribed up to there, and HARK_ERR_TOO_LONG says so */
    double max_duration;

    /* how each window's tokens are chosen, as openai/whisper's DecodingOptions */
    struct {
        int beam_size;        /* beams at temperature 0; 0 or 1 = greedy (default 5)       */
        float patience;       /* beam search patience (default 1.0)                         */
        float length_penalty; /* < 0: rank by sum_logprob / length; else Google NMT penalty */
        int best_of;          /* samples drawn at temperature > 0 (default 5)               */
        unsigned long long seed; /* sampling generator seed (default 0)                     */
        int max_tokens;       /* tokens sampled per window; 0 = n_text_ctx / 2              */
    } search;

    /* tokens never sampled */
    struct {
        /* openai's suppress_tokens: ids, and -1 among them for the model's own list
         * (generation_config's, else openai's non-speech symbols); none (0): that list */
        int tokens[HARK_MAX_SUPPRESS_TOKENS];
        int n_tokens;
        /* whisper.cpp's suppress_regex: text tokens whose whole text (its leading space
         * included) matches this POSIX extended regular expression, e.g. " ?[0-9]+" for
         * tokens of digits (NULL or "": none) */
        const char *regex;
    } suppress;

    /* openai's temperature fallback: a window is decoded again at the next temperature
     * when its text is too repetitive or too unlikely, unless it is silence */
    struct {
        float temperatures[HARK_MAX_TEMPERATURES]; /* the ladder (default 0, 0.2 ... 1.0) */
        int n_temperatures;
        float compression_ratio_threshold; /* retry above this (default 2.4; <= 0: off)   */
        float logprob_threshold;           /* retry below this avg_logprob (default -1.0) */
        float no_speech_threshold;         /* silence when P(nospeech) above it (0.6)     */
    } fallback;

    /* what each window is prompted with */
    struct {
        int condition_on_previous_text; /* the previous text (default 1)                */
        const char *initial;            /* openai's initial_prompt, for the first window */
        int carry_initial;              /* openai's carry_initial_prompt: the initial prompt
                                         * before every window's previous text (0)       */
    } prompt;

    /* word-level timing from the cross-attention of the alignment heads (DTW) */
    struct {
        int enabled;                     /* openai's word_timestamps (0)                  */
        /* openai's hallucination_silence_threshold: segments of improbable, very short
         * or very long words with at least this many seconds of silence around them are
         * dropped and skipped (0: off) */
        float hallucination_silence_threshold;
        /* openai's prepend_punctuations / append_punctuations: a word that is one of the
         * first (a substring test, as Python's `in`) joins the next word, one of the
         * second the previous; NULL: openai's defaults */
        const char *prepend_punctuations;
        const char *append_punctuations;
    } words;

    /* whisper.cpp's --vad: a Silero VAD model (hark_vad_load) finds the speech first, only
     * the speech is transcribed (its spans joined by 0.1 s of silence) and the times are
     * the file's.  Incompatible with clip timestamps.  Its settings, as whisper.cpp's
     * vad_params: */
    struct {
        const hark_vad *model;  /* NULL: off                                              */
        float threshold;        /* speech at or above this probability (default 0.5)      */
        int min_speech_ms;      /* shorter speech is dropped (default 250)                */
        int min_silence_ms;     /* silence that ends a span (default 100)                 */
        float max_speech_s;     /* longer spans are split (default 0: no limit)           */
        int speech_pad_ms;      /* each span widened by this (default 30)                 */
        float samples_overlap;  /* seconds kept after each span but the last (default 0.1) */
    } vad;

    struct {
        /* called once per segment as each window's segments become final, in order and
         * on the transcribing thread (whisper.cpp's new_segment_callback; openai's verbose
         * printing): the bounds in seconds and the text as hark_segment_text gives it.
         * The k-th call (from 0) is segment k, which the hark_segment_ getters read */
        void (*on_segment)(double start, double end, const char *text, void *user);
        void *on_segment_user;
        /* called after each window (whisper.cpp's progress_callback): seconds of the
         * audio passed so far, of total; the last call has done == total */
        void (*on_progress)(double done, double total, void *user);
        void *on_progress_user;
        /* asked before each window (whisper.cpp's abort_callback): nonzero stops, and the
         * transcription returns HARK_ERR_ABORTED with the segments of the windows before */
        int (*should_abort)(void *user);
        void *should_abort_user;
    } callbacks;
} hark_params;

/* How the srt and vtt writers lay cues out from timed words, as openai's options of
 * these names (hark_format_output; NULL there: none of them, all 0).  They
 * change no transcript, only its subtitles: the words come from params.words. */
typedef struct hark_output_params {
    int highlight_words;    /* a cue per word, the word underlined (0)                 */
    int max_line_width;     /* characters a line (0: not set)                          */
    int max_line_count;     /* lines a cue, with max_line_width (0: not set)           */
    int max_words_per_line; /* words a cue, without max_line_width (0: not set)        */
} hark_output_params;

typedef struct hark_token_info {
    int id;
    float p;                /* probability of the token when it was chosen */
    const char *text;       /* its text, valid UTF-8: a token holding part of a character
                             * reads as U+FFFD, as openai's decode of it alone does */
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
/* The model's identity, for telling whether two runs used the same model: a hash
 * of its dimensions, its settings (suppressed tokens, alignment heads), the size of
 * its weights and of pages spread over them (their headers included). */
unsigned long long hark_model_identity(const hark_model *model);
/* Whisper's 100 languages: the code of a code or of openai's name or alias of it,
 * in any case ("German", "castilian": "de", "es"), and openai's lower-case name
 * ("german"); NULL for none of them. */
const char *hark_language_code(const char *code_or_name);
const char *hark_language_name(const char *code_or_name);

hark_context *hark_context_new(const hark_model *model, const hark_params *params);
void hark_context_free(hark_context *ctx);
const char *hark_last_error(const hark_context *ctx);

/* Contexts that decode together (hark -j N): while several of them transcribe
 * at once, each on its own thread, the sequences of all their windows (greedy
 * ones, beams, best-of samples) step through the decoder together, each weight
 * read once a step for all, on a pool of as many threads as the contexts have
 * together while theirs wait; a context encoding a window is not waited for.  Results are the same
 * bits as each context's alone.  Contexts join while none of them transcribes;
 * a batch is freed after its contexts (or after they leave it). */
typedef struct hark_batch hark_batch;
hark_batch *hark_batch_new(void);
void hark_batch_free(hark_batch *batch);
/* ctx joins batch (NULL: leaves its batch).  HARK_ERR_ARG when the batch's other
 * contexts use another model. */
int hark_context_join(hark_context *ctx, hark_batch *batch);

/* Transcribes mono 16 kHz float samples, or an audio file as hark_read_audio reads
 * it ("-" for stdin).  Replaces the context's previous results. */
int hark_transcribe(hark_context *ctx, const float *samples, size_t n_samples);
int hark_transcribe_file(hark_context *ctx, const char *path);

/* Language detection on the first window of samples: probabilities of the
 * model's languages, most likely first.  Returns the count written. */
int hark_detect_language(hark_context *ctx, const float *samples, size_t n_samples,
                         const char **codes, float *probs, int max);

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
/* With params.diarize: 0 (left channel) or 1 (right) for the louder over the segment,
 * HARK_SPEAKER_UNSURE when neither is (whisper.cpp's "?"), HARK_SPEAKER_NONE when there
 * is no label (diarize off, a file without two channels, samples given directly). */
#define HARK_SPEAKER_UNSURE (-1)
#define HARK_SPEAKER_NONE (-2)
int hark_segment_speaker(const hark_context *ctx, int i);
/* Segment statistics, as openai/whisper reports them. */
float hark_segment_avg_logprob(const hark_context *ctx, int i);
float hark_segment_no_speech_prob(const hark_context *ctx, int i);
float hark_segment_temperature(const hark_context *ctx, int i);
float hark_segment_compression_ratio(const hark_context *ctx, int i);
/* openai's "seek": the mel frame (10 ms) where the segment's window began. */
int hark_segment_seek(const hark_context *ctx, int i);
/* Word-level timing (with params.word_timestamps). */
int hark_segment_n_words(const hark_context *ctx, int i);
const char *hark_segment_word(const hark_context *ctx, int i, int w, double *start, double *end,
                              float *probability);

/* The last results as "txt", "srt", "vtt", "tsv", "json", "csv" or "lrc", the srt and
 * vtt cues laid out by layout (NULL: one a segment) (malloc'd; NULL for an unknown
 * format). */
char *hark_format_output(const hark_context *ctx, const char *format,
                         const hark_output_params *layout);
/* Writes them to path through a temporary file renamed into place. */
int hark_write_output(const hark_context *ctx, const char *format, const hark_output_params *layout,
                      const char *path, char *err, size_t errlen);

/* Pieces of the writers, for programs that print as they go (hark's -v, its stream):
 * whether hark_format_output writes format name; segment i's text as the txt writer
 * prints it, on a line of its own after "(speaker N) " for a diarized label N (0: none);
 * openai's --verbose line "[00:01.000 --> 00:03.400]  text\n" (hours only past the
 * first); whisper.cpp's --print-colors text, each character coloured by its token's
 * probability; segment i's speaker label as the writers print it ('0', '1', '?'; 0
 * for none).  Strings are malloc'd (NULL when out of memory, or no such segment). */
int hark_is_format(const char *name);
char *hark_txt_line(const char *text, char speaker);
char *hark_verbose_line(double start, double end, const char *text, char speaker);
char *hark_segment_colored(const hark_context *ctx, int i);
char hark_segment_label(const hark_context *ctx, int i);

/* Silero VAD (v5 or v6) from whisper.cpp's ggml VAD file (ggml-silero-v6.2.0.bin; hark
 * ships one in models/silero-vad/).  NULL on failure, with "path: problem" in err.
 * A loaded model is read-only: contexts on any thread may share it. */
hark_vad *hark_vad_load(const char *path, char *err, size_t errlen);
void hark_vad_free(hark_vad *vad);
#define HARK_VAD_CHUNK 512
/* The probability of speech in each HARK_VAD_CHUNK samples of mono 16 kHz audio (the
 * last chunk zero-padded): writes ceil(n_samples / HARK_VAD_CHUNK) values to probs.
 * Returns 0, or HARK_ERR_NOMEM. */
int hark_vad_probs(const hark_vad *vad, const float *samples, size_t n_samples, float *probs);
/* The speech spans that params->vad set would transcribe (whisper.cpp's
 * whisper_vad_segments_from_samples, under params' vad_ settings), in seconds: the
 * first max into start[] and end[].  Returns how many there are (more than max
 * when they did not fit), or a negative HARK_ERR_ code. */
int hark_vad_speech_spans(const hark_vad *vad, const hark_params *params, const float *samples,
                          size_t n_samples, double *start, double *end, int max);

/* Reads an audio file into mono 16 kHz float samples (caller frees with free()):
 * what libsndfile reads, and what it cannot through ffmpeg when that is installed
 * ($HARK_FFMPEG, else ffmpeg on PATH; HARK_FFMPEG set empty: never), run as a
 * child process whose exit this call waits for. */
int hark_read_audio(const char *path, float **samples, size_t *n_samples, char *err, size_t errlen);
/* A file's length in seconds as libsndfile reads it from the header, without
 * decoding; -1 when it cannot tell (not a format libsndfile opens, a damaged header,
 * a stream of unknown length). */
double hark_audio_file_seconds(const char *path);

/* Decoding MPEG audio mutes stderr (fd 2) for its decoder's chatter, process-wide; a
 * program that writes to stderr from other threads meanwhile takes this lock around
 * its writes, so that none is lost. */
void hark_stderr_lock(void);
void hark_stderr_unlock(void);
/* Chunk id ("fmt ", "data") in the first n bytes of a RIFF/WAVE file: its contents'
 * offset in *at and its declared length in *len; 1 when found, else 0 (a WAV stream
 * read as it arrives: hark stream). */
int hark_wav_chunk(const unsigned char *d, size_t n, const char *id, size_t *at,
                   unsigned int *len);
/* The log-mel spectrogram transcription uses, Whisper's: samples padded with
 * pad_samples zeros (openai pads 30 s), n_mels 80 or 128, into *mel (malloc'd,
 * [n_mels][*n_frames]). */
int hark_log_mel_spectrogram(const float *samples, size_t n, size_t pad_samples, int n_mels,
                             float **mel, int *n_frames, char *err, size_t errlen);

/* ------------------------------------------------------------ model files */

/* Whether hark_model_write writes type: "f32", "f16", "q8_0", "q5_0", "q5_1", "q4_0",
 * "q4_1" (hark quantize). */
int hark_model_write_type(const char *type);
/* Writes a loaded model as a whisper.cpp ggml .bin with its matrices in type, through a
 * temporary file renamed into place. */
int hark_model_write(const hark_model *model, const char *path, const char *type, char *err,
                     size_t errlen);
/* 0 when params.suppress_regex would take pattern (a POSIX extended regular
 * expression), else -1 with regcomp's reason in why. */
int hark_suppress_regex_check(const char *pattern, char *why, size_t n);

/* ------------------------------------------------------------ see inside */

/* A Whisper model's dimensions, openai's ModelDimensions. */
typedef struct hark_dims {
    int n_mels, n_vocab;
    int n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer;
    int n_text_ctx, n_text_state, n_text_head, n_text_layer;
} hark_dims;
hark_dims hark_model_dims(const hark_model *model);
/* openai's released models' dimensions by name: tiny, base, small, medium (each also
 * .en), large, large-v2, large-v3, large-v3-turbo.  0, or HARK_ERR_ARG for another. */
int hark_whisper_dims(const char *name, hark_dims *dims);
/* The forward pass as a table (hark explain --shapes): for one window and one
 * decoding step, each tensor as the code names it, its shape in symbols and in
 * numbers, the operation, its parameters and FLOPs, and the model's totals
 * (parameters by kind, KV-cache and cross K/V bytes, the encoder's score memory).
 * format "text" (for a terminal) or "json"; malloc'd, NULL for an unknown format,
 * dimensions out of range or no memory. */
char *hark_shapes(const hark_dims *dims, const char *format);

/* A trace of one window of a transcription (hark explain AUDIO): the window is
 * decoded as always, then its mel and the tokens it took run through the networks
 * again with a probe that records, per layer and head, the decoder's
 * self-attention (the masked upper triangle exactly 0) and cross-attention, the
 * encoder's self-attention summed up (mean distance, entropy, a downsampled map),
 * the q.k scores with and without the 1/sqrt(d_head) scaling, the logit lens
 * (each layer's residual stream through the final LayerNorm and the output
 * projection) and each step's candidates.  Transcription without a trace never
 * runs the probe.  window: from 0. */
typedef struct hark_explain hark_explain;
hark_explain *hark_explain_new(int window);
void hark_explain_free(hark_explain *x);
/* Is attention an explanation?  With seconds > 0 the trace also masks each span of
 * that length of the window's audio in turn (as silence), measures how much log
 * probability each taken token loses, and ranks, per cross-attention head, how well
 * its attention over the spans follows that loss (Spearman, averaged over the text
 * tokens).  0: off (the default). */
void hark_explain_set_occlusion(hark_explain *x, double seconds);
/* hark_transcribe, recording the trace's window into x (the results are
 * hark_transcribe's, token for token); HARK_ERR_ARG when the audio has no such
 * window. */
int hark_transcribe_explained(hark_context *ctx, const float *samples, size_t n_samples,
                              hark_explain *x);
/* The trace as JSON (malloc'd): every number hark explain's page draws; NULL
 * before a trace, or out of memory. */
char *hark_explain_json(const hark_explain *x);

/* ------------------------------------------------------------ benchmarks */

enum { HARK_BENCH_BATCH = 5 }; /* sequences the batched-decode stage steps together */
/* One part of a decoding step, timed in a separate run of the decode stage (its
 * clock reads left out of decode_ms_per_token): time per token and the bytes it
 * reads per token (weights in their stored type; the self-attention KV cache at
 * the stage's mean length; the cross-attention K/V). */
enum { HARK_BENCH_PARTS = 4 }; /* self-attention, cross-attention, MLP, logits */
typedef struct hark_bench_part {
    const char *name;
    double ms_per_token, mb_per_token;
} hark_bench_part;
/* A model's stages as hark bench times them (whisper.cpp's bench protocol): each the
 * median of reps runs on pseudo-random input, on a thread pool of n_threads. */
typedef struct hark_bench_stages {
    const char *weight_type;   /* the decoder's stored type ("f16", "q8_0", ...) */
    const char *precision;     /* the encoder's, as it ran ("f32", "bf16", "int8") */
    double first_logits_ms;    /* buffers made and one decoding step: a load's tail */
    double first_encoder_ms;   /* the first pass, as a file's first window */
    double encoder_ms;         /* one window and its cross-attention K/V */
    double decode_ms_per_token, batch5_ms_per_token, prompt_ms_per_token;
    int decode_steps, batch_steps, prompt_tokens; /* bounded by the model's text context */
    double encoder_gflop;      /* the work of one encoder window */
    double decode_weight_mb;   /* the weights one decoded token reads */
    double decode_read_mb;     /* the same, and every layer's cross-attention K/V */
    hark_bench_part decode_parts[HARK_BENCH_PARTS];
} hark_bench_stages;
int hark_bench_model(const hark_model *model, int n_threads, int reps, int precision,
                     hark_bench_stages *out);
/* The encoder stage alone at a precision (enum hark_precision): the median of reps
 * passes after one unmeasured pass (which packs the weights for that precision),
 * in ms; negative when out of memory.  cpu_ms (when not NULL): the median of the
 * process's CPU time a pass, which a machine shared with other work disturbs
 * less than the wall time (one thread: that thread's time). */
double hark_bench_encoder_ms(const hark_model *model, int n_threads, int reps, int precision,
                             double *cpu_ms);
/* The best of 10 runs of an n x n x n f32 product, in GFLOP/s: OpenBLAS's (tiles 0; its
 * threads as the program set them), or hark's AVX-512 tiles on a pool of n_threads, as
 * the encoder's projections run them (0 on a CPU without them). */
double hark_bench_sgemm_gflops(int n, int n_threads, int tiles);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
