/* Audio libsndfile cannot read (MP4/M4A, WebM, video files, ...) decoded by
 * ffmpeg when it is installed, the way openai-whisper loads every file:
 * ffmpeg -i FILE -f s16le -ac 1 -ar 16000, so the samples are openai's. */
#include "audio/audio.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The samples ffmpeg writes, converted as they arrive (2 channels when the
 * file's loudness per channel is asked for, else 1). */
typedef struct pcm_sink {
    hark_decoded *d;
    int channels, differ; /* differ: the two channels are not one upmixed */
} pcm_sink;

const char *hark_ffmpeg_program(void)
{
    const char *p = getenv("HARK_FFMPEG");
    return p ? p : "ffmpeg";
}

/* Adds n whole frames of little-endian 16-bit samples. */
static int sink_add(pcm_sink *s, const uint8_t *b, size_t n, const char *path, hark_error *e)
{
    enum { MAX = 8192 };
    float frames[2 * MAX], mono[MAX];
    hark_decoded *d = s->d;
    int rc = 0;
    for (size_t i = 0; !rc && !d->cut && i < n; i += MAX) {
        size_t k = n - i < MAX ? n - i : MAX, ch = (size_t)s->channels;
        for (size_t j = 0; j < k * ch; j++) {
            const uint8_t *p = b + 2 * (i * ch + j);
            frames[j] = (float)(int16_t)(p[0] | p[1] << 8) / 32768.0f;
        }
        for (size_t j = 0; j < k; j++) {
            mono[j] = ch == 2 ? (frames[2 * j] + frames[2 * j + 1]) / 2 : frames[j];
            s->differ |= ch == 2 && frames[2 * j] != frames[2 * j + 1];
        }
        long long first = d->frames;
        if ((rc = hark_decoded_add(d, mono, k, path, e)))
            break;
        if (d->levels && hark_levels_add(d->levels, frames, (size_t)(d->frames - first), first,
                                         HARK_SAMPLE_RATE))
            rc = hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", path);
    }
    return rc;
}

/* Reads ffmpeg's output to its end (or to the duration limit), a frame split
 * between reads carried over. */
static int read_pcm(int fd, pcm_sink *s, const char *path, hark_error *e)
{
    uint8_t buf[1 << 16];
    size_t have = 0, frame = 2 * (size_t)s->channels;
    for (;;) {
        ssize_t r = read(fd, buf + have, sizeof buf - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return hark_fail(e, HARK_ERR_IO, "%s: reading ffmpeg's output: %s", path,
                             strerror(errno));
        if (r == 0)
            return 0;
        have += (size_t)r;
        size_t whole = have / frame;
        int rc = sink_add(s, buf, whole, path, e);
        if (rc || s->d->cut)
            return rc;
        memmove(buf, buf + whole * frame, have - whole * frame);
        have -= whole * frame;
    }
}

/* The formats ffmpeg may read: audio files and the containers recordings and
 * videos come in.  Not playlists and manifests (hls, dash, concat...), which make
 * it open the files they name: a server's upload could read the server's files. */
static const char CONTAINERS[] =
    "mov,matroska,asf,avi,flv,nut,mxf,wtv,dv,mpegts,mpeg,rm,amr,amrnb,amrwb,aac,loas,ac3,eac3,"
    "dts,dtshd,truehd,mlp,mp3,wav,w64,aiff,caf,au,voc,flac,ogg,ape,tta,wv,tak,shn,mpc,mpc8,"
    "gsm,dsf,oma,qcp,xwma";

/* ffmpeg's first error line, without the "[mov,mp4 @ 0x...] " or input name
 * it starts with, into why. */
static void first_error(int fd, char *why, size_t len)
{
    char text[1024];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = 0;
    char *line = text, *end = strchr(line, '\n');
    if (end)
        *end = 0;
    if (strstr(line, "not on whitelist") && line[0] == '[' && strchr(line, ' ')) {
        *strchr(line, ' ') = 0; /* "[hls @ 0x...] Format not on whitelist '...'" */
        snprintf(why, len, "%.40s (a playlist or manifest, which opens the files it names) "
                 "is not read", line + 1);
        return;
    }
    if (line[0] == '[' && strstr(line, "] "))
        line = strstr(line, "] ") + 2;
    if (strncmp(line, "file:/dev/stdin: ", 17) == 0)
        line += 17;
    size_t k = strlen(line) < len - 1 ? strlen(line) : len - 1;
    memcpy(why, line, k);
    why[k] = 0;
}

/* Starts ffmpeg reading fd in, writing to *out; returns its pid, or 0 with
 * errno set (ENOENT: no such program). */
static pid_t start_ffmpeg(const char *program, int in, int err, int channels, int *out)
{
    char ac[2] = {(char)('0' + channels), 0};
    char *const argv[] = {(char *)program, "-nostdin", "-hide_banner", "-loglevel", "error",
                          "-threads", "0", "-format_whitelist", (char *)CONTAINERS,
                          "-protocol_whitelist", "file", /* nothing from the network */
                          "-i", "file:/dev/stdin", "-f", "s16le", "-ac", ac,
                          "-acodec", "pcm_s16le", "-ar", "16000", "pipe:1", NULL};
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return 0;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err, 2);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3); /* a server's sockets stay its own */
    posix_spawnattr_init(&at);
    /* default dispositions and no blocked signal: hark ignores SIGPIPE and a
     * server's workers block SIGTERM, which ffmpeg must not inherit */
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    pid_t pid;
    int rc = posix_spawnp(&pid, program, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(p[1]);
    if (rc) {
        close(p[0]);
        errno = rc;
        return 0;
    }
    *out = p[0];
    return pid;
}

