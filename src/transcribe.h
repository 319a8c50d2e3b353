/* The transcription loop's results, shared by the context and the writers. */
#ifndef HARK_TRANSCRIBE_H
#define HARK_TRANSCRIBE_H

#include "decode.h"
#include "internal.h"

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
} hark_result;

void hark_result_clear(hark_result *r);
/* The result in one of the writers' formats (txt srt vtt tsv json csv lrc), or NULL
 * (unknown format, out of memory); the caller frees it. */
char *hark_format_result(const hark_result *r, const hark_params *p, const char *format);
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
    const float *samples;
    size_t n;
    const hark_levels *levels;
} hark_audio;
/* whisper.cpp's max_len with split_on_word (seglen.c): s cut between its words into
 * pieces of at most max_len characters, *n of them in *pieces (malloc'd, each owning
 * its copies; s untouched); *n is 0 when s stays whole (one piece, or no words). */
int hark_split_segment(const hark_segment *s, int max_len, int eot, hark_segment **pieces, int *n);
/* Frees what a segment owns (not the segment itself). */
void hark_segment_free(hark_segment *s);
/* Transcribes the audio into r. */
struct hark_pool;
struct hark_decoder;
int hark_run(const hark_model *m, const hark_params *p, struct hark_pool *pool,
             struct hark_decoder *dec, const hark_audio *in, hark_result *r, hark_error *e);

#endif
