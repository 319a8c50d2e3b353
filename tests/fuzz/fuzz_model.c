/* libFuzzer target: arbitrary bytes as a ggml file, a safetensors file (in a
 * Hugging Face directory with the test model's JSON files), and an audio file.
 * Build: make fuzz; run: build/fuzz/fuzz_model -max_total_time=60 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static char dir[64], ggml[128], st[128], wav[128];

static void write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, size, f);
        fclose(f);
    }
}

static void copy(const char *name)
{
    char src[256], dst[256], *buf;
    size_t n;
    hark_error e;
    snprintf(src, sizeof src, "tests/data/tiny-random/hf-f32/%s", name);
    snprintf(dst, sizeof dst, "%s/%s", dir, name);
    if (hark_read_file(src, &buf, &n, &e) == 0) {
        write_file(dst, (const uint8_t *)buf, n);
        free(buf);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    snprintf(dir, sizeof dir, "/tmp/hark-fuzz-%d", (int)getpid());
    mkdir(dir, 0700);
    const char *files[] = {"config.json", "vocab.json", "merges.txt", "added_tokens.json",
                           "generation_config.json"};
    for (int i = 0; i < 5; i++)
        copy(files[i]);
    snprintf(ggml, sizeof ggml, "%s/model.bin", dir);
    snprintf(st, sizeof st, "%s/model.safetensors", dir);
    snprintf(wav, sizeof wav, "%s/audio.wav", dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    write_file(ggml, data, size);
    hark_model_free(hark_model_load(ggml, err, sizeof err));
    write_file(st, data, size);
    hark_model_free(hark_model_load(dir, err, sizeof err));
    write_file(wav, data, size);
    float *x = NULL;
    size_t n;
    if (hark_read_audio(wav, &x, &n, err, sizeof err) == 0)
        free(x);
    return 0;
}
