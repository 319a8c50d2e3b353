/* Audio in: any file libsndfile reads (or stdin as "-"), downmixed to mono and
 * resampled to 16 kHz with soxr's band-limited high-quality resampler; what
 * libsndfile cannot read goes to ffmpeg (ffmpeg.c) when it is there. */
#include "audio/audio.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sndfile.h>
#include <soxr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { WHAT_LEN = 200 }; /* what a file is, when libsndfile cannot read it */

typedef struct memfile {
    const uint8_t *data;
    sf_count_t size, pos;
} memfile;

static sf_count_t mem_len(void *u) { return ((memfile *)u)->size; }
static sf_count_t mem_tell(void *u) { return ((memfile *)u)->pos; }

static sf_count_t mem_seek(sf_count_t off, int whence, void *u)
{
    memfile *m = u;
    sf_count_t p = whence == SEEK_SET ? off : whence == SEEK_CUR ? m->pos + off : m->size + off;
    if (p < 0 || p > m->size)
        return -1;
    return m->pos = p;
}

static sf_count_t mem_read(void *ptr, sf_count_t n, void *u)
{
    memfile *m = u;
    if (n > m->size - m->pos)
        n = m->size - m->pos;
    memcpy(ptr, m->data + m->pos, (size_t)n);
    m->pos += n;
    return n;
}

static sf_count_t mem_write(const void *p, sf_count_t n, void *u)
{
    (void)p, (void)n, (void)u;
    return 0;
}

static uint32_t le32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int hark_wav_chunk(const uint8_t *d, size_t n, const char *id, size_t *at, uint32_t *len)
{
    if (n < 12 || memcmp(d, "RIFF", 4) != 0 || memcmp(d + 8, "WAVE", 4) != 0)
        return 0;
    for (size_t pos = 12; pos + 8 <= n;) {
        uint32_t claimed = le32(d + pos + 4);
        if (memcmp(d + pos, id, 4) == 0) {
            *at = pos + 8;
            *len = claimed;
            return 1;
        }
        pos += 8 + (size_t)claimed + (claimed & 1);
    }
    return 0;
}

/* libsndfile quietly reads what is there when a WAV's data chunk claims more
 * bytes than the file holds; hark refuses such a file instead. */
static int check_wav_complete(const uint8_t *d, size_t size, const char *path, hark_error *e)
{
    size_t at;
    uint32_t len;
    if (hark_wav_chunk(d, size, "data", &at, &len) && len != 0xffffffffu && len > size - at)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: truncated: data chunk claims %u bytes, file "
                         "has %zu", path, len, size - at);
    return 0;
}

/* Reads the frames into d->mono (the channels' mean) and, for a stereo file
 * whose loudness is asked for, into levels. */
static int downmix(SNDFILE *sf, const SF_INFO *info, hark_decoded *d, hark_levels *levels,
                   const char *path, hark_error *e)
{
    enum { CHUNK = 4096 };
    float *buf = malloc(sizeof(float) * CHUNK * (size_t)info->channels);
    size_t cap = 0, claimed = (size_t)info->frames;
    sf_count_t done = 0, got = 0;
    int rc = buf ? 0 : HARK_ERR_NOMEM;
    while (!rc && done < info->frames) {
        sf_count_t want = info->frames - done < CHUNK ? info->frames - done : CHUNK;
        if ((got = sf_readf_float(sf, buf, want)) <= 0)
            break;
        if ((rc = hark_decoded_room(d, &cap, (size_t)(done + got), claimed)) ||
            (levels && (rc = hark_levels_add(levels, buf, (size_t)got, done, info->samplerate))))
            break;
        for (sf_count_t i = 0; i < got; i++) {
            double s = 0;
            for (int c = 0; c < info->channels; c++)
                s += buf[i * info->channels + c];
            d->mono[done + i] = (float)(s / info->channels);
        }
        done += got;
    }
    free(buf);
    if (rc)
        return hark_fail(e, rc, "%s: out of memory", path);
    if (done < info->frames)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: truncated: read %lld of %lld frames", path,
                         (long long)done, (long long)info->frames);
    for (sf_count_t i = 0; i < done; i++)
        if (!isfinite(d->mono[i]))
            return hark_fail(e, HARK_ERR_FORMAT, "%s: sample %lld is NaN or infinite", path,
                             (long long)i);
    d->frames = (size_t)done;
    return 0;
}

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