/* ffmpeg's wait status; 0 (success: its output decides) when a program that
 * ignores SIGCHLD had it reaped already. */
static int wait_status(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 0;
    return status;
}

/* How ffmpeg ended, as an error naming the file and ffmpeg's reason. */
static int ffmpeg_failed(int status, int err, const char *path, const char *what,
                         hark_error *e)
{
    char why[400];
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    first_error(err, why, sizeof why);
    if (strstr(why, "does not contain any stream")) /* what it says of a video alone */
        snprintf(why, sizeof why, "no audio stream");
    else if (!why[0])
        snprintf(why, sizeof why, WIFSIGNALED(status) ? "killed by signal %d" : "exit status %d",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    return hark_fail(e, HARK_ERR_FORMAT, "%s: %s; ffmpeg: %s", path, what, why);
}

/* Runs ffmpeg to its end and checks how it ended. */
static int run_ffmpeg(int in, int err, pcm_sink *s, const char *path, const char *what,
                      hark_error *e)
{
    int out = -1;
    pid_t pid = start_ffmpeg(hark_ffmpeg_program(), in, err, s->channels, &out);
    if (!pid)
        return errno == ENOENT ? HARK_FFMPEG_MISSING
                               : hark_fail(e, HARK_ERR_IO, "%s: %s; ffmpeg: %s", path, what,
                                           strerror(errno));
    int rc = read_pcm(out, s, path, e);
    close(out);
    if (rc || s->d->cut) /* cut: the rest is not wanted */
        kill(pid, SIGKILL);
    int status = wait_status(pid);
    if (!rc && !s->d->cut)
        rc = ffmpeg_failed(status, err, path, what, e);
    if (!rc && s->d->frames == 0)
        rc = hark_fail(e, HARK_ERR_FORMAT, "%s: no audio samples", path);
    return rc;
}

int hark_ffmpeg_decode(int in, const char *path, const char *what, hark_decoded *d,
                       hark_error *e)
{
    if (!*hark_ffmpeg_program())
        return HARK_FFMPEG_MISSING;
    FILE *errf = tmpfile();
    if (!errf)
        return hark_fail(e, HARK_ERR_IO, "%s: cannot make a file for ffmpeg's errors: %s",
                         path, strerror(errno));
    pcm_sink s = {d, d->levels ? 2 : 1, 0};
    int rc = hark_decoded_start(d, HARK_SAMPLE_RATE, path, e);
    if (!rc)
        rc = run_ffmpeg(in, fileno(errf), &s, path, what, e);
    fclose(errf);
    if (!rc)
        rc = hark_decoded_end(d, path, e);
    if (d->levels && (rc || !s.differ)) /* a mono file, upmixed: no loudness to compare */
        hark_levels_free(d->levels);
    return rc;
}
