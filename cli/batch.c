/* Transcribing the inputs named on the command line.
 *
 * Inputs are files, or directories walked for audio files (recursively with
 * -r).  The file list is sorted bytewise and deduplicated so that every run,
 * on every machine, sees the same order: --shard K/N slices that order.  With
 * -o, a file whose outputs all exist is skipped (so a killed batch resumes),
 * and the outputs of a file found in a walked directory mirror its relative
 * subdirectory under the output directory (so a/x.wav and b/x.wav do not
 * collide).  -j workers share the one read-only model, each with its own
 * context; without -o (one input: main.c sends several to the current
 * directory), the transcript goes to stdout, in input order in any case.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "face.h"

enum { MAX_FORMATS = 8, PENDING = 0, DONE = 1, FAILED = 2 };

typedef struct item {
    char *path;        /* the audio file, as named or as found                  */
    char *name;        /* output name under -o, without the format's extension  */
    char *clash;       /* with -o: an earlier input with the same output name   */
    char *text;        /* without -o: its transcript, waiting for its turn      */
    int state;         /* PENDING, DONE or FAILED                               */
} item;

typedef struct list {
    item *v;
    size_t n, cap;
    int failed;        /* inputs that could not be walked */
    int any_dir;       /* a directory was named: this is a batch */
} list;

typedef struct batch batch;

/* A worker: its context, and how far into its current file it is. */
typedef struct worker_arg {
    batch *b;
    hark_context *ctx;
    const item *it;     /* the file being transcribed */
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
    pthread_mutex_t lock;      /* everything above that workers change    */
};

/* ---- the file list */

int cli_is_audio_name(const char *name)
{
    static const char *const ext[] = {"wav", "wave", "flac", "ogg", "oga", "opus", "mp3", "aiff",
                                      "aif", "aifc", "au", "snd", "caf", "w64", "rf64",
                                      /* and what hark reads through ffmpeg */
                                      "m4a", "mp4", "aac", "webm", "wma", "amr", "mka", "mkv",
                                      "mov", "avi", "3gp", "ac3"};
    const char *base = strrchr(name, '/'), *dot;
    base = base ? base + 1 : name;
    dot = strrchr(base, '.');
    if (!dot || dot == base)
        return 0;
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
        if (strcasecmp(dot + 1, ext[i]) == 0)
            return 1;
    return 0;
}

/* "dir/a/b.wav" -> "dir/a/b" (only the last component loses its extension). */
static char *strip_ext(const char *path)
{
    char *s = strdup(path);
    if (!s)
        return NULL;
    char *base = strrchr(s, '/'), *dot;
    base = base ? base + 1 : s;
    dot = strrchr(base, '.');
    if (dot && dot != base)
        *dot = 0;
    return s;
}

/* "dir/a/b.wav" -> "b"; "-" -> "stdin". */
static char *stem_of(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strip_ext(strcmp(path, "-") == 0 ? "stdin" : base);
}

/* dir + "/" + name, without doubling a trailing slash of dir. */
static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t len = n + strlen(name) + 2;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%.*s%s%s", (int)n, dir, n && dir[n - 1] == '/' ? "" : "/", name);
    return s;
}

/* Takes ownership of path and name. */
static void list_add(list *l, char *path, char *name)
{
    if (path && name && l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        item *v = realloc(l->v, cap * sizeof *v);
        if (v)
            l->v = v, l->cap = cap;
    }
    if (!path || !name || l->n == l->cap) {
        fprintf(stderr, "hark: out of memory for the file list\n");
        free(path), free(name), l->failed++;
        return;
    }
    l->v[l->n++] = (item){path, name, NULL, NULL, PENDING};
}

static void walk_dir(list *l, const char *dir, const char *rel, int recursive);

/* One directory entry: a subdirectory (walked with -r; symbolic links to
 * directories are not followed, so a walk cannot loop) or an audio file. */
static void add_entry(list *l, const char *path, const char *rel, int recursive)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return; /* gone since readdir */
    if (S_ISDIR(st.st_mode)) {
        if (recursive)
            walk_dir(l, path, rel, 1);
        return;
    }
    if (S_ISLNK(st.st_mode) && stat(path, &st) != 0)
        st.st_mode = S_IFREG; /* dangling: reading it will say why */
    if (S_ISREG(st.st_mode) && cli_is_audio_name(rel))
        list_add(l, strdup(path), strip_ext(rel));
}

