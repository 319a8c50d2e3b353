/* hark test: golden-transcript regression runs.
 *
 * Each test case is an audio file and the transcript expected of it, from a
 * TSV manifest or a directory of x.wav + x.txt pairs.  Every file is
 * transcribed with one model, both texts are normalised (wer.h) and scored by
 * WER and CER; checks (--max-wer, --max-total-wer, --baseline) decide PASS or
 * FAIL, and the exit status is 0 only when everything passed. */
#include <cJSON.h>
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "golden.h"
#include "face.h"
#include "wer.h"

const char cli_test_usage[] =
    "usage: hark test MANIFEST|DIR [options]\n"
    "  MANIFEST is a TSV file of audio_path<TAB>expected transcript lines (paths relative\n"
    "  to its directory; blank lines and lines starting with # are skipped); DIR holds\n"
    "  x.wav + x.txt pairs (any audio extension libsndfile reads).\n"
    "  --max-wer P           fail a file whose WER is above P percent (default: 0,\n"
    "                        none with --baseline)\n"
    "  --max-total-wer P     fail when the total WER is above P percent\n"
    "  --baseline FILE.json  fail a file whose WER got worse than in this earlier --report\n"
    "  --report FILE.json    write the results as JSON\n"
    "  --junit FILE.xml      write the results as JUnit XML\n"
    "  and the model and decoding options of hark --help (-m, -t, --beam-size ...)\n";

/* Prints "hark: test: <message> (see hark test --help)"; returns exit status 2. */
__attribute__((format(printf, 1, 2))) static int test_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("hark: test: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see hark test --help)\n", stderr);
    va_end(ap);
    return 2;
}

static char *dup_str(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d) {
        fprintf(stderr, "hark: test: out of memory\n");
        exit(1);
    }
    return d;
}

/* ------------------------------------------------------------ options */

/* "10", "12.5" or "12.5%" */
static int percent_arg(const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    if (*end == '%')
        end++;
    return end != s && !*end && *v >= 0 && *v <= 1e6 ? 0 : -1;
}

/* --max-wer and friends: 1 when consumed, 0 when not one of them, 2 on error. */
static int parse_test_option(test_options *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    int is_percent = !strcmp(a, "--max-wer") || !strcmp(a, "--max-total-wer");
    const char **file = !strcmp(a, "--baseline") ? &o->baseline_path
                        : !strcmp(a, "--report") ? &o->report_path
                        : !strcmp(a, "--junit")  ? &o->junit_path
                                                 : NULL;
    if (!is_percent && !file)
        return 0;
    if (*i + 1 >= argc)
        return test_usage_error("%s needs a value", a);
    const char *v = argv[++*i];
    if (file) {
        *file = v;
        return 1;
    }
    double *limit = !strcmp(a, "--max-wer") ? &o->max_wer : &o->max_total_wer;
    if (percent_arg(v, limit)) {
        fprintf(stderr, "hark: test: bad value for %s: %s (a percentage such as 10 or 2.5)\n", a, v);
        return 2;
    }
    return 1;
}

/* Returns 0 to run, 2 on a usage error, -1 after printing the help. */
static int parse_test_args(test_options *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        cli_respell(argv[i], cli_test_usage); /* --max_total_wer too */
        const char *a = argv[i];
        int r;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli_print(cli_test_usage);
            return -1;
        }
        if ((r = cli_parse_common(&o->cli, argc, argv, &i)) != 0) {
            if (r < 0)
                return 2;
        } else if ((r = parse_test_option(o, argc, argv, &i)) != 0) {
            if (r == 2)
                return 2;
        } else if (a[0] == '-' && a[1]) {
            return test_usage_error("unknown option %s", a);
        } else if (o->input) {
            return test_usage_error("one MANIFEST or DIR at a time, not also %s", a);
        } else {
            o->input = a;
        }
    }
    return o->input ? 0 : test_usage_error("no MANIFEST or DIR given");
}

