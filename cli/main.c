/* The hark command: argument parsing and dispatch. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "npy.h"
#include "face.h"

#ifndef HARK_DATADIR
#define HARK_DATADIR "/usr/local/share/hark"
#endif

static const char USAGE[] =
    "usage: hark [options] FILE|DIR...    transcribe audio files (\"-\" reads stdin)\n"
    "       hark test MANIFEST|DIR [options]  golden-transcript regression test\n"
    "       hark mel FILE -o OUT.npy [--n-mels N]  write the log-mel transcription uses\n"
    "       hark bench -m MODEL [-t N] [--json] [--audio FILE]  speed and memory benchmark\n"
    "       hark vad FILE... [VAD options]    the speech spans --vad transcribes, in seconds\n"
    "       hark stream [FILE] [--step MS] [--length MS] [options]  live transcription\n"
    "                                         of 16 kHz mono 16-bit PCM (stdin, a FIFO)\n"
    "       hark serve [--host A] [--port N] [--max-upload-mb N] [-j N] [options]  speech to\n"
    "                                         text over HTTP, N requests at once (default 1):\n"
    "                                         POST /inference (whisper.cpp's server)\n"
    "                                         or /v1/audio/transcriptions (OpenAI's API)\n"
    "       hark quantize IN OUT TYPE         write IN (HF dir or .bin) as a ggml .bin of TYPE:\n"
    "                                         f32 f16 q8_0 q5_0 q5_1 q4_0 q4_1\n"
    "\n"
    "model and decoding:\n"
    "  -m, --model PATH          Hugging Face Whisper directory or whisper.cpp .bin\n"
    "                            (default: $HARK_MODEL, else the model in models/)\n"
    "      --model-dir DIR       where -m NAME is: DIR/NAME, DIR/ggml-NAME.bin or\n"
    "                            DIR/NAME.bin (whisper.cpp's names)\n"
    "  -t, --threads N           threads per file (default: up to 4 cores; 1 with -j)\n"
    "  -l, --language CODE       language of multilingual models, a code or its name\n"
    "                            (de, German), or auto (default)\n"
    "      --task TASK           transcribe (default) or translate\n"
    "      --detect-language     print the most likely languages and stop\n"
    "      --no-timestamps       no timestamp tokens: one segment per window\n"
    "      --word-timestamps     word-level timing (words in the json)\n"
    "      --max-line-width N    srt/vtt: lines of at most N characters (implies\n"
    "                            --word-timestamps; cues keep to segments unless\n"
    "                            --max-line-count is given too)\n"
    "      --max-line-count N    srt/vtt: cues of at most N lines (with --max-line-width)\n"
    "      --max-words-per-line N  srt/vtt: cues of at most N words (without\n"
    "                            --max-line-width)\n"
    "      --highlight-words     srt/vtt: a cue per word, the word underlined (implies\n"
    "                            --word-timestamps)\n"
    "      --max-len N           whisper.cpp's -ml N -sow: segments cut between words to\n"
    "                            at most N characters, in every format (1: a word a\n"
    "                            segment; implies --word-timestamps)\n"
    "      --prepend-punctuations S  with word timing: marks that join the next word\n"
    "                            (default: openai's " HARK_PREPEND_PUNCTUATIONS ")\n"
    "      --append-punctuations S   marks that join the previous word (default:\n"
    "                            openai's " HARK_APPEND_PUNCTUATIONS ")\n"
    "      --hallucination-silence-threshold X  skip the silence before, and drop,\n"
    "                            segments of unlikely words with X s of silence around\n"
    "                            them (implies --word-timestamps)\n"
    "      --beam-size N         beams at temperature 0 (default 5; 1 = greedy)\n"
    "      --patience P          beam search patience (default 1.0)\n"
    "      --length-penalty A    rank by length penalty ((5+n)/6)^A (default: by length)\n"
    "      --best-of N           samples at temperature > 0 (default 5)\n"
    "      --temperature LIST    fallback temperatures (default 0,0.2,0.4,0.6,0.8,1.0)\n"
    "      --temperature-increment-on-fallback X  the ladder from --temperature's one\n"
    "                            value (default 0) to 1 in steps of X, as openai's\n"
    "      --compression-ratio-threshold X  retry above (default 2.4)\n"
    "      --logprob-threshold X retry when the average log-prob is below (default -1.0)\n"
    "      --no-speech-threshold X  silence above this P(nospeech) (default 0.6)\n"
    "      --no-condition-on-previous-text  do not prompt with the previous window's text\n"
    "      --initial-prompt TEXT prompt for the first window\n"
    "      --carry-initial-prompt  the initial prompt before every window's previous text\n"
    "      --clip-timestamps LIST  only start,end,... seconds (an odd count: the last to\n"
    "                            the end of the file), e.g. 60 or 10,20,45,50\n"
    "  -ot, --offset-t MS, -d, --duration MS  whisper.cpp's: the clip from MS for MS\n"
    "      --suppress-tokens LIST  token ids never sampled; -1 among them: the model's\n"
    "                            own list too (default: -1; whisper.cpp's -sns keeps it)\n"
    "      --suppress-regex RE   tokens whose whole text matches RE (POSIX extended, the\n"
    "                            leading space included) never sampled, as whisper.cpp's\n"
    "      --seed N              seed of the sampling generator (default 0)\n"
    "      --vad                 transcribe only the speech that Silero VAD finds, as\n"
    "                            whisper.cpp's --vad (hark ships the model); times stay\n"
    "                            the file's.  Its settings, whisper.cpp's (-vm, -vt...):\n"
    "      --vad-model FILE      a whisper.cpp ggml Silero VAD (v5, v6); implies --vad\n"
    "      --vad-threshold P     speech from this probability (default 0.5)\n"
    "      --vad-min-speech-duration-ms N   shorter speech dropped (default 250)\n"
    "      --vad-min-silence-duration-ms N  silence that ends speech (default 100)\n"
    "      --vad-max-speech-duration-s X    longer speech split (default: no limit)\n"
    "      --vad-speech-pad-ms N            speech widened by N ms (default 30)\n"
    "      --vad-samples-overlap X          seconds kept after each span (default 0.1)\n"
    "  openai's switches also take its True or False (--word-timestamps True,\n"
    "  --condition-on-previous-text False, --verbose True); --fp16 True|False and\n"
    "  --device cpu are taken and change nothing (hark computes in f32 on the CPU)\n"
    "\n"
    "files:\n"
    "  -o, --output-dir DIR      write DIR/<name>.<format> for each input\n"
    "  -of, --output-file BASE   one input: write BASE.<format> (whisper.cpp's -of)\n"
    "  -f, --format LIST         txt,json,srt,vtt,tsv or all (openai's five; default\n"
    "                            with -o: txt,json), csv, lrc (whisper.cpp's)\n"
    "  -r, --recursive           walk directories recursively\n"
    "  -j, --jobs N              files transcribed at once (model loaded once)\n"
    "      --overwrite           redo files whose outputs already exist\n"
    "      --shard K/N           only the K-th of N slices of the file list\n"
    "      --max-duration S      read at most S seconds of each input (default 86400,\n"
    "                            a day; 0: no limit): a longer one, an endless stream,\n"
    "                            is transcribed up to there and reported\n"
    "      --diarize             stereo files: label each segment with the louder\n"
    "                            channel, (speaker 0) left or 1 right, as whisper.cpp's\n"
    "                            -di (json \"speaker\", a tsv/csv column, vtt <v Speaker0>)\n"
    "  -v, --verbose             print each segment as it is decoded, as openai's\n"
    "                            --verbose: [00:01.000 --> 00:03.400] text (without\n"
    "                            -o, instead of the transcript; no progress bar)\n"
    "      --print-colors        the text on stdout (txt, -v lines) coloured by each\n"
    "                            token's probability, red to green, as whisper.cpp's -pc\n"
    "  -q, --quiet               no progress\n"
    "  -h, --help                this help\n"
    "      --version             print the version\n";

static int usage_error(const char *msg)
{
    fprintf(stderr, "hark: %s (see hark --help)\n", msg);
    return -1;
}

/* usage_error's message, then the exit status of a usage error. */
static int usage_exit(const char *msg)
{
    usage_error(msg);
    return 2;
}

