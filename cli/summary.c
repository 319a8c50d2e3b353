/* hark summary OUT [INPUTS...] [-r] [--json]: one report on a corpus split over
 * processes, machines and shards, from every ledger under OUT/.hark-ledger/:
 * files done, failed (with why) and missing (against INPUTS, walked as a batch
 * walks them), hours of audio, wall time and real-time factor per host, files
 * done twice or with results that disagree, and the shards to resubmit. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inputs.h"
#include "ledger.h"

/* A process, told apart by host, pid and start time. */
typedef struct run {
    const char *host, *shard;
    double start, last;
    long pid;
    int ended;
} run;

typedef struct host {
    const char *name;
    int runs, files;
    double audio, wall;
} host;

/* A file's outcome over all its records. */
typedef struct outcome {
    const cli_record *last;   /* its latest done or failed line; else skipped; NULL */
    int n_done, disagree;     /* done lines; done with other model/options, or failed too */
} outcome;

typedef struct report {
    cli_records r;
    run *runs;
    host *hosts;
    int n_runs, n_hosts, shard_n;
    const char *balance;
    int done, failed, missing, duplicates, conflicts;
    double audio;
    cli_files inputs;
    int *resubmit;            /* shard_n flags */
    cJSON *json;              /* --json: the report built as it goes */
} report;

static run *run_of(report *p, const cli_record *r)
{
    for (int i = 0; i < p->n_runs; i++)
        if (p->runs[i].pid == r->pid && p->runs[i].start == r->run &&
            !strcmp(p->runs[i].host, r->host ? r->host : ""))
            return &p->runs[i];
    run *v = realloc(p->runs, (size_t)(p->n_runs + 1) * sizeof *v);
    if (!v)
        return NULL;
    p->runs = v;
    v[p->n_runs] = (run){r->host ? r->host : "", r->shard ? r->shard : "", r->run, r->run, r->pid, 0};
    return &v[p->n_runs++];
}

static host *host_of(report *p, const char *name)
{
    for (int i = 0; i < p->n_hosts; i++)
        if (!strcmp(p->hosts[i].name, name))
            return &p->hosts[i];
    host *v = realloc(p->hosts, (size_t)(p->n_hosts + 1) * sizeof *v);
    if (!v)
        return NULL;
    p->hosts = v;
    v[p->n_hosts] = (host){name, 0, 0, 0, 0};
    return &v[p->n_hosts++];
}

/* Processes and hosts: a process's wall time is from its start to its last line,
 * both by its own host's clock, so clocks that disagree between hosts do not
 * matter. */
static int tally_runs(report *p)
{
    for (size_t i = 0; i < p->r.n; i++) {
        const cli_record *r = &p->r.v[i];
        run *u = run_of(p, r);
        int k, n;
        if (!u)
            return -1;
        u->last = r->t > u->last ? r->t : u->last;
        u->ended |= !strcmp(r->status, "end");
        if (r->shard && sscanf(r->shard, "%d/%d", &k, &n) == 2 && n > p->shard_n)
            p->shard_n = n, p->balance = r->balance;
    }
    for (int i = 0; i < p->n_runs; i++) {
        host *h = host_of(p, p->runs[i].host);
        if (!h)
            return -1;
        h->runs++;
        h->wall += p->runs[i].last - p->runs[i].start;
    }
    return 0;
}

/* The records of one name, from *i on (sorted by name then time). */
static outcome outcome_of(const cli_records *rs, size_t *i)
{
    outcome o = {NULL, 0, 0};
    const cli_record *first_done = NULL, *skipped = NULL;
    int failed = 0;
    const char *name = rs->v[*i].name;
    for (; *i < rs->n && rs->v[*i].name && !strcmp(rs->v[*i].name, name); (*i)++) {
        const cli_record *r = &rs->v[*i];
        if (!strcmp(r->status, "skipped"))
            skipped = r;
        else if (!strcmp(r->status, "failed"))
            o.last = r, failed = 1;
        else if (!strcmp(r->status, "done")) {
            o.last = r, o.n_done++;
            first_done = first_done ? first_done : r;
            o.disagree |= strcmp(r->model ? r->model : "", first_done->model ? first_done->model : "") ||
                          strcmp(r->options ? r->options : "", first_done->options ? first_done->options : "");
        }
    }
    o.disagree |= failed && o.n_done;
    o.last = o.last ? o.last : skipped;
    return o;
}

