/* hark serve's transcription jobs (serve_jobs.h): a fixed table of jobs under one
 * lock.  A job's upload stays in $TMPDIR while the job is held (a window's explain
 * reads it again); as it is transcribed, the progress and each segment (its tokens'
 * and words' probabilities) are copied out of the context as JSON, so that a status
 * request reads them without touching the transcription; at the end the writers'
 * files are made once and the context freed.  What a job holds is bounded by its
 * audio's transcript, and at most JOBS_MAX are held. */
#include <cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "serve_api.h"
#include "serve_jobs.h"

enum job_state { QUEUED, RUNNING, DONE, FAILED, CANCELLED };
static const char *const STATE_NAMES[] = {"queued", "running", "done", "failed", "cancelled"};
/* the CLI's files a finished job keeps: GET /v1/jobs/ID/result?format= */
static const char *const FORMATS[] = {"txt", "srt", "vtt", "tsv", "json", "csv", "lrc"};
enum { N_FORMATS = sizeof FORMATS / sizeof *FORMATS };

struct serve_job {
    char id[33];               /* 128 random bits in hex: not guessable          */
    char upload[512];          /* the audio in $TMPDIR                           */
    char filename[128];        /* as the client named it                         */
    request_options q;         /* p's strings                                    */
    hark_params p;
    serve_jobs *owner;
    hark_context *ctx;         /* while it runs: the segment callback reads it   */
    enum job_state state;
    atomic_int cancel;         /* DELETE asked to stop                           */
    int busy;                  /* explains reading its upload: not forgotten     */
    int status;                /* for the log, once finished                     */
    double seconds_done, seconds_total;
    double *window_ends;       /* each window's end, seconds                     */
    int n_windows, cap_windows;
    char **segments;           /* each as JSON                                   */
    int n_segments, cap_segments;
    char *out[N_FORMATS];      /* the writers' files, once done                  */
    char error[700];
    struct timespec finished;
};

struct serve_jobs {
    jobs_config c;
    pthread_mutex_t lock;
    serve_job *job[JOBS_MAX];
};

serve_jobs *jobs_new(const jobs_config *c)
{
    serve_jobs *js = calloc(1, sizeof *js);
    if (!js)
        return NULL;
    js->c = *c;
    pthread_mutex_init(&js->lock, NULL);
    return js;
}

static void job_free(serve_job *j)
{
    if (!j)
        return;
    if (*j->upload)
        unlink(j->upload);
    for (int i = 0; i < j->n_segments; i++)
        free(j->segments[i]);
    for (int i = 0; i < N_FORMATS; i++)
        free(j->out[i]);
    free(j->segments);
    free(j->window_ends);
    free(j);
}

