/* hark stream [FILE] [options]: live transcription of 16 kHz mono 16-bit PCM as it
 * arrives (stdin, a FIFO: arecord, parec or ffmpeg writing it), as whisper.cpp's
 * stream example transcribes its microphone: every step the last length of audio
 * is transcribed again, the line redrawn; every length / step - 1 steps the line
 * is final and the next starts from the last keep of its audio.  With --vad,
 * utterances instead: each transcribed once Silero VAD finds its speech ended
 * (whisper.cpp's stream in VAD mode).  A reader thread
 * takes the samples in while a window is transcribed, so that a live source is
 * never held up (a pipe holds two seconds). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "face.h" /* hark_verbose_line */

/* Samples the reader has taken in and the stream loop not yet. */
typedef struct queue {
    pthread_mutex_t lock;
    pthread_cond_t more, room;
    float *s;
    size_t head, n, cap; /* s[head, n) waiting */
    int done;            /* end of input (or a read error: err) */
    char err[256];
} queue;

typedef struct stream {
    cli_options o;
    const char *input;   /* "-" for stdin */
    int step_ms, length_ms, keep_ms, keep_context;
    int fd;
    queue q;
    hark_vad *vad;       /* --vad: utterances (run_vad) rather than windows */
} stream;

const char cli_stream_usage[] =
    "usage: hark stream [FILE] [--step MS] [--length MS] [--keep MS] [--keep-context]\n"
    "                   [options]\n"
    "  live transcription of 16 kHz mono 16-bit little-endian PCM from FILE or stdin\n"
    "  (raw, or a WAV stream of it), as whisper.cpp's stream, e.g.\n"
    "    arecord -q -f S16_LE -c 1 -r 16000 -t raw | hark stream\n"
    "    ffmpeg -loglevel error -i URL -f s16le -ac 1 -ar 16000 - | hark stream\n"
    "  every --step ms (default 3000) the last --length ms (default 10000) are\n"
    "  transcribed again; every length/step - 1 steps the line is final and the next\n"
    "  begins with the last --keep ms (default 200) of its audio.  On a terminal the\n"
    "  line is redrawn at each step; elsewhere only final lines are written.\n"
    "  --keep-context  prompt each line with the final text of the one before\n"
    "  --vad [VAD options]  utterances instead (--step 0 too, as whisper.cpp's): once\n"
    "                  speech is followed by a second of silence (or fills --length),\n"
    "                  its segments, timed in the stream, looked for every --step ms\n"
    "                  (default 1000): [00:05.630 --> 00:07.830]  text\n"
    "  Decoding options as hark --help (greedy unless --beam-size is given).\n";

/* ---- the reader thread */

/* Samples the reader holds before it waits: a live source falls this far behind
 * only when transcription is slower than real time; a file is not read ahead
 * into memory beyond it. */
enum { MAX_BACKLOG = 600 * HARK_SAMPLE_RATE };

static int queue_add(queue *q, const float *x, size_t n)
{
    if (n == 0)
        return 0;
    pthread_mutex_lock(&q->lock);
    while (q->n - q->head > MAX_BACKLOG) /* a file read faster than it is transcribed */
        pthread_cond_wait(&q->room, &q->lock);
    if (q->head > 0 && q->head >= q->n / 2) { /* drop what the loop has taken */
        memmove(q->s, q->s + q->head, sizeof(float) * (q->n - q->head));
        q->n -= q->head;
        q->head = 0;
    }
    int rc = 0;
    if (q->n + n > q->cap) {
        size_t c = q->cap ? 2 * q->cap : (size_t)1 << 16;
        c = c < q->n + n ? q->n + n : c;
        float *p = realloc(q->s, sizeof(float) * c);
        if (p)
            q->s = p, q->cap = c;
        else
            rc = -1;
    }
    if (!rc) {
        memcpy(q->s + q->n, x, sizeof(float) * n);
        q->n += n;
        pthread_cond_signal(&q->more);
    }
    pthread_mutex_unlock(&q->lock);
    return rc;
}

