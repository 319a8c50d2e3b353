/* hark explain: see inside the model.  --shapes prints the forward pass as a
 * table (from a model's dimensions, or openai's by name with --dims); with an
 * audio file it records one window's attention, logit lens and candidates
 * (explain_trace.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "explain.h"

const char cli_explain_usage[] =
    "usage: hark explain --shapes [-m MODEL | --dims NAME] [--json]\n"
    "       hark explain AUDIO [-m MODEL] [--window N] [-o DIR] [--occlusion] [options]\n"
    "  --shapes prints every tensor of the forward pass, stage by stage, for one window\n"
    "  and one decoding step: its shape in symbols and numbers, the operation, its\n"
    "  parameters and FLOPs, and the model's totals.  --dims takes openai's sizes without\n"
    "  weights: tiny base small medium (and .en), large large-v2 large-v3 large-v3-turbo.\n"
    "  With AUDIO, window N (from 0; default 0) is transcribed as usual and recorded:\n"
    "  attention maps, the logit lens, each step's candidates; DIR/trace.json and\n"
    "  DIR/index.html (default DIR: explain) and a summary on stdout.  --occlusion masks\n"
    "  each 0.2 s of the window in turn and ranks how well each cross-attention head's\n"
    "  attention follows the log-probability the tokens lose.\n";

static int explain_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "hark: explain: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see hark explain --help)\n");
    return 2;
}

/* One of explain's own options at argv[*i]: 1 taken, 0 not one, -1 reported. */
static int own_option(explain_options *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!strcmp(a, "--shapes"))
        o->shapes = 1;
    else if (!strcmp(a, "--json"))
        o->json = 1;
    else if (!strcmp(a, "--occlusion"))
        o->occlusion = 1;
    else if (v && !strcmp(a, "--dims"))
        o->dims = v, (*i)++;
    else if (v && (!strcmp(a, "-o") || !strcmp(a, "--output-dir")))
        o->out_dir = v, (*i)++;
    else if (v && !strcmp(a, "--window")) {
        if (cli_int_arg(v, 0, 1 << 20, &o->window)) {
            explain_usage_error("--window takes a window number from 0, not %s", v);
            return -1;
        }
        (*i)++;
    } else
        return 0;
    return 1;
}

/* Returns -1 to go on, else the exit status (0 after --help). */
static int parse_explain_args(explain_options *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli_print(cli_explain_usage);
            return 0;
        } else if ((r = own_option(o, argc, argv, &i)) != 0) {
            if (r < 0)
                return 2;
        } else if ((r = cli_parse_common(&o->cli, argc, argv, &i)) != 0) {
            if (r < 0)
                return 2;
        } else if (a[0] == '-' && a[1]) {
            return explain_usage_error("unknown option or missing value: %s", a);
        } else if (o->audio) {
            return explain_usage_error("one audio file at a time, not also %s", a);
        } else {
            o->audio = a;
        }
    }
    return -1;
}

/* The dimensions --dims names, or those of the model -m (or the default) names. */
static int shapes_dims(const explain_options *o, hark_dims *d)
{
    if (o->dims && o->cli.model)
        return explain_usage_error("%s", "--dims and -m name two models: give one");
    if (o->dims) {
        if (hark_whisper_dims(o->dims, d) == 0)
            return 0;
        return explain_usage_error("--dims takes tiny, tiny.en, base, base.en, small, small.en, "
                                   "medium, medium.en, large, large-v2, large-v3 or "
                                   "large-v3-turbo, not %s", o->dims);
    }
    hark_model *m = cli_load_model(&o->cli);
    if (!m)
        return 1;
    *d = hark_model_dims(m);
    hark_model_free(m);
    return 0;
}

static int print_shapes(const explain_options *o)
{
    hark_dims d;
    int rc = shapes_dims(o, &d);
    if (rc)
        return rc;
    char *s = hark_shapes(&d, o->json ? "json" : "text");
    if (!s) {
        fprintf(stderr, "hark: explain: the model's dimensions are out of range\n");
        return 1;
    }
    cli_print(s);
    if (o->json)
        cli_print("\n");
    free(s);
    return 0;
}

int cli_explain_main(int argc, char **argv)
{
    explain_options o;
    memset(&o, 0, sizeof o);
    cli_default_options(&o.cli);
    int rc = parse_explain_args(&o, argc, argv);
    if (rc >= 0)
        return rc;
    if (o.shapes) {
        if (o.audio)
            return explain_usage_error("--shapes takes no audio file: %s", o.audio);
        return print_shapes(&o);
    }
    if (o.dims || o.json)
        return explain_usage_error("%s", "--dims and --json go with --shapes");
    if (!o.audio)
        return explain_usage_error("%s", "an audio file, or --shapes, is needed");
    cli_default_threads(&o.cli);
    return explain_audio(&o);
}
