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
#include <sys/stat.h>
#include <unistd.h>

enum { WHAT_LEN = 200 }; /* what a file is, when libsndfile cannot read it */

/* The file to libsndfile through its virtual I/O, read with pread: sf_open_fd
 * closes the descriptor when it cannot open the file, which ffmpeg reads next. */
typedef struct fdfile {
    int fd;
    sf_count_t size, pos;
} fdfile;

static sf_count_t fd_len(void *u) { return ((fdfile *)u)->size; }
static sf_count_t fd_tell(void *u) { return ((fdfile *)u)->pos; }

static sf_count_t fd_seek(sf_count_t off, int whence, void *u)
{
    fdfile *f = u;
    sf_count_t p = whence == SEEK_SET ? off : whence == SEEK_CUR ? f->pos + off : f->size + off;
    if (p < 0 || p > f->size)
        return -1;
    return f->pos = p;
}

static sf_count_t fd_read(void *ptr, sf_count_t n, void *u)
{
    fdfile *f = u;
    ssize_t r;
    do
        r = pread(f->fd, ptr, (size_t)n, (off_t)f->pos);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return 0;
    f->pos += r;
    return r;
}

static sf_count_t fd_write(const void *p, sf_count_t n, void *u)
{
    (void)p, (void)n, (void)u;
    return 0;
}

/* libsndfile quietly reads what is there when a WAV's data chunk claims more
 * bytes than the file holds; hark refuses such a file instead (head: its first
 * bytes, where the chunks before the samples are). */
static int check_wav_complete(const uint8_t *head, size_t n, size_t size, const char *path,
                              hark_error *e)
{
    size_t at;
    uint32_t len;
    if (hark_wav_chunk(head, n, "data", &at, &len) && len != 0xffffffffu && len > size - at)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: truncated: data chunk claims %u bytes, file "
                         "has %zu", path, len, size - at);
    return 0;
}

/* Reads the frames, downmixed (the channels' mean), into d and, for a stereo file
 * whose loudness is asked for, its levels; up to d's limit.  A stream's length
 * is its writer's guess (sox and ffmpeg write a placeholder into a pipe): what
 * is there is read. */
static int downmix(SNDFILE *sf, const SF_INFO *info, hark_decoded *d, int stream,
                   const char *path, hark_error *e)
{
    enum { CHUNK = 4096 };
    float *buf = malloc(sizeof(float) * CHUNK * (size_t)info->channels), mono[CHUNK];
    sf_count_t done = 0, got = 0;
    int rc = buf ? 0 : hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", path);
    while (!rc && !d->cut && done < info->frames) {
        sf_count_t want = info->frames - done < CHUNK ? info->frames - done : CHUNK;
        if ((got = sf_readf_float(sf, buf, want)) <= 0)
            break;
        for (sf_count_t i = 0; i < got; i++) {
            double s = 0;
            for (int c = 0; c < info->channels; c++)
                s += buf[i * info->channels + c];
            mono[i] = (float)(s / info->channels);
        }
        if ((rc = hark_decoded_add(d, mono, (size_t)got, path, e)))
            break;
        got = d->frames - done; /* the frames kept, up to the limit */
        if (d->levels && hark_levels_add(d->levels, buf, (size_t)got, done, info->samplerate))
            rc = hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", path);
        done += got;
    }
    free(buf);
    if (!rc && !d->cut && !stream && done < info->frames)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: truncated: read %lld of %lld frames", path,
                         (long long)done, (long long)info->frames);
    return rc;
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
static SNDFILE *open_fd(fdfile *f, SF_INFO *info, const char *path, int locked, char *what,
                        hark_error *e)
{
    SF_VIRTUAL_IO io = {fd_len, fd_seek, fd_read, fd_write, fd_tell};
    memset(info, 0, sizeof *info);
    /* sf_strerror(NULL) reads libsndfile's global error: open and read it
     * together, so that batch jobs opening files at once keep their own */
    if (!locked)
        pthread_mutex_lock(&open_lock);
    SNDFILE *sf = sf_open_virtual(&io, SFM_READ, info, f);
    if (!sf) {
        snprintf(what, WHAT_LEN, "not a readable audio file (%s)",
                 locked ? "damaged MPEG audio" : sf_strerror(NULL));
        hark_fail(e, HARK_ERR_FORMAT, "%s: %s", path, what);
    }
    if (!locked)
        pthread_mutex_unlock(&open_lock);
    return sf;
}

/* The length a file's header claims, before anything is read: a few kilobytes
 * of FLAC can claim days of constant samples. */
static int check_length(const SF_INFO *info, const char *path, hark_error *e)
{
    double hours = (double)info->frames / info->samplerate / 3600;
    if (hours > 96)
        return hark_fail(e, HARK_ERR_FORMAT,
                         "%s: implausible length (%.1f hours; hark reads at most 96)", path, hours);
    return 0;
}

