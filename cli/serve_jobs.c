/* hark serve's transcription jobs (serve_jobs.h): a fixed table of jobs under one
 * lock, which the loop's thread (status, result, cancel) and the workers (the
 * transcriptions, explains) share.  A job's request body is held, and counted in
 * --max-buffered-mb, until its worker has stored the upload in $TMPDIR, where it
 * stays while the job is held (a window's explain reads it again); as it is
 * transcribed, the progress and each segment (its tokens' and words'
 * probabilities) are copied out of the context as JSON, so that a status request
 * reads them without touching the transcription; at the end the writers' files are
 * made once and the context freed.  What a job holds is bounded by its audio's
 * transcript, and at most JOBS_MAX are held. */
#include <cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/base.h"
#include "serve_api.h"
#include "serve_jobs.h"

enum job_state { QUEUED, RUNNING, DONE, FAILED, CANCELLED };
static const char *const STATE_NAMES[] = {"queued", "running", "done", "failed", "cancelled"};
/* the CLI's files a finished job keeps: GET /v1/jobs/ID/result?format= */
static const char *const FORMATS[] = {"txt", "srt", "vtt", "tsv", "json", "csv", "lrc"};
enum { N_FORMATS = sizeof FORMATS / sizeof *FORMATS };

typedef struct serve_job serve_job;

