/* Decoding one window: the start sequence, logit filters, and greedy,
 * sampled or beam-search selection, as openai/whisper's DecodingTask. */
#ifndef HARK_DECODE_H
#define HARK_DECODE_H

#include "internal.h"

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

#endif
