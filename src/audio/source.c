/* The 16 kHz mono samples a transcription reads, window by window: the caller's
 * array, or a file's samples decoded once into an unlinked temporary file (the
 * spool), so that memory does not grow with the length of the file: an hour is
 * 230 MB of samples, which stay on disk and in the page cache, not in hark. */
#include "audio/audio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { WRITE_BLOCK = 1 << 15 }; /* samples buffered before each write */

void hark_source_memory(hark_source *s, const float *x, size_t n)
{
    *s = (hark_source){x, -1, n, NULL, 0};
}

/* An unlinked file in $TMPDIR (else /tmp): nothing is left behind, even after a crash. */
int hark_temp_fd(void)
{
    const char *dir = getenv("TMPDIR");
    dir = dir && *dir ? dir : "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
    char name[4096];
    snprintf(name, sizeof name, "%s/hark-spool-XXXXXX", dir);
    if ((fd = mkostemp(name, O_CLOEXEC)) >= 0)
        unlink(name);
    return fd;
}

int hark_source_spool(hark_source *s, hark_error *e)
{
    hark_source_memory(s, NULL, 0);
    s->buf = malloc(sizeof(float) * WRITE_BLOCK);
    if (!s->buf)
        return hark_fail(e, HARK_ERR_NOMEM, "out of memory");
    if ((s->fd = hark_temp_fd()) < 0) {
        int err = errno;
        free(s->buf);
        s->buf = NULL;
        return hark_fail(e, HARK_ERR_IO, "cannot make a temporary file for the samples in %s: "
                         "%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", strerror(err));
    }
    return 0;
}

int hark_write_fd(int fd, const void *p, size_t bytes)
{
    for (size_t done = 0; done < bytes;) {
        ssize_t w = write(fd, (const char *)p + done, bytes - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : ENOSPC;
        done += (size_t)w;
    }
    return 0;
}

static int flush(hark_source *s, hark_error *e)
{
    int err = s->buffered ? hark_write_fd(s->fd, s->buf, sizeof(float) * s->buffered) : 0;
    s->buffered = 0;
    return err ? hark_fail(e, HARK_ERR_IO, "cannot write the samples to a temporary file: %s",
                           strerror(err))
               : 0;
}

int hark_source_append(hark_source *s, const float *x, size_t n, hark_error *e)
{
    while (n) {
        size_t k = WRITE_BLOCK - s->buffered < n ? WRITE_BLOCK - s->buffered : n;
        memcpy(s->buf + s->buffered, x, sizeof(float) * k);
        s->buffered += k, s->n += k, x += k, n -= k;
        int rc = s->buffered == WRITE_BLOCK ? flush(s, e) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

int hark_source_finish(hark_source *s, hark_error *e)
{
    int rc = s->fd >= 0 ? flush(s, e) : 0;
    free(s->buf);
    s->buf = NULL;
    return rc;
}

int hark_source_read(const hark_source *s, long long pos, size_t n, float *out)
{
    /* zeros before the start and past the end: the padding's */
    long long end = pos + (long long)n, lo = pos < 0 ? 0 : pos;
    long long hi = end > (long long)s->n ? (long long)s->n : end;
    memset(out, 0, sizeof(float) * n);
    if (hi <= lo)
        return 0;
    float *dst = out + (lo - pos);
    if (s->mem) {
        memcpy(dst, s->mem + lo, sizeof(float) * (size_t)(hi - lo));
        return 0;
    }
    size_t bytes = sizeof(float) * (size_t)(hi - lo), done = 0;
    while (done < bytes) {
        ssize_t r = pread(s->fd, (char *)dst + done, bytes - done,
                          (off_t)(sizeof(float) * (size_t)lo + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return HARK_ERR_IO;
        done += (size_t)r;
    }
    return 0;
}

int hark_source_all(const hark_source *s, float **samples, size_t *n, hark_error *e)
{
    float *x = malloc(sizeof(float) * (s->n ? s->n : 1));
    if (!x)
        return hark_fail(e, HARK_ERR_NOMEM, "out of memory for %zu samples", s->n);
    if (hark_source_read(s, 0, s->n, x)) {
        free(x);
        return hark_fail(e, HARK_ERR_IO, "cannot read the samples back from their temporary "
                         "file: %s", strerror(errno));
    }
    *samples = x;
    *n = s->n;
    return 0;
}

void hark_source_close(hark_source *s)
{
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    hark_source_memory(s, NULL, 0);
}