void cli_default_options(cli_options *o)
{
    memset(o, 0, sizeof *o);
    o->jobs = 1;
    o->params = hark_default_params();
    o->params.n_threads = 0; /* 0 until -t: see cli_default_threads() */
}

/* The cores this process may run on (its affinity: taskset, a container's
 * cpuset), else those online. */
static long cores_available(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return sysconf(_SC_NPROCESSORS_ONLN);
}

/* More busy threads than cores only wait for each other: -t 256 on 2 cores ran
 * 15 times slower.  Said once, and the run goes on as asked. */
static void warn_oversubscribed(const cli_options *o, long cores)
{
    long t = o->params.n_threads, all = t * o->jobs;
    const char *s = cores == 1 ? "" : "s";
    if (cores < 1 || all <= cores)
        return;
    if (t > cores)
        fprintf(stderr, "hark: warning: -t %ld is more threads than the %ld core%s available "
                "(slower, not faster)\n", t, cores, s);
    else
        fprintf(stderr, "hark: warning: -j %d with -t %ld is %ld threads, more than the %ld "
                "core%s available (slower, not faster)\n", o->jobs, t, all, cores, s);
}

/* Without -t: up to 4 cores for one file at a time, one per file with -j
 * (results are the same for every thread count). */
void cli_default_threads(cli_options *o)
{
    long cores = cores_available();
    if (o->params.n_threads > 0) {
        warn_oversubscribed(o, cores);
        return;
    }
    o->params.n_threads = o->jobs > 1 || cores < 1 ? 1 : cores < 4 ? (int)cores : 4;
}