static void add_failure(report *p, const cli_record *r)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "path", r->path ? r->path : "");
    cJSON_AddStringToObject(f, "error", r->error ? r->error : "");
    cJSON_AddStringToObject(f, "host", r->host ? r->host : "");
    cJSON_AddStringToObject(f, "shard", r->shard ? r->shard : "");
    cJSON_AddItemToArray(cJSON_GetObjectItem(p->json, "failures"), f);
}

static void add_named(report *p, const char *list, const char *name, const char *key, cJSON *v)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "name", name);
    cJSON_AddItemToObject(f, key, v);
    cJSON_AddItemToArray(cJSON_GetObjectItem(p->json, list), f);
}

/* Every output name in the ledgers: its last result counts once, wherever and
 * however often it was done. */
static void tally_files(report *p)
{
    for (size_t i = 0; i < p->r.n;) {
        if (!p->r.v[i].name) {
            i++;
            continue; /* a run's end */
        }
        outcome o = outcome_of(&p->r, &i);
        const cli_record *r = o.last;
        if (!strcmp(r->status, "failed")) {
            p->failed++;
            add_failure(p, r);
        } else {
            const cli_record *d = cli_records_last(&p->r, r->name, 0);
            host *h = d ? host_of(p, d->host ? d->host : "") : NULL;
            p->done++;
            p->audio += d ? d->audio : 0;
            if (h)
                h->files++, h->audio += d->audio;
        }
        if (o.n_done > 1 && ++p->duplicates)
            add_named(p, "duplicates", r->name, "times", cJSON_CreateNumber(o.n_done));
        if (o.disagree && ++p->conflicts)
            add_named(p, "conflicts", r->name, "why",
                      cJSON_CreateString(o.n_done > 1 || !strcmp(r->status, "done")
                                             ? "done with different models or options, or failed too"
                                             : "failed after it was done"));
    }
}

/* Against the inputs: files with no line in any ledger, and their shards. */
static int tally_missing(report *p)
{
    int *shard = malloc((p->inputs.n ? p->inputs.n : 1) * sizeof *shard);
    if (!shard || (p->shard_n && cli_assign_shards(&p->inputs, p->shard_n, p->balance &&
                                                   !strcmp(p->balance, "duration"), shard, NULL))) {
        free(shard);
        return -1;
    }
    for (size_t i = 0; i < p->inputs.n; i++) {
        const cli_file *f = &p->inputs.v[i];
        if (cli_records_last(&p->r, f->name, 2))
            continue;
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "path", f->path);
        if (p->shard_n) {
            cJSON_AddNumberToObject(m, "shard", shard[i]);
            p->resubmit[shard[i] - 1] = 1;
        }
        cJSON_AddItemToArray(cJSON_GetObjectItem(p->json, "missing_files"), m);
        p->missing++;
    }
    free(shard);
    return 0;
}

/* A shard whose latest process left no end line was stopped (or runs still);
 * one that never ran has no line at all. */
static void tally_shards(report *p)
{
    for (int k = 1; k <= p->shard_n; k++) {
        const run *latest = NULL;
        char tag[32];
        snprintf(tag, sizeof tag, "%d/%d", k, p->shard_n);
        for (int i = 0; i < p->n_runs; i++)
            if (!strcmp(p->runs[i].shard, tag) && (!latest || p->runs[i].start > latest->start))
                latest = &p->runs[i];
        if (!latest || !latest->ended)
            p->resubmit[k - 1] = 1;
    }
    cJSON *a = cJSON_AddArrayToObject(p->json, "resubmit");
    for (int k = 1; k <= p->shard_n; k++)
        if (p->resubmit[k - 1])
            cJSON_AddItemToArray(a, cJSON_CreateNumber(k));
}

static void add_totals(report *p)
{
    cJSON *j = p->json, *hosts = cJSON_AddArrayToObject(j, "hosts");
    cJSON_AddNumberToObject(j, "files", p->done + p->failed + p->missing);
    cJSON_AddNumberToObject(j, "done", p->done);
    cJSON_AddNumberToObject(j, "failed", p->failed);
    cJSON_AddNumberToObject(j, "missing", p->missing);
    cJSON_AddNumberToObject(j, "audio_hours", p->audio / 3600);
    cJSON_AddNumberToObject(j, "shards", p->shard_n);
    cJSON_AddNumberToObject(j, "torn_lines", p->r.torn);
    for (int i = 0; i < p->n_hosts; i++) {
        const host *h = &p->hosts[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "host", h->name);
        cJSON_AddNumberToObject(o, "runs", h->runs);
        cJSON_AddNumberToObject(o, "files", h->files);
        cJSON_AddNumberToObject(o, "audio_s", h->audio);
        cJSON_AddNumberToObject(o, "wall_s", h->wall);
        cJSON_AddNumberToObject(o, "rtf", h->audio > 0 ? h->wall / h->audio : 0);
        cJSON_AddItemToArray(hosts, o);
    }
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *o, const char *key)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItem(o, key));
}

