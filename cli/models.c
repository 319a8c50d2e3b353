/* Where hark finds its models: -m PATH or NAME (with --model-dir, whisper.cpp's
 * file names too), $HARK_MODEL, else the model beside the program or installed
 * with it; and the Silero VAD model --vad uses.  Loading errors are printed with
 * the way out (an openai-whisper name or checkpoint says how to convert it). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#ifndef HARK_DATADIR
#define HARK_DATADIR "/usr/local/share/hark"
#endif

/* A model directory (config.json) in dir or one level below it. */
static int find_model_in(const char *dir, char *out, size_t n)
{
    char probe[PATH_MAX];
    struct stat st;
    snprintf(probe, sizeof probe, "%.4000s/config.json", dir);
    if (stat(probe, &st) == 0) {
        snprintf(out, n, "%s", dir);
        return 1;
    }
    static const char *const names[] = {"hark-en-tiny", "hark-tiny-en", "default"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(probe, sizeof probe, "%.4000s/%s/config.json", dir, names[i]);
        if (stat(probe, &st) == 0) {
            snprintf(out, n, "%s/%s", dir, names[i]);
            return 1;
        }
    }
    return 0;
}

typedef struct data_dir {
    char path[PATH_MAX];
} data_dir;

/* Where hark's data may be, in order: models/ beside build/hark and build/san/hark,
 * PREFIX/share/hark beside PREFIX/bin/hark, ./models, HARK_DATADIR; returns the count.
 * (Paths are cut to 4000 bytes where a file name is added: PATH_MAX is 4096.) */
static int data_dirs(data_dir *dirs, int max)
{
    char exe[PATH_MAX];
    int n = 0;
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = k > 0 ? (exe[k] = 0, strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = 0;
        static const char *const ups[] = {"/../models", "/../../models", "/../share/hark"};
        for (int i = 0; i < 3 && n < max; i++)
            snprintf(dirs[n++].path, PATH_MAX, "%.*s%s", PATH_MAX - 20, exe, ups[i]);
    }
    if (n < max)
        snprintf(dirs[n++].path, PATH_MAX, "models");
    if (n < max)
        snprintf(dirs[n++].path, PATH_MAX, "%s", HARK_DATADIR);
    return n;
}

/* -m NAME --model-dir DIR: DIR/NAME, else whisper.cpp's DIR/ggml-NAME.bin or
 * DIR/NAME.bin, the first that exists (none: DIR/NAME, which its error names). */
static void in_model_dir(const char *dir, const char *name, char *out, size_t n)
{
    static const char *const around[][2] = {{"", ""}, {"ggml-", ".bin"}, {"", ".bin"}};
    for (size_t i = 0; i < sizeof around / sizeof around[0]; i++) {
        snprintf(out, n, "%s/%s%s%s", dir, around[i][0], name, around[i][1]);
        if (access(out, F_OK) == 0)
            return;
    }
    snprintf(out, n, "%s/%s", dir, name);
}

int cli_model_path(const cli_options *o, char *out, size_t n)
{
    const char *env = getenv("HARK_MODEL");
    data_dir dirs[5];
    if (o->model && o->model_dir && !strchr(o->model, '/')) {
        in_model_dir(o->model_dir, o->model, out, n);
        return 0;
    }
    if (o->model) {
        snprintf(out, n, "%s", o->model);
        return 0;
    }
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return 0;
    }
    for (int i = 0, k = data_dirs(dirs, 5); i < k; i++)
        if (find_model_in(dirs[i].path, out, n))
            return 0;
    fprintf(stderr, "hark: no model given and none found in models/: pass -m MODEL "
                    "(a Hugging Face Whisper directory or a whisper.cpp .bin)\n");
    return -1;
}

#define VAD_FILE "silero-vad/ggml-silero-v6.bin"

int cli_load_vad(const cli_options *o, hark_vad **vad)
{
    data_dir dirs[5];
    char path[PATH_MAX + 64], err[PATH_MAX + 128];
    *vad = NULL;
    if (!o->vad)
        return 0;
    int found = o->vad_model != NULL;
    snprintf(path, sizeof path, "%s", o->vad_model ? o->vad_model : "");
    for (int i = 0, k = data_dirs(dirs, 5); i < k && !found; i++) {
        snprintf(path, sizeof path, "%.4000s/" VAD_FILE, dirs[i].path);
        found = access(path, F_OK) == 0;
    }
    if (!found) {
        fprintf(stderr, "hark: --vad: no VAD model given and none found in models/: pass "
                        "--vad-model FILE (a whisper.cpp ggml Silero VAD)\n");
        return -1;
    }
    if (!(*vad = hark_vad_load(path, err, sizeof err)))
        fprintf(stderr, "hark: %s\n", err);
    return *vad ? 0 : -1;
}

hark_model *cli_load_models(const cli_options *o, hark_vad **vad)
{
    if (cli_load_vad(o, vad))
        return NULL;
    hark_model *m = cli_load_model(o);
    if (!m) {
        hark_vad_free(*vad);
        *vad = NULL;
    }
    return m;
}

/* Whether name is one of openai-whisper's model names ("tiny.en", "turbo"...),
 * which its CLI downloads and hark does not. */
static int openai_model_name(const char *name)
{
    static const char *const names[] = {"tiny", "tiny.en", "base", "base.en", "small", "small.en",
                                        "medium", "medium.en", "large", "large-v1", "large-v2",
                                        "large-v3", "large-v3-turbo", "turbo"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

/* Whether openai-whisper keeps a checkpoint of model NAME where it would download
 * it (--model-dir, else $XDG_CACHE_HOME/whisper or ~/.cache/whisper): its path in pt. */
static int openai_checkpoint(const cli_options *o, const char *name, char *pt, size_t n)
{
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (o->model_dir)
        snprintf(pt, n, "%s/%s.pt", o->model_dir, name);
    else if (cache && *cache)
        snprintf(pt, n, "%s/whisper/%s.pt", cache, name);
    else
        snprintf(pt, n, "%s/.cache/whisper/%s.pt", home ? home : "", name);
    return access(pt, F_OK) == 0;
}

hark_model *cli_load_model(const cli_options *o)
{
    char path[PATH_MAX], err[600], pt[PATH_MAX];
    if (cli_model_path(o, path, sizeof path))
        return NULL;
    if (o->model && !strchr(o->model, '/') && access(path, F_OK) != 0 &&
        openai_checkpoint(o, o->model, pt, sizeof pt)) {
        fprintf(stderr, "hark: %s: no such model here, but %s is openai-whisper's checkpoint "
                        "of it: scripts/convert/openai-pt-to-ggml converts it (see README.md, Models)\n",
                o->model, pt);
        return NULL;
    }
    if (openai_model_name(path) && access(path, F_OK) != 0) {
        fprintf(stderr, "hark: %s: no such model here (openai-whisper downloads its models by "
                        "name; hark reads a Hugging Face Whisper directory or a whisper.cpp .bin: "
                        "see README.md, Models)\n", path);
        return NULL;
    }
    hark_model *m = hark_model_load(path, err, sizeof err);
    if (!m)
        fprintf(stderr, "hark: %s\n", err);
    const char *code = hark_language_code(o->params.language);
    if (m && !hark_model_is_multilingual(m) && code && strcmp(code, "en"))
        fprintf(stderr, "hark: warning: %s is an English-only model: it transcribes English, "
                        "not %s\n", path, o->params.language);
    return m;
}
