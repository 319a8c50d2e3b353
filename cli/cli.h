/* The hark command's parts, each file one of them: the dispatch (main.c, over
 * commands.c's table) above the commands (transcribe.c, batch.c, golden.c,
 * bench.c, serve.c, stream.c, vad.c, tools.c), which share the options (the
 * table in option_table.c, parsed by options.c, their values read by
 * option_values.c, --help written by option_doc.c), the model finding
 * (models.c), stdout (stdout.c) and the answers to unknown options (hints.c). */
#ifndef HARK_CLI_H
#define HARK_CLI_H

#include "hark.h"

/* The CLI's own limits (the library's are hark.h's HARK_MAX_*). */
#define CLI_MAX_THREADS 256          /* -t: threads per file (hark bench's probes too) */
#define CLI_MAX_JOBS 256             /* -j: files, or hark serve's requests, at once   */
#define CLI_MAX_MS 3600000           /* an hour: VAD's and hark stream's milliseconds  */
#define CLI_MAX_CHARS 100000         /* --max-len, --max-line-width and friends        */
#define CLI_MAX_OFFSET_MS 1000000000 /* -ot, -d: about eleven days                     */

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
    int combine_decode;     /* --combine-decode: -j files' steps combined       */
    int shard_k, shard_n;   /* --shard K/N (1-based K); 0/0 = all               */
    char shard_tag[32];     /* "K/N" as given, "" without --shard (the ledger)  */
    int balance_duration;   /* --balance duration: shards by length, not position */
    int dry_run;            /* --dry-run: say what would be done and why        */
    int redo_changed;       /* --redo-changed: redo files done otherwise        */
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
    hark_output_params layout; /* srt/vtt cues from the words                   */
} cli_options;

/* whisper.cpp's offset and duration in milliseconds (0: to the end) as openai's
 * clip_timestamps in p. */
void cli_clip_ms(hark_params *p, double offset_ms, double duration_ms);
/* openai-whisper's underscored spelling ("--word_timestamps", "--output_format")
 * of an option of the option table, or of one that usage (a command's own --help,
 * may be NULL) lists, becomes hark's, in place, so that a command written for
 * openai's CLI runs as it is. */
void cli_respell(char *arg, const char *usage);
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
 * over (audio_names.c; hark test's directories too). */
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
/* hark summary OUT [INPUTS...] [-r] [--json]: the report on a batch's ledgers;
 * returns the exit status (summary.c). */
int cli_summary_main(int argc, char **argv);
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
/* OpenBLAS's own thread count before cli_blas_reexec_if_slow held it to one. */
int cli_blas_threads_at_start(void);
/* Sets the thread count when -t was not given. */
void cli_default_threads(cli_options *o);
/* Prints "hark: MSG (see hark --help)"; returns -1. */
int cli_usage_error(const char *msg);
/* cli_usage_error, then returns 2, the exit status of a usage error. */
int cli_usage_exit(const char *msg);
/* What hark has for the k-th (from 0) of whisper.cpp's option spellings it knows:
 * "is hark's -f txt", "has no use here: ..." into answer, its spellings into
 * *short_name and *long_name (NULL if none); -1 past the last (hints.c). */
int cli_whispercpp_spelling(int k, const char **short_name, const char **long_name,
                            char *answer, size_t n);
/* At exit: a transcript that could not reach stdout (a full disk, say) is an
 * error, not a silent success; exits 1 after saying so. */
void cli_check_stdout(void);
/* hark [options] FILE|DIR...; returns the exit status (transcribe.c). */
int cli_transcribe_main(int argc, char **argv);
/* hark mel FILE -o OUT.npy and hark quantize IN OUT TYPE (tools.c). */
int cli_mel_main(int argc, char **argv);
int cli_quantize_main(int argc, char **argv);
/* The subcommands' own --help texts. */
extern const char cli_test_usage[], cli_bench_usage[], cli_vad_usage[], cli_stream_usage[],
    cli_serve_usage[], cli_explain_usage[];

/* One of hark's commands, as --help and docs/cli.md list them (commands.c). */
typedef struct cli_command {
    const char *name;    /* the word after "hark" ("" for transcription); NULL: the end */
    const char *args;    /* what follows it                                           */
    const char *summary; /* what it does                                              */
    const char *usage;   /* its own --help, or NULL                                   */
    int (*run)(int argc, char **argv); /* NULL for transcription, main()'s fallback  */
} cli_command;
extern const cli_command cli_commands[];

#endif