/* Containers people record in that libsndfile cannot read, by their first
 * bytes, so that the error can say what the file is and what to do. */
static const char *foreign_container(const uint8_t *d, size_t size)
{
    static const uint8_t ebml[] = {0x1a, 0x45, 0xdf, 0xa3}, asf[] = {0x30, 0x26, 0xb2, 0x75};
    if (size >= 12 && memcmp(d + 4, "ftyp", 4) == 0)
        return "an MP4/M4A file (AAC or other audio in an MPEG-4 container)";
    if (size >= 4 && memcmp(d, ebml, 4) == 0)
        return "a WebM/Matroska file";
    if (size >= 4 && memcmp(d, asf, 4) == 0)
        return "a WMA/ASF file";
    if (size >= 5 && memcmp(d, "#!AMR", 5) == 0)
        return "an AMR file";
    if (size >= 2 && d[0] == 0xff && (d[1] & 0xf6) == 0xf0) /* ADTS sync, layer 0 */
        return "an AAC (ADTS) file";
    return NULL;
}

/* ID3 tag or an MPEG audio frame sync at the start. */
static int looks_like_mpeg(const uint8_t *d, size_t size)
{
    return (size >= 3 && memcmp(d, "ID3", 3) == 0) ||
           (size >= 2 && d[0] == 0xff && (d[1] & 0xe0) == 0xe0);
}

/* libsndfile's MPEG decoder (mpg123) prints notes on stderr about damaged
 * frames; hark's errors are one line, so stderr is muted while it decodes. */
/* Held while stderr is muted, so that a program's own messages (hark's batch
 * progress and errors) wait instead of vanishing. */
static pthread_mutex_t stderr_lock = PTHREAD_MUTEX_INITIALIZER;

void hark_stderr_lock(void)
{
    pthread_mutex_lock(&stderr_lock);
}

void hark_stderr_unlock(void)
{
    pthread_mutex_unlock(&stderr_lock);
}

static int mute_stderr(void)
{
    hark_stderr_lock();
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, 2);
        close(null);
    }
    return saved;
}

static void unmute_stderr(int saved)
{
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
    }
    hark_stderr_unlock();
}

/* what: "not a readable audio file (why)" when libsndfile cannot open it, for
 * ffmpeg's turn. */
static SNDFILE *open_memory(memfile *m, SF_INFO *info, const char *path, int locked,
                            char *what, hark_error *e)
{
    SF_VIRTUAL_IO io = {mem_len, mem_seek, mem_read, mem_write, mem_tell};
    memset(info, 0, sizeof *info);
    /* sf_strerror(NULL) reads libsndfile's global error: open and read it
     * together, so that batch jobs opening files at once keep their own */
    if (!locked)
        pthread_mutex_lock(&open_lock);
    SNDFILE *sf = sf_open_virtual(&io, SFM_READ, info, m);
    if (!sf) {
        snprintf(what, WHAT_LEN, "not a readable audio file (%s)",
                 locked ? "damaged MPEG audio" : sf_strerror(NULL));
        hark_fail(e, HARK_ERR_FORMAT, "%s: %s", path, what);
    }
    if (!locked)
        pthread_mutex_unlock(&open_lock);
    return sf;
}

/* The length a file's header claims, before anything is allocated for it: a few
 * kilobytes of FLAC can claim days of constant samples, which would take more
 * memory than the machine has. */
