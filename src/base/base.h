/* The base every stage stands on: errors, files, memory, number formats.
 * Nothing here knows about audio or Whisper.  Nothing here is public API. */
#ifndef HARK_BASE_H
#define HARK_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hark.h"

/* ------------------------------------------------------------ errors */

typedef struct hark_error {
    char msg[512];
} hark_error;

/* Formats "fmt ..." into e (when e is not NULL) and returns code. */
int hark_fail(hark_error *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------ files */

typedef struct hark_map {
    const uint8_t *data;
    size_t size;
    int mapped;  /* 1: munmap on release, 0: free */
} hark_map;

/* Maps a whole file read-only (falls back to reading it for non-regular files,
 * as much as the memory available holds). */
int hark_map_file(const char *path, hark_map *m, hark_error *e);
void hark_map_release(hark_map *m);
/* Reading a binary file held in memory (ggml models): every read is checked
 * against the bytes left, and a short file fails "path: truncated in what". */
typedef struct hark_cursor {
    const uint8_t *p, *end;
    const char *path;
    hark_error *e;
} hark_cursor;
int hark_need(hark_cursor *c, size_t n, const char *what);
int hark_read_i32(hark_cursor *c, int32_t *v, const char *what); /* little-endian */
/* Reads a whole file into a NUL-terminated buffer (caller frees): JSON and text
 * files, of at most 256 MB. */
int hark_read_file(const char *path, char **data, size_t *size, hark_error *e);
/* Writes data to path under a temporary name, synced, then renamed into place:
 * readers never see a partial file, and a failure leaves none behind. */
int hark_write_file(const char *path, const void *data, size_t size, hark_error *e);
/* The same for a file made of n parts written one after the other. */
int hark_write_parts(const char *path, const void *const *parts, const size_t *sizes, int n,
                     hark_error *e);
/* A file written piece by piece under "<path>.tmp.<host>.<pid>.<start>" and renamed into place
 * when whole, synced first: after a failure or a crash the name holds the old
 * file or the whole new one, never a part.  Writes after a failure do nothing;
 * hark_out_close reports the first failure ("path: cannot write (reason)"). */
typedef struct hark_out {
    const char *path;
    char *tmp;
    FILE *f;
    int err; /* errno of the first failure; 0 while all is well */
} hark_out;
int hark_out_open(hark_out *o, const char *path, hark_error *e);
void hark_out_write(hark_out *o, const void *data, size_t n);
/* Marks the file failed (err: an errno value) without writing, e.g. out of memory. */
void hark_out_fail(hark_out *o, int err);
/* Renames the file into place, or removes it after a failure; returns 0 or the error. */
int hark_out_close(hark_out *o, hark_error *e);
/* Whether a file's name is one of hark_out's temporary names whose writer, on this
 * host, is gone (killed before its rename: resuming removes it); *base_len is then
 * the length of the final name it stands for.  A live writer's, another host's,
 * and any other name: 0. */
int hark_out_stale(const char *name, size_t *base_len);
/* malloc for buffers a window fills whole (free() releases it): its pages
 * are faulted in by one call, not one fault each on first use. */
void *hark_alloc_populated(size_t bytes);
/* Whether bytes exceed the memory this machine has available now (Linux's
 * MemAvailable + SwapFree, else its physical memory; never when neither is
 * known), which *available receives.  Linux's malloc promises more than there
 * is, and the process that touches the pages is killed with no error to
 * report: a length a file claims is checked before its buffers are allocated. */
int hark_memory_short(double bytes, double *available);

/* ------------------------------------------------------------ hashing */

/* FNV-1a's offset basis: the h that a hash starts from. */
#define HARK_HASH_START 1469598103934665603ull
/* h extended by n bytes of data (FNV-1a, 64 bits): not for secrets, for telling
 * files and settings apart; chains, so a hash can span several pieces. */
uint64_t hark_hash(uint64_t h, const void *data, size_t n);

/* Seconds on the monotonic clock (clock.c): for timings, only differences count. */
double hark_now_s(void);
/* This host's name, for file names (temporaries, ledgers): no '/', never empty. */
void hark_host_name(char *h, size_t n);

/* ------------------------------------------------------------ numbers */

typedef enum {
    HARK_F32 = 0, HARK_F16 = 1, HARK_BF16 = 2,
    HARK_Q4_0, HARK_Q4_1, HARK_Q5_0, HARK_Q5_1, HARK_Q8_0 /* ggml blocks of 32 */
} hark_dtype;

float hark_f16_to_f32(uint16_t h);
uint16_t hark_f32_to_f16(float f);
size_t hark_dtype_size(hark_dtype t); /* element size; 0 for block types */
/* Bytes of n consecutive values (n a multiple of 32 for block types). */
size_t hark_row_bytes(hark_dtype t, size_t n);
size_t hark_block_bytes(hark_dtype t);   /* 0 for non-block types */
int hark_dtype_is_quantized(hark_dtype t);
void hark_dequantize(float *y, const void *src, hark_dtype t, size_t n);
/* n values as type t (n a multiple of 32 for block types; floats round to nearest even). */
void hark_quantize_row(void *dst, const float *x, hark_dtype t, size_t n);
const char *hark_dtype_name(hark_dtype t);

/* The fields of one ggml block (layouts in quant.c): scale and minimum as f16 bits
 * (minimum 0 but for q4_1 and q5_1), the fifth bits of q5 (0 otherwise) and the
 * packed quants that follow.  Shared by the portable and vector kernels. */
typedef struct hark_qblock {
    uint16_t d, min;
    uint32_t qh;
    const uint8_t *qs;
    int offset; /* subtracted from each quant: 8 for q4_0, 16 for q5_0, else 0 */
} hark_qblock;

/* The types whose blocks carry a minimum (w = q * d + min, q unsigned). */
static inline int hark_block_has_min(hark_dtype t)
{
    return t == HARK_Q4_1 || t == HARK_Q5_1;
}

static inline hark_qblock hark_qblock_fields(const uint8_t *b, hark_dtype t)
{
    hark_qblock q = {0, 0, 0, b + 2, t == HARK_Q4_0 ? 8 : t == HARK_Q5_0 ? 16 : 0};
    memcpy(&q.d, b, 2);
    if (hark_block_has_min(t)) {
        memcpy(&q.min, q.qs, 2);
        q.qs += 2;
    }
    if (t == HARK_Q5_0 || t == HARK_Q5_1) {
        memcpy(&q.qh, q.qs, 4);
        q.qs += 4;
    }
    return q;
}

/* A block's 32 quants as signed integers, the offset (8, 16) taken off: w = u * d
 * (+ min for q4_1 / q5_1, whose u are 0..31). */
void hark_block_quants(int8_t *u, const uint8_t *b, hark_dtype t);

/* A weight matrix [rows = out features][cols = in features], in its stored type. */
typedef struct hark_weight {
    const void *data;
    hark_dtype type;
    int rows, cols;
} hark_weight;

/* ------------------------------------------------------------ UTF-8 */
/*
 * UTF-8 decoding as Python's bytes.decode(errors="replace") and Rust's
 * String::from_utf8_lossy do it (Unicode's "maximal subpart" practice): what
 * openai-whisper's tokenizer and Hugging Face's give for byte-level BPE output
 * that is not whole characters.
 */

/* Decodes one UTF-8 character of s (n bytes left, n > 0) into *cp and returns
 * the bytes it used.  Bytes that start no valid character (overlong forms,
 * surrogates, values past U+10FFFF, a sequence cut short) yield U+FFFD once
 * for their maximal subpart: the longest start of a valid sequence, or one
 * byte, so "\xE2\x82b" is U+FFFD then "b", and "\xC0\xAF" two U+FFFD. */
size_t hark_utf8_decode(const char *s, size_t n, uint32_t *cp);

/* hark_utf8_decode, and whether the bytes it used are a valid character (a
 * U+FFFD in the text is one; a replaced part is not). */
size_t hark_utf8_next(const char *s, size_t n, uint32_t *cp, int *valid);

/* A malloc'd, NUL-terminated copy of n bytes with each invalid part replaced
 * by U+FFFD as hark_utf8_decode reads it; NULL when out of memory. */
char *hark_utf8_sanitize(const char *s, size_t n);
/* Characters of a NUL-terminated string as Python's len() counts them (code
 * points: the bytes that do not continue a character). */
size_t hark_utf8_chars(const char *s);

/* ------------------------------------------------------------ thread pool */
/* A persistent thread pool, one per context: the numeric kernels split their
 * output (rows, heads) across it, never a reduction, so results are the same
 * bit for bit whatever the thread count. */

typedef struct hark_pool hark_pool;

hark_pool *hark_pool_new(int n_threads);
void hark_pool_free(hark_pool *p);
/* The pool the calling thread's kernels use (NULL: run serially). */
void hark_pool_use(hark_pool *p);
hark_pool *hark_pool_current(void);
int hark_pool_threads(void);
/* Runs fn(arg, i) for 0 <= i < n on the current pool and waits for all; work
 * (multiply-adds or elements, roughly) below a threshold runs in the calling
 * thread, since waking the pool costs more than small jobs. */
void hark_parallel(int n, void (*fn)(void *arg, int i), void *arg, size_t work);
/* How many spins a waiting thread pauses before it starts yielding now and
 * then: some while all pools' threads fit the cores, none when they do not. */
int hark_pool_patient_spins(void);

#endif