static void queue_end(queue *q, const char *err)
{
    pthread_mutex_lock(&q->lock);
    q->done = 1;
    if (err)
        snprintf(q->err, sizeof q->err, "%s", err);
    pthread_cond_signal(&q->more);
    pthread_mutex_unlock(&q->lock);
}

/* A WAV stream's header (arecord without -t raw writes one): its format must be
 * the raw one's; the samples follow the data chunk's header.  0, or -1 with why. */
static int skip_wav_header(const uint8_t *b, size_t n, size_t *skip, char *why, size_t len)
{
    size_t at;
    uint32_t size;
    if (hark_wav_chunk(b, n, "fmt ", &at, &size) && at + 16 <= n) {
        const uint8_t *f = b + at;
        int tag = f[0] | f[1] << 8, ch = f[2] | f[3] << 8, bits = f[14] | f[15] << 8;
        long rate = f[4] | f[5] << 8 | f[6] << 16 | (long)f[7] << 24;
        if (tag != 1 || ch != 1 || rate != HARK_SAMPLE_RATE || bits != 16) {
            snprintf(why, len, "a WAV stream of %ld Hz, %d channel(s), %d-bit%s: hark stream "
                     "reads 16000 Hz, 1 channel, 16-bit PCM", rate, ch, bits,
                     tag == 1 ? "" : " non-PCM");
            return -1;
        }
    }
    if (hark_wav_chunk(b, n, "data", skip, &size))
        return 0;
    snprintf(why, len, "a WAV stream without a data chunk in its first %zu bytes", n);
    return -1;
}

static void *reader(void *arg)
{
    stream *st = arg;
    enum { BYTES = 1 << 15 };
    uint8_t b[BYTES];
    float x[BYTES / 2];
    size_t have = 0;
    int raw_or_wav_known = 0;
    char why[256];
    for (;;) {
        ssize_t r = read(st->fd, b + have, sizeof b - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(why, sizeof why, "%s", strerror(errno));
            queue_end(&st->q, why);
            return NULL;
        }
        size_t skip = 0;
        have += (size_t)r;
        if (!raw_or_wav_known && have < 44 && r > 0)
            continue; /* a WAV header is 44 bytes at least */
        if (!raw_or_wav_known++ && have >= 12 && !memcmp(b, "RIFF", 4) &&
            !memcmp(b + 8, "WAVE", 4) && skip_wav_header(b, have, &skip, why, sizeof why)) {
            queue_end(&st->q, why);
            return NULL;
        }
        size_t n = (have - skip) / 2;
        for (size_t i = 0; i < n; i++)
            x[i] = (float)(int16_t)(b[skip + 2 * i] | b[skip + 2 * i + 1] << 8) / 32768.0f;
        if (queue_add(&st->q, x, n)) {
            queue_end(&st->q, "out of memory");
            return NULL;
        }
        memmove(b, b + skip + 2 * n, have - skip - 2 * n);
        have -= skip + 2 * n;
        if (r == 0) {
            queue_end(&st->q, NULL);
            return NULL;
        }
    }
}

/* Up to want samples from the queue into x, waiting for them; fewer only at the end. */
static size_t queue_take(queue *q, float *x, size_t want)
{
    pthread_mutex_lock(&q->lock);
    while (q->n - q->head < want && !q->done)
        pthread_cond_wait(&q->more, &q->lock);
    size_t k = q->n - q->head < want ? q->n - q->head : want;
    if (k) {
        memcpy(x, q->s + q->head, sizeof(float) * k);
        q->head += k;
        pthread_cond_signal(&q->room);
    }
    pthread_mutex_unlock(&q->lock);
    return k;
}

/* ---- the stream loop */

static const char *input_name(const stream *st)
{
    return strcmp(st->input, "-") ? st->input : "stdin";
}