static int is_directory(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

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

static int parse_formats(const char *list, char *out, size_t n)
{
    if (strcmp(list, "all") == 0)
        list = "txt,json,srt,vtt,tsv";
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
        if (!hark_is_format(t))
            return -1;
    snprintf(out, n, "%s", list);
    return 0;
}

/* A comma-separated list of at most max numbers in [lo, hi]; -1 if not. */
static int parse_floats(const char *list, float *v, int max, int *n, float lo, float hi)
{
    char buf[1024], *end;
    snprintf(buf, sizeof buf, "%s", list);
    *n = 0;
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        float x = strtof(t, &end);
        if (*end || !(x >= lo && x <= hi) || *n == max)
            return -1;
        v[(*n)++] = x;
    }
    return *n ? 0 : -1;
}

/* A comma-separated list of integers in [lo, hi], at most max of them. */
/* whisper.cpp's --suppress-nst (o->suppress_nst, before or after --suppress-tokens):
 * the model's list of non-speech tokens (-1), which hark suppresses by default, kept
 * among --suppress-tokens.  Returns 0, or -1 when the list is full. */
static int suppress_non_speech(cli_options *o)
{
    hark_params *p = &o->params;
    for (int i = 0; i < p->suppress.n_tokens && o->suppress_nst; i++)
        if (p->suppress.tokens[i] == -1)
            return 0;
    if (!o->suppress_nst || p->suppress.n_tokens == 0) /* none given: -1 is the default */
        return 0;
    if (p->suppress.n_tokens == HARK_MAX_SUPPRESS_TOKENS)
        return -1;
    p->suppress.tokens[p->suppress.n_tokens++] = -1;
    return 0;
}

static int parse_ints(const char *list, int *v, int max, int *n, long lo, long hi)
{
    char buf[4096], *end;
    snprintf(buf, sizeof buf, "%s", list);
    *n = 0;
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        long x = strtol(t, &end, 10);
        if (*end || end == t || x < lo || x > hi || *n == max)
            return -1;
        v[(*n)++] = (int)x;
    }
    return *n ? 0 : -1;
}

int cli_int_arg(const char *s, int lo, int hi, int *v)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (*s == 0 || *end || x < lo || x > hi)
        return -1;
    *v = (int)x;
    return 0;
}

static int float_arg(const char *s, float *v)
{
    char *end;
    *v = strtof(s, &end);
    return *s && !*end ? 0 : -1;
}

/* (delta: the double difference of the ladder's first two values, as numpy's) */
int cli_temperature_ladder(hark_params *p, double start, double increment)
{
    double delta = (start + increment) - start, n = ceil((1.0 + 1e-6 - start) / increment);
    if (n < 1 || n > HARK_MAX_TEMPERATURES)
        return -1;
    p->fallback.n_temperatures = (int)n;
    for (int i = 0; i < p->fallback.n_temperatures; i++)
        p->fallback.temperatures[i] = (float)(start + i * delta);
    return 0;
}

/* The ladder of --temperature T --temperature-increment-on-fallback X; T is 0 until
 * --temperature gives one value, and a list of several with an increment is refused.
 * Called after either option, so their order does not matter; returns -2 after
 * printing its error. */
static int temperature_ladder(cli_options *o)
{
    hark_params *p = &o->params;
    if (o->temperature_increment <= 0)
        return 0;
    if (o->temperatures_given > 1)
        return usage_error("--temperature-increment-on-fallback starts from one --temperature, "
                           "not a list"), -2;
    if (cli_temperature_ladder(p, o->temperature_start, o->temperature_increment)) {
        char msg[200];
        snprintf(msg, sizeof msg, "--temperature-increment-on-fallback: %g to 1 in steps of %g "
                 "is not 1 to %d temperatures", o->temperature_start, o->temperature_increment,
                 HARK_MAX_TEMPERATURES);
        return usage_error(msg), -2;
    }
    return 0;
}

