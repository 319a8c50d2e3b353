/* libFuzzer target: arbitrary bytes as a ggml file (a Whisper model and a Silero
 * VAD model), a safetensors file (in a Hugging Face directory with the JSON
 * files of tests/fuzz/tiny, an 8-wide model that loads in a millisecond), and
 * an audio file, read from its path and from a pipe.  Its files live in
 * $TMPDIR (else /tmp), in hark-fuzz-PID*, removed when it exits.
 * Build: make fuzz; run from the repository's root:
 *   build/fuzz/fuzz_model -max_total_time=60 NEW_DIR tests/fuzz/corpus/model */
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "face.h"

static char dir[200], stdir[220], ggml[260], st[260], wav[260];

static void write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, size, f);
        fclose(f);
    }
}

/* A file of tests/fuzz/tiny into the directory to; without it the target would
 * fuzz nothing but "no such file", so it stops. */
static void copy_to(const char *to, const char *name)
{
    char src[256], dst[256], *buf;
    size_t n;
    hark_error e;
    snprintf(src, sizeof src, "tests/fuzz/tiny/%s", name);
    snprintf(dst, sizeof dst, "%s/%s", to, name);
    if (hark_read_file(src, &buf, &n, &e)) {
        fprintf(stderr, "fuzz_model: %s (run it from the repository's root)\n", e.msg);
        exit(1);
    }
    write_file(dst, (const uint8_t *)buf, n);
    free(buf);
}

static void copy(const char *name)
{
    copy_to(dir, name);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* At a normal exit (a crash keeps them, beside its input): the two directories. */
static void remove_dirs(void)
{
    nftw(dir, remove_one, 4, FTW_DEPTH | FTW_PHYS);
    nftw(stdir, remove_one, 4, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("HARK_FFMPEG", "", 1); /* libsndfile's code is fuzzed, not a process per input */
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/hark-fuzz-%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    mkdir(dir, 0700);
    snprintf(stdir, sizeof stdir, "%s-st", dir);
    mkdir(stdir, 0700);
    const char *files[] = {"config.json", "vocab.json", "merges.txt", "added_tokens.json",
                           "generation_config.json", "model.safetensors"};
    for (int i = 0; i < 6; i++) {
        copy(files[i]);
        if (i < 5)
            copy_to(stdir, files[i]);
    }
    snprintf(ggml, sizeof ggml, "%s/model.bin", dir);
    snprintf(st, sizeof st, "%s-st/model.safetensors", dir);
    snprintf(wav, sizeof wav, "%s/audio.wav", dir);
    atexit(remove_dirs);
    return 0;
}

/* The JSON and text files of a Hugging Face directory, one at a time: the
 * first byte picks which file the rest replaces. */
static void fuzz_hf_text(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"config.json", "vocab.json", "merges.txt",
                                        "added_tokens.json", "generation_config.json",
                                        "tokenizer.json"};
    char path[256], err[512];
    if (size < 1)
        return;
    const char *name = names[data[0] % 6];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_file(path, data + 1, size - 1);
    hark_model_free(hark_model_load(dir, err, sizeof err));
    if (strcmp(name, "tokenizer.json") == 0)
        remove(path); /* vocab.json + merges.txt are the usual pair */
    else
        copy(name);
}

/* An audio file as --diarize reads it: a stereo file's loudness too. */
static void read_audio(const char *path)
{
    float *x = NULL;
    size_t n;
    hark_levels lv;
    hark_error e;
    if (hark_audio_read_levels(path, &x, &n, &lv, &e) == 0) {
        hark_levels_speaker(&lv, 0, (double)n / HARK_SAMPLE_RATE);
        hark_levels_free(&lv);
        free(x);
    }
}

/* The same bytes from a pipe, as from stdin: known by their first bytes, then
 * spooled (stream.c).  The pipe is widened to hold the input; larger ones skip. */
static void read_piped_audio(const uint8_t *data, size_t size)
{
    int p[2];
    char path[64];
    if (pipe(p))
        return;
    fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
    fcntl(p[1], F_SETFL, O_NONBLOCK); /* a full pipe fails the write, not blocks it */
    int whole = write(p[1], data, size) == (ssize_t)size;
    close(p[1]);
    snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
    if (whole)
        read_audio(path);
    close(p[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    fuzz_hf_text(data, size);
    write_file(ggml, data, size);
    hark_model_free(hark_model_load(ggml, err, sizeof err));
    hark_vad_free(hark_vad_load(ggml, err, sizeof err)); /* --vad's model: ggml too */
    write_file(st, data, size);
    hark_model_free(hark_model_load(stdir, err, sizeof err));
    write_file(wav, data, size);
    read_audio(wav);
    read_piped_audio(data, size);
    return 0;
}
