/* Audio in: files and stdin to mono float32 at 16 kHz, resampling, the
 * log-mel, stereo loudness for diarization, .npy matrices. */
#ifndef HARK_AUDIO_H
#define HARK_AUDIO_H

#include "base/base.h"

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
/* 16 kHz mono samples read window by window (source.c): the caller's array (mem),
 * or an unlinked temporary file they were decoded into (fd, the spool), so that
 * memory does not grow with the input's length. */
typedef struct hark_source {
    const float *mem;
    int fd;
    size_t n;            /* samples */
    float *buf;          /* the spool's writes, buffered */
    size_t buffered;
} hark_source;
void hark_source_memory(hark_source *s, const float *x, size_t n);
/* An empty spool; 0 or HARK_ERR_IO ("cannot make a temporary file ..."). */
int hark_source_spool(hark_source *s, hark_error *e);
int hark_source_append(hark_source *s, const float *x, size_t n, hark_error *e);
/* The spool's last writes: call once the samples are all there. */
int hark_source_finish(hark_source *s, hark_error *e);
/* Samples [pos, pos + n) into out, zeros where they lie outside [0, s->n);
 * 0 or HARK_ERR_IO. */
int hark_source_read(const hark_source *s, long long pos, size_t n, float *out);
/* All the samples in one malloc'd array (hark_read_audio's). */
int hark_source_all(const hark_source *s, float **samples, size_t *n, hark_error *e);
void hark_source_close(hark_source *s);
/* Writes all the bytes; 0 or an errno value (ENOSPC when nothing could be written). */
int hark_write_fd(int fd, const void *p, size_t bytes);
/* An unlinked temporary file in $TMPDIR (else /tmp), read-write; -1 with errno. */
int hark_temp_fd(void);

/* What a file decodes to, as it decodes (decoded.c): its frames downmixed,
 * checked (NaN and infinities refused), resampled from rate to 16 kHz and
 * appended to out, up to max_seconds (<= 0: no limit; cut is set when the file
 * goes on past it); the loudness of its channels when asked for (levels not
 * NULL) and it has two. */
typedef struct hark_decoded {
    hark_source *out;
    hark_levels *levels;
    double max_seconds;
    int rate;
    long long limit, frames; /* frames at most (-1: no limit), and so far */
    int cut;
    void *resampler;          /* soxr's, when rate is not 16 kHz */
} hark_decoded;
int hark_decoded_start(hark_decoded *d, int rate, const char *path, hark_error *e);
/* Adds n mono frames, those past the limit left out (d->cut set). */
int hark_decoded_add(hark_decoded *d, const float *mono, size_t n, const char *path,
                     hark_error *e);
/* The resampler's tail and the spool's last writes. */
int hark_decoded_end(hark_decoded *d, const char *path, hark_error *e);
/* After a failure: the resampler and the levels freed. */
void hark_decoded_drop(hark_decoded *d);
/* A stream (fd not a regular file) recognised by its first bytes and copied into
 * an unlinked temporary file, up to what max_seconds (<= 0: no limit) of it can
 * take (*cut then): the copy's fd, or a negative HARK_ERR_ code ("name: not a
 * readable audio file (it starts with bytes ...)" at once for /dev/zero). */
int hark_stream_spool(int fd, const char *name, double max_seconds, int *cut, hark_error *e);
/* Decodes path ("-": stdin) into out, a spool (hark_source_spool first), as
 * hark_decoded (levels zeroed first, max_seconds the limit); *cut is set when
 * the input went on past max_seconds. */
int hark_audio_decode(const char *path, hark_source *out, hark_levels *levels,
                      double max_seconds, int *cut, hark_error *e);
/* The program that decodes what libsndfile cannot: $HARK_FFMPEG, else "ffmpeg"
 * on PATH; "" (HARK_FFMPEG set empty) for none. */
const char *hark_ffmpeg_program(void);
enum { HARK_FFMPEG_MISSING = 1 };
/* Decodes the file open as fd in with ffmpeg into *d (16 kHz, d->levels as
 * hark_audio_read_levels); errors read "path: what; ffmpeg: its reason".
 * Returns 0, HARK_FFMPEG_MISSING when there is no ffmpeg to run, or an error. */
int hark_ffmpeg_decode(int in, const char *path, const char *what, hark_decoded *d,
                       hark_error *e);
/* Resamples mono audio from rate_in to 16 kHz (band-limited). */
int hark_resample(const float *in, size_t n_in, double rate_in, float **out, size_t *n_out,
                  hark_error *e);

void hark_mel_filters(int n_mels, float *filters /* [n_mels][201] */);
/* Log-mel of samples (padded with pad_samples zeros): [n_mels][*n_frames]. */
int hark_log_mel(const float *samples, size_t n, size_t pad_samples, int n_mels, int n_threads,
                 float **mel, int *n_frames, hark_error *e);
/* The log-mel of a source plus pad_samples zeros, read window by window (its
 * memory does not grow with the input): hark_mel_stream_open finds the maximum
 * over all of it first (Whisper's clamp), then each window is computed from the
 * samples it needs; the values are hark_log_mel's, bit for bit. */
enum { HARK_MEL_CACHE = 8 }; /* chunks of 512 frames held: a window of 3000 needs 7 */
typedef struct hark_mel_stream {
    const hark_source *src;
    int n_mels, frames;          /* frames of the whole log-mel */
    size_t total;                /* samples with the padding */
    float max, *last;            /* the maximum log value; the last frame's values */
    float *filters, *power, *x, *frame, hann[400];
    void *spec;                  /* fftwf_complex[201] */
    float *chunk[HARK_MEL_CACHE];
    int id[HARK_MEL_CACHE];      /* the chunk each slot holds, or -1 */
} hark_mel_stream;
int hark_mel_stream_open(hark_mel_stream *ms, const hark_source *src, size_t pad_samples,
                         int n_mels, hark_error *e);
/* As hark_mel_window over the whole log-mel; 0 or HARK_ERR_IO. */
int hark_mel_stream_window(hark_mel_stream *ms, int seek, int stop, int len, float *out);
void hark_mel_stream_close(hark_mel_stream *ms);
/* Frames [seek, seek + len) of mel [n_mels][frames] into out [n_mels][len], the frames at
 * or past stop (at most frames) as the last frame (the padding's silence). */
void hark_mel_window(const float *mel, int frames, int n_mels, int seek, int stop, int len,
                     float *out);


/* ------------------------------------------------------------ voice activity */
/* Voice activity detection before transcription, as whisper.cpp's --vad: Silero
 * VAD's probabilities (vad.c) become speech spans, the spans alone are
 * transcribed, joined by 0.1 s of silence, and the times found in them are
 * mapped back to the file's (vad_span.c). */

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
/* The same from a source onto out (a spool), read and written a block at a time. */
int hark_vad_join_source(const hark_source *in, const hark_span *spans, int n_spans,
                         float overlap, hark_source *out, hark_time_map *map);
/* hark_vad_probs a block at a time from a source: 0, HARK_ERR_NOMEM or HARK_ERR_IO. */
int hark_vad_probs_of(const hark_vad *vad, const hark_source *src, float *probs);
/* Runs the model of p->vad.model over in and joins its speech onto out (a spool
 * made by the caller; out->n 0 when there is none): memory does not grow with in. */
int hark_vad_speech(const hark_params *p, const hark_source *in, hark_source *out,
                    hark_time_map *map, hark_error *e);
double hark_time_map_apply(const hark_time_map *m, double seconds, int is_end);
void hark_time_map_free(hark_time_map *m);

#endif