void jobs_free(serve_jobs *js)
{
    if (!js)
        return;
    for (int i = 0; i < JOBS_MAX; i++)
        job_free(js->job[i]);
    pthread_mutex_destroy(&js->lock);
    free(js);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int finished(const serve_job *j)
{
    return j->state >= DONE;
}

/* Forgets the finished jobs older than JOBS_KEEP_S (the lock held). */
static void expire(serve_jobs *js)
{
    double now = now_s();
    for (int i = 0; i < JOBS_MAX; i++) {
        serve_job *j = js->job[i];
        if (j && finished(j) && !j->busy &&
            now - ((double)j->finished.tv_sec + j->finished.tv_nsec / 1e9) > JOBS_KEEP_S) {
            job_free(j);
            js->job[i] = NULL;
        }
    }
}

/* The job of that id (the lock held), or NULL. */
static serve_job *find(serve_jobs *js, const char *id)
{
    for (int i = 0; i < JOBS_MAX; i++)
        if (js->job[i] && !strcmp(js->job[i]->id, id))
            return js->job[i];
    return NULL;
}

static void forget(serve_jobs *js, serve_job *j)
{
    for (int i = 0; i < JOBS_MAX; i++)
        if (js->job[i] == j)
            js->job[i] = NULL;
    job_free(j);
}

/* ------------------------------------------------------------ while it runs */

/* Grows an array of n items of size to hold one more; -1 out of memory. */
static int grow(void **a, int n, int *cap, size_t size)
{
    if (n < *cap)
        return 0;
    int c = *cap ? 2 * *cap : 16;
    void *b = realloc(*a, (size_t)c * size);
    if (!b)
        return -1;
    *a = b, *cap = c;
    return 0;
}

/* Segment i's text tokens (timestamps and other special tokens left out), each
 * with the probability it was chosen with. */
static cJSON *segment_tokens(const hark_context *ctx, int i)
{
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; k < hark_segment_n_tokens(ctx, i); k++) {
        hark_token_info t = hark_segment_token(ctx, i, k);
        size_t n = strlen(t.text);
        if (n >= 4 && !strncmp(t.text, "<|", 2) && !strcmp(t.text + n - 2, "|>"))
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "text", t.text);
        cJSON_AddNumberToObject(o, "p", t.p);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* Segment i as the job's status shows it: times, text, tokens, words. */
static char *segment_json(const hark_context *ctx, int i)
{
    cJSON *s = cJSON_CreateObject(), *words = cJSON_CreateArray();
    cJSON_AddNumberToObject(s, "id", i);
    cJSON_AddNumberToObject(s, "start", hark_segment_start(ctx, i));
    cJSON_AddNumberToObject(s, "end", hark_segment_end(ctx, i));
    cJSON_AddStringToObject(s, "text", hark_segment_text(ctx, i));
    cJSON_AddItemToObject(s, "tokens", segment_tokens(ctx, i));
    for (int k = 0; k < hark_segment_n_words(ctx, i); k++) {
        double start, end;
        float p;
        const char *word = hark_segment_word(ctx, i, k, &start, &end, &p);
        cJSON *w = cJSON_CreateObject();
        cJSON_AddStringToObject(w, "word", word);
        cJSON_AddNumberToObject(w, "start", start);
        cJSON_AddNumberToObject(w, "end", end);
        cJSON_AddNumberToObject(w, "p", p);
        cJSON_AddItemToArray(words, w);
    }
    cJSON_AddItemToObject(s, "words", words);
    char *text = cJSON_PrintUnformatted(s);
    cJSON_Delete(s);
    return text;
}

/* on_segment: the k-th call is segment k, which the context's getters read now. */
static void on_segment(double start, double end, const char *text, void *user)
{
    (void)start, (void)end, (void)text;
    serve_job *j = user;
    char *s = segment_json(j->ctx, j->n_segments); /* only this thread adds segments */
    pthread_mutex_lock(&j->owner->lock);
    if (s && grow((void **)&j->segments, j->n_segments, &j->cap_segments, sizeof(char *)) == 0)
        j->segments[j->n_segments++] = s, s = NULL;
    pthread_mutex_unlock(&j->owner->lock);
    free(s); /* out of memory: the status misses it, the files will not */
}

static void on_progress(double done, double total, void *user)
{
    serve_job *j = user;
    pthread_mutex_lock(&j->owner->lock);
    j->seconds_done = done, j->seconds_total = total;
    if (grow((void **)&j->window_ends, j->n_windows, &j->cap_windows, sizeof(double)) == 0)
        j->window_ends[j->n_windows++] = done;
    pthread_mutex_unlock(&j->owner->lock);
}

static int should_abort(void *user)
{
    const serve_job *j = user;
    return atomic_load(&j->cancel) || atomic_load(j->owner->c.stop_now);
}

/* The writers' files of a finished transcription; -1 out of memory. */
static int render(serve_job *j, const hark_context *ctx)
{
    for (int i = 0; i < N_FORMATS; i++)
        if (!(j->out[i] = hark_format_output(ctx, FORMATS[i], j->owner->c.layout)))
            return -1;
    return 0;
}

/* How a transcription that returned rc ends: the job's state, status and error. */
static void conclude(serve_job *j, const hark_context *ctx, int rc)
{
    j->state = rc == 0 ? DONE : rc == HARK_ERR_ABORTED ? CANCELLED : FAILED;
    j->status = rc == 0 ? 200 : rc == HARK_ERR_NOMEM ? 500 : 400;
    if (rc == HARK_ERR_ABORTED && atomic_load(&j->cancel)) {
        j->status = 499; /* as nginx's "client closed request": nobody wants the rest */
        snprintf(j->error, sizeof j->error, "cancelled");
    } else if (rc == HARK_ERR_ABORTED) {
        j->status = 503, j->state = FAILED;
        snprintf(j->error, sizeof j->error, "the server is stopping: send the file again later");
    } else if (rc && ctx) {
        serve_upload_error(ctx, j->upload, j->filename, j->error, sizeof j->error);
    } else if (rc) {
        snprintf(j->error, sizeof j->error, "out of memory");
    }
    clock_gettime(CLOCK_MONOTONIC, &j->finished);
}

int jobs_run(serve_jobs *js, serve_job *j, char *path, size_t n)
{
    snprintf(path, n, "/v1/jobs/%s", j->id);
    hark_params p = j->p;
    p.callbacks.on_segment = on_segment, p.callbacks.on_segment_user = j;
    p.callbacks.on_progress = on_progress, p.callbacks.on_progress_user = j;
    p.callbacks.should_abort = should_abort, p.callbacks.should_abort_user = j;
    pthread_mutex_lock(&js->lock);
    j->state = RUNNING;
    pthread_mutex_unlock(&js->lock);
    hark_context *ctx = j->ctx = hark_context_new(js->c.model, &p);
    int rc = ctx ? hark_transcribe_file(ctx, j->upload) : HARK_ERR_NOMEM;
    if (rc == 0 && render(j, ctx))
        rc = HARK_ERR_NOMEM;
    pthread_mutex_lock(&js->lock);
    conclude(j, ctx, rc);
    j->ctx = NULL;
    int status = j->status;
    pthread_mutex_unlock(&js->lock);
    hark_context_free(ctx);
    return status;
}

/* ------------------------------------------------------------ the routes */

/* The request's path cut up: /v1/jobs[/ID[/TAIL]][?QUERY]. */
typedef struct job_path {
    char base[16], id[40], tail[16];
    const char *query; /* after '?', or "" */
} job_path;

static int split_path(const char *path, job_path *jp)
{
    memset(jp, 0, sizeof *jp);
    const char *q = strchr(path, '?');
    size_t n = q ? (size_t)(q - path) : strlen(path);
    jp->query = q ? q + 1 : "";
    if (n == 11 && !strncmp(path, "/v1/options", 11))
        return snprintf(jp->base, sizeof jp->base, "/v1/options"), 1;
    if (n < 8 || strncmp(path, "/v1/jobs", 8) || (n > 8 && path[8] != '/'))
        return 0;
    snprintf(jp->base, sizeof jp->base, "/v1/jobs");
    const char *id = path + 9, *end = path + n;
    if (id >= end)
        return 1;
    const char *slash = memchr(id, '/', (size_t)(end - id));
    size_t k = (size_t)((slash ? slash : end) - id);
    snprintf(jp->id, sizeof jp->id, "%.*s", (int)(k < sizeof jp->id ? k : sizeof jp->id - 1), id);
    if (slash)
        snprintf(jp->tail, sizeof jp->tail, "%.*s", (int)(end - slash), slash);
    return 1;
}

int jobs_path(const http_request *r)
{
    job_path jp;
    return split_path(r->path, &jp);
}

/* The value of name=VALUE in a query string, into out; 0 when absent. */
static int query_value(const char *query, const char *name, char *out, size_t n)
{
    size_t k = strlen(name);
    for (const char *at = query; at && *at; at = strchr(at, '&') ? strchr(at, '&') + 1 : NULL)
        if (!strncmp(at, name, k) && at[k] == '=') {
            size_t len = strcspn(at + k + 1, "&");
            snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), at + k + 1);
            return 1;
        }
    return 0;
}

