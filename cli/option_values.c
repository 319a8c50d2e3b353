/* What the values of hark's options mean where they are more than a number to
 * store: lists, the temperature ladder, clips, languages, formats, the shard;
 * the option table names each reader (cli_take_*), which returns 0, -1 for a
 * bad value (the parser says so) or -2 after saying why itself. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "option_table.h"
#include "face.h"

int cli_usage_error(const char *msg)
{
    fprintf(stderr, "hark: %s (see hark --help)\n", msg);
    return -1;
}

int cli_usage_exit(const char *msg)
{
    cli_usage_error(msg);
    return 2;
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

/* (an infinite bound is none: NaN passes where the range is unbounded, as openai's) */
int cli_float_arg(const char *s, const cli_option *opt, float *x)
{
    char *end;
    *x = strtof(s, &end);
    int above_lo = opt->flags & CLI_ABOVE_LO ? *x > opt->lo : *x >= opt->lo;
    int below_hi = opt->flags & CLI_BELOW_HI ? *x < opt->hi : *x <= opt->hi;
    return *s && !*end && (isinf(opt->lo) || above_lo) && (isinf(opt->hi) || below_hi) ? 0 : -1;
}

/* A comma-separated list of at most max numbers in opt's range; -1 if not. */
static int parse_floats(const char *list, const cli_option *opt, float *v, int max, int *n)
{
    char buf[1024], *end;
    snprintf(buf, sizeof buf, "%s", list);
    *n = 0;
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        float x = strtof(t, &end);
        if (*end || !(x >= opt->lo && x <= opt->hi) || *n == max)
            return -1;
        v[(*n)++] = x;
    }
    return *n ? 0 : -1;
}

/* A comma-separated list of at most max integers in opt's range; -1 if not. */
static int parse_ints(const char *list, const cli_option *opt, int *v, int max, int *n)
{
    char buf[4096], *end;
    snprintf(buf, sizeof buf, "%s", list);
    *n = 0;
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        long x = strtol(t, &end, 10);
        if (*end || end == t || x < opt->lo || x > opt->hi || *n == max)
            return -1;
        v[(*n)++] = (int)x;
    }
    return *n ? 0 : -1;
}

int cli_take_language(cli_options *o, const cli_option *opt, const char *v)
{
    (void)opt;
    if (strcmp(v, "auto") && !hark_language_code(v)) {
        fprintf(stderr, "hark: -l %s: not a Whisper language: give a code (en, de, ...), its "
                        "name (English, German, ...) or auto\n", v);
        return -2;
    }
    o->params.language = v;
    return 0;
}

int cli_take_task(cli_options *o, const cli_option *opt, const char *v)
{
    (void)opt;
    if (strcmp(v, "transcribe") && strcmp(v, "translate"))
        return -1;
    o->params.translate = !strcmp(v, "translate");
    return 0;
}

int cli_take_precision(cli_options *o, const cli_option *opt, const char *v)
{
    (void)opt;
    int p = hark_precision_parse(v);
    if (p < 0) {
        fprintf(stderr, "hark: --precision takes auto, f32, bf16 or int8, not %s (see hark "
                        "--help)\n", v);
        return -2;
    }
    o->params.precision = p;
    return 0;
}