void cli_clip_ms(hark_params *p, double offset_ms, double duration_ms)
{
    p->clip_timestamps[0] = (float)(offset_ms / 1000);
    p->clip_timestamps[1] = (float)((offset_ms + duration_ms) / 1000);
    p->n_clip_timestamps = duration_ms > 0 ? 2 : 1; /* one: to the end */
}

/* whisper.cpp's -ot OFFSET -d DURATION (milliseconds) as a clip: OFFSET to its end,
 * or OFFSET + DURATION; either option may come first.  --clip-timestamps too: -2. */
static int clip_in_ms(cli_options *o, const char *name, const char *v)
{
    int *ms = !strcmp(name, "-ot") || !strcmp(name, "--offset-t") ? &o->offset_ms : &o->duration_ms;
    hark_params *p = &o->params;
    if (p->n_clip_timestamps && !o->clip_in_ms)
        return usage_error("-ot and -d make a clip: give them or --clip-timestamps"), -2;
    if (cli_int_arg(v, 0, 1000000000, ms))
        return -1;
    o->clip_in_ms = 1;
    cli_clip_ms(p, o->offset_ms, o->duration_ms);
    return 0;
}

/* Search and sampling options with a value: 0 stored, -1 bad value, 1 not one of them. */
static int parse_search_option(cli_options *o, const char *name, const char *v)
{
    hark_params *p = &o->params;
    char *end;
    if (!strcmp(name, "--beam-size"))
        return cli_int_arg(v, 1, 64, &p->search.beam_size);
    if (!strcmp(name, "--best-of"))
        return cli_int_arg(v, 1, 64, &p->search.best_of);
    if (!strcmp(name, "--patience"))
        return float_arg(v, &p->search.patience) || p->search.patience <= 0 ? -1 : 0;
    if (!strcmp(name, "--length-penalty"))
        return float_arg(v, &p->search.length_penalty) || p->search.length_penalty < 0 ? -1 : 0;
    if (!strcmp(name, "--temperature")) {
        if (parse_floats(v, p->fallback.temperatures, HARK_MAX_TEMPERATURES, &p->fallback.n_temperatures, 0, 10))
            return -1;
        o->temperature_start = strtod(v, NULL); /* a double, as Python's */
        o->temperatures_given = p->fallback.n_temperatures;
        return temperature_ladder(o);
    }
    if (!strcmp(name, "--temperature-increment-on-fallback")) {
        o->temperature_increment = strtod(v, &end);
        return !*v || *end || !(o->temperature_increment > 0) ? -1 : temperature_ladder(o);
    }
    if (!strcmp(name, "--suppress-tokens"))
        return parse_ints(v, p->suppress.tokens, HARK_MAX_SUPPRESS_TOKENS, &p->suppress.n_tokens,
                          -1, 10000000) ? -1 : suppress_non_speech(o);
    if (!strcmp(name, "--suppress-regex")) {
        char why[256];
        if (hark_suppress_regex_check(v, why, sizeof why) != 0) {
            fprintf(stderr, "hark: bad value for --suppress-regex: %s (%s) (see hark --help)\n", v,
                    why);
            return -2;
        }
        p->suppress.regex = v;
        return 0;
    }
    if (!strcmp(name, "--seed")) {
        p->search.seed = strtoull(v, &end, 10);
        return *v && !*end ? 0 : -1;
    }
    return 1;
}

/* Fallback thresholds, prompts and clips: as parse_search_option. */
static int parse_window_option(hark_params *p, const char *name, const char *v)
{
    if (!strcmp(name, "--compression-ratio-threshold"))
        return float_arg(v, &p->fallback.compression_ratio_threshold);
    if (!strcmp(name, "--logprob-threshold"))
        return float_arg(v, &p->fallback.logprob_threshold);
    if (!strcmp(name, "--no-speech-threshold"))
        return float_arg(v, &p->fallback.no_speech_threshold);
    if (!strcmp(name, "--clip-timestamps"))
        return parse_floats(v, p->clip_timestamps, HARK_MAX_CLIP_TIMESTAMPS, &p->n_clip_timestamps,
                            0, 1e7f);
    if (!strcmp(name, "--initial-prompt"))
        p->prompt.initial = v;
    else
        return 1;
    return 0;
}

/* Options read from the words' timing (each implies --word-timestamps): as
 * parse_search_option. */