/* ------------------------------------------------------------ test cases */

static test_case *add_case(test_run *run, const char *name, const char *audio,
                           const char *reference, int line)
{
    if (run->n == run->cap) {
        run->cap = run->cap ? run->cap * 2 : 16;
        run->cases = realloc(run->cases, (size_t)run->cap * sizeof *run->cases);
        if (!run->cases) {
            fprintf(stderr, "hark: test: out of memory\n");
            exit(1);
        }
    }
    test_case *c = &run->cases[run->n++];
    memset(c, 0, sizeof *c);
    c->name = dup_str(name);
    c->audio = dup_str(audio);
    c->reference = dup_str(reference);
    c->line = line;
    c->baseline_wer = -1;
    return c;
}

/* A relative path in a manifest is relative to the manifest's directory. */
static void resolve_path(const char *manifest, const char *path, char *out, size_t n)
{
    const char *slash = strrchr(manifest, '/');
    if (path[0] == '/' || !slash)
        snprintf(out, n, "%s", path);
    else
        snprintf(out, n, "%.*s/%s", (int)(slash - manifest), manifest, path);
}

static int is_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\v' && *s != '\f')
            return 0;
    return 1;
}

/* One manifest line (already cut at its end): 0, or -1 after printing why not. */
static int parse_manifest_line(test_run *run, const char *manifest, char *line, int no)
{
    char audio[PATH_MAX + 1024];
    size_t len = strlen(line);
    if (len && line[len - 1] == '\r')
        line[--len] = 0; /* files edited on Windows */
    if (line[0] == '#' || is_blank(line))
        return 0;
    char *tab = strchr(line, '\t');
    if (!tab || tab == line) {
        fprintf(stderr, "hark: test: %s:%d: %s\n", manifest, no,
                tab ? "no audio path before the tab"
                    : "expected audio_path<TAB>transcript, found no tab");
        return -1;
    }
    *tab = 0;
    resolve_path(manifest, line, audio, sizeof audio);
    add_case(run, line, audio, tab + 1, no);
    return 0;
}

static int load_manifest(test_run *run, const char *path)
{
    hark_error e;
    char *data;
    size_t size;
    if (hark_read_file(path, &data, &size, &e) != 0) {
        fprintf(stderr, "hark: test: %s\n", e.msg);
        return -1;
    }
    int rc = 0, no = 1;
    for (char *line = data; line && !rc; no++) {
        char *nl = memchr(line, '\n', size - (size_t)(line - data));
        if (nl)
            *nl = 0;
        rc = parse_manifest_line(run, path, line, no);
        line = nl ? nl + 1 : NULL;
    }
    free(data);
    return rc;
}

/* DIR/x.wav with DIR/x.txt beside it; an audio file without one is skipped
 * with a warning (a directory may hold other audio). */
static void add_dir_case(test_run *run, const char *dir, const char *name)
{
    char audio[PATH_MAX + 300], txt[PATH_MAX + 300];
    hark_error e;
    char *text;
    size_t size;
    snprintf(audio, sizeof audio, "%s/%s", dir, name);
    snprintf(txt, sizeof txt, "%s/%.*s.txt", dir, (int)(strrchr(name, '.') - name), name);
    if (access(txt, F_OK) != 0) {
        fprintf(stderr, "hark: test: %s: no %s beside it, skipped\n", audio, strrchr(txt, '/') + 1);
        return;
    }
    if (hark_read_file(txt, &text, &size, &e) != 0) {
        fprintf(stderr, "hark: test: %s\n", e.msg); /* fails the run when scored */
        add_case(run, name, audio, "", 0)->error = dup_str(e.msg);
        return;
    }
    add_case(run, name, audio, text, 0);
    free(text);
}

