/* Voice activity detection before transcription, as whisper.cpp's --vad: Silero
 * VAD's probabilities (vad.c) become speech spans, the spans alone are
 * transcribed, joined by 0.1 s of silence, and the times found in them are
 * mapped back to the file's (vad_span.c). */
#ifndef HARK_VAD_H
#define HARK_VAD_H

#include "internal.h"

size_t hark_vad_n_chunks(size_t n_samples);

/* A span of speech, in centiseconds of the file (whisper.cpp's units). */
typedef struct hark_span {
    long long start, end;
    int cut; /* ended by vad_max_speech_s: not merged with the next */
} hark_span;

/* whisper.cpp's speech spans from n chunk probabilities (silero-vad's
 * get_speech_timestamps with whisper.cpp's merging of gaps under 0.2 s and its
 * padding) under p's vad_ settings; spans holds 2 n + 2 (a chunk may end two:
 * one at the length limit, one at a silence of vad_min_silence_ms 0).  Returns
 * the count.
 * Unlike whisper.cpp's, a span cut at vad_max_speech_s is not merged back
 * with the next (which would undo the limit wherever the speech goes on). */
int hark_vad_spans(const float *probs, int n, const hark_params *p, hark_span *spans);

/* Processed (joined) times and the file's, in centiseconds, both rising: between
 * two points a time is interpolated, outside them clamped; in the silence put
 * between two spans (from a point marked gap to the next) a start is the next
 * span's start and an end the previous span's end (whisper.cpp interpolates
 * across the whole gap, so a segment starting there started seconds early). */
typedef struct hark_time_map {
    long long *proc, *orig;
    unsigned char *gap;
    int n;
} hark_time_map;

/* The spans' samples one after another, each but the last with vad_samples_overlap
 * seconds more and then 0.1 s of zeros, into *out (malloc'd, *n_out samples) and
 * the map from their times to the file's. */
int hark_vad_join(const float *s, size_t n, const hark_span *spans, int n_spans, float overlap,
                  float **out, size_t *n_out, hark_time_map *map);
/* Runs the model of p->vad over s and joins its speech: *n_out 0 when there is none. */
int hark_vad_speech(const hark_params *p, const float *s, size_t n, float **out, size_t *n_out,
                    hark_time_map *map, hark_error *e);
double hark_time_map_apply(const hark_time_map *m, double seconds, int is_end);
void hark_time_map_free(hark_time_map *m);

#endif
