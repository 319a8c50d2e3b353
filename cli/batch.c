/* Transcribing the inputs named on the command line.
 *
 * The file list (inputs.c), or the slice of it a shard keeps (shard.c).  With
 * -o, a file whose outputs all exist is skipped (so a killed batch resumes),
 * and the outputs of a file found in a walked directory mirror its relative
 * subdirectory under the output directory (so a/x.wav and b/x.wav do not
 * collide).  -j workers share the one read-only model, each with its own
 * context; without -o (one input: transcribe.c sends several to the current
 * directory), the transcript goes to stdout, in input order in any case.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "face.h"
#include "inputs.h"
#include "ledger.h"

enum { MAX_FORMATS = 8 };

typedef cli_file item;
typedef cli_files list;

typedef struct batch batch;

/* A worker: its context, and how far into its current file it is. */
typedef struct worker_arg {
    batch *b;
    hark_context *ctx;
    item *it;           /* the file being transcribed */
    double t0;          /* when it was taken */
    int printed;        /* its segments printed so far: the next is segment printed */
    double done, total; /* seconds of the current file transcribed, of its length
                         * (under the batch's lock) */
} worker_arg;

struct batch {
    const cli_options *o;
    const hark_model *model;
    char fmt[MAX_FORMATS][8];
    int n_fmt;
    item *v;                   /* the files to transcribe, in order       */
    size_t n, next, printed;   /* count, next to hand out, next to print  */
    size_t finished;           /* done or failed so far                   */
    int done, failed, skipped; /* failed includes inputs that never ran   */
    double audio, t0;          /* seconds of audio transcribed; start time */
    int report, bar, bar_shown; /* progress and summary; as a bar; drawn  */
    int stream_txt;            /* one file to stdout as txt: line by line */
    worker_arg *workers;       /* their progress within files, for the bar */
    int n_workers;
    hark_model *model_loaded;  /* loaded early when the ledger needs its identity */
    hark_vad *vad;
    cli_ledger *ledger;        /* with -o: this process's, NULL when it cannot be had */
    cli_records records;       /* every process's, read at the start      */
    char model_id[20], options_id[20]; /* what this run's records say   */
    int ledger_failed;         /* a line could not be written: exit 1     */
    pthread_mutex_t lock;      /* everything above that workers change    */
};

/* ---- outputs */

static int out_path(const batch *b, const item *it, const char *fmt, char *out, size_t n)
{
    int k = b->o->out_file ? snprintf(out, n, "%s.%s", b->o->out_file, fmt)
                           : snprintf(out, n, "%s/%s.%s", b->o->out_dir, it->name, fmt);
    return k > 0 && (size_t)k < n ? 0 : -1;
}

static int outputs_exist(const batch *b, const item *it)
{
    char path[PATH_MAX];
    struct stat st;
    for (int f = 0; f < b->n_fmt; f++)
        if (out_path(b, it, b->fmt[f], path, sizeof path) || stat(path, &st) != 0 ||
            !S_ISREG(st.st_mode))
            return 0;
    return 1;
}

/* SIGINT/SIGTERM with -o: exit at once unless outputs are being written, else
 * as soon as the last writer has renamed its files, so that no temporary or
 * partial output set is left behind.  Sequentially consistent atomics: either
 * the handler sees a writer, or the writer sees the stop. */
static atomic_int g_stop, g_writing;

static void on_signal(int sig)
{
    atomic_store(&g_stop, sig);
    if (atomic_load(&g_writing) == 0)
        _exit(128 + sig);
}

static void writes_end(void)
{
    int sig;
    if (atomic_fetch_sub(&g_writing, 1) == 1 && (sig = atomic_load(&g_stop)))
        _exit(128 + sig);
}

