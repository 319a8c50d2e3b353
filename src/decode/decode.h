/* Decoding, stage by stage: a window's tokens (search.c: greedy, beam, sampling,
 * as openai/whisper's DecodingTask), the language (language.c), the long-form loop
 * (longform.c), word timing (align.c, wordseek.c) and whisper.cpp's --max-len
 * (max_len.c), over the segments and words of segment.c. */
#ifndef HARK_DECODE_H
#define HARK_DECODE_H

#include "audio/audio.h"
#include "nn/nn.h"

/* ------------------------------------------------------------ segments and words */

typedef struct hark_segment {
    int seek;             /* mel frame where its window started */
    double start, end;    /* seconds */
    char *text;           /* valid UTF-8 */
    int *tokens;
    float *probs;
    char **token_text;    /* each token's bytes, made valid UTF-8 */
    int n_tokens;
    float temperature, avg_logprob, compression_ratio, no_speech_prob;
    struct hark_word *words;
    int n_words;
    char speaker;         /* diarized: '0', '1' or '?' (hark_levels_speaker); else 0 */
} hark_segment;

typedef struct hark_word {
    char *text;
    double start, end;
    float probability;
    int n_tokens;         /* its text tokens, in order in its segment's */
} hark_word;

typedef struct hark_result {
    hark_segment *seg;
    int n, cap;
    char *text;
    char language[16];
    double audio_seconds;
    int diarized;         /* transcribed with params.diarize: the writers' speaker columns */
} hark_result;

void hark_result_clear(hark_result *r);
/* Frees what a segment owns (not the segment itself). */
void hark_segment_free(hark_segment *s);

/* ------------------------------------------------------------ one window */

typedef struct hark_decode_opts {
    int timestamps;       /* predict timestamp tokens                              */
    int sample_len;       /* most tokens to sample                                 */
    const int *prompt;    /* previous-text tokens (without startofprev)            */
    int n_prompt;
    int lang_token;       /* -1 for English-only models                             */
    int task_token;       /* -1 for English-only models                             */
    float temperature;    /* 0: greedy or beam search; > 0: sampling               */
    int beam_size;        /* beams at temperature 0; <= 1 greedy                   */
    float patience;
    float length_penalty; /* < 0: rank by sum_logprob / length                      */
    int best_of;          /* independent samples at temperature > 0                */
    uint64_t seed;        /* sampling generator state for this window and temperature */
    int max_initial_timestamp; /* index of the latest allowed first timestamp       */
    const int *suppress;  /* more ids never sampled (negative ones ignored)         */
    int n_suppress;
    int no_model_suppress; /* leave out the model's own suppress_tokens             */
    const int *suppress_matching; /* ids never sampled: the suppress_regex's matches  */
    int n_suppress_matching;
    const char *prepend_punctuations; /* word timing's marks (NULL: openai's)       */
    const char *append_punctuations;
} hark_decode_opts;

typedef struct hark_window {
    int *tokens;          /* sampled tokens, eot excluded */
    float *probs;         /* probability of each when chosen */
    int n, cap;
    double sum_logprob;   /* eot's log-probability included, as openai sums it */
    float no_speech_prob;
} hark_window;

/* KV caches and buffers for decoding, made once and reused window after window. */
typedef struct hark_decoder hark_decoder;
hark_decoder *hark_decoder_new(void);
void hark_decoder_free(hark_decoder *d);

/* A step broker (broker.c): decoders that join one step their sequences
 * together, so that several files' windows read each weight once a step.  The
 * logits are the same bits as without it. */
typedef struct hark_broker hark_broker;
hark_broker *hark_broker_new(void);
void hark_broker_free(hark_broker *b);
/* A context of n threads joins b: the combined steps run on a pool of as many
 * threads as its contexts have together. */
void hark_broker_add_threads(hark_broker *b, int n);
/* From now on dec's steps go through b (NULL: alone again). */
void hark_decoder_join(hark_decoder *dec, hark_broker *b);
/* A thread's decoding phase (its steps submitted one after another): a step
 * runs once every thread in that phase has submitted. */
void hark_broker_enter(hark_broker *b);
void hark_broker_leave(hark_broker *b);
/* Submits one token for each of n sequences sharing one cross K/V and waits
 * for the combined step; *logits then points at their [n][n_vocab] logits,
 * which stay until this thread's next submission or hark_broker_leave. */
int hark_broker_step(hark_broker *b, const hark_model *m, hark_kv **kvs, const int *tokens, int n,
                    const float **logits);

/* Decodes one window against cross K/V already set for it; dec may be NULL
 * (temporary caches).  HARK_ERR_MODEL: the logits held NaN (corrupt weights),
 * found at the first step or whenever a chosen token's log-probability is NaN. */
int hark_decode_window(const hark_model *m, const hark_cross *cross, const hark_decode_opts *o,
                       hark_decoder *dec, hark_window *w);
void hark_window_free(hark_window *w);
/* The start sequence: [startofprev prompt...] sot [lang task] [notimestamps].
 * *sot_index receives the position of sot. */
int hark_start_sequence(const hark_model *m, const hark_decode_opts *o, int *seq, int cap,
                        int *sot_index);
