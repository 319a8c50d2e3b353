/* Batch ledgers: one file per process under OUT/.hark-ledger/, one JSON line per
 * file.  A process never shares its file, so appends need no locking between
 * machines, which NFS does not give; each line goes out in one write() and is
 * synced before the next file, so a process killed at any point leaves whole
 * lines (a reader still drops one cut short by a full disk, counting it). */
#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "ledger.h"

struct cli_ledger {
    int fd;
    char path[4096];
    char host[256], shard[32], balance[16];
    double run;              /* when this process started, epoch seconds */
    pthread_mutex_t lock;
};

static double epoch_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int cli_make_parents(char *path, char *err, size_t errlen)
{
    for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        struct stat st;
        int bad = mkdir(path, 0777) != 0 && errno != EEXIST;
        if (!bad && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
            bad = 1, errno = ENOTDIR;
        if (bad)
            snprintf(err, errlen, "%s: cannot create directory (%s)", path, strerror(errno));
        *s = '/';
        if (bad)
            return -1;
    }
    return 0;
}

/* "3/4" -> "3of4" for a file name; "" -> "all". */
static void shard_tag(const char *shard, char *out, size_t n)
{
    int k, of;
    if (sscanf(shard, "%d/%d", &k, &of) == 2)
        snprintf(out, n, "%dof%d", k, of);
    else
        snprintf(out, n, "all");
}

cli_ledger *cli_ledger_open(const char *out_dir, const char *shard, const char *balance,
                            char *err, size_t errlen)
{
    cli_ledger *lg = calloc(1, sizeof *lg);
    char tag[32];
    if (!lg) {
        snprintf(err, errlen, "out of memory for the ledger");
        return NULL;
    }
    hark_host_name(lg->host, sizeof lg->host);
    snprintf(lg->shard, sizeof lg->shard, "%s", shard);
    snprintf(lg->balance, sizeof lg->balance, "%s", balance);
    shard_tag(shard, tag, sizeof tag);
    snprintf(lg->path, sizeof lg->path, "%s/%s/%s-%s-%ld.jsonl", out_dir, CLI_LEDGER_DIR,
             lg->host, tag, (long)getpid());
    lg->run = epoch_now();
    pthread_mutex_init(&lg->lock, NULL);
    if (cli_make_parents(lg->path, err, errlen) == 0 &&
        (lg->fd = open(lg->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666)) < 0)
        snprintf(err, errlen, "%s: cannot open (%s)", lg->path, strerror(errno));
    else if (lg->fd >= 0)
        return lg;
    pthread_mutex_destroy(&lg->lock);
    free(lg);
    return NULL;
}

static void add_string(cJSON *j, const char *key, const char *v)
{
    if (v)
        cJSON_AddStringToObject(j, key, v);
}

/* r as one line, with the ledger's own fields; NULL out of memory. */
static char *line_of(const cli_ledger *lg, const cli_record *r)
{
    cJSON *j = cJSON_CreateObject();
    add_string(j, "path", r->path);
    add_string(j, "name", r->name);
    add_string(j, "status", r->status);
    add_string(j, "error", r->error);
    cJSON_AddNumberToObject(j, "size", r->size);
    cJSON_AddNumberToObject(j, "mtime", r->mtime);
    cJSON_AddNumberToObject(j, "audio_s", r->audio);
    cJSON_AddNumberToObject(j, "wall_s", r->wall);
    add_string(j, "model", r->model);
    add_string(j, "options", r->options);
    add_string(j, "host", lg->host);
    add_string(j, "shard", lg->shard);
    add_string(j, "balance", lg->balance);
    cJSON_AddNumberToObject(j, "pid", (double)getpid());
    cJSON_AddNumberToObject(j, "run", lg->run);
    cJSON_AddNumberToObject(j, "t", epoch_now());
    char *s = cJSON_PrintUnformatted(j), *line = s ? malloc(strlen(s) + 2) : NULL;
    if (line)
        sprintf(line, "%s\n", s);
    cJSON_free(s);
    cJSON_Delete(j);
    return line;
}

