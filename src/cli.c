/* The hark command: transcribe files, or compute a log-mel (hark mel). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hark.h"
#include "internal.h"

#ifndef HARK_DATADIR
#define HARK_DATADIR "/usr/local/share/hark"
#endif

static const char USAGE[] =
    "usage: hark [options] FILE...        transcribe audio files (\"-\" reads stdin)\n"
    "       hark mel FILE -o OUT.npy [--n-mels N]   write the log-mel transcription uses\n"
    "\n"
    "options:\n"
    "  -m, --model PATH     Hugging Face Whisper directory or whisper.cpp .bin\n"
    "                       (default: $HARK_MODEL, else the model in models/)\n"
    "  -o, --output-dir DIR write DIR/<name>.<format> for each input\n"
    "  -f, --format LIST    comma-separated: txt,json,srt,vtt,tsv or all\n"
    "                       (default with -o: txt,json)\n"
    "  -t, --threads N      threads for the numeric kernels (default 1)\n"
    "  -q, --quiet          no progress messages\n"
    "  -h, --help           this help\n"
    "      --version        print the version\n";

typedef struct options {
    const char *model, *out_dir;
    char formats[64];
    int threads, quiet;
} options;

static int usage_error(const char *msg)
{
    fprintf(stderr, "hark: %s\n%s", msg, USAGE);
    return 2;
}

/* A model directory (config.json) or a .bin inside dir, the first by name. */
static int find_model_in(const char *dir, char *out, size_t n)
{
    char probe[PATH_MAX];
    struct stat st;
    snprintf(probe, sizeof probe, "%s/config.json", dir);
    if (stat(probe, &st) == 0) {
        snprintf(out, n, "%s", dir);
        return 1;
    }
    static const char *const names[] = {"hark-en-tiny", "hark-tiny-en", "default"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(probe, sizeof probe, "%s/%s/config.json", dir, names[i]);
        if (stat(probe, &st) == 0) {
            snprintf(out, n, "%s/%s", dir, names[i]);
            return 1;
        }
    }
    return 0;
}

static int default_model(char *out, size_t n)
{
    const char *env = getenv("HARK_MODEL");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return 1;
    }
    char exe[PATH_MAX], dir[PATH_MAX + 16];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        snprintf(dir, sizeof dir, "%s/../models", exe);
        if (find_model_in(dir, out, n))
            return 1;
    }
    return find_model_in("models", out, n) || find_model_in(HARK_DATADIR, out, n);
}

static int parse_formats(const char *list, char *out, size_t n)
{
    if (strcmp(list, "all") == 0)
        list = "txt,json,srt,vtt,tsv";
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
        if (strcmp(t, "txt") && strcmp(t, "json") && strcmp(t, "srt") && strcmp(t, "vtt") &&
            strcmp(t, "tsv"))
            return -1;
    snprintf(out, n, "%s", list);
    return 0;
}

/* "dir/a/b.wav" -> "b" */
static void stem_of(const char *path, char *out, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strcmp(path, "-") == 0)
        base = "stdin";
    snprintf(out, n, "%s", base);
    char *dot = strrchr(out, '.');
    if (dot && dot != out)
        *dot = 0;
}

static int write_outputs(hark_context *ctx, const options *o, const char *input)
{
    char stem[256], path[PATH_MAX], err[600], buf[64];
    stem_of(input, stem, sizeof stem);
    snprintf(buf, sizeof buf, "%s", o->formats);
    for (char *fmt = strtok(buf, ","); fmt; fmt = strtok(NULL, ",")) {
        snprintf(path, sizeof path, "%s/%s.%s", o->out_dir, stem, fmt);
        if (hark_write_output(ctx, fmt, path, err, sizeof err) != 0) {
            fprintf(stderr, "hark: %s\n", err);
            return 1;
        }
    }
    return 0;
}