struct serve_job {
    char id[33];               /* 128 random bits in hex: not guessable          */
    char upload[512];          /* the audio in $TMPDIR, once its worker stored it */
    size_t file_at, file_len;  /* the upload's bytes in the request's body        */
    char filename[128];        /* as the client named it                         */
    request_options q;         /* p's strings                                    */
    hark_params p;
    serve_jobs *owner;
    hark_context *ctx;         /* while it runs: the segment callback reads it   */
    enum job_state state;
    atomic_int cancel;         /* DELETE asked to stop                           */
    int busy;                  /* explains reading its upload: not forgotten     */
    int queued;                /* in the workers' queue: not forgotten either    */
    int status;                /* for the log, once finished                     */
    double seconds_done, seconds_total;
    double *window_ends;       /* each window's end, seconds                     */
    int n_windows, cap_windows;
    char **segments;           /* each as JSON                                   */
    int n_segments, cap_segments;
    char *out[N_FORMATS];      /* the writers' files, once done                  */
    char error[700];
    double finished_at;        /* hark_now_s() when it ended                     */
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

static int finished(const serve_job *j)
{
    return j->state >= DONE;
}

/* Forgets the finished jobs older than JOBS_KEEP_S (the lock held). */
static void expire(serve_jobs *js)
{
    double now = hark_now_s();
    for (int i = 0; i < JOBS_MAX; i++) {
        serve_job *j = js->job[i];
        if (j && finished(j) && !j->busy && !j->queued &&
            now - j->finished_at > JOBS_KEEP_S) {
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

/* Cancelled, or the server is stopping: nobody will be there to read the outcome. */
static int should_abort(void *user)
{
    const serve_job *j = user;
    return atomic_load(&j->cancel) || conn_stopping();
}

/* The writers' files of a finished transcription; -1 out of memory. */
static int render(serve_job *j, const hark_context *ctx)
{
    for (int i = 0; i < N_FORMATS; i++)
        if (!(j->out[i] = hark_format_output(ctx, FORMATS[i], j->owner->c.layout)))
            return -1;
    return 0;
}

/* How a transcription that returned rc ends (the lock held): the job's state,
 * status and error. */
static void conclude(serve_job *j, const hark_context *ctx, int rc)
{
    int cancelled = rc == HARK_ERR_ABORTED && atomic_load(&j->cancel);
    j->state = rc == 0 ? DONE : cancelled ? CANCELLED : FAILED;
    j->status = 200;
    if (cancelled) {
        j->status = 499; /* as nginx's "client closed request": nobody wants the rest */
        snprintf(j->error, sizeof j->error, "cancelled");
    } else if (rc == HARK_ERR_ABORTED) {
        j->status = 503;
        snprintf(j->error, sizeof j->error, "the server is stopping: send the file again later");
    } else if (rc) {
        j->status = serve_failure(ctx, rc, &j->p, j->upload, j->filename, j->error,
                                  sizeof j->error);
    }
    j->finished_at = hark_now_s();
}

/* The job as a worker takes it from the queue (w): its upload stored in $TMPDIR
 * from the body its request left (unless it is to stop), the body then let go.
 * Returns 0 to go on, else the job's status: it is concluded (perhaps by a DELETE
 * while it waited), and may be forgotten from then on. */
static int store(serve_job *j, conn *w)
{
    const http_request *r = conn_request(w);
    form_field file = {.data = r->body + j->file_at, .len = j->file_len};
    char path[512] = "";
    int rc = should_abort(j) ? HARK_ERR_ABORTED : serve_save_upload(&file, path, sizeof path);
    conn_drop_body(w); /* in $TMPDIR now, or not needed: before "running" is seen */
    pthread_mutex_lock(&j->owner->lock);
    snprintf(j->upload, sizeof j->upload, "%s", path); /* removed with the job */
    if (finished(j)) {
        /* cancelled while it waited: concluded then */
    } else if (rc == HARK_ERR_ABORTED) {
        conclude(j, NULL, rc);
    } else if (rc) {
        j->state = FAILED, j->status = 500;
        snprintf(j->error, sizeof j->error, "cannot store the upload in the temporary directory");
        j->finished_at = hark_now_s();
    } else {
        j->state = RUNNING;
    }
    int status = finished(j) ? j->status : 0;
    j->queued = 0;
    pthread_mutex_unlock(&j->owner->lock);
    return status;
}

/* A job's work, on a worker, no connection waiting on it (conn_detach): the upload
 * stored, transcribed, the files made.  Returns the status for its log line. */
static int job_run(void *app, conn *w)
{
    (void)app;
    serve_job *j = conn_arg(w);
    serve_jobs *js = j->owner;
    int stored = store(j, w);
    if (stored)
        return stored;
    hark_params p = j->p;
    p.callbacks.on_segment = on_segment, p.callbacks.on_segment_user = j;
    p.callbacks.on_progress = on_progress, p.callbacks.on_progress_user = j;
    p.callbacks.should_abort = should_abort, p.callbacks.should_abort_user = j;
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

/* The job's id in /v1/jobs/ID[/...] into id; 0 when there is none. */
static int job_id(const char *path, char *id, size_t n)
{
    const char *at = path + strlen("/v1/jobs/");
    size_t k = strcspn(at, "/");
    snprintf(id, n, "%.*s", (int)(k < n ? k : n - 1), at);
    return strncmp(path, "/v1/jobs/", 9) == 0 && k > 0;
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

static int no_job(conn *c, const char *id)
{
    char msg[160];
    snprintf(msg, sizeof msg, "no job %s: a finished job is kept %d minutes", id,
             JOBS_KEEP_S / 60);
    return serve_error(c, 404, msg);
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

/* A new job of the form in r (its options read, an id drawn), or NULL with the
 * answer given (*status). */
static serve_job *new_job(serve_jobs *js, conn *c, const http_request *r, int *status)
{
    form_field file;
    unsigned char bits[16];
    serve_job *j = calloc(1, sizeof *j);
    if (!j || getrandom(bits, sizeof bits, 0) != sizeof bits) {
        free(j);
        *status = serve_error(c, 500, "out of memory");
        return NULL;
    }
    j->p = *js->c.params;
    j->owner = js;
    const char *bad = serve_upload_options(r, js->c.model, &file, &j->q, &j->p);
    if (bad) {
        free(j);
        *status = serve_error(c, 400, bad);
        return NULL;
    }
    for (int i = 0; i < 16; i++)
        snprintf(j->id + 2 * i, 3, "%02x", bits[i]);
    snprintf(j->filename, sizeof j->filename, "%s", file.filename);
    j->file_at = (size_t)(file.data - r->body), j->file_len = file.len;
    j->queued = 1; /* (forgotten at once, unqueued, if it cannot be) */
    return j;
}

/* POST /v1/jobs: /inference's form; 202 {"id"} at once, the job then queued for a
 * worker with the request's body (503 when the queue is full). */
int jobs_post(serve_jobs *js, conn *c)
{
    int status;
    serve_job *j = new_job(js, c, conn_request(c), &status);
    if (!j)
        return status;
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%s", j->id);
    pthread_mutex_lock(&js->lock);
    int full = place(js, j);
    pthread_mutex_unlock(&js->lock);
    if (full) {
        free(j);
        return serve_error(c, 429, "too many jobs held: wait for one to finish, or DELETE a finished one");
    }
    if (conn_detach(c, "JOB", path, job_run, j)) {
        pthread_mutex_lock(&js->lock);
        forget(js, j);
        pthread_mutex_unlock(&js->lock);
        serve_respond_error(c, 503, "Retry-After: 5\r\n",
                            "the server is busy: every worker has a request, and the queue is full");
        return 503;
    }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "id", j->id); /* only this thread frees a job */
    cJSON_AddStringToObject(root, "state", "queued");
    return serve_respond_json(c, 202, root);
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
int jobs_get(serve_jobs *js, conn *c)
{
    const http_request *r = conn_request(c);
    char v[16], id[40];
    job_id(r->path, id, sizeof id);
    int since = query_value(r->query, "since", v, sizeof v) ? atoi(v) : 0;
    double window_s = hark_model_window_samples(js->c.model) / (double)HARK_SAMPLE_RATE;
    pthread_mutex_lock(&js->lock);
    serve_job *j = find(js, id);
    cJSON *root = j ? status_json(j, window_s) : NULL, *segs = cJSON_CreateArray();
    for (int i = since < 0 ? 0 : since; j && i < j->n_segments; i++)
        cJSON_AddItemToArray(segs, cJSON_CreateRaw(j->segments[i]));
    pthread_mutex_unlock(&js->lock);
    if (!root) {
        cJSON_Delete(segs);
        return no_job(c, id);
    }
    cJSON_AddItemToObject(root, "segments", segs);
    return serve_respond_json(c, 200, root);
}

/* GET /v1/jobs/ID/result?format=F: the CLI's file in format F (txt by default). */
int jobs_result(serve_jobs *js, conn *c)
{
    const http_request *r = conn_request(c);
    char format[16] = "txt", id[40];
    job_id(r->path, id, sizeof id);
    query_value(r->query, "format", format, sizeof format);
    int f = 0;
    while (f < N_FORMATS && strcmp(FORMATS[f], format))
        f++;
    if (f == N_FORMATS)
        return serve_error(c, 400, "format is one of txt, srt, vtt, tsv, json, csv, lrc");
    pthread_mutex_lock(&js->lock);
    serve_job *j = find(js, id);
    int status = !j ? 404 : j->state != DONE ? 409 : 200;
    if (status == 200)
        conn_answer(c, 200, NULL, serve_content_type(format), j->out[f], strlen(j->out[f]));
    pthread_mutex_unlock(&js->lock);
    if (status == 404)
        return no_job(c, id);
    if (status == 409)
        return serve_error(c, 409, "the job has no transcript: it is not done");
    return 200;
}

/* DELETE /v1/jobs/ID: a job running is stopped at its next window, one queued at
 * once (202, "cancelling"); a finished one is forgotten, its upload removed (200). */
int jobs_delete(serve_jobs *js, conn *c)
{
    char id[40];
    job_id(conn_request(c)->path, id, sizeof id);
    pthread_mutex_lock(&js->lock);
    serve_job *j = find(js, id);
    int status = !j ? 404 : !finished(j) || j->queued ? 202 : j->busy ? 409 : 200;
    if (status == 202)
        atomic_store(&j->cancel, 1);
    if (status == 202 && j->state == QUEUED)
        conclude(j, NULL, HARK_ERR_ABORTED); /* its worker will find it so */
    if (status == 200)
        forget(js, j);
    pthread_mutex_unlock(&js->lock);
    if (status == 404)
        return no_job(c, id);
    if (status == 409)
        return serve_error(c, 409, "the job is being explained: delete it after");
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "id", id);
    cJSON_AddStringToObject(root, "state", status == 202 ? "cancelling" : "deleted");
    return serve_respond_json(c, status, root);
}

/* An explain's transcription: stops once its window is traced (on_progress counts the
 * windows), when its peer has gone, or when the server stops at once. */
typedef struct explain_run {
    int window, windows_done, gone;
    conn *c;
} explain_run;

static void explain_progress(double done, double total, void *user)
{
    (void)done, (void)total;
    ((explain_run *)user)->windows_done++;
}

static int explain_enough(void *user)
{
    explain_run *e = user;
    e->gone = e->gone || conn_peer_gone(e->c);
    return e->windows_done > e->window || conn_stopping_now() || e->gone;
}

/* Window w of the audio at path traced as hark explain traces it, with the job's
 * options; the JSON, or NULL with why in msg. */
static char *trace_window(const serve_jobs *js, explain_run *e, const char *path, hark_params p,
                          char *msg, size_t n)
{
    float *x = NULL;
    size_t len = 0;
    memset(&p.callbacks, 0, sizeof p.callbacks);
    p.callbacks.on_progress = explain_progress, p.callbacks.on_progress_user = e;
    p.callbacks.should_abort = explain_enough, p.callbacks.should_abort_user = e;
    if (hark_read_audio(path, &x, &len, msg, n))
        return NULL;
    hark_context *ctx = hark_context_new(js->c.model, &p);
    hark_explain *ex = hark_explain_new(e->window);
    int rc = ctx && ex ? hark_transcribe_explained(ctx, x, len, ex) : HARK_ERR_NOMEM;
    char *json = NULL;
    if (rc == 0 || (rc == HARK_ERR_ABORTED && e->windows_done > e->window))
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

/* POST /v1/jobs/ID/explain?window=N, on a worker: window N (from 0) of a finished
 * job's audio, as hark explain --window N records it (its trace.json). */
int jobs_explain(serve_jobs *js, conn *c)
{
    const http_request *r = conn_request(c);
    char v[16] = "", *end, msg[700], path[512], id[40];
    job_id(r->path, id, sizeof id);
    long w = query_value(r->query, "window", v, sizeof v) ? strtol(v, &end, 10) : -1;
    if (!*v || *end || w < 0 || w > 1 << 20)
        return serve_error(c, 400, "window is a window number from 0");
    pthread_mutex_lock(&js->lock);
    serve_job *j = find(js, id);
    int status = !j ? 404 : j->state != DONE ? 409 : 200;
    hark_params p = j ? j->p : *js->c.params; /* its strings are the job's: busy keeps it */
    if (status == 200)
        j->busy++, snprintf(path, sizeof path, "%s", j->upload);
    pthread_mutex_unlock(&js->lock);
    if (status == 404)
        return no_job(c, id);
    if (status == 409)
        return serve_error(c, 409, "the job is not done: a window is explained once it is");
    explain_run e = {(int)w, 0, 0, c};
    char *json = trace_window(js, &e, path, p, msg, sizeof msg);
    pthread_mutex_lock(&js->lock);
    j->busy--;
    pthread_mutex_unlock(&js->lock);
    if (!json && e.gone)
        return 499; /* nginx's "client closed request": nobody to answer */
    if (!json)
        return serve_error(c, strstr(msg, "no window") ? 400 : 500, msg);
    conn_answer(c, 200, NULL, "application/json", json, strlen(json));
    free(json);
    return 200;
}

/* GET /v1/options: what a job does unless its form says otherwise. */
int jobs_options(serve_jobs *js, conn *c)
{
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
    return serve_respond_json(c, 200, root);
}