int cli_ledger_append(cli_ledger *lg, const cli_record *r, char *err, size_t errlen)
{
    char *line = line_of(lg, r);
    if (!line) {
        snprintf(err, errlen, "%s: out of memory", lg->path);
        return -1;
    }
    size_t n = strlen(line);
    pthread_mutex_lock(&lg->lock);
    ssize_t k = write(lg->fd, line, n); /* O_APPEND: whole, at the end */
    int rc = k == (ssize_t)n && fsync(lg->fd) == 0 ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "%s: cannot write (%s)", lg->path,
                 k >= 0 && k < (ssize_t)n ? "short write" : strerror(errno));
    pthread_mutex_unlock(&lg->lock);
    free(line);
    return rc;
}

void cli_ledger_close(cli_ledger *lg)
{
    if (!lg)
        return;
    close(lg->fd);
    pthread_mutex_destroy(&lg->lock);
    free(lg);
}

/* The digest's text: each setting as "name=value;", floats exactly (%a). */
typedef struct digest {
    char s[8192];
    size_t n;
} digest;

static void put(digest *d, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void put(digest *d, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = snprintf(d->s + d->n, sizeof d->s - d->n, "%s=", key);
    if (k > 0 && (size_t)k < sizeof d->s - d->n)
        d->n += (size_t)k;
    k = vsnprintf(d->s + d->n, sizeof d->s - d->n, fmt, ap);
    if (k > 0 && (size_t)k < sizeof d->s - d->n)
        d->n += (size_t)k;
    if (d->n + 1 < sizeof d->s)
        d->s[d->n++] = ';';
    va_end(ap);
}

static const char *or_unset(const char *s) { return s ? s : "\x01"; }

static void put_lists(digest *d, const hark_params *p)
{
    for (int i = 0; i < p->fallback.n_temperatures; i++)
        put(d, "temperature", "%a", p->fallback.temperatures[i]);
    for (int i = 0; i < p->suppress.n_tokens; i++)
        put(d, "suppress", "%d", p->suppress.tokens[i]);
    for (int i = 0; i < p->n_clip_timestamps; i++)
        put(d, "clip", "%a", p->clip_timestamps[i]);
}

unsigned long long cli_options_digest(const cli_options *o)
{
    const hark_params *p = &o->params;
    digest d = {.n = 0};
    put(&d, "decode", "%d %d %s %d %d %a %a %d", p->timestamps, p->search.max_tokens,
        or_unset(p->language), p->translate, p->search.beam_size, p->search.patience, p->search.length_penalty,
        p->search.best_of);
    put(&d, "fallback", "%a %a %a %d", p->fallback.compression_ratio_threshold, p->fallback.logprob_threshold,
        p->fallback.no_speech_threshold, p->prompt.condition_on_previous_text);
    put(&d, "prompt", "%s %d", or_unset(p->prompt.initial), p->prompt.carry_initial);
    put(&d, "regex", "%s", or_unset(p->suppress.regex));
    put(&d, "seed", "%llu", p->search.seed);
    put_lists(&d, p);
    put(&d, "words", "%d %a %s %s", p->words.enabled, p->words.hallucination_silence_threshold,
        or_unset(p->words.prepend_punctuations), or_unset(p->words.append_punctuations));
    put(&d, "layout", "%d %d %d %d %d %d", o->layout.highlight_words, o->layout.max_line_width,
        o->layout.max_line_count, o->layout.max_words_per_line, p->max_len, p->diarize);
    put(&d, "vad", "%d %s %a %d %d %a %d %a", o->vad, or_unset(o->vad_model), p->vad.threshold,
        p->vad.min_speech_ms, p->vad.min_silence_ms, p->vad.max_speech_s, p->vad.speech_pad_ms,
        p->vad.samples_overlap);
    put(&d, "detect", "%d", o->detect_language);
    return hark_hash(HARK_HASH_START, d.s, d.n);
}
