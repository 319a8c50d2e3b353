/* hark [options] FILE|DIR...: transcription's command line: its options, where
 * the transcripts go, and --detect-language. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "option_table.h"

static int is_directory(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
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

/* Where the transcripts go, and the options that need somewhere else: one file
 * to stdout; several, or a directory, to files in the current directory unless
 * -o says where (openai's CLI writes there too).  Returns 0 or 2. */
static int settle_outputs(cli_options *o, char **inputs, int n)
{
    if (n == 0)
        return cli_usage_exit("no input files");
    if (o->out_file && (n > 1 || is_directory(inputs[0]) || o->out_dir))
        return cli_usage_exit("--output-file names the outputs of one input file (without -o)");
    if (o->out_file)
        o->out_dir = "."; /* files are written, named by out_file */
    if (!o->out_dir && !o->detect_language && (n > 1 || is_directory(inputs[0])))
        o->out_dir = ".";
    if (o->verbose && !o->out_dir && o->formats[0])
        return cli_usage_exit("--verbose prints the segments to stdout: give -o with -f");
    int prints_txt = !o->out_dir && (!o->formats[0] || !strcmp(o->formats, "txt"));
    if (o->print_colors && !o->verbose && !prints_txt)
        return cli_usage_exit("--print-colors colours the text printed on stdout: one file as txt, "
                          "or -v lines");
    if (o->out_dir && !o->formats[0])
        snprintf(o->formats, sizeof o->formats, "txt,json");
    return 0;
}

/* --help, --help-markdown and --version: printed, 1; 0 for another argument. */
static int print_own(const char *a)
{
    if (cli_is_option(a, "--help"))
        cli_print_help();
    else if (cli_is_option(a, "--help-markdown"))
        cli_print_markdown();
    else if (cli_is_option(a, "--version"))
        printf("hark %s\n", HARK_VERSION);
    else
        return 0;
    return 1;
}

int cli_transcribe_main(int argc, char **argv)
{
    cli_options o;
    cli_default_options(&o);
    char **inputs = calloc((size_t)argc, sizeof(char *));
    int n = 0, rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i];
        int r;
        if (print_own(a)) {
            free(inputs);
            return 0;
        } else if ((r = cli_parse_option(&o, argc, argv, &i, CLI_FILES)) != 0) {
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