static int writes_begin(void)
{
    atomic_fetch_add(&g_writing, 1);
    if (!atomic_load(&g_stop))
        return 0;
    writes_end();
    return -1;
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART | SA_RESETHAND; /* a second signal kills at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* ---- progress, on stderr */

/* 3725 s -> "1:02:05", 65 s -> "1:05". */
static void clock_text(double s, char *out, size_t n)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(out, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(out, n, "%ld:%02ld", t / 60, t % 60);
}

/* One line redrawn in place: files, audio done, ETA.  Files count whole when
 * finished and in part while under way (their windows so far over their
 * length); the ETA assumes the files to come take as long as those so far,
 * as their lengths are not known before they are read. */
static void bar_draw(batch *b)
{
    enum { WIDTH = 24 };
    char bar[WIDTH + 1], audio[32], eta[32] = "?";
    double seconds = b->audio, files = (double)b->finished;
    for (int i = 0; i < b->n_workers; i++) {
        seconds += b->workers[i].done;
        files += b->workers[i].total > 0 ? b->workers[i].done / b->workers[i].total : 0;
    }
    size_t fill = b->n ? (size_t)(files * WIDTH / (double)b->n) : WIDTH;
    memset(bar, '#', fill);
    memset(bar + fill, '.', WIDTH - fill);
    bar[WIDTH] = 0;
    clock_text(seconds, audio, sizeof audio);
    if (files > 0)
        clock_text((hark_now_s() - b->t0) / files * ((double)b->n - files), eta, sizeof eta);
    fprintf(stderr, "\r[%s] %zu/%zu files, %s audio, ETA %s\033[K", bar, b->finished, b->n, audio,
            eta);
    b->bar_shown = 1;
}

static void bar_clear(batch *b)
{
    if (b->bar_shown)
        fputs("\r\033[K", stderr);
    b->bar_shown = 0;
}

/* The library's one-line message, clear of the bar. */
static void say_error(batch *b, const char *msg)
{
    pthread_mutex_lock(&b->lock);
    hark_stderr_lock(); /* not lost while an MPEG decode mutes stderr */
    bar_clear(b);
    fprintf(stderr, "hark: %s\n", msg);
    if (b->bar)
        bar_draw(b);
    hark_stderr_unlock();
    pthread_mutex_unlock(&b->lock);
}

/* Without -o: every transcript whose predecessors are all finished. */
static void print_ready(batch *b)
{
    for (; b->printed < b->n && b->v[b->printed].state != PENDING; b->printed++) {
        item *it = &b->v[b->printed];
        if (it->text) {
            bar_clear(b);
            cli_print(it->text);
            free(it->text);
            it->text = NULL;
        }
    }
    cli_flush_stdout();
}

/* Worker w is through with file it: the file counts whole from here. */
static void finish(worker_arg *w, item *it, int ok, double audio, double secs)
{
    batch *b = w->b;
    pthread_mutex_lock(&b->lock);
    w->done = w->total = 0;
    it->state = ok ? DONE : FAILED;
    b->finished++;
    ok ? b->done++ : b->failed++;
    b->audio += ok ? audio : 0;
    hark_stderr_lock();
    print_ready(b);
    if (b->report && b->bar)
        bar_draw(b);
    else if (b->report && ok)
        fprintf(stderr, "[%zu/%zu] %s: %.1f s audio, %.1f s\n", b->finished, b->n, it->path,
                audio, secs);
    hark_stderr_unlock();
    pthread_mutex_unlock(&b->lock);
}

/* ---- the ledger */

/* it's line in this process's ledger; a line that cannot be written is said
 * once, and the exit status becomes 1 (the outputs themselves are whole). */
static void log_file(batch *b, const item *it, const char *status, double audio, double wall)
{
    struct stat st;
    char err[4200];
    int known = stat(it->path, &st) == 0;
    cli_record r = {.path = it->path, .name = it->name, .status = (char *)status,
                    .error = it->error, .model = b->model_id, .options = b->options_id,
                    .size = known ? (double)st.st_size : -1,
                    .mtime = known ? (double)st.st_mtim.tv_sec + 1e-9 * (double)st.st_mtim.tv_nsec : 0,
                    .audio = audio, .wall = wall};
    if (!b->ledger || cli_ledger_append(b->ledger, &r, err, sizeof err) == 0)
        return;
    pthread_mutex_lock(&b->lock);
    int first = !b->ledger_failed++;
    pthread_mutex_unlock(&b->lock);
    if (first)
        say_error(b, err);
}

/* ---- transcribing */

/* A file's failure: said now, kept for the ledger. */
static void fail_file(batch *b, item *it, const char *msg)
{
    say_error(b, msg);
    free(it->error);
    it->error = strdup(msg);
}

/* The outputs, each renamed into place, then the ledger's line, all before a
 * signal may end the process: a file whose outputs exist is in the ledger but
 * for a SIGKILL between the two (resuming then skips it as without a ledger). */
static int write_outputs(worker_arg *w, item *it)
{
    batch *b = w->b;
    char path[PATH_MAX], err[PATH_MAX + 100];
    int rc = 0;
    for (int f = 0; f < b->n_fmt && !rc; f++)
        if ((rc = out_path(b, it, b->fmt[f], path, sizeof path)))
            snprintf(err, sizeof err, "%s: output name too long", it->path);
    if (!rc)
        rc = cli_make_parents(path, err, sizeof err);
    if (!rc && writes_begin())
        return 0; /* interrupted: the process is about to exit */
    if (rc) {
        fail_file(b, it, err);
        return 0;
    }
    for (int f = 0; f < b->n_fmt && !rc; f++) {
        out_path(b, it, b->fmt[f], path, sizeof path);
        rc = hark_write_output(w->ctx, b->fmt[f], &b->o->layout, path, err, sizeof err);
    }
    if (!rc)
        log_file(b, it, "done", hark_audio_seconds(w->ctx), hark_now_s() - w->t0);
    writes_end();
    if (rc)
        fail_file(b, it, err);
    return !rc;
}

static int format_outputs(batch *b, hark_context *ctx, item *it)
{
    size_t len = 0;
    for (int f = 0; f < b->n_fmt; f++) {
        char *s = hark_format_output(ctx, b->fmt[f], &b->o->layout), *t;
        if (!s || !(t = realloc(it->text, len + strlen(s) + 1))) {
            free(s);
            return 0;
        }
        memcpy(t + len, s, strlen(s) + 1);
        len += strlen(s);
        it->text = t;
        free(s);
    }
    return 1;
}

/* openai's verbose line before a detected language's first segment:
 * "Detected language: Haitian Creole" (its name in title case). */
static void print_detected(const worker_arg *w)
{
    const char *name = hark_language_name(hark_language(w->ctx));
    if (hark_language_code(w->b->o->params.language) || !hark_model_is_multilingual(w->b->model) ||
        !name)
        return; /* -l named it, or nothing was detected */
    char line[64];
    int k = snprintf(line, sizeof line, "Detected language: ");
    for (int up = 1; *name && k < (int)sizeof line - 2; name++, k++) {
        line[k] = up && *name >= 'a' && *name <= 'z' ? (char)(*name - 'a' + 'A') : *name;
        up = *name == ' ';
    }
    snprintf(line + k, sizeof line - (size_t)k, "\n");
    if (w->b->n > 1)
        cli_print(w->it->path), cli_print(": ");
    cli_print(line);
}

/* Each segment on stdout as soon as its window is final, rather than all at the
 * end of a long file: one file as txt (the same bytes as the txt writer's), or
 * with --verbose openai's verbose lines, several files' starting with the file's
 * path (with -j they interleave). */
static void print_segment(double start, double end, const char *text, void *user)
{
    worker_arg *w = user;
    int verbose = w->b->o->verbose, i = w->printed++;
    char speaker = hark_segment_label(w->ctx, i);
    char *colored = w->b->o->print_colors ? hark_segment_colored(w->ctx, i) : NULL;
    text = colored ? colored : text;
    char *line = verbose ? hark_verbose_line(start, end, text, speaker)
                         : hark_txt_line(text, speaker);
    free(colored);
    flockfile(stdout);
    if (verbose && i == 0)
        print_detected(w);
    if (verbose && w->b->n > 1)
        cli_print(w->it->path), cli_print(": ");
    cli_print(line ? line : "\n");
    cli_flush_stdout();
    funlockfile(stdout);
    free(line);
}

/* An input cut at --max-duration is reported, and its transcript so far is
 * written as any other's: the file counts as failed (the exit status says so). */
static int transcribe_one(worker_arg *w, item *it)
{
    batch *b = w->b;
    hark_context *ctx = w->ctx;
    int rc = hark_transcribe_file(ctx, it->path), whole = rc == 0;
    if (rc != 0)
        fail_file(b, it, hark_last_error(ctx));
    if (rc != 0 && rc != HARK_ERR_TOO_LONG)
        return 0;
    if (b->stream_txt || (b->o->verbose && !b->o->out_dir))
        return whole; /* printed already */
    if (b->o->out_dir)
        return write_outputs(w, it) && whole;
    if (format_outputs(b, ctx, it))
        return whole;
    char msg[PATH_MAX + 32];
    snprintf(msg, sizeof msg, "%s: out of memory", it->path);
    fail_file(b, it, msg);
    return 0;
}

static size_t take(batch *b)
{
    pthread_mutex_lock(&b->lock);
    size_t i = b->next < b->n && !atomic_load(&g_stop) ? b->next++ : b->n;
    pthread_mutex_unlock(&b->lock);
    return i;
}

/* After each window: the bar, redrawn with this worker's part of its file. */
static void window_done(double done, double total, void *user)
{
    worker_arg *w = user;
    pthread_mutex_lock(&w->b->lock);
    w->done = done, w->total = total;
    hark_stderr_lock();
    bar_draw(w->b);
    hark_stderr_unlock();
    pthread_mutex_unlock(&w->b->lock);
}

static void *worker(void *arg)
{
    worker_arg *w = arg;
    for (size_t i; (i = take(w->b)) < w->b->n;) {
        w->t0 = hark_now_s();
        w->it = &w->b->v[i];
        w->printed = 0;
        int ok = transcribe_one(w, w->it);
        if (!ok && !atomic_load(&g_stop))
            log_file(w->b, w->it, "failed", 0, hark_now_s() - w->t0);
        finish(w, w->it, ok, hark_audio_seconds(w->ctx), hark_now_s() - w->t0);
    }
    return NULL;
}

/* The calling thread is worker 0; a thread that cannot be started only means
 * fewer workers. */
static void run_workers(worker_arg *w, int n)
{
    pthread_t *t = calloc((size_t)n, sizeof *t);
    int started = 1;
    while (t && started < n && pthread_create(&t[started], NULL, worker, &w[started]) == 0)
        started++;
    worker(&w[0]);
    for (int i = 1; i < started; i++)
        pthread_join(t[i], NULL);
    free(t);
}

/* One model, one context per worker.  Returns 0, or 1 when nothing could run. */
/* The model (and VAD model), once: planning loads it when the ledger needs its
 * identity.  0, or -1 when it cannot be loaded (said). */
static int load_model(batch *b)
{
    if (b->model_loaded)
        return 0;
    if (!(b->model_loaded = cli_load_models(b->o, &b->vad)))
        return -1;
    b->model = b->model_loaded;
    snprintf(b->model_id, sizeof b->model_id, "%016llx", hark_model_identity(b->model));
    return 0;
}

static int run(batch *b)
{
    if (load_model(b))
        return 1;
    const hark_model *model = b->model;
    hark_vad *vad = b->vad;
    int n = b->o->jobs < (int)b->n ? b->o->jobs : (int)b->n, made = 0;
    worker_arg *w = calloc((size_t)n, sizeof *w);
    /* --combine-decode: the workers' sequences step through the decoder together */
    hark_batch *together = n > 1 && b->o->combine_decode ? hark_batch_new() : NULL;
    hark_params params = b->o->params;
    params.vad.model = vad;
    if (b->stream_txt || b->o->verbose)
        params.callbacks.on_segment = print_segment;
    for (; w && made < n; made++) {
        w[made].b = b;
        params.callbacks.on_segment_user = &w[made];
        params.callbacks.on_progress = b->bar ? window_done : NULL;
        params.callbacks.on_progress_user = &w[made];
        if (!(w[made].ctx = hark_context_new(model, &params)))
            break;
        hark_context_join(w[made].ctx, together); /* one model: cannot fail */
    }
    b->workers = w, b->n_workers = made;
    if (made && b->o->out_dir)
        catch_signals();
    if (made)
        run_workers(w, made);
    else
        fprintf(stderr, "hark: out of memory for a context\n");
    for (int i = 0; i < made; i++)
        hark_context_free(w[i].ctx);
    hark_batch_free(together);
    b->workers = NULL, b->n_workers = 0;
    free(w);
    return made ? 0 : 1;
}

/* ---- the batch */

static void set_formats(batch *b)
{
    char buf[sizeof b->o->formats], *save = NULL;
    snprintf(buf, sizeof buf, "%s", b->o->formats[0] ? b->o->formats : "txt");
    for (char *f = strtok_r(buf, ",", &save); f && b->n_fmt < MAX_FORMATS;
         f = strtok_r(NULL, ",", &save))
        snprintf(b->fmt[b->n_fmt++], sizeof b->fmt[0], "%s", f);
}

enum { DO, SKIP, CLASH, CHANGED, NO_MODEL };

/* What resuming makes of a file whose outputs all exist, from its ledger line:
 * done with this run's model, options and input bytes, it is skipped; done
 * otherwise, redone with --redo-changed and refused without. */
static int ledger_verdict(batch *b, const item *it, const char **why)
{
    const cli_record *r = cli_records_last(&b->records, it->name, 0);
    struct stat st;
    *why = "its outputs exist";
    if (!r)
        return SKIP; /* written before ledgers, or killed between outputs and line */
    if (load_model(b))
        return NO_MODEL;
    if (!r->model || strcmp(r->model, b->model_id))
        *why = "done with another model";
    else if (!r->options || strcmp(r->options, b->options_id))
        *why = "done with other options";
    else if (stat(it->path, &st) != 0 || (double)st.st_size != r->size ||
             fabs(st.st_mtim.tv_sec + 1e-9 * st.st_mtim.tv_nsec - r->mtime) > 1e-6)
        *why = "its input changed since it was done";
    else {
        *why = "done with this model and these options";
        return SKIP;
    }
    return b->o->redo_changed ? DO : CHANGED;
}

static int verdict(batch *b, const item *it, const char **why)
{
    *why = "to do";
    if (it->clash) {
        *why = "its outputs would overwrite those of another input";
        return CLASH;
    }
    if (!b->o->out_dir || b->o->overwrite || !outputs_exist(b, it))
        return DO;
    return ledger_verdict(b, it, why);
}

/* --dry-run: a line on stdout for each file of this shard, what and why. */
static void say_plan(const item *it, int v, const char *why)
{
    static const char *const what[] = {"do", "skip", "fail", "refuse"};
    char line[PATH_MAX + 200];
    snprintf(line, sizeof line, "%s %s: %s\n", what[v], it->path, why);
    cli_print(line);
}

/* Whether name is "<anything>.<fmt>" for one of the batch's formats. */
static int is_output_name(const batch *b, const char *name, size_t len)
{
    for (int f = 0; f < b->n_fmt; f++) {
        size_t k = strlen(b->fmt[f]);
        if (len > k + 1 && name[len - k - 1] == '.' && strncmp(name + len - k, b->fmt[f], k) == 0)
            return 1;
    }
    return 0;
}

/* Removes the temporary outputs in dir that a killed hark on this host left (a
 * batch killed while writing): its own names alone, and never a live writer's. */
static void sweep_dir(const batch *b, const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t base;
        if (hark_out_stale(e->d_name, &base) && is_output_name(b, e->d_name, base))
            unlinkat(dirfd(d), e->d_name, 0);
    }
    if (d)
        closedir(d);
}