/* The text of a transcription, its segments joined, without the leading space. */
static const char *window_text(hark_context *ctx)
{
    const char *t = hark_text(ctx);
    return t[0] == ' ' ? t + 1 : t;
}

/* Shows a window's text: redrawn in place on a terminal, written only when final
 * elsewhere (an empty final text writes nothing). */
static void show(const char *text, int final, int tty)
{
    if (tty) {
        cli_print("\r\033[2K");
        cli_print(text);
        if (final)
            cli_print("\n");
    } else if (final && text[0]) {
        cli_print(text);
        cli_print("\n");
    }
    cli_flush_stdout();
}

/* Transcribes the window, in *ctx (made when NULL, prompted with prompt under
 * --keep-context); prints the error and returns -1 when it fails. */
static int transcribe(const stream *st, const hark_model *model, hark_context **ctx,
                      const char *prompt, const float *w, size_t n)
{
    if (!*ctx) {
        hark_params p = st->o.params;
        p.prompt.initial = st->keep_context ? prompt : NULL;
        p.vad.model = st->vad;
        if (!(*ctx = hark_context_new(model, &p))) {
            fprintf(stderr, "hark: stream: out of memory\n");
            return -1;
        }
    }
    if (hark_transcribe(*ctx, w, n) == 0)
        return 0;
    fprintf(stderr, "hark: stream: %s\n", hark_last_error(*ctx));
    return -1;
}

/* The input ended before a sample came (not for a read error, told after). */
static int no_audio(const stream *st)
{
    if (st->q.err[0])
        return 0;
    fprintf(stderr, "hark: %s: no audio samples\n", input_name(st));
    return 1;
}

/* Moves the last keep of the old samples in w to its start; returns how many. */
static size_t keep_tail(float *w, size_t old, size_t keep)
{
    size_t k = keep < old ? keep : old;
    memmove(w, w + old - k, sizeof(float) * k);
    return k;
}

/* --keep-context: the final line's text becomes the next line's prompt, in a new
 * context (a context's prompt is set when it is made). */
static void carry_prompt(hark_context **ctx, char **prompt)
{
    free(*prompt);
    *prompt = strdup(hark_text(*ctx));
    hark_context_free(*ctx);
    *ctx = NULL;
}

/* The window of each step: the last of the audio before (up to keep + length - new
 * samples of it, as whisper.cpp's stream) and the new step. */
static int run(stream *st, const hark_model *model)
{
    size_t step = (size_t)st->step_ms * 16, len = (size_t)st->length_ms * 16,
           keep = (size_t)st->keep_ms * 16, old = 0, cap = len + keep + step;
    int new_line = st->length_ms / st->step_ms - 1, tty = isatty(1), rc = 0, shown = 1;
    new_line = new_line < 1 ? 1 : new_line;
    float *w = malloc(sizeof(float) * cap);
    char *prompt = NULL;
    hark_context *ctx = NULL;
    if (!w) {
        fprintf(stderr, "hark: stream: out of memory\n");
        rc = 1;
    }
    for (long iter = 1; !rc; iter++) {
        size_t got = queue_take(&st->q, w + old, step), take = keep + len > got ? keep + len - got : 0;
        if (got == 0) {
            rc = iter == 1 && no_audio(st);
            break;
        }
        take = take < old ? take : old; /* the last `take` of the `old` kept */
        memmove(w, w + old - take, sizeof(float) * (take + got));
        old = take + got;
        if (transcribe(st, model, &ctx, prompt, w, old)) {
            rc = 1;
            break;
        }
        int final = iter % new_line == 0;
        show(window_text(ctx), final, tty);
        shown = final;
        if (final && st->keep_context)
            carry_prompt(&ctx, &prompt);
        if (final)
            old = keep_tail(w, old, keep);
    }
    if (!rc && !shown && ctx) /* the input ended mid-line: its last text is final */
        show(window_text(ctx), 1, tty);
    hark_context_free(ctx);
    free(prompt);
    free(w);
    return rc;
}

