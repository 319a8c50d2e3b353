/* Transcribing the inputs named on the command line. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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

static int write_outputs(hark_context *ctx, const cli_options *o, const char *input)
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

static int print_outputs(hark_context *ctx, const cli_options *o)
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

int cli_run_batch(const cli_options *o, char **inputs, int n)
{
    hark_model *model = cli_load_model(o);
    if (!model)
        return 1;
    hark_context *ctx = hark_context_new(model, &o->params);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        if (hark_transcribe_file(ctx, inputs[i]) != 0) {
            fprintf(stderr, "hark: %s\n", hark_last_error(ctx));
            failed++;
            continue;
        }
        failed += o->out_dir ? write_outputs(ctx, o, inputs[i]) : print_outputs(ctx, o);
    }
    hark_context_free(ctx);
    hark_model_free(model);
    return failed ? 1 : 0;
}