/* The report for people, from its JSON. */
static void print_text(const report *p, const char *out)
{
    const cJSON *j = p->json, *e;
    printf("%s: %d files: %d done, %d failed, %d missing; %.3f h of audio\n", out,
           p->done + p->failed + p->missing, p->done, p->failed, p->missing, p->audio / 3600);
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "hosts"))
        printf("host %s: %g runs, %g files, %.3f h of audio in %.1f s, real-time factor %.3f\n",
               str(e, "host"), num(e, "runs"), num(e, "files"), num(e, "audio_s") / 3600,
               num(e, "wall_s"), num(e, "rtf"));
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "failures"))
        printf("failed: %s\n", str(e, "error"));
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "duplicates"))
        printf("done %g times: %s\n", num(e, "times"), str(e, "name"));
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "conflicts"))
        printf("conflicting: %s: %s\n", str(e, "name"), str(e, "why"));
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "missing_files"))
        printf(p->shard_n ? "missing: %s (shard %g)\n" : "missing: %s\n", str(e, "path"),
               num(e, "shard"));
    if (p->r.torn)
        printf("lines cut short: %d\n", p->r.torn);
    if (p->shard_n) {
        printf("shards to resubmit:");
        int any = 0;
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "resubmit"))
            printf(" %g", e->valuedouble), any = 1;
        printf("%s (of %d)\n", any ? "" : " none", p->shard_n);
    }
}

static int summary_usage(const char *msg)
{
    fprintf(stderr, "hark: %s (usage: hark summary OUT [INPUTS...] [-r] [--json])\n", msg);
    return 2;
}

static int build(report *p, const char *out, char **inputs, int n, int recursive)
{
    char err[4200];
    if (cli_ledger_read(out, &p->r, err, sizeof err)) {
        fprintf(stderr, "hark: %s\n", err);
        return -1;
    }
    if (!p->r.n) {
        fprintf(stderr, "hark: %s: no ledger (%s/%s/*.jsonl): not a batch's -o\n", out, out,
                CLI_LEDGER_DIR);
        return -1;
    }
    p->json = cJSON_CreateObject();
    cJSON_AddArrayToObject(p->json, "failures");
    cJSON_AddArrayToObject(p->json, "duplicates");
    cJSON_AddArrayToObject(p->json, "conflicts");
    cJSON_AddArrayToObject(p->json, "missing_files");
    if (tally_runs(p) || !(p->resubmit = calloc((size_t)p->shard_n + 1, sizeof *p->resubmit)))
        return -1;
    tally_files(p);
    cli_collect_inputs(&p->inputs, inputs, n, recursive);
    if (n && tally_missing(p))
        return -1;
    tally_shards(p);
    add_totals(p);
    return p->inputs.failed ? -1 : 0;
}

int cli_summary_main(int argc, char **argv)
{
    int json = 0, recursive = 0, n = 0;
    const char *out = NULL;
    char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    for (int i = 1; inputs && i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "-r") || !strcmp(argv[i], "--recursive"))
            recursive = 1;
        else if (argv[i][0] == '-' && argv[i][1]) {
            free(inputs);
            return summary_usage("unknown option of hark summary");
        } else if (!out)
            out = argv[i];
        else
            inputs[n++] = argv[i];
    }
    if (!out) {
        free(inputs);
        return summary_usage("no output directory");
    }
    report p = {0};
    int rc = build(&p, out, inputs, n, recursive);
    if (!rc && json) {
        char *s = cJSON_Print(p.json);
        printf("%s\n", s ? s : "{}");
        cJSON_free(s);
    } else if (!rc)
        print_text(&p, out);
    int complete = !rc && !p.failed && !p.missing && !p.conflicts;
    cJSON_Delete(p.json);
    cli_records_free(&p.r);
    cli_files_free(&p.inputs);
    free(p.runs), free(p.hosts), free(p.resubmit), free(inputs);
    return rc ? 2 : complete ? 0 : 1;
}