static int parse_word_option(cli_options *o, const char *name, const char *v)
{
    hark_params *p = &o->params;
    int is_layout = !strcmp(name, "--max-line-width") || !strcmp(name, "--max-line-count") ||
                    !strcmp(name, "--max-words-per-line");
    int is_max_len = !strcmp(name, "--max-len") || !strcmp(name, "-ml");
    if (is_layout || is_max_len || !strcmp(name, "--hallucination-silence-threshold"))
        p->words.enabled = 1;
    if (is_max_len)
        return cli_int_arg(v, 1, 100000, &p->max_len);
    if (is_layout)
        return cli_int_arg(v, 1, 100000, !strcmp(name, "--max-line-width")   ? &o->layout.max_line_width
                                     : !strcmp(name, "--max-line-count") ? &o->layout.max_line_count
                                                                          : &o->layout.max_words_per_line);
    if (!strcmp(name, "--hallucination-silence-threshold"))
        return float_arg(v, &p->words.hallucination_silence_threshold) ||
               !(p->words.hallucination_silence_threshold > 0) ? -1 : 0;
    if (!strcmp(name, "--prepend-punctuations"))
        p->words.prepend_punctuations = v;
    else if (!strcmp(name, "--append-punctuations"))
        p->words.append_punctuations = v;
    else
        return 1;
    return 0;
}

int cli_parse_vad_option(cli_options *o, const char *name, const char *v)
{
    hark_params *p = &o->params;
    static const char *const names[][2] = {
        {"-vm", "--vad-model"}, {"-vt", "--vad-threshold"},
        {"-vspd", "--vad-min-speech-duration-ms"}, {"-vsd", "--vad-min-silence-duration-ms"},
        {"-vmsd", "--vad-max-speech-duration-s"}, {"-vp", "--vad-speech-pad-ms"},
        {"-vo", "--vad-samples-overlap"}};
    int k = 0;
    while (k < 7 && strcmp(name, names[k][0]) && strcmp(name, names[k][1]))
        k++;
    switch (k) {
    case 0: o->vad_model = v, o->vad = 1; return 0;
    case 1: return float_arg(v, &p->vad.threshold) || !(p->vad.threshold > 0 &&
                                                        p->vad.threshold < 1) ? -1 : 0;
    case 2: return cli_int_arg(v, 0, 3600000, &p->vad.min_speech_ms);
    case 3: return cli_int_arg(v, 0, 3600000, &p->vad.min_silence_ms);
    case 4: return float_arg(v, &p->vad.max_speech_s) || !(p->vad.max_speech_s >= 0) ? -1 : 0;
    case 5: return cli_int_arg(v, 0, 3600000, &p->vad.speech_pad_ms);
    case 6: return float_arg(v, &p->vad.samples_overlap) || !(p->vad.samples_overlap >= 0 &&
                                                              p->vad.samples_overlap <= 10) ? -1 : 0;
    default: return 1;
    }
}

/* Options with a value: name, short name, and how to store it. */
static int parse_valued(cli_options *o, const char *name, const char *v)
{
    hark_params *p = &o->params;
    int rc;
    if (!strcmp(name, "-m") || !strcmp(name, "--model"))
        o->model = v;
    else if (!strcmp(name, "--model-dir"))
        o->model_dir = v;
    else if (!strcmp(name, "-ot") || !strcmp(name, "--offset-t") || !strcmp(name, "-d") ||
             !strcmp(name, "--duration"))
        return clip_in_ms(o, name, v);
    else if (!strcmp(name, "--clip-timestamps") && o->clip_in_ms)
        return usage_error("-ot and -d make a clip: give them or --clip-timestamps"), -2;
    else if (!strcmp(name, "--device")) { /* openai's; hark has the CPU alone */
        if (strcmp(v, "cpu") == 0)
            return 0;
        fprintf(stderr, "hark: --device %s: hark runs on the CPU; give --device cpu or leave "
                        "it out (see hark --help)\n", v);
        return -2;
    }
    else if (!strcmp(name, "-t") || !strcmp(name, "--threads"))
        return cli_int_arg(v, 1, 256, &p->n_threads);
    else if (!strcmp(name, "-l") || !strcmp(name, "--language")) {
        if (strcmp(v, "auto") && !hark_language_code(v)) {
            fprintf(stderr, "hark: -l %s: not a Whisper language: give a code (en, de, ...), its "
                            "name (English, German, ...) or auto\n", v);
            return -2;
        }
        p->language = v;
    }
    else if (!strcmp(name, "--task")) {
        if (strcmp(v, "transcribe") && strcmp(v, "translate"))
            return -1;
        p->translate = !strcmp(v, "translate");
    } else if ((rc = parse_search_option(o, name, v)) != 1 ||
               (rc = parse_window_option(p, name, v)) != 1 ||
               (rc = cli_parse_vad_option(o, name, v)) != 1)
        return rc;
    else
        return parse_word_option(o, name, v);
    return 0;
}