/* openai's; hark has the CPU alone */
int cli_take_device(cli_options *o, const cli_option *opt, const char *v)
{
    (void)o, (void)opt;
    if (strcmp(v, "cpu") == 0)
        return 0;
    fprintf(stderr, "hark: --device %s: hark runs on the CPU; give --device cpu or leave it "
                    "out (see hark --help)\n", v);
    return -2;
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
 * Called after either option, so their order does not matter. */
static int temperature_ladder(cli_options *o)
{
    hark_params *p = &o->params;
    if (o->temperature_increment <= 0)
        return 0;
    if (o->temperatures_given > 1)
        return cli_usage_error("--temperature-increment-on-fallback starts from one "
                               "--temperature, not a list"), -2;
    if (cli_temperature_ladder(p, o->temperature_start, o->temperature_increment)) {
        char msg[200];
        snprintf(msg, sizeof msg, "--temperature-increment-on-fallback: %g to 1 in steps of %g "
                 "is not 1 to %d temperatures", o->temperature_start, o->temperature_increment,
                 HARK_MAX_TEMPERATURES);
        return cli_usage_error(msg), -2;
    }
    return 0;
}

int cli_take_temperature(cli_options *o, const cli_option *opt, const char *v)
{
    hark_params *p = &o->params;
    if (parse_floats(v, opt, p->fallback.temperatures, HARK_MAX_TEMPERATURES, &p->fallback.n_temperatures))
        return -1;
    o->temperature_start = strtod(v, NULL); /* a double, as Python's */
    o->temperatures_given = p->fallback.n_temperatures;
    return temperature_ladder(o);
}

int cli_take_temperature_increment(cli_options *o, const cli_option *opt, const char *v)
{
    char *end;
    (void)opt;
    o->temperature_increment = strtod(v, &end);
    return !*v || *end || !(o->temperature_increment > 0) ? -1 : temperature_ladder(o);
}

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

int cli_take_suppress_tokens(cli_options *o, const cli_option *opt, const char *v)
{
    hark_params *p = &o->params;
    return parse_ints(v, opt, p->suppress.tokens, HARK_MAX_SUPPRESS_TOKENS, &p->suppress.n_tokens)
               ? -1 : suppress_non_speech(o);
}

int cli_take_suppress_nst(cli_options *o, const cli_option *opt, const char *v)
{
    (void)opt, (void)v;
    o->suppress_nst = 1;
    suppress_non_speech(o); /* a full list stays as it is */
    return 0;
}

int cli_take_suppress_regex(cli_options *o, const cli_option *opt, const char *v)
{
    char why[256];
    (void)opt;
    if (hark_suppress_regex_check(v, why, sizeof why) != 0) {
        fprintf(stderr, "hark: bad value for --suppress-regex: %s (%s) (see hark --help)\n", v,
                why);
        return -2;
    }
    o->params.suppress.regex = v;
    return 0;
}

int cli_take_seed(cli_options *o, const cli_option *opt, const char *v)
{
    char *end;
    (void)opt;
    o->params.search.seed = strtoull(v, &end, 10);
    return *v && !*end ? 0 : -1;
}

int cli_take_max_duration(cli_options *o, const cli_option *opt, const char *v)
{
    char *end;
    (void)opt;
    o->params.max_duration = strtod(v, &end);
    return *v && !*end && o->params.max_duration >= 0 ? 0 : -1;
}

#define CLIP_CONFLICT "-ot and -d make a clip: give them or --clip-timestamps"

int cli_take_clip_timestamps(cli_options *o, const cli_option *opt, const char *v)
{
    hark_params *p = &o->params;
    if (o->clip_in_ms)
        return cli_usage_error(CLIP_CONFLICT), -2;
    return parse_floats(v, opt, p->clip_timestamps, HARK_MAX_CLIP_TIMESTAMPS,
                        &p->n_clip_timestamps);
}

void cli_clip_ms(hark_params *p, double offset_ms, double duration_ms)
{
    p->clip_timestamps[0] = (float)(offset_ms / 1000);
    p->clip_timestamps[1] = (float)((offset_ms + duration_ms) / 1000);
    p->n_clip_timestamps = duration_ms > 0 ? 2 : 1; /* one: to the end */
}

/* whisper.cpp's -ot OFFSET -d DURATION (milliseconds) as a clip: OFFSET to its end,
 * or OFFSET + DURATION; either option may come first, --clip-timestamps not too. */
int cli_take_clip_ms(cli_options *o, const cli_option *opt, const char *v)
{
    int *ms = !strcmp(opt->name, "--offset-t") ? &o->offset_ms : &o->duration_ms;
    hark_params *p = &o->params;
    if (p->n_clip_timestamps && !o->clip_in_ms)
        return cli_usage_error(CLIP_CONFLICT), -2;
    if (cli_int_arg(v, (int)opt->lo, (int)opt->hi, ms))
        return -1;
    o->clip_in_ms = 1;
    cli_clip_ms(p, o->offset_ms, o->duration_ms);
    return 0;
}

int cli_take_format(cli_options *o, const cli_option *opt, const char *v)
{
    const char *list = strcmp(v, "all") == 0 ? "txt,json,srt,vtt,tsv" : v;
    char buf[128];
    (void)opt;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
        if (!hark_is_format(t))
            return cli_usage_error(access(v, F_OK) == 0
                                   ? "-f takes output formats; the audio file goes without it "
                                     "(whisper.cpp's -f FILE is hark's FILE)"
                                   : "unknown format in -f (txt,json,srt,vtt,tsv,csv,lrc,all)"), -2;
    snprintf(o->formats, sizeof o->formats, "%s", list);
    return 0;
}

int cli_take_shard(cli_options *o, const cli_option *opt, const char *v)
{
    (void)opt;
    if (sscanf(v, "%d/%d", &o->shard_k, &o->shard_n) != 2 || o->shard_n < 1 ||
        o->shard_k < 1 || o->shard_k > o->shard_n)
        return -1;
    snprintf(o->shard_tag, sizeof o->shard_tag, "%d/%d", o->shard_k, o->shard_n);
    return 0;
}

int cli_take_balance(cli_options *o, const cli_option *opt, const char *v)
{
    (void)opt;
    if (strcmp(v, "duration") && strcmp(v, "position"))
        return -1;
    o->balance_duration = !strcmp(v, "duration");
    return 0;
}