/* rel is the path below the directory named on the command line (NULL at its
 * top): the output name mirrors it.  Hidden entries (".x", macOS "._x.wav")
 * are skipped. */
static void walk_dir(list *l, const char *dir, const char *rel, int recursive)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "hark: %s: %s\n", dir, strerror(errno));
        l->failed++;
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char *path = join_path(dir, e->d_name);
        char *sub = rel ? join_path(rel, e->d_name) : strdup(e->d_name);
        if (path && sub)
            add_entry(l, path, sub, recursive);
        else
            l->failed++;
        free(path);
        free(sub);
    }
    closedir(d);
}

/* Files are taken as named, whatever their extension; directories are walked. */
static void collect_inputs(list *l, char **inputs, int n, int recursive)
{
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (strcmp(inputs[i], "-") == 0 || stat(inputs[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            list_add(l, strdup(inputs[i]), stem_of(inputs[i]));
            continue;
        }
        size_t had = l->n;
        int failed = l->failed;
        l->any_dir = 1;
        walk_dir(l, inputs[i], NULL, recursive);
        if (l->n == had && l->failed == failed) {
            fprintf(stderr, "hark: %s: no audio files%s\n", inputs[i],
                    recursive ? "" : " (-r walks subdirectories)");
            l->failed++;
        }
    }
}

static void item_free(item *it)
{
    free(it->path);
    free(it->name);
    free(it->text);
    free(it->clash);
}

static int by_path(const void *a, const void *b)
{
    const item *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : strcmp(x->name, y->name);
}

/* Bytewise order by full path (strcmp compares unsigned bytes, whatever the
 * locale), each path once: the same list on every machine. */
static void sort_unique(list *l)
{
    if (l->n)
        qsort(l->v, l->n, sizeof *l->v, by_path);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (k && strcmp(l->v[k - 1].path, l->v[i].path) == 0)
            item_free(&l->v[i]);
        else
            l->v[k++] = l->v[i];
    }
    l->n = k;
}

static int by_name(const void *a, const void *b)
{
    const item *x = *(const item *const *)a, *y = *(const item *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->path, y->path);
}

/* Inputs that would write the same outputs (x.wav and x.flac side by side, or
 * two named files x.wav): all but the first in path order fail, decided on
 * the whole list so that every shard agrees. */
static void mark_clashes(list *l)
{
    item **p = malloc((l->n ? l->n : 1) * sizeof *p);
    if (!p)
        return;
    for (size_t i = 0; i < l->n; i++)
        p[i] = &l->v[i];
    qsort(p, l->n, sizeof *p, by_name);
    for (size_t i = 1, first = 0; i < l->n; i++) {
        if (strcmp(p[i]->name, p[first]->name) == 0)
            p[i]->clash = strdup(p[first]->path); /* outlives the shard */
        else
            first = i;
    }
    free(p);
}

/* Slice K (1-based) of N: every N-th file from the K-th on.  Disjoint, and
 * together the N slices cover the list, with no coordination needed. */
static void take_shard(list *l, int k, int n)
{
    size_t kept = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (i % (size_t)n == (size_t)(k - 1))
            l->v[kept++] = l->v[i];
        else
            item_free(&l->v[i]);
    }
    l->n = kept;
}

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

/* Creates every directory above path (the output directory itself included). */
static int make_parents(char *path, char *err, size_t errlen)
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

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

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
        clock_text((now() - b->t0) / files * ((double)b->n - files), eta, sizeof eta);
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

/* ---- transcribing */