/* openai's str2bool: "True" 1, "False" 0, else -1 (not a value: the flag alone). */
static int bool_value(const char *v)
{
    return v && !strcmp(v, "True") ? 1 : v && !strcmp(v, "False") ? 0 : -1;
}

/* The switches openai's CLI spells `--word_timestamps True` (next: the argument
 * after a, or NULL; *took: 1 when it was that True or False); hark's alone mean True.
 * --fp16 is taken for openai's `--fp16 False` and changes nothing: hark computes
 * in f32 from weights as stored. */
static int parse_switch(cli_options *o, const char *a, const char *next, int *took)
{
    hark_params *p = &o->params;
    int v = bool_value(next), on = v != 0;
    *took = v >= 0;
    if (!strcmp(a, "--word-timestamps"))
        p->words.enabled = on;
    else if (!strcmp(a, "--highlight-words"))
        o->layout.highlight_words = on, p->words.enabled |= on; /* needs the word timing */
    else if (!strcmp(a, "--condition-on-previous-text"))
        p->prompt.condition_on_previous_text = on;
    else if (!strcmp(a, "--carry-initial-prompt"))
        p->prompt.carry_initial = on;
    else if (strcmp(a, "--fp16")) {
        *took = 0;
        return 0;
    }
    return 1;
}

static int parse_flag(cli_options *o, const char *a)
{
    hark_params *p = &o->params;
    if (!strcmp(a, "--no-timestamps"))
        p->timestamps = 0;
    else if (!strcmp(a, "--no-condition-on-previous-text"))
        p->prompt.condition_on_previous_text = 0;
    else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
        o->quiet = 1;
    else if (!strcmp(a, "--vad"))
        o->vad = 1;
    else if (!strcmp(a, "-sns") || !strcmp(a, "--suppress-nst"))
        o->suppress_nst = 1, suppress_non_speech(o);
    else if (strcmp(a, "--split-on-word") && strcmp(a, "-sow")) /* --max-len always does */
        return 0;
    return 1;
}

/* Whether usage lists option (exactly: "--format" is not "--format-x"). */
static int usage_lists(const char *usage, const char *option)
{
    size_t n = strlen(option);
    for (const char *at = strstr(usage, option); at; at = strstr(at + 1, option))
        if (at > usage && at[-1] == ' ' && (at[n] == ' ' || at[n] == '\n' || at[n] == ','))
            return 1;
    return 0;
}

/* hark's spelling of an openai-whisper option, in buf, or NULL. */
static const char *spelling_of(const char *option, const char *usage, char *buf, size_t n)
{
    /* openai-whisper's names whose dashed forms are not hark's */
    static const char *const renamed[][2] = {{"--output-format", "--format"}};
    if (strncmp(option, "--", 2) != 0 || !strchr(option, '_'))
        return NULL;
    snprintf(buf, n, "%s", option);
    for (char *c = buf; *c; c++)
        if (*c == '_')
            *c = '-';
    for (size_t i = 0; i < sizeof renamed / sizeof renamed[0]; i++)
        if (strcmp(buf, renamed[i][0]) == 0)
            return renamed[i][1];
    return usage_lists(USAGE, buf) || (usage && usage_lists(usage, buf)) ? buf : NULL;
}

void cli_respell(char *arg, const char *usage)
{
    char dashed[200];
    const char *spelling = spelling_of(arg, usage, dashed, sizeof dashed);
    if (spelling && strlen(spelling) <= strlen(arg))
        memmove(arg, spelling, strlen(spelling) + 1);
}

int cli_parse_common(cli_options *o, int argc, char **argv, int *i)
{
    cli_respell(argv[*i], NULL);
    const char *a = argv[*i];
    int took;
    if (parse_flag(o, a))
        return 1;
    if (parse_switch(o, a, *i + 1 < argc ? argv[*i + 1] : NULL, &took)) {
        *i += took;
        return 1;
    }
    if (*i + 1 >= argc)
        return 0;
    int rc = parse_valued(o, a, argv[*i + 1]);
    if (rc == 1)
        return 0;
    if (rc == -2)
        return -1; /* reported */
    if (rc < 0) {
        char msg[300];
        snprintf(msg, sizeof msg, "bad value for %s: %s", a, argv[*i + 1]);
        return usage_error(msg);
    }
    (*i)++;
    return 1;
}