static int error(int fd, int status, const char *message)
{
    serve_respond_error(fd, status, message);
    return status;
}

static int no_job(int fd, const char *id)
{
    char msg[160];
    snprintf(msg, sizeof msg, "no job %s: a finished job is kept %d minutes", id,
             JOBS_KEEP_S / 60);
    return error(fd, 404, msg);
}

/* A free place in the table for j (the lock held): 0, or -1 when all JOBS_MAX are held. */
static int place(serve_jobs *js, serve_job *j)
{
    expire(js);
    for (int i = 0; i < JOBS_MAX; i++)
        if (!js->job[i])
            return js->job[i] = j, 0;
    return -1;
}

/* POST /v1/jobs: /inference's form; 202 {"id"} at once, the job then run by this worker. */
static int post_job(serve_jobs *js, int fd, const http_request *r, const job_path *jp,
                    serve_job **run)
{
    (void)jp;
    form_field file;
    unsigned char bits[16];
    serve_job *j = calloc(1, sizeof *j);
    if (!j || getrandom(bits, sizeof bits, 0) != sizeof bits) {
        free(j);
        return error(fd, 500, "out of memory");
    }
    j->p = *js->c.params;
    j->owner = js;
    const char *bad = serve_upload_options(r, js->c.model, &file, &j->q, &j->p);
    if (bad) {
        free(j);
        return error(fd, 400, bad);
    }
    for (int i = 0; i < 16; i++)
        snprintf(j->id + 2 * i, 3, "%02x", bits[i]);
    snprintf(j->filename, sizeof j->filename, "%s", file.filename);
    pthread_mutex_lock(&js->lock);
    int full = place(js, j);
    pthread_mutex_unlock(&js->lock);
    if (full) {
        free(j);
        return error(fd, 429, "too many jobs held: wait for one to finish, or DELETE a finished one");
    }
    if (serve_save_upload(&file, j->upload, sizeof j->upload)) {
        *j->upload = 0;
        pthread_mutex_lock(&js->lock);
        forget(js, j);
        pthread_mutex_unlock(&js->lock);
        return error(fd, 500, "cannot store the upload in the temporary directory");
    }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "id", j->id);
    cJSON_AddStringToObject(root, "state", "queued");
    serve_respond_json(fd, 202, root);
    *run = j;
    return 202;
}