/* openai's suppress_tokens option into o: the n ids (none: the model's own list
 * alone; -1 among them: that list too). */
void hark_suppress_option(hark_decode_opts *o, const int *ids, int n);
/* The logit filters for the next token after toks[0..n) (exposed for tests). */
void hark_apply_filters(const hark_model *m, const hark_decode_opts *o, float *logits,
                        const int *toks, int n);
/* Language probabilities after [sot] (multilingual models): probs[n_langs];
 * HARK_ERR_MODEL when they are NaN. */
int hark_language_probs(const hark_model *m, const hark_cross *cross, float *probs);
/* The message for a decoding failure rc: NaN in the model's output
 * (HARK_ERR_MODEL) or out of memory; returns rc. */
int hark_fail_decode(hark_error *e, int rc, const hark_model *m);

/* ------------------------------------------------------------ language */

/* The language token for params->language, or the most likely one when it is
 * NULL or "auto" (encodes the mel window into enc and sets cross). */
int hark_select_language(const hark_model *m, const hark_params *p, const float *mel_window,
                         float *enc, hark_cross *cross, char *code, size_t code_len,
                         int *lang_token, hark_error *e);
/* Language probabilities of a mel window, most likely first. */
int hark_rank_languages(const hark_model *m, const float *mel_window, float *enc,
                        hark_cross *cross, int *order, float *probs);

/* ------------------------------------------------------------ long-form */

float hark_compression_ratio(const char *text);
/* openai's fallback rule: retry at the next temperature when the text is too
 * repetitive or too unlikely, unless the window is silence. */
int hark_needs_fallback(const hark_params *p, const char *text, double sum_logprob, int n_tokens,
                        float no_speech_prob);
/* Word timing (align.c), as openai's add_word_timestamps: the words of a
 * window's segments from the cross-attention of the decoded tokens; t0 is the
 * window's start and last_speech the end of the speech before it, in seconds. */
int hark_align_words(const hark_model *m, const hark_cross *cross, const hark_decode_opts *o,
                     int n_frames, double t0, double last_speech, hark_segment *segs, int n_segs);
/* openai's fitting of a segment's bounds and its first and last words to each
 * other (median: the window's median word duration, at most 0.7 s); moves
 * *last_speech to the segment's end when it has words. */
void hark_fit_segment_bounds(hark_segment *s, double median, double *last_speech);
double hark_round2(double x);

/* A decoded window, in mel frames (wordseek.c). */
typedef struct hark_word_window {
    int seek;            /* where the window starts */
    int size;            /* frames of audio in it */
    int window;          /* the model's window length */
    int content;         /* frames of audio in the file */
    int single_end;      /* its tokens end in one timestamp: no speech after it */
    double last_speech;  /* end of the last word before it, seconds */
} hark_word_window;
/* openai's transcribe() with timed words: where the next window starts, given
 * next, the frame after the window's segments by their timestamps.  With a
 * hallucination silence threshold (seconds; <= 0: none), *keep is the number
 * of segs to keep (the rest looked hallucinated, with silence around them), or
 * -1 when the window is dropped whole: its first words looked hallucinated
 * after a silence, which the next window starts after. */
int hark_word_seek(const hark_word_window *w, double threshold, const hark_segment *segs, int n,
                   int next, int *keep);
/* The end of the last word of segs[0..n), else of the last segment; 0 when n is 0. */
int hark_segments_end(const hark_segment *segs, int n, double *end);
/* openai's is_segment_anomaly: improbable, very short or very long words. */
int hark_segment_anomaly(const hark_segment *s);
/* What hark_run transcribes: 16 kHz mono samples, and with them the loudness of
 * a stereo file's channels when its speakers are to be told apart (else NULL). */
typedef struct hark_audio {
    const hark_source *src;
    const hark_levels *levels;
} hark_audio;
/* whisper.cpp's max_len with split_on_word (max_len.c): s cut between its words into
 * pieces of at most max_len characters, *n of them in *pieces (malloc'd, each owning
 * its copies; s untouched); *n is 0 when s stays whole (one piece, or no words). */
int hark_split_segment(const hark_segment *s, int max_len, int eot, hark_segment **pieces, int *n);
/* Transcribes the audio into r. */
struct hark_pool;
struct hark_decoder;
int hark_run(const hark_model *m, const hark_params *p, struct hark_pool *pool,
             struct hark_decoder *dec, const hark_audio *in, hark_result *r, hark_error *e);
/* An observer of the long-form loop (hark explain): after each window is decoded,
 * its number (from 0), where it starts (mel frame), its mel window, the cross K/V
 * set for it, the options it was decoded with (its prompt) and the tokens taken.
 * A non-zero return stops the transcription with that code. */
typedef struct hark_window_observer {
    void *user;
    int (*decoded)(void *user, const hark_model *m, int index, int seek, const float *mel,
                   const hark_cross *cross, const hark_decode_opts *o, const hark_window *w);
} hark_window_observer;
/* hark_run with an observer (NULL: none). */
int hark_run_observed(const hark_model *m, const hark_params *p, struct hark_pool *pool,
                      struct hark_decoder *dec, const hark_audio *in, hark_result *r,
                      hark_error *e, const hark_window_observer *obs);

#endif
