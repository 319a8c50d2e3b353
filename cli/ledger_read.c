/* Reading every ledger under OUT/.hark-ledger/ into records sorted by output
 * name and time: what a resumed batch checks its files against, and what hark
 * summary reports on. */
#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ledger.h"

static char *string_of(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
}

static double number_of(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* One line as a record; 0, or -1 when it is no ledger line (cut short). */
static int parse_line(const char *s, size_t n, const char *ledger, cli_record *r)
{
    cJSON *j = cJSON_ParseWithLength(s, n);
    memset(r, 0, sizeof *r);
    if (!j || !(r->status = string_of(j, "status"))) {
        cJSON_Delete(j);
        return -1;
    }
    r->path = string_of(j, "path"), r->name = string_of(j, "name");
    r->error = string_of(j, "error"), r->host = string_of(j, "host");
    r->shard = string_of(j, "shard"), r->model = string_of(j, "model");
    r->balance = string_of(j, "balance");
    r->options = string_of(j, "options"), r->ledger = strdup(ledger);
    r->size = number_of(j, "size"), r->mtime = number_of(j, "mtime");
    r->audio = number_of(j, "audio_s"), r->wall = number_of(j, "wall_s");
    r->t = number_of(j, "t"), r->run = number_of(j, "run");
    r->pid = (long)number_of(j, "pid");
    cJSON_Delete(j);
    return 0;
}

static void record_free(cli_record *r)
{
    free(r->path), free(r->name), free(r->status), free(r->error), free(r->host);
    free(r->shard), free(r->balance), free(r->model), free(r->options), free(r->ledger);
}

static int add(cli_records *rs, const cli_record *r)
{
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? 2 * rs->cap : 256;
        cli_record *v = realloc(rs->v, cap * sizeof *v);
        if (!v)
            return -1;
        rs->v = v, rs->cap = cap;
    }
    rs->v[rs->n++] = *r;
    return 0;
}

static int read_ledger(const char *path, const char *name, cli_records *rs, char *err,
                       size_t errlen)
{
    char *data;
    size_t size;
    hark_error e = {{0}};
    if (hark_read_file(path, &data, &size, &e)) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    int rc = 0;
    for (char *s = data, *nl; !rc && s < data + size; s = nl + 1) {
        nl = memchr(s, '\n', (size_t)(data + size - s));
        nl = nl ? nl : data + size;
        cli_record r;
        if (nl == s)
            continue;
        if (parse_line(s, (size_t)(nl - s), name, &r))
            rs->torn++;
        else if ((rc = add(rs, &r)) != 0)
            record_free(&r), snprintf(err, errlen, "%s: out of memory", path);
    }
    free(data);
    return rc;
}

static int by_name_time(const void *a, const void *b)
{
    const cli_record *x = a, *y = b;
    int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
    return c ? c : (x->t > y->t) - (x->t < y->t);
}

static int is_ledger(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n > 6 && strcmp(name + n - 6, ".jsonl") == 0;
}

int cli_ledger_read(const char *out_dir, cli_records *rs, char *err, size_t errlen)
{
    char dir[4096], path[8192];
    snprintf(dir, sizeof dir, "%s/%s", out_dir, CLI_LEDGER_DIR);
    memset(rs, 0, sizeof *rs);
    DIR *d = opendir(dir);
    if (!d && errno == ENOENT)
        return 0;
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        if (!is_ledger(e->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        rc = read_ledger(path, e->d_name, rs, err, errlen);
    }
    closedir(d);
    if (rs->n)
        qsort(rs->v, rs->n, sizeof *rs->v, by_name_time);
    return rc;
}

void cli_records_free(cli_records *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        record_free(&rs->v[i]);
    free(rs->v);
    memset(rs, 0, sizeof *rs);
}

static int name_cmp(const void *key, const void *elem)
{
    const cli_record *r = elem;
    return strcmp(key, r->name ? r->name : "");
}

const cli_record *cli_records_last(const cli_records *rs, const char *name, int any)
{
    const cli_record *hit = rs->n ? bsearch(name, rs->v, rs->n, sizeof *rs->v, name_cmp) : NULL;
    if (!hit)
        return NULL;
    size_t i = (size_t)(hit - rs->v);
    while (i + 1 < rs->n && name_cmp(name, &rs->v[i + 1]) == 0)
        i++; /* the last of its run: the latest */
    for (size_t k = i + 1; k-- > 0 && name_cmp(name, &rs->v[k]) == 0;)
        if (!strcmp(rs->v[k].status, "done") || (any && !strcmp(rs->v[k].status, "skipped")) ||
            (any > 1 && !strcmp(rs->v[k].status, "failed")))
            return &rs->v[k];
    return NULL;
}