/* A job's progress (the lock held): its windows so far, its error when it failed. */
static cJSON *status_json(const serve_job *j, double window_s)
{
    cJSON *root = cJSON_CreateObject(), *windows = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "id", j->id);
    cJSON_AddStringToObject(root, "state", STATE_NAMES[j->state]);
    cJSON_AddNumberToObject(root, "seconds_done", j->seconds_done);
    cJSON_AddNumberToObject(root, "seconds_total", j->seconds_total);
    cJSON_AddNumberToObject(root, "windows_done", j->n_windows);
    /* the windows still to come, as if each took a whole window's length */
    double left = j->seconds_total - j->seconds_done;
    int more = j->state == DONE || left <= 0 ? 0 : (int)((left + window_s - 1e-9) / window_s);
    cJSON_AddNumberToObject(root, "windows_total", j->n_windows + more);
    for (int i = 0; i < j->n_windows; i++) {
        cJSON *w = cJSON_CreateObject();
        cJSON_AddNumberToObject(w, "start", i ? j->window_ends[i - 1] : 0);
        cJSON_AddNumberToObject(w, "end", j->window_ends[i]);
        cJSON_AddItemToArray(windows, w);
    }
    cJSON_AddItemToObject(root, "windows", windows);
    cJSON_AddNumberToObject(root, "n_segments", j->n_segments);
    if (*j->error)
        cJSON_AddStringToObject(root, "error", j->error);
    return root;
}

/* GET /v1/jobs/ID[?since=K]: the status and the segments from K on (all: K = 0). */
static int get_job(serve_jobs *js, int fd, const http_request *r, const job_path *jp,
                   serve_job **run)
{
    (void)r, (void)run;
    char v[16];
    int since = query_value(jp->query, "since", v, sizeof v) ? atoi(v) : 0;
    double window_s = hark_model_window_samples(js->c.model) / (double)HARK_SAMPLE_RATE;
    pthread_mutex_lock(&js->lock);
    serve_job *j = find(js, jp->id);
    cJSON *root = j ? status_json(j, window_s) : NULL, *segs = cJSON_CreateArray();
    for (int i = since < 0 ? 0 : since; j && i < j->n_segments; i++)
        cJSON_AddItemToArray(segs, cJSON_CreateRaw(j->segments[i]));
    pthread_mutex_unlock(&js->lock);
    if (!root) {
        cJSON_Delete(segs);
        return no_job(fd, jp->id);
    }
    cJSON_AddItemToObject(root, "segments", segs);
    serve_respond_json(fd, 200, root);
    return 200;
}