static int print_outputs(hark_context *ctx, const options *o)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", o->formats[0] ? o->formats : "txt");
    for (char *fmt = strtok(buf, ","); fmt; fmt = strtok(NULL, ",")) {
        char *text = hark_format_output(ctx, fmt);
        if (!text)
            return 1;
        fputs(text, stdout);
        free(text);
    }
    fflush(stdout);
    return 0;
}

static int transcribe_all(const options *o, char **files, int n)
{
    char model_path[PATH_MAX], err[600];
    if (o->model)
        snprintf(model_path, sizeof model_path, "%s", o->model);
    else if (!default_model(model_path, sizeof model_path)) {
        fprintf(stderr, "hark: no model given and none found in models/: pass -m MODEL "
                        "(a Hugging Face Whisper directory or a whisper.cpp .bin)\n");
        return 1;
    }
    hark_model *model = hark_model_load(model_path, err, sizeof err);
    if (!model) {
        fprintf(stderr, "hark: %s\n", err);
        return 1;
    }
    hark_params p = hark_default_params();
    p.n_threads = o->threads;
    hark_context *ctx = hark_context_new(model, &p);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        if (hark_transcribe_file(ctx, files[i]) != 0) {
            fprintf(stderr, "hark: %s\n", hark_last_error(ctx));
            failed++;
            continue;
        }
        if (o->out_dir)
            failed += write_outputs(ctx, o, files[i]);
        else
            failed += print_outputs(ctx, o);
    }
    hark_context_free(ctx);
    hark_model_free(model);
    return failed ? 1 : 0;
}

static int cmd_mel(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    int n_mels = 80;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--n-mels") == 0 && i + 1 < argc)
            n_mels = atoi(argv[++i]);
        else if (!in)
            in = argv[i];
        else
            return usage_error("mel takes one input file");
    }
    if (!in || !out)
        return usage_error("usage: hark mel FILE -o OUT.npy");
    if (n_mels != 80 && n_mels != 128)
        return usage_error("--n-mels must be 80 or 128");
    hark_error e = {{0}};
    float *x, *mel;
    size_t n;
    int frames;
    if (hark_audio_read(in, &x, &n, &e) ||
        hark_log_mel(x, n, 30 * HARK_SAMPLE_RATE, n_mels, 1, &mel, &frames, &e)) {
        fprintf(stderr, "hark: %s\n", e.msg);
        return 1;
    }
    free(x);
    int rc = hark_write_npy(out, mel, n_mels, frames, &e);
    free(mel);
    if (rc)
        fprintf(stderr, "hark: %s\n", e.msg);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "mel") == 0)
        return cmd_mel(argc - 1, argv + 1);
    static const struct option longs[] = {
        {"model", required_argument, 0, 'm'}, {"output-dir", required_argument, 0, 'o'},
        {"format", required_argument, 0, 'f'}, {"threads", required_argument, 0, 't'},
        {"quiet", no_argument, 0, 'q'},        {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},      {0, 0, 0, 0}};
    options o = {NULL, NULL, "", 1, 0};
    int c;
    while ((c = getopt_long(argc, argv, "m:o:f:t:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'm': o.model = optarg; break;
        case 'o': o.out_dir = optarg; break;
        case 'f':
            if (parse_formats(optarg, o.formats, sizeof o.formats))
                return usage_error("unknown format in -f (txt,json,srt,vtt,tsv,all)");
            break;
        case 't':
            o.threads = atoi(optarg);
            if (o.threads < 1 || o.threads > 256)
                return usage_error("-t takes a thread count from 1 to 256");
            break;
        case 'q': o.quiet = 1; break;
        case 'h': fputs(USAGE, stdout); return 0;
        case 'V': printf("hark %s\n", HARK_VERSION); return 0;
        default: return usage_error("unknown option");
        }
    }
    if (optind >= argc)
        return usage_error("no input files");
    if (o.out_dir && !o.formats[0])
        snprintf(o.formats, sizeof o.formats, "txt,json");
    return transcribe_all(&o, argv + optind, argc - optind);
}