/* Each directory the inputs' outputs go to swept once, before resuming. */
static void sweep_outputs(const batch *b, const list *l)
{
    char path[PATH_MAX], dir[PATH_MAX], **seen = NULL;
    size_t n_seen = 0;
    for (size_t i = 0; i < l->n && b->n_fmt; i++) {
        if (out_path(b, &l->v[i], b->fmt[0], path, sizeof path))
            continue;
        char *slash = strrchr(path, '/');
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
        int known = 0; /* the last first: a batch's outputs mostly share a directory */
        for (size_t j = n_seen; !known && j-- > 0;)
            known = strcmp(seen[j], dir) == 0;
        char **more = known ? NULL : realloc(seen, sizeof *seen * (n_seen + 1));
        if (known || !more)
            continue;
        seen = more;
        if ((seen[n_seen] = strdup(dir)))
            n_seen++;
        sweep_dir(b, dir);
    }
    for (size_t j = 0; j < n_seen; j++)
        free(seen[j]);
    free(seen);
}

/* Keeps the files to transcribe: a clash fails, complete outputs skip (as the
 * ledger says).  -1 when files done otherwise are refused, or the model that
 * tells them apart cannot be loaded. */
static int plan(batch *b, list *l)
{
    size_t k = 0, changed = 0;
    const char *why, *first_why = NULL;
    char first[PATH_MAX] = "";
    if ((b->o->out_dir || b->o->out_file) && !b->o->dry_run)
        sweep_outputs(b, l);
    for (size_t i = 0; i < l->n; i++) {
        item *it = &l->v[i];
        int v = verdict(b, it, &why);
        if (v == NO_MODEL)
            return -1;
        if (b->o->dry_run)
            say_plan(it, v, why);
        if (v == CLASH && !b->o->dry_run) {
            char msg[3 * PATH_MAX];
            snprintf(msg, sizeof msg, "%s: its outputs %s/%s.* would overwrite those of %s",
                     it->path, b->o->out_dir, it->name, it->clash);
            fail_file(b, it, msg);
            log_file(b, it, "failed", 0, 0);
        } else if (v == SKIP && !b->o->dry_run)
            log_file(b, it, "skipped", 0, 0);
        b->failed += v == CLASH, b->skipped += v == SKIP;
        if (v == CHANGED && !changed++)
            snprintf(first, sizeof first, "%s", it->path), first_why = why;
        if (v == DO)
            l->v[k++] = *it;
        else
            cli_file_free(it);
    }
    l->n = k, b->v = l->v, b->n = k;
    if (changed && !b->o->dry_run)
        fprintf(stderr, "hark: %s: %zu file%s %s (the first: %s); --redo-changed redoes %s, "
                "--overwrite every file\n", b->o->out_dir, changed, changed > 1 ? "s were" : " was",
                first_why, first, changed > 1 ? "them" : "it");
    return changed && !b->o->dry_run ? -1 : 0;
}