static int load_dir(test_run *run, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *ent;
    if (!d) {
        fprintf(stderr, "hark: test: %s: cannot open the directory\n", dir);
        return -1;
    }
    while ((ent = readdir(d)) != NULL)
        if (ent->d_name[0] != '.' && cli_is_audio_name(ent->d_name))
            add_dir_case(run, dir, ent->d_name);
    closedir(d);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const test_case *)a)->name, ((const test_case *)b)->name);
}

/* Sorted by name, so runs and reports are in one order; names are the
 * baseline's keys, so each may appear once. */
static int sort_cases(test_run *run, const char *input)
{
    if (run->n > 1) /* qsort wants a non-NULL array even for nothing */
        qsort(run->cases, (size_t)run->n, sizeof *run->cases, by_name);
    for (int i = 1; i < run->n; i++) {
        const test_case *a = &run->cases[i - 1], *b = &run->cases[i];
        if (strcmp(a->name, b->name) == 0) {
            int first = a->line < b->line ? a->line : b->line;
            int second = a->line < b->line ? b->line : a->line;
            fprintf(stderr, "hark: test: %s:%d: %s is listed twice (also on line %d)\n", input,
                    second, a->name, first);
            return -1;
        }
    }
    if (run->n == 0)
        fprintf(stderr, "hark: test: %s: no test cases in it\n", input);
    return run->n ? 0 : -1;
}

static int load_cases(test_run *run, const char *input)
{
    struct stat st;
    int rc = stat(input, &st) == 0 && S_ISDIR(st.st_mode) ? load_dir(run, input)
                                                           : load_manifest(run, input);
    return rc ? rc : sort_cases(run, input);
}

/* ------------------------------------------------------------ baseline */

static int baseline_entry_ok(const cJSON *f)
{
    return cJSON_IsString(cJSON_GetObjectItemCaseSensitive(f, "path")) &&
           cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(f, "wer"));
}

/* A previous --report; checked whole before any transcription starts. */
static int load_baseline(test_options *o)
{
    hark_error e;
    char *text;
    size_t size;
    if (!o->baseline_path)
        return 0;
    if (hark_read_file(o->baseline_path, &text, &size, &e) != 0) {
        fprintf(stderr, "hark: test: %s\n", e.msg);
        return -1;
    }
    o->baseline = cJSON_ParseWithLength(text, size);
    free(text);
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(o->baseline, "files"), *f;
    int ok = cJSON_IsArray(files);
    cJSON_ArrayForEach(f, files)
    {
        ok = ok && baseline_entry_ok(f);
    }
    if (!ok)
        fprintf(stderr, "hark: test: %s: not a hark test --report (files with path and wer)\n",
                o->baseline_path);
    return ok ? 0 : -1;
}

/* The file's WER in the baseline, or -1 when the baseline does not have it. */
static double baseline_wer_of(const cJSON *baseline, const char *name)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(baseline, "files"))
    {
        if (strcmp(cJSON_GetObjectItemCaseSensitive(f, "path")->valuestring, name) == 0)
            return cJSON_GetObjectItemCaseSensitive(f, "wer")->valuedouble;
    }
    return -1;
}

/* ------------------------------------------------------------ transcribing and scoring */

/* The transcript as `hark FILE` prints it, its lines joined by spaces: what
 * a golden file is usually made from. */
static char *hypothesis_of(const hark_context *ctx)
{
    char *t = hark_format_output(ctx, "txt", NULL);
    if (!t)
        return dup_str("");
    for (char *p = t; *p; p++)
        if (*p == '\n')
            *p = ' ';
    for (size_t n = strlen(t); n > 0 && t[n - 1] == ' ';)
        t[--n] = 0;
    return t;
}

static void transcribe_case(hark_context *ctx, test_case *c)
{
    double t0 = hark_now_s();
    if (hark_transcribe_file(ctx, c->audio) != 0)
        c->error = dup_str(hark_last_error(ctx));
    else
        c->hypothesis = hypothesis_of(ctx);
    c->seconds = hark_now_s() - t0;
}