static int check_length(const SF_INFO *info, const char *path, hark_error *e)
{
    double hours = (double)info->frames / info->samplerate / 3600, available;
    if (hours > 96)
        return hark_fail(e, HARK_ERR_FORMAT,
                         "%s: implausible length (%.1f hours; hark reads at most 96)", path, hours);
    /* the samples as read, then resampled to 16 kHz beside them */
    double bytes = sizeof(float) * ((double)info->frames +
                   (info->samplerate != HARK_SAMPLE_RATE ? hours * 3600 * HARK_SAMPLE_RATE : 0));
    if (hark_memory_short(bytes, &available))
        return hark_fail(e, HARK_ERR_NOMEM, "%s: %.1f hours of audio at %d Hz need %.1f GB of "
                         "memory to decode, more than is available (%.1f GB)", path, hours,
                         info->samplerate, bytes / 1e9, available / 1e9);
    return 0;
}

static int decode_sndfile(const uint8_t *data, size_t size, const char *path, hark_decoded *out,
                          int locked, char *what, hark_error *e)
{
    memfile m = {data, (sf_count_t)size, 0};
    SF_INFO info;
    SNDFILE *sf = open_memory(&m, &info, path, locked, what, e);
    if (!sf)
        return HARK_ERR_FORMAT;
    if (info.frames <= 0 || info.channels <= 0 || info.samplerate <= 0) {
        sf_close(sf);
        return hark_fail(e, HARK_ERR_FORMAT, "%s: no audio samples", path);
    }
    int rc = check_length(&info, path, e);
    if (rc) {
        sf_close(sf);
        return rc;
    }
    hark_levels *lv = info.channels == 2 ? out->levels : NULL;
    sf_command(sf, SFC_SET_NORM_FLOAT, NULL, SF_TRUE);
    rc = downmix(sf, &info, out, lv, path, e);
    sf_close(sf);
    if (rc) {
        free(out->mono);
        out->mono = NULL;
        if (lv)
            hark_levels_free(lv);
        return rc;
    }
    out->rate = info.samplerate;
    return 0;
}

/* Decodes with libsndfile; what is left "" unless libsndfile cannot read the
 * file at all, which ffmpeg may. */
static int decode_memory(const uint8_t *data, size_t size, const char *path, hark_decoded *out,
                         char *what, int *foreign, hark_error *e)
{
    if (size == 0)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: empty file", path);
    const char *container = foreign_container(data, size);
    if ((*foreign = container != NULL)) {
        snprintf(what, WHAT_LEN, "%s", container);
        return hark_fail(e, HARK_ERR_FORMAT, "%s: %s", path, what);
    }
    int rc = check_wav_complete(data, size, path, e);
    if (rc || !looks_like_mpeg(data, size))
        return rc ? rc : decode_sndfile(data, size, path, out, 0, what, e);
    pthread_mutex_lock(&open_lock);
    int saved = mute_stderr();
    rc = decode_sndfile(data, size, path, out, 1, what, e);
    unmute_stderr(saved);
    pthread_mutex_unlock(&open_lock);
    return rc;
}

/* stdin's bytes, read already, in a file ffmpeg can seek in (an MP4 whose
 * index is at its end cannot be read from a pipe). */
