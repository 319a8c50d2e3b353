/* hark's options on the command line: the defaults, and the parser, which finds
 * each argument in the option table (after openai-whisper's underscored
 * spellings become hark's) and stores its value as the table says. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "option_table.h"

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

/* Whether usage lists option (exactly: "--format" is not "--format-x"). */
static int usage_lists(const char *usage, const char *option)
{
    size_t n = strlen(option);
    for (const char *at = strstr(usage, option); at; at = strstr(at + 1, option))
        if (at > usage && at[-1] == ' ' && (at[n] == ' ' || at[n] == '\n' || at[n] == ','))
            return 1;
    return 0;
}

/* hark's spelling of an underscored option (openai's, or hark's own with
 * underscores for dashes), in buf, or NULL. */
static const char *spelling_of(const char *option, const char *usage, char *buf, size_t n)
{
    if (strncmp(option, "--", 2) != 0 || !strchr(option, '_'))
        return NULL;
    snprintf(buf, n, "%s", option);
    for (char *c = buf; *c; c++)
        if (*c == '_')
            *c = '-';
    for (const cli_option *opt = cli_option_table; opt->name; opt++)
        if (opt->scope != CLI_OWN &&
            ((opt->openai && strcmp(option, opt->openai) == 0) || strcmp(buf, opt->name) == 0))
            return opt->name;
    return usage && usage_lists(usage, buf) ? buf : NULL;
}

void cli_respell(char *arg, const char *usage)
{
    char dashed[200];
    const char *spelling = spelling_of(arg, usage, dashed, sizeof dashed);
    if (spelling && strlen(spelling) <= strlen(arg))
        memmove(arg, spelling, strlen(spelling) + 1);
}

/* openai's str2bool: "True" 1, "False" 0, else -1 (not a value: the switch alone). */
static int bool_value(const char *v)
{
    return v && !strcmp(v, "True") ? 1 : v && !strcmp(v, "False") ? 0 : -1;
}

/* A flag, or a switch turned on or off. */
static void set_switch(cli_options *o, const cli_option *opt, int on)
{
    if (opt->flags & CLI_NO_EFFECT)
        return;
    if (opt->take) {
        opt->take(o, opt, NULL);
        return;
    }
    *(int *)cli_option_field(o, opt) = opt->flags & CLI_CLEARS ? !on : on;
    if (on && opt->flags & CLI_WORDS) /* it needs the words' timing */
        o->params.words.enabled = 1;
}

/* An option's value, stored or read by its reader: as cli_take. */
static int set_value(cli_options *o, const cli_option *opt, const char *v)
{
    if (opt->flags & CLI_WORDS)
        o->params.words.enabled = 1;
    if (opt->flags & CLI_TURNS_ON_VAD)
        o->vad = 1;
    if (opt->take)
        return opt->take(o, opt, v);
    void *field = cli_option_field(o, opt);
    if (opt->kind == CLI_INT)
        return cli_int_arg(v, (int)opt->lo, (int)opt->hi, field);
    if (opt->kind == CLI_FLOAT)
        return cli_float_arg(v, opt, field);
    *(const char **)field = v;
    return 0;
}

/* The usage error of a bad value; returns -1. */
static int bad_value(const cli_option *opt, const char *a, const char *v)
{
    char msg[300];
    if (opt->error)
        return cli_usage_error(opt->error);
    snprintf(msg, sizeof msg, "bad value for %s: %s", a, v);
    return cli_usage_error(msg);
}

/* argv[*i], which is opt, and its value or openai's True or False after it: as
 * cli_parse_option. */
static int take(cli_options *o, const cli_option *opt, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (opt->kind == CLI_FLAG || opt->kind == CLI_SWITCH) {
        int given = opt->kind == CLI_SWITCH ? bool_value(v) : -1;
        set_switch(o, opt, given != 0);
        *i += given >= 0;
        return 1;
    }
    if (!v)
        return 0; /* an option without its value is no option */
    int rc = set_value(o, opt, v);
    if (rc == -2)
        return -1; /* said why */
    if (rc < 0)
        return bad_value(opt, a, v);
    (*i)++;
    return 1;
}

int cli_parse_option(cli_options *o, int argc, char **argv, int *i, cli_scope scope)
{
    cli_respell(argv[*i], NULL);
    const cli_option *opt = cli_find_option(argv[*i], scope);
    return opt ? take(o, opt, argc, argv, i) : 0;
}

int cli_parse_common(cli_options *o, int argc, char **argv, int *i)
{
    return cli_parse_option(o, argc, argv, i, CLI_SHARED);
}

int cli_parse_vad_option(cli_options *o, const char *name, const char *v)
{
    const cli_option *opt = cli_find_option(name, CLI_SHARED);
    if (!opt || !(opt->flags & CLI_IN_VAD))
        return 1;
    return set_value(o, opt, v) ? -1 : 0;
}