static int parse_file_option(cli_options *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!strcmp(a, "-r") || !strcmp(a, "--recursive"))
        o->recursive = 1;
    else if (!strcmp(a, "--overwrite"))
        o->overwrite = 1;
    else if (!strcmp(a, "--detect-language"))
        o->detect_language = 1;
    else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
        o->verbose = bool_value(v) != 0; /* openai's --verbose True / False too */
        *i += bool_value(v) >= 0;
    }
    else if (!strcmp(a, "--diarize") || !strcmp(a, "-di"))
        o->params.diarize = 1;
    else if (!strcmp(a, "--print-colors") || !strcmp(a, "-pc"))
        o->print_colors = 1;
    else if (v && (!strcmp(a, "-o") || !strcmp(a, "--output-dir")))
        o->out_dir = v, (*i)++;
    else if (v && (!strcmp(a, "-of") || !strcmp(a, "--output-file")))
        o->out_file = v, (*i)++;
    else if (v && (!strcmp(a, "-f") || !strcmp(a, "--format"))) {
        if (parse_formats(v, o->formats, sizeof o->formats))
            return usage_error(access(v, F_OK) == 0 ? "-f takes output formats; the audio file "
                               "goes without it (whisper.cpp's -f FILE is hark's FILE)"
                               : "unknown format in -f (txt,json,srt,vtt,tsv,csv,lrc,all)");
        (*i)++;
    } else if (v && (!strcmp(a, "-j") || !strcmp(a, "--jobs"))) {
        if (cli_int_arg(v, 1, 256, &o->jobs))
            return usage_error("-j takes a job count from 1 to 256");
        (*i)++;
    } else if (v && !strcmp(a, "--max-duration")) {
        char *end;
        o->params.max_duration = strtod(v, &end);
        if (!*v || *end || !(o->params.max_duration >= 0))
            return usage_error("--max-duration takes seconds (0: no limit)");
        (*i)++;
    } else if (v && !strcmp(a, "--shard")) {
        if (sscanf(v, "%d/%d", &o->shard_k, &o->shard_n) != 2 || o->shard_n < 1 ||
            o->shard_k < 1 || o->shard_k > o->shard_n)
            return usage_error("--shard takes K/N with 1 <= K <= N");
        (*i)++;
    } else
        return 0;
    return 1;
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
            return usage_exit("mel takes one input file");
    }
    if (!in || !out)
        return usage_exit("usage: hark mel FILE -o OUT.npy");
    if (n_mels != 80 && n_mels != 128)
        return usage_exit("--n-mels must be 80 or 128");
    char err[600];
    float *x, *mel;
    size_t n;
    int frames;
    if (hark_read_audio(in, &x, &n, err, sizeof err) ||
        hark_log_mel_spectrogram(x, n, 30 * HARK_SAMPLE_RATE, n_mels, &mel, &frames, err,
                                 sizeof err)) {
        fprintf(stderr, "hark: %s\n", err);
        return 1;
    }
    free(x);
    hark_error e = {{0}};
    int rc = hark_write_npy(out, mel, n_mels, frames, &e);
    free(mel);
    if (rc)
        fprintf(stderr, "hark: %s\n", e.msg);
    return rc ? 1 : 0;
}

/* --detect-language: "<file>: en 0.93 de 0.05 ..." for each input. */
static int detect_languages(const cli_options *o, char **inputs, int n)
{
    hark_model *m = cli_load_model(o);
    if (!m)
        return 1;
    hark_context *ctx = hark_context_new(m, &o->params);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        char err[600];
        float *x = NULL, probs[5];
        const char *codes[5];
        size_t len;
        int k = hark_read_audio(inputs[i], &x, &len, err, sizeof err) ? -1
                : hark_detect_language(ctx, x, len, codes, probs, 5);
        if (k < 0) {
            fprintf(stderr, "hark: %s\n", x ? hark_last_error(ctx) : err);
            failed++;
        } else {
            printf("%s:", inputs[i]);
            for (int j = 0; j < k; j++)
                printf(" %s %.4f", codes[j], probs[j]);
            printf("\n");
        }
        free(x);
    }
    hark_context_free(ctx);
    hark_model_free(m);
    return failed ? 1 : 0;
}