static void summary(const batch *b)
{
    double wall = hark_now_s() - b->t0;
    char rtf[48] = "";
    if (b->audio > 0)
        snprintf(rtf, sizeof rtf, ", real-time factor %.3f", wall / b->audio);
    fprintf(stderr, "hark: %d done, %d skipped, %d failed; %.3f h of audio in %.1f s%s\n",
            b->done, b->skipped, b->failed, b->audio / 3600, wall, rtf);
}

/* The run's last line in the ledger: a shard whose latest process has none was
 * killed or is still running (hark summary's shards to resubmit). */
static void log_end(batch *b)
{
    char err[4200];
    cli_record r = {.status = "end", .model = b->model_id, .options = b->options_id,
                    .audio = b->audio, .wall = hark_now_s() - b->t0};
    if (b->ledger && cli_ledger_append(b->ledger, &r, err, sizeof err) && !b->ledger_failed++)
        fprintf(stderr, "hark: %s\n", err);
}

/* With -o (not -of), this process's ledger and every process's records; 0, or
 * -1 (said) when either cannot be had: a batch that cannot keep its ledger
 * would resume blind. */
static int open_ledger(batch *b)
{
    const cli_options *o = b->o;
    char err[4200];
    snprintf(b->options_id, sizeof b->options_id, "%016llx", cli_options_digest(o));
    if (!o->out_dir || o->out_file)
        return 0;
    if (cli_ledger_read(o->out_dir, &b->records, err, sizeof err) == 0 &&
        (o->dry_run || (b->ledger = cli_ledger_open(o->out_dir, o->shard_tag,
                                                    o->balance_duration ? "duration" : "position",
                                                    err, sizeof err))))
        return 0;
    fprintf(stderr, "hark: %s\n", err);
    return -1;
}