/* A file without a hypothesis scores as an empty one: every word deleted. */
static void score_case(test_case *c)
{
    c->ref_norm = hark_normalize_text(c->reference);
    c->hyp_norm = hark_normalize_text(c->hypothesis ? c->hypothesis : "");
    if (!c->ref_norm || !c->hyp_norm || hark_word_edits(c->ref_norm, c->hyp_norm, &c->words) ||
        hark_char_edits(c->ref_norm, c->hyp_norm, &c->chars)) {
        fprintf(stderr, "hark: test: out of memory\n");
        exit(1);
    }
    c->wer = hark_error_rate(hark_edit_count(&c->words), c->words.ref);
    c->cer = hark_error_rate(hark_edit_count(&c->chars), c->chars.ref);
}

static void add_edits(hark_edits *sum, const hark_edits *e)
{
    sum->ref += e->ref, sum->hyp += e->hyp;
    sum->sub += e->sub, sum->del += e->del, sum->ins += e->ins;
}

static int run_cases(const test_options *o, test_run *run)
{
    hark_params params = o->cli.params;
    hark_vad *vad;
    hark_model *model = cli_load_models(&o->cli, &vad);
    if (!model)
        return -1;
    params.vad.model = vad;
    hark_context *ctx = hark_context_new(model, &params);
    if (!ctx) {
        fprintf(stderr, "hark: test: cannot create a transcription context\n");
        hark_model_free(model);
        hark_vad_free(vad);
        return -1;
    }
    for (int i = 0; i < run->n; i++) {
        test_case *c = &run->cases[i];
        if (!c->error)
            transcribe_case(ctx, c);
        score_case(c);
        add_edits(&run->words, &c->words);
        add_edits(&run->chars, &c->chars);
    }
    hark_context_free(ctx);
    hark_model_free(model);
    hark_vad_free(vad);
    /* totals are summed edits over summed reference lengths, not a mean of rates */
    run->wer = hark_error_rate(hark_edit_count(&run->words), run->words.ref);
    run->cer = hark_error_rate(hark_edit_count(&run->chars), run->chars.ref);
    return 0;
}

/* ------------------------------------------------------------ checks */

/* Two percentages printed with enough decimals to tell them apart. */
static void percent_pair(double a, double b, char *sa, char *sb, size_t n)
{
    for (int digits = 1; digits <= 4; digits++) {
        snprintf(sa, n, "%.*f%%", digits, a);
        snprintf(sb, n, "%.*f%%", digits, b);
        if (strcmp(sa, sb) != 0)
            return;
    }
}

static void fail_case(test_case *c, const char *fmt, const char *a, const char *b)
{
    if (c->n_reasons < MAX_REASONS) {
        snprintf(c->reasons[c->n_reasons], sizeof c->reasons[0], fmt, a, b);
        fprintf(stderr, "hark: test: %s: %s\n", c->name, c->reasons[c->n_reasons]);
        c->n_reasons++;
    }
}

/* Rates are compared with a little slack: a baseline read back from JSON may
 * differ from this run's value in the last bit. */
static void check_case(const test_options *o, test_case *c)
{
    char a[32], b[32];
    if (c->error) {
        fail_case(c, "%s%s", c->error, "");
        return;
    }
    if (o->max_wer >= 0 && c->wer * 100 > o->max_wer + 1e-9) {
        percent_pair(c->wer * 100, o->max_wer, a, b, sizeof a);
        fail_case(c, "WER %s > %s", a, b);
    }
    if (o->baseline)
        c->baseline_wer = baseline_wer_of(o->baseline, c->name);
    if (c->baseline_wer >= 0 && c->wer > c->baseline_wer + 1e-9) {
        percent_pair(c->baseline_wer * 100, c->wer * 100, a, b, sizeof a);
        fail_case(c, "WER got worse than the baseline (%s -> %s)", a, b);
    }
}