/* ---- --vad: utterances */

/* Silence after the speech that ends an utterance, as whisper.cpp's stream waits
 * for a second of it in its VAD mode. */
enum { END_SILENCE = HARK_SAMPLE_RATE };

/* Where the utterance in w[0, n) ends: 0 while its speech goes on.  Finished
 * speech is cut midway into the silence after it (the rest may hold the start of
 * what comes next); at --length samples, after the last span but one, else there. */
static size_t utterance_end(const stream *st, const float *w, size_t n, size_t len, int eof,
                            int *err)
{
    int max = (int)(2 * (n / HARK_VAD_CHUNK) + 4);
    double *start = malloc(sizeof(double) * (size_t)max), *end = malloc(sizeof(double) * (size_t)max);
    int k = start && end ? hark_vad_speech_spans(st->vad, &st->o.params, w, n, start, end, max)
                         : HARK_ERR_NOMEM;
    size_t cut = 0, last_end = k > 0 ? (size_t)(end[k - 1] * HARK_SAMPLE_RATE) : 0;
    if (k < 0) {
        fprintf(stderr, "hark: stream: out of memory for voice activity detection\n");
        *err = 1;
    }
    else if (eof)
        cut = n;
    else if (k == 0) /* silence alone: let go of all but its last second */
        cut = n > END_SILENCE ? n - END_SILENCE : 0;
    else if (n >= last_end + END_SILENCE)
        cut = last_end + (n - last_end) / 2;
    else if (n >= len)
        cut = k > 1 ? (size_t)((end[k - 2] + start[k - 1]) / 2 * HARK_SAMPLE_RATE) : n;
    free(start);
    free(end);
    return cut;
}

/* The utterance's segments, "[start --> end] text" in the stream's time (t0 seconds
 * before w[0]). */
static void print_utterance(const hark_context *ctx, double t0)
{
    for (int i = 0; i < hark_n_segments(ctx); i++) {
        char *line = hark_verbose_line(t0 + hark_segment_start(ctx, i),
                                       t0 + hark_segment_end(ctx, i), hark_segment_text(ctx, i), 0);
        cli_print(line ? line : "\n");
        free(line);
    }
    cli_flush_stdout();
}

/* Takes steps of audio until the speech in them ends, transcribes the utterance
 * (its speech alone, as --vad does) and goes on after it. */
static int run_vad(stream *st, const hark_model *model)
{
    size_t step = (size_t)st->step_ms * 16, len = (size_t)st->length_ms * 16, n = 0, t0 = 0;
    float *w = malloc(sizeof(float) * (len + step));
    hark_context *ctx = NULL;
    int rc = w ? 0 : 1, eof = 0;
    if (!w)
        fprintf(stderr, "hark: stream: out of memory\n");
    while (!rc && !eof) {
        size_t got = queue_take(&st->q, w + n, step), cut;
        eof = got < step;
        n += got;
        if (n == 0 || !(cut = utterance_end(st, w, n, len, eof, &rc)) || rc)
            continue;
        if (transcribe(st, model, &ctx, NULL, w, cut)) {
            rc = 1;
            break;
        }
        if (hark_n_segments(ctx))
            print_utterance(ctx, (double)t0 / HARK_SAMPLE_RATE);
        memmove(w, w + cut, sizeof(float) * (n - cut));
        n -= cut;
        t0 += cut;
    }
    if (!rc && t0 + n == 0)
        rc = no_audio(st);
    hark_context_free(ctx);
    free(w);
    return rc;
}

/* ---- options */