/* GET /v1/jobs/ID/result?format=F: the CLI's file in format F (txt by default). */
static int get_result(serve_jobs *js, int fd, const http_request *r, const job_path *jp,
                      serve_job **run)
{
    (void)r, (void)run;
    char format[16] = "txt";
    query_value(jp->query, "format", format, sizeof format);
    int f = 0;
    while (f < N_FORMATS && strcmp(FORMATS[f], format))
        f++;
    if (f == N_FORMATS)
        return error(fd, 400, "format is one of txt, srt, vtt, tsv, json, csv, lrc");
    pthread_mutex_lock(&js->lock);
    serve_job *j = find(js, jp->id);
    int status = !j ? 404 : j->state != DONE ? 409 : 200;
    /* a copy, sent after: a peer slow to read holds no lock */
    char *body = status == 200 ? strdup(j->out[f]) : NULL;
    pthread_mutex_unlock(&js->lock);
    if (status == 404)
        return no_job(fd, jp->id);
    if (status == 409)
        return error(fd, 409, "the job has no transcript: it is not done");
    if (!body)
        return error(fd, 500, "out of memory");
    http_respond(fd, 200, serve_content_type(format), body, strlen(body));
    free(body);
    return 200;
}

/* DELETE /v1/jobs/ID: a job queued or running is stopped at its next window (202); a
 * finished one is forgotten, its upload removed (200). */
static int delete_job(serve_jobs *js, int fd, const http_request *r, const job_path *jp,
                      serve_job **run)
{
    (void)r, (void)run;
    pthread_mutex_lock(&js->lock);
    serve_job *j = find(js, jp->id);
    int status = !j ? 404 : !finished(j) ? 202 : j->busy ? 409 : 200;
    if (status == 202)
        atomic_store(&j->cancel, 1);
    if (status == 200)
        forget(js, j);
    pthread_mutex_unlock(&js->lock);
    if (status == 404)
        return no_job(fd, jp->id);
    if (status == 409)
        return error(fd, 409, "the job is being explained: delete it after");
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "id", jp->id);
    cJSON_AddStringToObject(root, "state", status == 202 ? "cancelling" : "deleted");
    serve_respond_json(fd, status, root);
    return status;
}

/* An explain's transcription: stops once its window is traced (on_progress counts the
 * windows), or when the server stops. */
typedef struct explain_run {
    int window, windows_done;
    const atomic_int *stop_now;
} explain_run;

static void explain_progress(double done, double total, void *user)
{
    (void)done, (void)total;
    ((explain_run *)user)->windows_done++;
}

static int explain_enough(void *user)
{
    const explain_run *e = user;
    return e->windows_done > e->window || atomic_load(e->stop_now);
}

/* Window w of the audio at path traced as hark explain traces it, with the job's
 * options; the JSON, or NULL with why in msg. */
static char *trace_window(const serve_jobs *js, const char *path, hark_params p, int w,
                          char *msg, size_t n)
{
    float *x = NULL;
    size_t len = 0;
    explain_run e = {w, 0, js->c.stop_now};
    memset(&p.callbacks, 0, sizeof p.callbacks);
    p.callbacks.on_progress = explain_progress, p.callbacks.on_progress_user = &e;
    p.callbacks.should_abort = explain_enough, p.callbacks.should_abort_user = &e;
    if (hark_read_audio(path, &x, &len, msg, n))
        return NULL;
    hark_context *ctx = hark_context_new(js->c.model, &p);
    hark_explain *ex = hark_explain_new(w);
    int rc = ctx && ex ? hark_transcribe_explained(ctx, x, len, ex) : HARK_ERR_NOMEM;
    char *json = NULL;
    if (rc == 0 || (rc == HARK_ERR_ABORTED && e.windows_done > w))
        json = hark_explain_json(ex);
    if (!json)
        snprintf(msg, n, "%s", rc == HARK_ERR_ABORTED ? "the server is stopping"
                               : ctx && rc != HARK_ERR_NOMEM ? hark_last_error(ctx)
                                                               : "out of memory");
    hark_explain_free(ex);
    hark_context_free(ctx);
    free(x);
    return json;
}

/* POST /v1/jobs/ID/explain?window=N: window N (from 0) of a finished job's audio, as
 * hark explain --window N records it (its trace.json). */