static int cmd_quantize(int argc, char **argv)
{
    if (argc != 4)
        return usage_exit("usage: hark quantize IN OUT TYPE");
    if (!hark_model_write_type(argv[3]))
        return usage_exit("TYPE is one of f32 f16 q8_0 q5_0 q5_1 q4_0 q4_1");
    char err[600];
    hark_model *m = hark_model_load(argv[1], err, sizeof err);
    if (!m) {
        fprintf(stderr, "hark: %s\n", err);
        return 1;
    }
    int rc = hark_model_write(m, argv[2], argv[3], err, sizeof err);
    if (rc)
        fprintf(stderr, "hark: %s\n", err);
    hark_model_free(m);
    return rc ? 1 : 0;
}

/* Where the transcripts go, and the options that need somewhere else: one file
 * to stdout; several, or a directory, to files in the current directory unless
 * -o says where (openai's CLI writes there too).  Returns 0 or 2. */
static int settle_outputs(cli_options *o, char **inputs, int n)
{
    if (n == 0)
        return usage_exit("no input files");
    if (o->out_file && (n > 1 || is_directory(inputs[0]) || o->out_dir))
        return usage_exit("--output-file names the outputs of one input file (without -o)");
    if (o->out_file)
        o->out_dir = "."; /* files are written, named by out_file */
    if (!o->out_dir && !o->detect_language && (n > 1 || is_directory(inputs[0])))
        o->out_dir = ".";
    if (o->verbose && !o->out_dir && o->formats[0])
        return usage_exit("--verbose prints the segments to stdout: give -o with -f");
    int prints_txt = !o->out_dir && (!o->formats[0] || !strcmp(o->formats, "txt"));
    if (o->print_colors && !o->verbose && !prints_txt)
        return usage_exit("--print-colors colours the text printed on stdout: one file as txt, "
                          "or -v lines");
    if (o->out_dir && !o->formats[0])
        snprintf(o->formats, sizeof o->formats, "txt,json");
    return 0;
}

/* Why stdout first failed, 0 while it has not; set under stdout's lock, as
 * batch workers print from their threads. */
static int stdout_errno;

void cli_flush_stdout(void)
{
    flockfile(stdout);
    if (fflush(stdout) != 0 && !stdout_errno)
        stdout_errno = errno;
    funlockfile(stdout);
}

void cli_print(const char *s)
{
    flockfile(stdout);
    if (fputs(s, stdout) == EOF && !stdout_errno)
        stdout_errno = errno;
    funlockfile(stdout);
}

/* At exit: a transcript that could not reach stdout (a full disk, say) is an
 * error, not a silent success. */
static void check_stdout(void)
{
    int failed = ferror(stdout);
    errno = 0;
    if (fclose(stdout) != 0 && !stdout_errno)
        stdout_errno = errno;
    if (stdout_errno)
        fprintf(stderr, "hark: stdout: cannot write (%s)\n", strerror(stdout_errno));
    else if (failed) /* by a printf, whose errno is gone */
        fprintf(stderr, "hark: stdout: cannot write\n");
    if (failed || stdout_errno)
        _exit(1);
}

int main(int argc, char **argv)
{
    cli_blas_reexec_if_slow(argv);
    atexit(check_stdout);
    if (argc > 1 && strcmp(argv[1], "quantize") == 0)
        return cmd_quantize(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "mel") == 0)
        return cmd_mel(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "test") == 0)
        return cli_test_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "bench") == 0)
        return cli_bench_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "vad") == 0)
        return cli_vad_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "stream") == 0)
        return cli_stream_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "serve") == 0)
        return cli_serve_main(argc - 1, argv + 1);
    cli_options o;
    cli_default_options(&o);
    char **inputs = calloc((size_t)argc, sizeof(char *));
    int n = 0, rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i];
        int r;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli_print(USAGE);
            free(inputs);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("hark %s\n", HARK_VERSION);
            free(inputs);
            return 0;
        } else if ((r = cli_parse_common(&o, argc, argv, &i)) || (r = parse_file_option(&o, argc, argv, &i))) {
            rc = r < 0 ? 2 : 0;
        } else if (a[0] == '-' && a[1]) {
            cli_unknown_option(NULL, a);
            rc = 2;
        } else {
            inputs[n++] = argv[i];
        }
    }
    if (!rc)
        rc = settle_outputs(&o, inputs, n);
    cli_default_threads(&o);
    if (!rc)
        rc = o.detect_language ? detect_languages(&o, inputs, n) : cli_run_batch(&o, inputs, n);
    free(inputs);
    return rc;
}