/* A --step/--length/--keep value into *v; 1 when a is not one of them, -1 when bad. */
static int ms_option(stream *st, const char *a, const char *v)
{
    int *target = !strcmp(a, "--step") ? &st->step_ms : !strcmp(a, "--length") ? &st->length_ms
                : !strcmp(a, "--keep") ? &st->keep_ms : NULL;
    if (!target)
        return 1;
    int lo = target == &st->keep_ms ? 0 : 100;
    if (v && target == &st->step_ms && !strcmp(v, "0")) { /* whisper.cpp's VAD mode */
        st->o.vad = 1;
        st->step_ms = -1;
        return 0;
    }
    if (!v || cli_int_arg(v, lo, CLI_MAX_MS, target)) {
        fprintf(stderr, "hark: bad value for %s: %s (milliseconds, %d to %d%s)\n", a,
                v ? v : "(none)", lo, CLI_MAX_MS,
                target == &st->step_ms ? ", or 0 for --vad" : "");
        return -1;
    }
    return 0;
}

/* 0, -1 after --help, or the exit status of a usage error. */
static int parse(stream *st, int argc, char **argv)
{
    int inputs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int r;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli_print(cli_stream_usage);
            return -1;
        }
        if (a[0] != '-' || !strcmp(a, "-")) {
            if (inputs++) {
                fprintf(stderr, "hark: stream: one input at most (%s, then %s)\n", st->input, a);
                return 2;
            }
            st->input = a;
        } else if (!strcmp(a, "--keep-context")) {
            st->keep_context = 1;
        } else if ((r = ms_option(st, a, v)) <= 0) {
            if (r < 0)
                return 2;
            i++;
        } else if ((r = cli_parse_common(&st->o, argc, argv, &i)) <= 0) {
            if (r == 0)
                cli_unknown_option("stream", a);
            return 2;
        }
    }
    if (st->step_ms < 0) /* --vad looks for the end of speech every second */
        st->step_ms = st->o.vad ? 1000 : 3000;
    if (st->step_ms > st->length_ms) {
        fprintf(stderr, "hark: stream: --step %d is longer than --length %d\n", st->step_ms,
                st->length_ms);
        return 2;
    }
    return 0;
}

static int open_input(stream *st)
{
    if (!strcmp(st->input, "-") && isatty(0)) {
        fprintf(stderr, "hark: stream: stdin is a terminal: pipe 16 kHz PCM into it, e.g. "
                        "arecord -q -f S16_LE -c 1 -r 16000 -t raw | hark stream\n");
        return -1;
    }
    if (!strcmp(st->input, "-"))
        return st->fd = 0;
    if ((st->fd = open(st->input, O_RDONLY | O_CLOEXEC)) < 0)
        fprintf(stderr, "hark: %s: %s\n", st->input, strerror(errno));
    return st->fd;
}

int cli_stream_main(int argc, char **argv)
{
    stream st = {.input = "-", .step_ms = -1, .length_ms = 10000, .keep_ms = 200};
    cli_default_options(&st.o);
    st.o.params.search.beam_size = 1; /* whisper.cpp's stream: greedy */
    int rc = parse(&st, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    cli_default_threads(&st.o);
    st.o.params.timestamps = st.o.vad; /* whisper.cpp's stream: with VAD only */
    hark_model *model = cli_load_models(&st.o, &st.vad);
    if (!model || open_input(&st) < 0) {
        hark_model_free(model);
        hark_vad_free(st.vad);
        return 1;
    }
    pthread_mutex_init(&st.q.lock, NULL);
    pthread_cond_init(&st.q.more, NULL);
    pthread_cond_init(&st.q.room, NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, reader, &st) == 0) {
        rc = st.vad ? run_vad(&st, model) : run(&st, model);
        if (rc)
            pthread_cancel(t); /* it may wait on a live source for ever */
        pthread_join(t, NULL);
    } else {
        fprintf(stderr, "hark: stream: cannot start the reader thread\n");
        rc = 1;
    }
    if (!rc && st.q.err[0]) {
        fprintf(stderr, "hark: %s: %s\n", input_name(&st), st.q.err);
        rc = 1;
    }
    if (st.fd > 0)
        close(st.fd);
    free(st.q.s);
    hark_model_free(model);
    hark_vad_free(st.vad);
    cli_flush_stdout();
    return rc;
}
