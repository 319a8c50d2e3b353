/* Decoding one window: logit filters and token selection. */
#ifndef HARK_DECODE_H
#define HARK_DECODE_H

#include "internal.h"

typedef struct hark_decode_opts {
    int timestamps;       /* predict timestamp tokens                    */
    int sample_len;       /* most tokens to sample                       */
    const int *prompt;    /* previous-text tokens (without startofprev)  */
    int n_prompt;
} hark_decode_opts;

typedef struct hark_window {
    int *tokens;          /* sampled tokens, eot excluded */
    float *probs;         /* probability of each when chosen */
    int n, cap;
    double sum_logprob;
    float no_speech_prob;
} hark_window;

/* Greedy decoding of one window whose encoder output is enc_out. */
int hark_decode_window(const hark_model *m, hark_kv *kv, const float *enc_out,
                       const hark_decode_opts *o, hark_window *w);
void hark_window_free(hark_window *w);
/* The start sequence: [startofprev prompt...] sot [lang task] [notimestamps]. */
int hark_start_sequence(const hark_model *m, const hark_decode_opts *o, int *seq, int cap);

#endif