static int post_explain(serve_jobs *js, int fd, const http_request *r, const job_path *jp,
                        serve_job **run)
{
    (void)r, (void)run;
    char v[16] = "", *end, msg[700], path[512];
    long w = query_value(jp->query, "window", v, sizeof v) ? strtol(v, &end, 10) : -1;
    if (!*v || *end || w < 0 || w > 1 << 20)
        return error(fd, 400, "window is a window number from 0");
    pthread_mutex_lock(&js->lock);
    serve_job *j = find(js, jp->id);
    int status = !j ? 404 : j->state != DONE ? 409 : 200;
    hark_params p = j ? j->p : *js->c.params; /* its strings are the job's: busy keeps it */
    if (status == 200)
        j->busy++, snprintf(path, sizeof path, "%s", j->upload);
    pthread_mutex_unlock(&js->lock);
    if (status == 404)
        return no_job(fd, jp->id);
    if (status == 409)
        return error(fd, 409, "the job is not done: a window is explained once it is");
    char *json = trace_window(js, path, p, (int)w, msg, sizeof msg);
    pthread_mutex_lock(&js->lock);
    j->busy--;
    pthread_mutex_unlock(&js->lock);
    if (!json)
        return error(fd, strstr(msg, "no window") ? 400 : 500, msg);
    http_respond(fd, 200, "application/json", json, strlen(json));
    free(json);
    return 200;
}

/* GET /v1/options: what a job does unless its form says otherwise. */
static int get_options(serve_jobs *js, int fd, const http_request *r, const job_path *jp,
                       serve_job **run)
{
    (void)r, (void)jp, (void)run;
    const hark_params *p = js->c.params;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddBoolToObject(root, "multilingual", hark_model_is_multilingual(js->c.model));
    cJSON_AddStringToObject(root, "language", p->language ? p->language : "auto");
    cJSON_AddBoolToObject(root, "translate", p->translate);
    cJSON_AddBoolToObject(root, "timestamps", p->timestamps);
    cJSON_AddBoolToObject(root, "word_timestamps", p->words.enabled);
    cJSON_AddNumberToObject(root, "beam_size", p->search.beam_size);
    cJSON_AddBoolToObject(root, "vad", p->vad.model != NULL);
    cJSON_AddStringToObject(root, "prompt", p->prompt.initial ? p->prompt.initial : "");
    cJSON_AddNumberToObject(root, "window_seconds",
                            hark_model_window_samples(js->c.model) / (double)HARK_SAMPLE_RATE);
    cJSON_AddNumberToObject(root, "max_upload_mb", (double)(js->c.max_upload >> 20));
    cJSON *formats = cJSON_AddArrayToObject(root, "formats");
    for (int i = 0; i < N_FORMATS; i++)
        cJSON_AddItemToArray(formats, cJSON_CreateString(FORMATS[i]));
    serve_respond_json(fd, 200, root);
    return 200;
}

typedef int (*job_handler)(serve_jobs *, int, const http_request *, const job_path *,
                           serve_job **);
static const struct job_route {
    const char *method, *base;
    int with_id;
    const char *tail;
    job_handler handle;
} ROUTES[] = {
    {"POST", "/v1/jobs", 0, "", post_job},
    {"GET", "/v1/jobs", 1, "", get_job},
    {"DELETE", "/v1/jobs", 1, "", delete_job},
    {"GET", "/v1/jobs", 1, "/result", get_result},
    {"POST", "/v1/jobs", 1, "/explain", post_explain},
    {"GET", "/v1/options", 0, "", get_options},
};

int jobs_route(serve_jobs *js, int fd, const http_request *r, serve_job **run)
{
    job_path jp;
    split_path(r->path, &jp);
    *run = NULL;
    int path_known = 0;
    for (size_t i = 0; i < sizeof ROUTES / sizeof *ROUTES; i++) {
        const struct job_route *t = &ROUTES[i];
        if (strcmp(t->base, jp.base) || t->with_id != (*jp.id != 0) || strcmp(t->tail, jp.tail))
            continue;
        if (!strcmp(t->method, r->method))
            return t->handle(js, fd, r, &jp, run);
        path_known = 1;
    }
    if (path_known && *js->c.cors && !strcmp(r->method, "OPTIONS")) {
        http_respond_with(fd, 204, "Access-Control-Allow-Methods: GET, POST, DELETE, OPTIONS\r\n"
                          "Access-Control-Allow-Headers: authorization, content-type\r\n"
                          "Access-Control-Max-Age: 600\r\n", "text/plain", "", 0);
        return 204;
    }
    return error(fd, path_known ? 405 : 404, path_known
                 ? "method not allowed: POST /v1/jobs, GET or DELETE /v1/jobs/ID, "
                   "GET /v1/jobs/ID/result, POST /v1/jobs/ID/explain, GET /v1/options"
                 : "no such endpoint: POST /v1/jobs, GET or DELETE /v1/jobs/ID, "
                   "GET /v1/jobs/ID/result, POST /v1/jobs/ID/explain, GET /v1/options");
}