static int spill(const hark_map *m)
{
    int fd = memfd_create("hark-stdin", MFD_CLOEXEC);
    for (size_t done = 0; fd >= 0 && done < m->size;) {
        ssize_t w = write(fd, m->data + done, m->size - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    return fd;
}

/* The file again for ffmpeg; what is not a regular file (a FIFO, read to its
 * end already, would wait for a writer for ever) from the bytes read. */
static int open_regular_again(const char *path, const hark_map *m)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        return fd;
    if (fd >= 0)
        close(fd);
    return spill(m);
}

/* ffmpeg's turn at a file libsndfile could not read (rc, e: libsndfile's
 * error, kept when there is no ffmpeg and the file is no known container). */
static int decode_with_ffmpeg(const char *path, const hark_map *m, const char *what,
                              int foreign, hark_decoded *d, int rc, hark_error *e)
{
    int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "stdin" : path;
    int fd = is_stdin ? spill(m) : open_regular_again(path, m);
    if (fd < 0)
        return rc;
    hark_error mine;
    int r = hark_ffmpeg_decode(fd, name, what, d, &mine);
    close(fd);
    if (r == HARK_FFMPEG_MISSING)
        return foreign ? hark_fail(e, HARK_ERR_FORMAT, "%s: %s: hark decodes it with ffmpeg, "
                                   "which was not found (apt-get install ffmpeg)", name, what)
                       : rc;
    if (r)
        *e = mine;
    return r;
}

int hark_resample(const float *in, size_t n_in, double rate_in, float **out, size_t *n_out,
                  hark_error *e)
{
    size_t cap = (size_t)ceil((double)n_in * HARK_SAMPLE_RATE / rate_in) + 16;
    float *buf = malloc(sizeof(float) * cap);
    if (!buf)
        return hark_fail(e, HARK_ERR_NOMEM, "resample: out of memory");
    soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
    soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
    size_t done = 0;
    soxr_error_t err = soxr_oneshot(rate_in, HARK_SAMPLE_RATE, 1, in, n_in, NULL, buf, cap,
                                    &done, &io, &q, NULL);
    if (err) {
        free(buf);
        return hark_fail(e, HARK_ERR_FORMAT, "resample: %s", err);
    }
    *out = buf;
    *n_out = done;
    return 0;
}

int hark_audio_read_levels(const char *path, float **samples, size_t *n, hark_levels *levels,
                           hark_error *e)
{
    int is_stdin = strcmp(path, "-") == 0;
    if (levels)
        *levels = (hark_levels){{NULL, NULL}, 0, 0};
    hark_map m;
    int rc = hark_map_file(is_stdin ? "/dev/stdin" : path, &m, e);
    if (rc)
        return rc;
    hark_decoded d = {NULL, 0, 0, levels};
    char what[WHAT_LEN] = "";
    int foreign = 0;
    rc = decode_memory(m.data, m.size, is_stdin ? "stdin" : path, &d, what, &foreign, e);
    if (rc && what[0])
        rc = decode_with_ffmpeg(path, &m, what, foreign, &d, rc, e);
    hark_map_release(&m);
    if (rc)
        return rc;
    if (d.rate == HARK_SAMPLE_RATE) {
        *samples = d.mono;
        *n = d.frames;
        return 0;
    }
    rc = hark_resample(d.mono, d.frames, d.rate, samples, n, e);
    free(d.mono);
    if (rc && levels)
        hark_levels_free(levels);
    return rc;
}

int hark_audio_read(const char *path, float **samples, size_t *n, hark_error *e)
{
    return hark_audio_read_levels(path, samples, n, NULL, e);
}

int hark_read_audio(const char *path, float **samples, size_t *n_samples, char *err,
                    size_t errlen)
{
    hark_error e = {{0}};
    int rc = hark_audio_read(path, samples, n_samples, &e);
    if (rc && err && errlen)
        snprintf(err, errlen, "%s", e.msg);
    return rc;
}

double hark_audio_file_seconds(const char *path)
{
    SF_INFO info;
    memset(&info, 0, sizeof info);
    /* libsndfile's MPEG decoder talks on stderr while it opens a file, and its
     * error state is global: muted, and one opening at a time */
    int saved = mute_stderr();
    pthread_mutex_lock(&open_lock);
    SNDFILE *sf = sf_open(path, SFM_READ, &info);
    pthread_mutex_unlock(&open_lock);
    unmute_stderr(saved);
    if (!sf)
        return -1;
    sf_close(sf);
    if (info.samplerate <= 0 || info.frames < 0 || info.frames == SF_COUNT_MAX)
        return -1;
    return (double)info.frames / info.samplerate;
}