static int write_outputs(batch *b, hark_context *ctx, const item *it)
{
    char path[PATH_MAX], err[PATH_MAX + 100];
    int rc = 0;
    for (int f = 0; f < b->n_fmt && !rc; f++)
        if ((rc = out_path(b, it, b->fmt[f], path, sizeof path)))
            snprintf(err, sizeof err, "%s: output name too long", it->path);
    if (!rc)
        rc = make_parents(path, err, sizeof err);
    if (!rc && writes_begin())
        return 0; /* interrupted: the process is about to exit */
    if (rc) {
        say_error(b, err);
        return 0;
    }
    for (int f = 0; f < b->n_fmt && !rc; f++) {
        out_path(b, it, b->fmt[f], path, sizeof path);
        rc = hark_write_output(ctx, b->fmt[f], &b->o->layout, path, err, sizeof err);
    }
    writes_end();
    if (rc)
        say_error(b, err);
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
static int transcribe_one(batch *b, hark_context *ctx, item *it)
{
    int rc = hark_transcribe_file(ctx, it->path), whole = rc == 0;
    if (rc != 0)
        say_error(b, hark_last_error(ctx));
    if (rc != 0 && rc != HARK_ERR_TOO_LONG)
        return 0;
    if (b->stream_txt || (b->o->verbose && !b->o->out_dir))
        return whole; /* printed already */
    if (b->o->out_dir)
        return write_outputs(b, ctx, it) && whole;
    if (format_outputs(b, ctx, it))
        return whole;
    char msg[PATH_MAX + 32];
    snprintf(msg, sizeof msg, "%s: out of memory", it->path);
    say_error(b, msg);
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
        double t = now();
        w->it = &w->b->v[i];
        w->printed = 0;
        int ok = transcribe_one(w->b, w->ctx, &w->b->v[i]);
        finish(w, &w->b->v[i], ok, hark_audio_seconds(w->ctx), now() - t);
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
static int run(batch *b)
{
    hark_vad *vad;
    hark_model *model = cli_load_models(b->o, &vad);
    if (!model)
        return 1;
    b->model = model;
    int n = b->o->jobs < (int)b->n ? b->o->jobs : (int)b->n, made = 0;
    worker_arg *w = calloc((size_t)n, sizeof *w);
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
    b->workers = NULL, b->n_workers = 0;
    free(w);
    hark_model_free(model);
    hark_vad_free(vad);
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

/* Keeps the files to transcribe: a clash fails, complete outputs skip. */
static void plan(batch *b, list *l)
{
    size_t k = 0;
    if (b->o->out_dir || b->o->out_file)
        sweep_outputs(b, l);
    for (size_t i = 0; i < l->n; i++) {
        item *it = &l->v[i];
        if (it->clash) {
            fprintf(stderr, "hark: %s: its outputs %s/%s.* would overwrite those of %s\n",
                    it->path, b->o->out_dir, it->name, it->clash);
            b->failed++;
        } else if (b->o->out_dir && !b->o->overwrite && outputs_exist(b, it)) {
            b->skipped++;
        } else {
            l->v[k++] = *it;
            continue;
        }
        item_free(it);
    }
    l->n = k;
    b->v = l->v;
    b->n = k;
}

static void summary(const batch *b)
{
    double wall = now() - b->t0;
    char rtf[48] = "";
    if (b->audio > 0)
        snprintf(rtf, sizeof rtf, ", real-time factor %.3f", wall / b->audio);
    fprintf(stderr, "hark: %d done, %d skipped, %d failed; %.3f h of audio in %.1f s%s\n",
            b->done, b->skipped, b->failed, b->audio / 3600, wall, rtf);
}

int cli_run_batch(const cli_options *o, char **inputs, int n)
{
    batch b = {.o = o, .t0 = now(), .lock = PTHREAD_MUTEX_INITIALIZER};
    list l = {0};
    collect_inputs(&l, inputs, n, o->recursive);
    sort_unique(&l);
    b.report = !o->quiet && (o->out_dir || l.n > 1 || l.any_dir);
    b.bar = b.report && isatty(STDERR_FILENO) && !o->verbose; /* lines, not a bar */
    b.failed = l.failed;
    if (o->out_dir)
        mark_clashes(&l);
    if (o->shard_n > 0)
        take_shard(&l, o->shard_k, o->shard_n);
    set_formats(&b);
    plan(&b, &l);
    b.stream_txt = !o->verbose && !o->out_dir && b.n == 1 && b.n_fmt == 1 && strcmp(b.fmt[0], "txt") == 0;
    if (b.bar && b.n)
        bar_draw(&b);
    int rc = b.n ? run(&b) : 0;
    bar_clear(&b);
    if (b.report)
        summary(&b);
    for (size_t i = 0; i < l.n; i++)
        item_free(&l.v[i]);
    free(l.v);
    return rc || b.failed ? 1 : 0;
}
