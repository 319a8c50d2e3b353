/* The hark command's parts: option parsing (main.c), transcribing files and
 * directories (batch.c), golden-transcript tests (golden.c). */
#ifndef HARK_CLI_H
#define HARK_CLI_H

#include "hark.h"

typedef struct cli_options {
    const char *model;      /* -m; NULL: the default model                     */
    const char *model_dir;  /* --model-dir: where -m NAME is looked for          */
    const char *out_dir;    /* -o; NULL: print to stdout                        */
    const char *out_file;   /* -of: one input's outputs are OUT_FILE.<format>   */
    char formats[64];       /* "txt,json"...                                    */
    int jobs;               /* -j: files transcribed at once                    */
    int quiet;              /* -q                                               */
    int verbose;            /* -v: each segment on stdout as it comes, timed    */
    int print_colors;       /* --print-colors: those lines coloured by confidence */
    int recursive;          /* -r                                               */
    int overwrite;          /* --overwrite: redo files whose outputs exist      */
    int shard_k, shard_n;   /* --shard K/N (1-based K); 0/0 = all               */
    int detect_language;    /* --detect-language: print languages, no transcript */
    double temperature_start;    /* --temperature's one value (0 until given)     */
    int temperatures_given;      /* how many values --temperature had            */
    double temperature_increment; /* --temperature-increment-on-fallback; 0: none */
    int suppress_nst;       /* -sns: -1 kept among --suppress-tokens            */
    int offset_ms, duration_ms; /* -ot, -d (whisper.cpp's): the clip they make    */
    int clip_in_ms;         /* the clip came from -ot / -d                      */
    int vad;                /* --vad: transcribe the speech Silero VAD finds    */
    const char *vad_model;  /* --vad-model; NULL: models/silero-vad/'s          */
    hark_params params;     /* decoding options, threads per job                */
} cli_options;

/* whisper.cpp's offset and duration in milliseconds (0: to the end) as openai's
 * clip_timestamps in p. */
void cli_clip_ms(hark_params *p, double offset_ms, double duration_ms);
/* openai-whisper's underscored spelling ("--word_timestamps", "--output_format")
 * of an option that hark's help or usage (may be NULL) lists becomes hark's, in
 * place, so that a command written for openai's CLI runs as it is. */
void cli_respell(char *arg, const char *usage);
/* What hark has for whisper.cpp's option ("-otxt": "is hark's -f txt"), or NULL (hints.c). */
const char *cli_whispercpp_equivalent(const char *option);
/* The error for an unknown option of hark's command (NULL: transcription's),
 * with hark's way of doing what whisper.cpp's option of that name does. */
void cli_unknown_option(const char *command, const char *option);
/* fflush(stdout), remembering why it first failed: the exit status and the
 * last word are the failure's, at exit. */
void cli_flush_stdout(void);
/* fputs(s, stdout), remembering why it first failed likewise. */
void cli_print(const char *s);
/* Whether a walk takes the file, by its extension (any case): what libsndfile
 * (>= 1.1, which reads mp3) opens, and what hark reads through ffmpeg (m4a,
 * webm, mov...), which without ffmpeg fails saying so rather than being passed
 * over (batch.c; hark test's directories too). */
int cli_is_audio_name(const char *name);
/* Resolves -m or the default model path; prints the error and returns -1. */
int cli_model_path(const cli_options *o, char *out, size_t n);
/* An integer option's value: the whole of s, lo to hi, into *v; 0, or -1 when not. */
int cli_int_arg(const char *s, int lo, int hi, int *v);
/* openai's --temperature START --temperature_increment_on_fallback INCREMENT: the
 * ladder np.arange(START, 1.0 + 1e-6, INCREMENT), filled as numpy does (START + i *
 * delta), into p; -1 when it is not 1 to HARK_MAX_TEMPERATURES values. */
int cli_temperature_ladder(hark_params *p, double start, double increment);
/* whisper.cpp's VAD options, either spelling (-vt, --vad-threshold...): 0 when
 * taken, 1 when name is not one, -1 for a bad value.  A model given turns VAD on. */
int cli_parse_vad_option(cli_options *o, const char *name, const char *v);
/* hark serve [options]: transcription over HTTP until SIGINT or SIGTERM; returns the
 * exit status (serve.c). */
int cli_serve_main(int argc, char **argv);
/* hark stream [FILE] [options]: live transcription of 16 kHz PCM as it comes;
 * returns the exit status (stream.c). */
int cli_stream_main(int argc, char **argv);
/* hark explain --shapes | AUDIO [options]: see inside the model; returns the exit
 * status (explain.c). */
int cli_explain_main(int argc, char **argv);
extern const char cli_explain_usage[]; /* its --help */
/* hark vad FILE... [VAD options]; returns the exit status (vad.c). */
int cli_vad_main(int argc, char **argv);
/* With --vad, loads the VAD model (--vad-model, else hark's own) into *vad (NULL
 * without --vad); prints the error and returns -1 when it cannot. */
int cli_load_vad(const cli_options *o, hark_vad **vad);
/* The model named by the options and, with --vad, the VAD model into *vad (else
 * NULL); prints the error and returns NULL (nothing left loaded) when either fails. */
hark_model *cli_load_models(const cli_options *o, hark_vad **vad);
/* Loads the model named by the options; prints the error and returns NULL. */
hark_model *cli_load_model(const cli_options *o);
/* Transcribes files and directories; returns the exit status. */
int cli_run_batch(const cli_options *o, char **inputs, int n);
/* hark test MANIFEST|DIR [options]; returns the exit status. */
int cli_test_main(int argc, char **argv);
/* hark bench -m MODEL [options]; returns the exit status. */
int cli_bench_main(int argc, char **argv);
/* Parses the decoding/model options shared by transcription and hark test.
 * Returns 1 if argv[*i] (and its argument) was consumed, 0 if not an option
 * of this kind, -1 (after printing) on a bad value. */
int cli_parse_common(cli_options *o, int argc, char **argv, int *i);
void cli_default_options(cli_options *o);
/* Runs hark again with OPENBLAS_CORETYPE set when OpenBLAS chose kernels that
 * leave this CPU's AVX2 or AVX-512 unused, and with OPENBLAS_NUM_THREADS=1 when
 * OpenBLAS started threads of its own that nobody asked for; returns only when
 * it did neither (blas.c). */
void cli_blas_reexec_if_slow(char **argv);
/* Sets the thread count when -t was not given. */
void cli_default_threads(cli_options *o);

#endif