static int decode_sndfile(int fd, size_t size, int stream, const char *path, hark_decoded *out,
                          int locked, char *what, hark_error *e)
{
    SF_INFO info;
    fdfile f = {fd, (sf_count_t)size, 0};
    SNDFILE *sf = open_fd(&f, &info, path, locked, what, e);
    if (!sf)
        return HARK_ERR_FORMAT;
    int rc = info.frames <= 0 || info.channels <= 0 || info.samplerate <= 0
                 ? hark_fail(e, HARK_ERR_FORMAT, "%s: no audio samples", path)
                 : check_length(&info, path, e);
    if (!rc && info.channels != 2)
        out->levels = NULL; /* loudness per channel: stereo files' alone */
    if (!rc)
        rc = hark_decoded_start(out, info.samplerate, path, e);
    if (!rc) {
        sf_command(sf, SFC_SET_NORM_FLOAT, NULL, SF_TRUE);
        rc = downmix(sf, &info, out, stream, path, e);
    }
    sf_close(sf);
    if (!rc && out->frames == 0)
        rc = hark_fail(e, HARK_ERR_FORMAT, "%s: no audio samples", path);
    return rc ? rc : hark_decoded_end(out, path, e);
}

/* Decodes with libsndfile (head: the file's first n bytes, size: its length);
 * what is left "" unless libsndfile cannot read the file at all, which ffmpeg may. */
static int decode_file(int fd, const uint8_t *head, size_t n, size_t size, int stream,
                       const char *path, hark_decoded *out, char *what, int *foreign,
                       hark_error *e)
{
    if (size == 0)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: empty file", path);
    const char *container = foreign_container(head, n);
    if ((*foreign = container != NULL)) {
        snprintf(what, WHAT_LEN, "%s", container);
        return hark_fail(e, HARK_ERR_FORMAT, "%s: %s", path, what);
    }
    int rc = stream ? 0 : check_wav_complete(head, n, size, path, e);
    if (rc || !looks_like_mpeg(head, n))
        return rc ? rc : decode_sndfile(fd, size, stream, path, out, 0, what, e);
    pthread_mutex_lock(&open_lock);
    int saved = mute_stderr();
    rc = decode_sndfile(fd, size, stream, path, out, 1, what, e);
    unmute_stderr(saved);
    pthread_mutex_unlock(&open_lock);
    return rc;
}

/* ffmpeg's turn at a file libsndfile could not read (rc, e: libsndfile's
 * error, kept when there is no ffmpeg and the file is no known container). */
static int decode_with_ffmpeg(int fd, const char *path, const char *what, int foreign,
                              hark_decoded *d, int rc, hark_error *e)
{
    hark_error mine;
    lseek(fd, 0, SEEK_SET); /* ffmpeg's stdin shares this offset */
    int r = hark_ffmpeg_decode(fd, path, what, d, &mine);
    if (r == HARK_FFMPEG_MISSING)
        return foreign ? hark_fail(e, HARK_ERR_FORMAT, "%s: %s: hark decodes it with ffmpeg, "
                                   "which was not found (apt-get install ffmpeg)", path, what)
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

enum { HEAD = 1 << 16 }; /* the first bytes: what the format is, the chunks before the samples */

/* The file (or, "-", stdin) as a regular file: a stream (stdin, a FIFO, a device,
 * a socket) is recognised by its first bytes and copied to an unlinked temporary
 * file up to the bytes max_seconds can take (stream.c), never held in memory. */
static int open_input(const char *path, const char *name, double max_seconds, int *stream,
                      int *cut, hark_error *e)
{
    int fd = strcmp(path, "-") == 0 ? fcntl(0, F_DUPFD_CLOEXEC, 3)
                                    : open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return hark_fail(e, HARK_ERR_IO, "%s: %s", name, strerror(errno));
    if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        int err = errno;
        close(fd);
        return hark_fail(e, HARK_ERR_IO, "%s: %s", name,
                         S_ISDIR(st.st_mode) ? "is a directory" : strerror(err));
    }
    if ((*stream = !S_ISREG(st.st_mode)) == 0)
        return fd;
    int spooled = hark_stream_spool(fd, name, max_seconds, cut, e);
    close(fd);
    return spooled;
}

int hark_audio_decode(const char *path, hark_source *out, hark_levels *levels,
                      double max_seconds, int *cut, hark_error *e)
{
    const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
    int stream = 0, stream_cut = 0;
    if (levels)
        *levels = (hark_levels){{NULL, NULL}, 0, 0};
    int fd = open_input(path, name, max_seconds, &stream, &stream_cut, e);
    if (fd < 0)
        return fd;
    uint8_t *head = malloc(HEAD);
    struct stat st;
    ssize_t n = head && fstat(fd, &st) == 0 ? pread(fd, head, HEAD, 0) : -1;
    hark_decoded d = {out, levels, max_seconds, 0, -1, 0, 0, NULL};
    char what[WHAT_LEN] = "";
    int foreign = 0, rc = n < 0 ? hark_fail(e, HARK_ERR_IO, "%s: %s", name, strerror(errno))
                                : decode_file(fd, head, (size_t)n, (size_t)st.st_size, stream,
                                              name, &d, what, &foreign, e);
    free(head);
    if (rc && what[0])
        rc = decode_with_ffmpeg(fd, name, what, foreign, &d, rc, e);
    close(fd);
    if (rc)
        hark_decoded_drop(&d);
    *cut = d.cut || stream_cut;
    return rc;
}

int hark_audio_read_levels(const char *path, float **samples, size_t *n, hark_levels *levels,
                           hark_error *e)
{
    hark_source src;
    int cut, rc = hark_source_spool(&src, e);
    if (!rc)
        rc = hark_audio_decode(path, &src, levels, 0, &cut, e);
    if (!rc)
        rc = hark_source_all(&src, samples, n, e);
    if (rc && levels)
        hark_levels_free(levels);
    hark_source_close(&src);
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
