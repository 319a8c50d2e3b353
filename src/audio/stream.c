/* Input that is not a regular file (stdin, a FIFO, a device, a socket): known
 * by its first bytes, so that /dev/zero or text fails at once, then copied as
 * it arrives to an unlinked temporary file, at most the bytes the duration
 * limit can take: memory stays bounded however long the stream goes on, and
 * the copy is read as any file is (an MP4 from a pipe keeps its index at its
 * end, which only a seekable copy reaches). */
#include "audio/audio.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { FIRST = 4096 }; /* bytes looked at before the format is known */

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

/* "RIFF....WAVE" and its kin: the bytes a second, from the fmt chunk; 0 when unknown. */
static double wav_byte_rate(const uint8_t *d, size_t n)
{
    size_t at;
    uint32_t len;
    if (!hark_wav_chunk(d, n, "fmt ", &at, &len) || len < 12 || at + 12 > n)
        return 0;
    return d[at + 8] | (uint32_t)d[at + 9] << 8 | (uint32_t)d[at + 10] << 16 |
           (uint32_t)d[at + 11] << 24;
}

/* Whether the first n bytes start an audio file or a container hark reads. */
static int recognised(const uint8_t *d, size_t n)
{
#define M(s) {s, sizeof s - 1} /* the length: some start with a zero byte */
    static const struct { const char *b; size_t n; } magic[] = {
        M("RIFF"), M("RIFX"), M("RF64"), M("BW64"), M("FORM"), M(".snd"), M("dns."), M("caff"),
        M("riff"), M("fLaC"), M("OggS"), M("ID3"), M("#!AMR"), M("NIST_1A"),
        M("Creative Voice File"), M("MAC "), M("wvpk"), M("TTA1"), M(".RMF"), M("FLV"),
        M("\x1a\x45\xdf\xa3") /* Matroska, WebM */, M("\x30\x26\xb2\x75") /* ASF */,
        M("\x00\x00\x01\xba") /* MPEG program stream */, M("\x0b\x77") /* AC-3 */,
        M("IMPS"), M("2BIT")};
#undef M
    for (size_t i = 0; i < sizeof magic / sizeof *magic; i++)
        if (n >= magic[i].n && memcmp(d, magic[i].b, magic[i].n) == 0)
            return 1;
    return (n >= 12 && memcmp(d + 4, "ftyp", 4) == 0) ||    /* MP4, M4A, MOV */
           (n >= 2 && d[0] == 0xff && (d[1] & 0xe0) == 0xe0) || /* MPEG audio, ADTS */
           (n >= 189 && d[0] == 0x47 && d[188] == 0x47);      /* MPEG transport stream */
}

static void hex_bytes(const uint8_t *d, size_t n, char *out)
{
    for (size_t i = 0; i < n && i < 8; i++)
        sprintf(out + 3 * i - (i > 0), i ? " %02x" : "%02x", d[i]);
    if (!n)
        snprintf(out, 8, "none");
}

/* Reads until buf holds want bytes or the stream ends; the count, or -1. */
static ssize_t read_some(int fd, uint8_t *buf, size_t want)
{
    size_t n = 0;
    while (n < want) {
        ssize_t r = read(fd, buf + n, want - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        n += (size_t)r;
    }
    return (ssize_t)n;
}

/* Copies the first n bytes, then the rest of fd, to out until fd's end or until
 * max bytes (0: no limit) are copied (*cut then). */
static int copy_stream(int fd, int out, const uint8_t *first, size_t n, double max, int *cut,
                       const char *name, hark_error *e)
{
    enum { BLOCK = 1 << 16 };
    uint8_t *buf = malloc(BLOCK);
    const uint8_t *p = first;
    double copied = 0;
    ssize_t r = (ssize_t)n;
    int rc = buf ? 0 : hark_fail(e, HARK_ERR_NOMEM, "out of memory");
    while (!rc && r > 0) {
        size_t k = max > 0 && copied + (double)r > max ? (size_t)(max - copied) : (size_t)r;
        int err = hark_write_fd(out, p, k);
        if (err)
            rc = hark_fail(e, HARK_ERR_IO, "%s: cannot copy to a temporary file: %s", name,
                           strerror(err));
        copied += (double)k;
        if (k < (size_t)r) {
            *cut = 1;
            break;
        }
        p = buf;
        if ((r = read_some(fd, buf, BLOCK)) < 0)
            rc = hark_fail(e, HARK_ERR_IO, "%s: %s", name, strerror(errno));
    }
    free(buf);
    return rc;
}

int hark_stream_spool(int fd, const char *name, double max_seconds, int *cut, hark_error *e)
{
    uint8_t first[FIRST];
    char shown[32];
    ssize_t n = read_some(fd, first, sizeof first);
    if (n < 0)
        return hark_fail(e, HARK_ERR_IO, "%s: %s", name, strerror(errno));
    if (n == 0)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: empty file", name);
    if (!recognised(first, (size_t)n)) {
        hex_bytes(first, (size_t)n, shown);
        return hark_fail(e, HARK_ERR_FORMAT, "%s: not a readable audio file (no audio format "
                         "starts with the bytes %s)", name, shown);
    }
    /* a WAV's bytes a second are known; anything else is allowed 768 kB a second,
     * 96 kHz stereo in 32-bit samples, more than any compressed audio takes */
    double rate = wav_byte_rate(first, (size_t)n), max = 0;
    if (max_seconds > 0)
        max = FIRST + (rate > 0 ? rate : 768e3) * (max_seconds + 1);
    int out = hark_temp_fd();
    if (out < 0)
        return hark_fail(e, HARK_ERR_IO, "%s: cannot make a temporary file: %s", name,
                         strerror(errno));
    int rc = copy_stream(fd, out, first, (size_t)n, max, cut, name, e);
    if (rc) {
        close(out);
        return rc;
    }
    return out;
}