static void check_run(const test_options *o, test_run *run)
{
    char a[32], b[32];
    for (int i = 0; i < run->n; i++) {
        check_case(o, &run->cases[i]);
        run->failed += run->cases[i].n_reasons > 0;
    }
    if (o->max_total_wer >= 0 && run->wer * 100 > o->max_total_wer + 1e-9) {
        percent_pair(run->wer * 100, o->max_total_wer, a, b, sizeof a);
        snprintf(run->total_reason, sizeof run->total_reason, "total WER %s > %s", a, b);
        fprintf(stderr, "hark: test: %s\n", run->total_reason);
    }
}

/* ------------------------------------------------------------ the table */

static const char *result_of(const test_case *c, int have_baseline)
{
    if (c->n_reasons)
        return "FAIL";
    return have_baseline && c->baseline_wer < 0 ? "PASS (new)" : "PASS";
}

static void print_table(const test_options *o, const test_run *run)
{
    int w = 5;
    for (int i = 0; i < run->n; i++)
        if ((int)strlen(run->cases[i].name) > w)
            w = (int)strlen(run->cases[i].name);
    printf("%-*s  %7s  %7s  %9s  %s\n", w, "file", "WER %", "CER %", "ref words", "result");
    for (int i = 0; i < run->n; i++) {
        const test_case *c = &run->cases[i];
        printf("%-*s  %7.1f  %7.1f  %9ld  %s\n", w, c->name, c->wer * 100, c->cer * 100,
               c->words.ref, result_of(c, o->baseline != NULL));
    }
    printf("%-*s  %7.1f  %7.1f  %9ld  %s\n", w, "TOTAL", run->wer * 100, run->cer * 100,
           run->words.ref, cli_test_run_passed(run) ? "PASS" : "FAIL");
}

/* What was heard against what was expected, normalised, one line per failure. */
static void print_failures(const test_run *run)
{
    for (int i = 0; i < run->n; i++) {
        const test_case *c = &run->cases[i];
        if (!c->n_reasons)
            continue;
        if (c->error)
            printf("FAIL %s: %s\n", c->name, c->error);
        else
            printf("FAIL %s: hypothesis \"%s\" reference \"%s\"\n", c->name, c->hyp_norm,
                   c->ref_norm);
    }
    printf("%d of %d files failed\n", run->failed, run->n);
}

/* ------------------------------------------------------------ main */

static void free_run(test_run *run)
{
    for (int i = 0; i < run->n; i++) {
        test_case *c = &run->cases[i];
        free(c->name), free(c->audio), free(c->reference), free(c->hypothesis);
        free(c->error), free(c->ref_norm), free(c->hyp_norm);
    }
    free(run->cases);
}

/* Loads the cases and the baseline, transcribes and scores, reports. */
static int test_all(test_options *o, test_run *run)
{
    if (load_cases(run, o->input) || load_baseline(o) || run_cases(o, run))
        return 1;
    check_run(o, run);
    print_table(o, run);
    if (!cli_test_run_passed(run))
        print_failures(run);
    int report_failed = o->report_path && cli_test_write_report(o, run);
    int junit_failed = o->junit_path && cli_test_write_junit(o, run); /* tried even so */
    return cli_test_run_passed(run) && !report_failed && !junit_failed ? 0 : 1;
}

int cli_test_main(int argc, char **argv)
{
    test_options o = {0};
    test_run run = {0};
    cli_default_options(&o.cli);
    o.max_wer = o.max_total_wer = -1;
    int rc = parse_test_args(&o, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    cli_default_threads(&o.cli);
    /* A golden transcript must come out exactly unless a limit or a baseline
     * says how much may differ. */
    if (o.max_wer < 0 && !o.baseline_path)
        o.max_wer = 0;
    rc = test_all(&o, &run);
    free_run(&run);
    cJSON_Delete(o.baseline);
    return rc;
}
