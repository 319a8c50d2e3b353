/* hark explain's trace of one window (explain.c records it, explain_json.c
 * writes it): what hark.h's hark_explain is. */
#ifndef HARK_EXPLAIN_H
#define HARK_EXPLAIN_H

#include "decode/decode.h"

enum { EXPLAIN_TOP = 5, EXPLAIN_GRID = 50 }; /* candidates kept; encoder map cells a side */

/* One head's attention over a window, summed over its rows. */
typedef struct head_stats {
    double rows;                   /* rows seen */
    double sum, sum2, n;           /* raw q.k scores: for their standard deviation */
    double entropy, entropy_raw;   /* nats, summed over rows: scaled and unscaled */
    double distance;               /* encoder: frames between query and keys, weighted */
    float *map;                    /* encoder: [EXPLAIN_GRID][EXPLAIN_GRID], rows sum to 1 */
} head_stats;

typedef struct candidate_list {
    int id[EXPLAIN_TOP];
    float p[EXPLAIN_TOP];
} candidate_list;

struct hark_explain {
    int want, found;              /* the window asked for; whether it was traced */
    int n_windows;                /* windows the transcription had */
    size_t n_samples;             /* the audio's, for where it ends in the window */
    const hark_model *m;
    const hark_cross *cross;      /* while tracing */
    int seek, grid;               /* the window's start (mel frames); encoder map side */
    int audio_frames;             /* its 20 ms frames that hold audio (the rest: padding) */
    int n_pos, n_start, sot;      /* positions traced (start sequence + tokens taken),
                                   * the start sequence's length, sot's position */
    int *tokens;                  /* [n_pos] */
    float *self;                  /* [L][H][n_pos][n_pos], 0 above the diagonal */
    float *xattn;                 /* [L][H][n_pos][n_audio_ctx] */
    head_stats *enc, *dec_cross;  /* [La][Ha], [L][H] */
    candidate_list *lens;         /* [n_pos][L]: after each layer */
    candidate_list *top;          /* [n_pos]: from the real logits */
    float *p_search, *p_replay;   /* [n_pos]: each taken token's probability */
    int *n_suppressed;            /* [n_pos]: tokens the filters ruled out */
    float *hidden;                /* [L][n_pos][d]: the residual stream after each layer */
    double lens_diff;             /* |lens at the last layer - logits|, at most */
    double occlusion_s;           /* span masked at a time (0: no occlusion) */
    int n_spans;                  /* spans of the window's audio */
    float *effect;                /* [n_pos][n_spans]: log p(token) lost with a span masked */
    float *head_rho;              /* [L][H]: rank correlation of attention and effect */
    float *row, *lens_last, *buf; /* scratch */
};

/* --occlusion: each span of the window's audio masked in turn (explain_occlusion.c). */
int hark_explain_occlude(hark_explain *x, const float *mel);
/* Forgets a previous trace, to trace the next transcription's window x->want. */
void hark_explain_reset(hark_explain *x);
/* The observer hark_run_observed calls after each window; it traces x->want. */
hark_window_observer hark_explain_observer(hark_explain *x);
/* 0 when the window was traced, else HARK_ERR_ARG with why in e. */
int hark_explain_done(const hark_explain *x, hark_error *e);

#endif