/* --dry-run with --shard: every shard's files and seconds, this one marked. */
static void say_shards(const cli_options *o, list *l)
{
    int *shard = malloc((l->n ? l->n : 1) * sizeof *shard);
    cli_shard_total *t = calloc((size_t)o->shard_n, sizeof *t);
    if (shard && t && cli_assign_shards(l, o->shard_n, o->balance_duration, shard, t) == 0)
        for (int k = 0; k < o->shard_n; k++) {
            char line[160];
            snprintf(line, sizeof line, "shard %d/%d: %d files, %.1f s%s\n", k + 1, o->shard_n,
                     t[k].files, t[k].seconds, k + 1 == o->shard_k ? " (this one)" : "");
            cli_print(line);
        }
    free(shard);
    free(t);
}

static void batch_free(batch *b, list *l)
{
    cli_files_free(l);
    cli_records_free(&b->records);
    cli_ledger_close(b->ledger);
    hark_model_free(b->model_loaded);
    hark_vad_free(b->vad);
}

int cli_run_batch(const cli_options *o, char **inputs, int n)
{
    batch b = {.o = o, .t0 = hark_now_s(), .lock = PTHREAD_MUTEX_INITIALIZER};
    list l = {0};
    cli_collect_inputs(&l, inputs, n, o->recursive);
    b.report = !o->quiet && !o->dry_run && (o->out_dir || l.n > 1 || l.any_dir);
    b.bar = b.report && isatty(STDERR_FILENO) && !o->verbose; /* lines, not a bar */
    b.failed = l.failed;
    if (o->out_dir)
        cli_mark_clashes(&l);
    if (o->shard_n > 0 && o->dry_run)
        say_shards(o, &l);
    if (o->shard_n > 0)
        cli_keep_shard(&l, o->shard_k, o->shard_n, o->balance_duration);
    set_formats(&b);
    int rc = open_ledger(&b) || plan(&b, &l) ? 1 : 0;
    b.stream_txt = !o->verbose && !o->out_dir && b.n == 1 && b.n_fmt == 1 && strcmp(b.fmt[0], "txt") == 0;
    if (!rc && !o->dry_run) {
        if (b.bar && b.n)
            bar_draw(&b);
        rc = b.n ? run(&b) : 0;
        bar_clear(&b);
        if (b.report)
            summary(&b);
        log_end(&b);
    }
    batch_free(&b, &l);
    cli_flush_stdout();
    return rc || (!o->dry_run && (b.failed || b.ledger_failed)) ? 1 : 0;
}
