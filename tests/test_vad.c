/* Voice activity detection: Silero VAD's probabilities against onnxruntime's
 * (scripts/reference/vad-reference.js, tests/data/vad/), with f32 and with whisper.cpp's
 * f16 convolutions; the VAD file's loader on damaged files; whisper.cpp's speech
 * spans on hand-made probabilities; the joined speech and its time map. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "audio/audio.h"

#define VAD_MODEL "models/silero-vad/ggml-silero-v6.bin"
enum { HEADER = 106 }; /* magic, "silero-16k", version, window... final conv: 106 bytes */

static char dir[64];

static int read_probs(const char *path, float *p, int max)
{
    FILE *f = fopen(path, "r");
    int n = 0;
    while (f && n < max && fscanf(f, "%f", &p[n]) == 1)
        n++;
    if (f)
        fclose(f);
    return n;
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n, "cannot write %s", path);
    if (f)
        fclose(f);
}

static int32_t i32_at(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The committed model with whisper.cpp's f16 convolution weights and STFT basis,
 * as its converter writes them; returns its size. */
static size_t to_f16(const uint8_t *in, size_t n, uint8_t *out)
{
    size_t at = HEADER, o = HEADER;
    memcpy(out, in, HEADER);
    while (at < n) {
        int32_t dims = i32_at(in + at), len = i32_at(in + at + 4), count = 1;
        const char *name = (const char *)in + at + 12 + 4 * dims;
        for (int i = 0; i < dims; i++)
            count *= i32_at(in + at + 12 + 4 * i);
        int half = (memmem(name, (size_t)len, ".weight", 7) && !memmem(name, (size_t)len, "rnn", 3)) ||
                   memmem(name, (size_t)len, "stft", 4);
        size_t head = 12 + 4 * (size_t)dims + (size_t)len;
        memcpy(out + o, in + at, head);
        int32_t one = 1;
        if (half)
            memcpy(out + o + 8, &one, 4);
        at += head, o += head;
        for (int i = 0; i < count; i++, at += 4) {
            float f;
            memcpy(&f, in + at, 4);
            uint16_t h = hark_f32_to_f16(f);
            memcpy(out + o, half ? (void *)&h : (void *)&f, half ? 2 : 4);
            o += half ? 2 : 4;
        }
    }
    return o;
}

/* hark's probabilities for the long sample against onnxruntime's on the ONNX
 * file the model was converted from; returns the largest difference. */
static double parity(const hark_vad *vad, const float *s, size_t n, const float *ref, int n_ref)
{
    float *got = malloc(sizeof(float) * (size_t)n_ref);
    double worst = 0;
    int agree = 0;
    CHECK(hark_vad_probs(vad, s, n, got) == 0, "probs");
    for (int i = 0; i < n_ref; i++) {
        worst = fmax(worst, fabs(got[i] - ref[i]));
        agree += (got[i] >= 0.5f) == (ref[i] >= 0.5f);
    }
    CHECK(agree == n_ref, "%d of %d chunks on the reference's side of 0.5", agree, n_ref);
    free(got);
    return worst;
}

static void test_parity(const uint8_t *file, size_t size)
{
    float *s, *ref = malloc(sizeof(float) * 4096);
    size_t n;
    char err[256], path[128];
    int rc = hark_read_audio("samples/long-espeak-en-us.wav", &s, &n, err, sizeof err);
    CHECK(rc == 0, "%s", err);
    int n_ref = read_probs("tests/data/vad/long-espeak-en-us.txt", ref, 4096);
    CHECK(n_ref == 2034 && !rc && n_ref == (int)hark_vad_n_chunks(n), "%d reference values", n_ref);
    hark_vad *vad = hark_vad_load(VAD_MODEL, err, sizeof err);
    CHECK(vad != NULL, "%s", err);
    if (vad && n_ref == 2034) {
        double d = parity(vad, s, n, ref, n_ref);
        CHECK(d < 5e-5, "f32: max |hark - onnxruntime| %g", d);
    }
    hark_vad_free(vad);
    uint8_t *half = malloc(size);
    snprintf(path, sizeof path, "%s/f16.bin", dir);
    write_bytes(path, half, to_f16(file, size, half));
    vad = hark_vad_load(path, err, sizeof err);
    CHECK(vad != NULL, "%s", err);
    if (vad && n_ref == 2034) { /* f16 weights move a probability by up to 0.011 */
        double d = parity(vad, s, n, ref, n_ref);
        CHECK(d < 0.02 && d > 1e-4, "f16: max |hark - onnxruntime| %g", d);
    }
    hark_vad_free(vad);
    free(half);
    free(ref);
    if (!rc)
        free(s);
}

/* The loader's message for a file of these bytes. */
static const char *load_error(const void *data, size_t n, char *err, size_t errlen)
{
    char path[128];
    snprintf(path, sizeof path, "%s/bad.bin", dir);
    write_bytes(path, data, n);
    hark_vad *vad = hark_vad_load(path, err, errlen);
    if (vad) {
        hark_vad_free(vad);
        snprintf(err, errlen, "(loaded)");
    }
    const char *msg = strncmp(err, path, strlen(path)) == 0 ? err + strlen(path) : err;
    return msg;
}

static void expect_error(const void *data, size_t n, const char *want, const char *what)
{
    char err[512];
    const char *got = load_error(data, n, err, sizeof err);
    CHECK(strcmp(got, want) == 0, "%s: got \"%s\", want \"%s\"", what, got, want);
}

static void test_damaged(const uint8_t *file, size_t size)
{
    uint8_t *b = malloc(size + 8);
    char err[512];
    expect_error(file, 0, ": truncated in the magic", "empty");
    expect_error("RIFF....WAVEfmt ", 16, ": bad magic 0x46464952 (not a whisper.cpp ggml file)",
                 "a WAV");
    memcpy(b, file, size);
    memcpy(b + 4, "\x38\xca\x00\x00", 4); /* a Whisper ggml file's n_vocab where the type is */
    expect_error(b, size, ": not a Silero VAD model (its ggml header names no \"silero-16k\")",
                 "a Whisper model");
    memcpy(b, file, size);
    b[31] = 0; /* the window: 512 (00 02 00 00) -> 0 */
    expect_error(b, size, ": header value 1 is 0, not Silero VAD's 512", "window");
    memcpy(b, file, size);
    b[HEADER + 8] = 8; /* the first tensor's type: q8_0 */
    expect_error(b, size, ": bad tensor header (3 dims, name length 36, type 8)", "type");
    memcpy(b, file, size);
    b[HEADER + 24 + 35] = 'X';
    expect_error(b, size, ": unexpected tensor _model.encoder.0.reparam_conv.weighX", "name");
    memcpy(b, file, size);
    b[HEADER + 12] = 4; /* the first tensor's innermost dimension: 3 -> 4 */
    expect_error(b, size, ": tensor _model.encoder.0.reparam_conv.weight is not of Silero VAD's shape",
                 "shape");
    /* the second tensor (the first's bias, 128 f32) renamed as the first */
    size_t second = HEADER + 24 + 36 + 3 * 129 * 128 * 4;
    memcpy(b, file, size);
    CHECK(i32_at(b + second + 4) == 34, "the bias's name length");
    memcpy(b + second + 4, "\x24", 1);
    memcpy(b + second + 16, "_model.encoder.0.reparam_conv.weight", 36);
    expect_error(b, size, ": repeated tensor _model.encoder.0.reparam_conv.weight", "repeated");
    memcpy(b, file, size);
    memcpy(b + size, "abc", 3);
    expect_error(b, size + 3, ": 3 bytes after the last tensor", "trailing bytes");
    expect_error(file, HEADER + 30, ": truncated in a tensor name", "cut in a name");
    expect_error(file, size - 1, ": truncated in _model.stft.forward_basis_buffer", "cut at the end");
    int refused = 0, said = 0;
    for (size_t cut = 0; cut < size; cut += cut < 300 ? 1 : 4099) {
        const char *got = load_error(file, cut, err, sizeof err);
        refused += strcmp(got, "(loaded)") != 0;
        said += strncmp(got, ": truncated in ", 15) == 0;
    }
    CHECK(refused == said && said == 300 + (int)((size - 300 + 4098) / 4099),
          "%d of %d said truncated", said, refused);
    free(b);
}

/* probs: n chunks at 0.1 with runs [from, to) at 0.9; the spans under p. */
static int spans_of(const int *runs, int n_runs, int n, const hark_params *p, hark_span *out)
{
    float probs[400];
    for (int i = 0; i < n; i++)
        probs[i] = 0.1f;
    for (int r = 0; r < n_runs; r++)
        for (int i = runs[2 * r]; i < runs[2 * r + 1]; i++)
            probs[i] = 0.9f;
    return hark_vad_spans(probs, n, p, out);
}

#define EXPECT_SPANS(runs, n, p, ...)                                                         \
    do {                                                                                      \
        static const long long want[] = {__VA_ARGS__};                                        \
        hark_span got[401];                                                                   \
        int k = spans_of(runs, (int)(sizeof runs / sizeof runs[0] / 2), n, p, got);           \
        int same = k == (int)(sizeof want / sizeof want[0] / 2);                              \
        for (int i = 0; same && i < k; i++)                                                   \
            same = got[i].start == want[2 * i] && got[i].end == want[2 * i + 1];              \
        CHECK(same, "%d spans, the first %lld-%lld cs", k, k ? got[0].start : -1,            \
              k ? got[0].end : -1);                                                           \
    } while (0)

/* Chunks are 512 samples (3.2 cs); whisper.cpp's defaults: speech from 0.5,
 * silence below 0.35 for 100 ms (1600 samples) ends it, 250 ms (4000) the
 * shortest kept, gaps under 0.2 s (3200) merged, 30 ms (480) of padding. */
static void test_spans(void)
{
    hark_params p = hark_default_params();
    /* speech in chunks 10-29: samples 5120-15360, padded 4640-15840 = 29-99 cs */
    static const int one[] = {10, 30};
    EXPECT_SPANS(one, 40, &p, 29, 99);
    /* 6 chunks (3072 samples) is under 250 ms: dropped */
    static const int short_run[] = {10, 16};
    EXPECT_SPANS(short_run, 40, &p, 0);
    /* a 5-chunk gap (2560 samples) ends the first span, but under 0.2 s it is merged */
    static const int gap5[] = {10, 30, 35, 60};
    EXPECT_SPANS(gap5, 80, &p, 29, 195);
    /* an 8-chunk gap (4096) stays: both padded by 480 samples */
    static const int gap8[] = {10, 30, 38, 60};
    EXPECT_SPANS(gap8, 80, &p, 29, 99, 119, 195);
    /* speech to the end: the span ends at the last chunk's end (60 x 512 = 30720) */
    static const int to_end[] = {10, 60};
    EXPECT_SPANS(to_end, 60, &p, 29, 192);
    /* a gap of 2 chunks (1024 < 1600) never ends the span */
    static const int blip[] = {10, 20, 22, 40};
    EXPECT_SPANS(blip, 50, &p, 29, 131);
    /* spans closer than two paddings share the gap: a 7-chunk gap (3584 samples) with
     * 2000 ms of padding each side is split in half (1792 each) */
    p.vad.speech_pad_ms = 2000;
    static const int gap7[] = {30, 50, 57, 80};
    EXPECT_SPANS(gap7, 100, &p, 0, 171, 171, 320);
    p = hark_default_params();
    /* 1 s at most: 16000 - 512 - 960 = 14528 samples; unbroken speech from chunk 10
     * (5120) is cut at chunk 39 (19968, 14848 on), the next starts at chunk 40 and is
     * cut at 69; unlike whisper.cpp's they are not merged back; the 512-sample gap is
     * shared: 20224 = 126 cs, and the end padded, 35808 = 224 cs */
    p.vad.max_speech_s = 1;
    static const int long_run[] = {10, 70};
    EXPECT_SPANS(long_run, 100, &p, 29, 126, 126, 224);
    /* a threshold of 0.95 hears none of it */
    p = hark_default_params();
    p.vad.threshold = 0.95f;
    EXPECT_SPANS(one, 40, &p, 0);
}

/* Random probabilities under random settings (a zero minimum silence and a short
 * length limit among them, which may end two spans at one chunk): the spans fit in
 * 2 n + 2 (malloc'd to that size, so a sanitizer sees any overrun), in order, each
 * within the audio, none shorter than the minimum before padding allows. */
static void test_spans_random(void)
{
    srand(7);
    int sane = 1, trial, k = 0, n = 0, most = 0;
    for (trial = 0; trial < 3000 && sane; trial++) {
        n = 1 + rand() % 200;
        float *probs = malloc(sizeof(float) * (size_t)n);
        hark_span *spans = malloc(sizeof(hark_span) * (size_t)(2 * n + 2));
        for (int i = 0; i < n; i++)
            probs[i] = (rand() % 3 ? (i && rand() % 4 ? probs[i - 1] : rand() % 100 / 100.0f) : 0.99f);
        hark_params p = hark_default_params();
        p.vad.min_silence_ms = rand() % 3 ? 0 : rand() % 300;
        p.vad.min_speech_ms = rand() % 2 ? 0 : rand() % 500;
        p.vad.max_speech_s = rand() % 2 ? 0.05f * (float)(rand() % 40) : 0;
        p.vad.speech_pad_ms = rand() % 100;
        k = hark_vad_spans(probs, n, &p, spans);
        most = k > most ? k : most;
        long long length_cs = llround(n * 512 / 160.0);
        sane = k >= 0 && k <= 2 * n + 2;
        for (int i = 0; sane && i < k; i++)
            sane = spans[i].start >= 0 && spans[i].start <= spans[i].end &&
                   spans[i].end <= length_cs + 1 && (i == 0 || spans[i].start >= spans[i - 1].end);
        free(probs);
        free(spans);
    }
    CHECK(sane && most > 10, "trial %d: %d spans of %d chunks (at most %d)", trial - 1, k, n, most);
}

/* Two spans of a 5 s ramp joined: 1.00-2.00 s and 3.00-4.00 s, each with 0.1 s of
 * overlap but the last, 0.1 s of zeros between. */
static void test_join(void)
{
    size_t n = 5 * 16000, n_out;
    float *s = malloc(sizeof(float) * n), *out;
    for (size_t i = 0; i < n; i++)
        s[i] = (float)i;
    hark_span spans[] = {{100, 200, 0}, {300, 400, 0}};
    hark_time_map map;
    CHECK(hark_vad_join(s, n, spans, 2, 0.1f, &out, &n_out, &map) == 0, "join");
    CHECK(n_out == 16000 + 1600 + 1600 + 16000, "%zu samples", n_out);
    CHECK(out[0] == 16000 && out[17599] == 33599 && out[17600] == 0 && out[19199] == 0 &&
          out[19200] == 48000 && out[n_out - 1] == 63999, "the samples copied");
    /* points: 0->100, 100->200 (the span), 110->200 (its overlap, then the silence),
     * 120->300 (the next span) */
    static const long long proc[] = {0, 100, 110, 120, 220}, orig[] = {100, 200, 200, 300, 400};
    int same = map.n == 5;
    for (int i = 0; same && i < 5; i++)
        same = map.proc[i] == proc[i] && map.orig[i] == orig[i] && map.gap[i] == (i == 2);
    CHECK(same, "%d map points", map.n);
    /* a time, and what it is as a start and as an end: in the silence a start is the
     * next span's (3 s), an end the last one's (2 s) */
    static const double at[][3] = {{0, 1, 1},     {0.5, 1.5, 1.5}, {1.05, 2, 2}, {1.1, 3, 2},
                                   {1.15, 3, 2},  {1.2, 3, 3},     {1.7, 3.5, 3.5},
                                   {2.2, 4, 4},   {9, 4, 4}};
    for (int i = 0; i < 9; i++)
        for (int end = 0; end < 2; end++)
            CHECK(fabs(hark_time_map_apply(&map, at[i][0], end) - at[i][1 + end]) < 1e-9,
                  "%g s as %s -> %g, not %g", at[i][0], end ? "an end" : "a start",
                  hark_time_map_apply(&map, at[i][0], end), at[i][1 + end]);
    hark_time_map_free(&map);
    free(out);
    /* a span past the end is clamped to the last sample */
    hark_span past[] = {{450, 600, 0}};
    CHECK(hark_vad_join(s, n, past, 1, 0.1f, &out, &n_out, &map) == 0 && n_out == 8000 - 1,
          "%zu samples", n_out);
    hark_time_map_free(&map);
    free(out);
    free(s);
}

/* The public hark_vad_speech_spans on sample01, 20 s of zeros and sample04 (as
 * tests/cli/test_vad.sh joins them with sox): three spans, the last at 23.87 s. */
static void test_public_spans(void)
{
    float *a, *b;
    size_t na, nb;
    char err[256];
    hark_vad *vad = hark_vad_load(VAD_MODEL, err, sizeof err);
    if (!vad || hark_read_audio("samples/sample01-en-us.wav", &a, &na, err, sizeof err) ||
        hark_read_audio("samples/sample04-kal16.wav", &b, &nb, err, sizeof err)) {
        CHECK(0, "%s", err);
        hark_vad_free(vad);
        return;
    }
    size_t n = na + 20 * 16000 + nb;
    float *s = calloc(n, sizeof(float));
    memcpy(s, a, sizeof(float) * na);
    memcpy(s + na + 20 * 16000, b, sizeof(float) * nb);
    hark_params p = hark_default_params();
    double start[4] = {-1, -1, -1, -1}, end[4] = {-1, -1, -1, -1};
    int k = hark_vad_speech_spans(vad, &p, s, n, start, end, 4);
    CHECK(k == 3 && fabs(start[0] - 0.03) < 1e-9 && fabs(end[0] - 1.76) < 1e-9 &&
              fabs(start[1] - 2.15) < 1e-9 && fabs(end[1] - 3.65) < 1e-9 &&
              fabs(start[2] - 23.87) < 1e-9 && fabs(end[2] - 27.07) < 1e-9 && start[3] == -1,
          "%d spans: %g-%g %g-%g %g-%g", k, start[0], end[0], start[1], end[1], start[2], end[2]);
    double one_start = -1, one_end = -1;
    CHECK(hark_vad_speech_spans(vad, &p, s, n, &one_start, &one_end, 1) == 3 &&
              fabs(one_start - 0.03) < 1e-9, "max 1: the count, the first");
    CHECK(hark_vad_speech_spans(vad, &p, s, n, NULL, NULL, 0) == 3, "max 0: the count");
    CHECK(hark_vad_speech_spans(NULL, &p, s, n, start, end, 4) == HARK_ERR_ARG &&
              hark_vad_speech_spans(vad, &p, s, n, start, end, -1) == HARK_ERR_ARG,
          "bad arguments");
    p.vad.min_speech_ms = 2000; /* the first two are shorter */
    CHECK(hark_vad_speech_spans(vad, &p, s, n, start, end, 4) == 1 && fabs(start[0] - 23.87) < 1e-9,
          "min speech 2 s: %g", start[0]);
    free(s);
    free(a);
    free(b);
    hark_vad_free(vad);
}

int main(void)
{
    uint8_t *file = NULL;
    size_t size = 0;
    hark_error e;
    snprintf(dir, sizeof dir, "/tmp/hark-vad-%d", (int)getpid());
    mkdir(dir, 0700);
    CHECK(hark_read_file(VAD_MODEL, (char **)&file, &size, &e) == 0, "%s", e.msg);
    if (file) {
        test_parity(file, size);
        test_damaged(file, size);
    }
    free(file);
    test_spans();
    test_spans_random();
    test_join();
    test_public_spans();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0, "cleanup");
    return check_summary("test_vad");
}
