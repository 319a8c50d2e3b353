/* The transcription loop's results, shared by the context and the writers. */
#ifndef HARK_TRANSCRIBE_H
#define HARK_TRANSCRIBE_H

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
} hark_segment;

typedef struct hark_word {
    char *text;
    double start, end;
    float probability;
} hark_word;

typedef struct hark_result {
    hark_segment *seg;
    int n, cap;
    char *text;
    char language[16];
    double audio_seconds;
} hark_result;

void hark_result_clear(hark_result *r);
/* The result in one of the writers' formats (txt srt vtt tsv json), or NULL
 * (unknown format, out of memory); the caller frees it. */
char *hark_format_result(const hark_result *r, const hark_params *p, const char *format);
float hark_compression_ratio(const char *text);
/* openai's fallback rule: retry at the next temperature when the text is too
 * repetitive or too unlikely, unless the window is silence. */
int hark_needs_fallback(const hark_params *p, const char *text, double sum_logprob, int n_tokens,
                        float no_speech_prob);
/* Transcribes 16 kHz mono samples into r. */
struct hark_pool;
struct hark_decoder;
int hark_run(const hark_model *m, const hark_params *p, struct hark_pool *pool,
             struct hark_decoder *dec, const float *samples, size_t n, hark_result *r,
             hark_error *e);

#endif
