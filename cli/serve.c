/* hark serve: transcription over HTTP, as whisper.cpp's whisper-server and
 * OpenAI's audio API take it: POST /inference, /v1/audio/transcriptions or
 * /v1/audio/translations with a multipart/form-data body whose "file" is the
 * audio (and optionally response_format, language, prompt, temperature,
 * timestamp_granularities[], and whisper.cpp's fields that hark has),
 * GET /health; the same form as a job with progress (POST /v1/jobs, serve_jobs.c)
 * and GET /, the studio page that uses them (studio.c).  One model, loaded once;
 * -j N requests are served at once (one by default), each in a fresh context with
 * the options hark serve was started with; SIGINT or SIGTERM stops taking requests
 * and lets those begun finish (a second one stops them too). */
#include <arpa/inet.h>
#include <cJSON.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "http.h"
#include "serve_api.h"
#include "serve_jobs.h"
#include "studio.h"
#include "face.h"

const char cli_serve_usage[] =
    "usage: hark serve [-m MODEL] [--host ADDR] [--port N] [--max-upload-mb N] [-j N] [options]\n"
    "  speech to text over HTTP until SIGINT or SIGTERM:\n"
    "    POST /inference, POST /v1/audio/transcriptions  multipart/form-data: file (the audio),\n"
    "      response_format (json, text, verbose_json, srt, vtt, tsv, csv, lrc), language,\n"
    "      prompt, temperature, timestamp_granularities[] (word); whisper.cpp's translate,\n"
    "      temperature_inc (the fallback ladder's step; 0: none), beam_size, best_of,\n"
    "      no_timestamps, offset_t and duration (ms), max_len, diarize, logprob_thold\n"
    "    POST /v1/audio/translations  the same, translated to English (multilingual models)\n"
    "    POST /v1/jobs  the same form: 202 {\"id\"} at once, the transcription goes on;\n"
    "      GET /v1/jobs/ID its progress and segments, GET /v1/jobs/ID/result?format=F\n"
    "      the CLI's file, DELETE /v1/jobs/ID cancels, POST /v1/jobs/ID/explain?window=N\n"
    "      hark explain's trace; GET /v1/options the defaults (docs/serving.md)\n"
    "    GET /health; GET / the studio page: upload or record, follow, listen, download\n"
    "  --host ADDR          address to listen on: IPv4, IPv6 (::1, ::) or a name\n"
    "                       (default 127.0.0.1)\n"
    "  --port N             port (default 8080; 0: any free one, printed)\n"
    "  --max-upload-mb N    larger bodies are refused with 413 (default 256)\n"
    "  -j, --jobs N         requests served at once (default 1)\n"
    "  --timeout N          a request's head within N s, its body at 1 kB/s after N s,\n"
    "                       and no N s without a byte (408 otherwise; default 30)\n"
    "  --api-key KEY        transcription needs \"Authorization: Bearer KEY\" (repeatable)\n"
    "  --api-key-file FILE  the keys in FILE, one a line (kept out of the process list)\n"
    "  --cors ORIGIN        browsers may call from ORIGIN (https://app.example, or * for\n"
    "                       any): Access-Control-Allow-Origin, OPTIONS preflights answered\n"
    "  the model and decoding options of hark --help (-m, -t, --vad, --beam-size...) hold\n"
    "  for every request\n";

enum { MAX_KEYS = 16, MAX_KEY_LEN = 256 };

typedef struct server {
    cli_options o;
    const char *host;
    int port, listener, max_upload_mb;
    http_limits limits;
    hark_model *model;
    hark_params params;
    char *keys[MAX_KEYS]; /* API keys; none: no authentication */
    char cors[300];       /* "Access-Control-Allow-Origin: ...\r\n", or "" */
    atomic_int running;   /* workers not yet ended */
    serve_jobs *jobs;     /* POST /v1/jobs's */
    char *page;           /* GET /'s */
    size_t page_len;
    int n_keys;
} server;

/* An error as OpenAI's API words one (serve_api.c's, which the jobs answer too). */
static void respond_error(int fd, int status, const char *message)
{
    serve_respond_error(fd, status, message);
}

/* Set by a second SIGINT or SIGTERM: the transcriptions under way stop too. */
static atomic_int g_stop_now;

/* Whether the peer has closed its end (given up waiting): the rest of its
 * transcription would be for nobody. */
static int peer_gone(int fd)
{
    char c;
    ssize_t k = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* should_abort: the peer is gone, or the server is to stop at once. */
static int stop_transcribing(void *user)
{
    return atomic_load(&g_stop_now) || peer_gone(*(const int *)user);
}

static int transcribe(const server *s, int fd, const http_request *r)
{
    form_field file;
    request_options q;
    hark_params p = s->params;
    char path[512], msg[700];
    const char *bad = serve_upload_options(r, s->model, &file, &q, &p);
    if (bad) {
        respond_error(fd, 400, bad);
        return 400;
    }
    if (serve_save_upload(&file, path, sizeof path)) {
        respond_error(fd, 500, "cannot store the upload in the temporary directory");
        return 500;
    }
    p.callbacks.should_abort = stop_transcribing;
    p.callbacks.should_abort_user = &fd;
    hark_context *ctx = hark_context_new(s->model, &p);
    int rc = ctx ? hark_transcribe_file(ctx, path) : HARK_ERR_NOMEM;
    unlink(path);
    int status = rc == 0 ? 200 : rc == HARK_ERR_NOMEM ? 500 : 400;
    if (rc == HARK_ERR_ABORTED && peer_gone(fd)) {
        status = 499; /* nginx's "client closed request", for the log: nobody to answer */
    } else if (rc == HARK_ERR_ABORTED) {
        respond_error(fd, status = 503, "the server is stopping: send the file again later");
    } else if (rc) {
        if (ctx)
            serve_upload_error(ctx, path, file.filename, msg, sizeof msg);
        respond_error(fd, status, ctx ? msg : "out of memory");
    } else {
        const char *type;
        char *body = serve_render(ctx, q.format, &p, &s->o.layout, &type);
        if (body)
            http_respond(fd, 200, type, body, strlen(body));
        else
            respond_error(fd, status = 500, "out of memory");
        free(body);
    }
    hark_context_free(ctx);
    return status;
}

static int is_transcription(const http_request *r)
{
    return !strcmp(r->path, "/inference") || !strcmp(r->path, "/v1/audio/transcriptions") ||
           !strcmp(r->path, "/v1/audio/translations");
}

/* a == b, in a time that tells nothing of where they first differ. */
static int same_secret(const char *a, const char *b)
{
    size_t n = strlen(a);
    if (n != strlen(b))
        return 0;
    unsigned char diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

/* NULL when the request may go on: no keys, an endpoint that needs none (the
 * others answer 404, 405 or /health's status), or "Bearer KEY" with one of the
 * keys; else why not. */
static const char *unauthorized(const server *s, const http_request *r)
{
    int job_api = jobs_path(r) && strcmp(r->method, "OPTIONS"); /* a preflight has no key */
    if (!s->n_keys || (!job_api && (!is_transcription(r) || strcmp(r->method, "POST"))))
        return NULL;
    const char *v = r->authorization;
    if (!*v)
        return "no API key: send it as Authorization: Bearer KEY";
    int match = 0;
    if (!strncasecmp(v, "Bearer ", 7)) {
        v += 7 + strspn(v + 7, " ");
        for (int i = 0; i < s->n_keys; i++)
            match |= same_secret(v, s->keys[i]); /* every key compared */
    }
    return match ? NULL : "incorrect API key";
}

/* Answers r; *run: a job for this worker to run once the connection is closed. */
static int route(const server *s, int fd, const http_request *r, serve_job **run)
{
    int transcription = is_transcription(r);
    int health = !strcmp(r->path, "/health");
    if ((transcription || health) && *s->cors && !strcmp(r->method, "OPTIONS")) {
        /* a browser's preflight: what it may send (OpenAI's SDK: Authorization) */
        http_respond_with(fd, 204, "Access-Control-Allow-Methods: GET, POST, OPTIONS\r\n"
                          "Access-Control-Allow-Headers: authorization, content-type\r\n"
                          "Access-Control-Max-Age: 600\r\n", "text/plain", "", 0);
        return 204;
    }
    if (health && !strcmp(r->method, "GET")) {
        http_respond(fd, 200, "application/json", "{\"status\":\"ok\"}", 15);
        return 200;
    }
    if (!strcmp(r->path, "/") && !strcmp(r->method, "GET")) {
        http_respond(fd, 200, "text/html; charset=utf-8", s->page, s->page_len);
        return 200;
    }
    if (jobs_path(r))
        return jobs_route(s->jobs, fd, r, run);
    if (transcription && !strcmp(r->method, "POST"))
        return transcribe(s, fd, r);
    int status = transcription || health ? 405 : 404;
    respond_error(fd, status, status == 405 ? "method not allowed: POST /inference, "
                  "/v1/audio/transcriptions and /v1/audio/translations, GET /health"
                  : "no such endpoint: POST /inference, POST /v1/audio/transcriptions, "
                  "POST /v1/audio/translations, GET /health");
    return status;
}

/* The peer's text made safe to log: no control characters or escapes. */
static void printable(char *text)
{
    for (char *c = text; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            *c = '?';
}

/* A request's line on stderr: the peer, method, path, status and the time since t0. */
static void log_request(const server *s, const char *peer, const char *method, const char *path,
                        int status, const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!s->o.quiet)
        fprintf(stderr, "hark: %s %s %s %d (%.2f s)\n", peer, *method ? method : "-",
                *path ? path : "-", status,
                (double)(t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9);
}

/* One connection from peer (its address): a request, its answer, a line on stderr;
 * *run: a job to run once the connection is closed. */
static void serve_one(const server *s, int fd, const char *peer, serve_job **run)
{
    struct timeval limit = {s->limits.timeout_s, 0}; /* a peer that stops reading is dropped */
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    http_request r;
    char why[200];
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int status = http_read_head(fd, &s->limits, &r, why, sizeof why);
    const char *denied = status ? NULL : unauthorized(s, &r);
    if (denied) /* refused before its body is stored */
        respond_error(fd, status = 401, denied);
    else if (status || (status = http_read_body(fd, &r, why, sizeof why)))
        respond_error(fd, status, why);
    else
        status = route(s, fd, &r, run);
    printable(r.method);
    printable(r.path);
    log_request(s, peer, r.method, r.path, status, &t0);
    http_request_free(&r);
}

/* A socket bound to addr and listening; -1 with errno set if not. */
static int bound_socket(const struct addrinfo *addr)
{
    int one = 1, fd = socket(addr->ai_family, addr->ai_socktype, addr->ai_protocol);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, addr->ai_addr, addr->ai_addrlen) == 0 && listen(fd, 16) == 0)
        return fd;
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

/* "http://HOST:PORT" of a listening socket, an IPv6 address in brackets. */
static void print_url(int fd)
{
    struct sockaddr_storage a;
    socklen_t len = sizeof a;
    char host[NI_MAXHOST], port[NI_MAXSERV];
    if (getsockname(fd, (struct sockaddr *)&a, &len) ||
        getnameinfo((struct sockaddr *)&a, len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV))
        snprintf(host, sizeof host, "?"), snprintf(port, sizeof port, "?");
    const char *fmt = a.ss_family == AF_INET6 ? "hark: listening on http://[%s]:%s\n"
                                              : "hark: listening on http://%s:%s\n";
    fprintf(stderr, fmt, host, port);
}

/* --host: an IPv4 or IPv6 address or a name (localhost), the first of its
 * addresses that takes the port. */
static int listen_on(server *s)
{
    struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM},
                    *found;
    char port[8];
    snprintf(port, sizeof port, "%d", s->port);
    struct in_addr v4;
    if (strspn(s->host, "0123456789.") == strlen(s->host) &&
        inet_pton(AF_INET, s->host, &v4) != 1) {
        /* getaddrinfo would read 1.2.3 as 1.2.0.3 */
        fprintf(stderr, "hark: serve: --host %s is not an IPv4 address\n", s->host);
        return -1;
    }
    int rc = getaddrinfo(s->host, port, &hints, &found);
    if (rc) {
        fprintf(stderr, "hark: serve: --host %s: %s\n", s->host,
                rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (const struct addrinfo *a = found; a && fd < 0; a = a->ai_next)
        fd = bound_socket(a);
    freeaddrinfo(found);
    if (fd < 0) {
        fprintf(stderr, "hark: serve: cannot listen on %s port %d (%s)\n", s->host, s->port,
                strerror(errno));
        return -1;
    }
    print_url(fd);
    return fd;
}

/* A worker: connections one after another until the listener is shut down. */
static void *accept_loop(void *arg)
{
    server *s = arg;
    for (;;) {
        struct sockaddr_storage a;
        socklen_t len = sizeof a;
        char peer[NI_MAXHOST];
        int fd = accept(s->listener, (struct sockaddr *)&a, &len);
        if (fd < 0 && (errno == EINVAL || errno == EBADF)) {
            atomic_fetch_sub(&s->running, 1); /* shut down: stopping */
            return NULL;
        }
        if (fd < 0) { /* a connection reset before it was taken, out of descriptors... */
            nanosleep(&(struct timespec){0, 10000000}, NULL);
            continue;
        }
        if (getnameinfo((struct sockaddr *)&a, len, peer, sizeof peer, NULL, 0, NI_NUMERICHOST))
            snprintf(peer, sizeof peer, "-");
        serve_job *job = NULL;
        serve_one(s, fd, peer, &job);
        http_linger(fd);
        close(fd);
        if (job) { /* POST /v1/jobs's transcription, on this worker as /inference's */
            char path[64];
            struct timespec t0;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            int status = jobs_run(s->jobs, job, path, sizeof path);
            log_request(s, peer, "JOB", path, status, &t0);
        }
    }
}

/* Waits for the workers to end; a second SIGINT or SIGTERM meanwhile stops the
 * transcriptions under way (systemd's stop, say, should not wait out an hour of
 * audio). */
static void await_workers(pthread_t *t, int n, atomic_int *running, const sigset_t *stop)
{
    struct timespec tick = {0, 100000000};
    while (atomic_load(running) > 0)
        if (sigtimedwait(stop, NULL, &tick) > 0)
            atomic_store(&g_stop_now, 1);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

/* -j workers accept on the listener; this thread waits for SIGINT or SIGTERM,
 * then shuts the listener, which ends each worker after its request. */
static void serve(server *s)
{
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL); /* the workers inherit the mask */
    int n = s->o.jobs > 0 ? s->o.jobs : 1, started = 0, sig;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    while (t && started < n) {
        atomic_fetch_add(&s->running, 1); /* before the worker may end */
        if (pthread_create(&t[started], NULL, accept_loop, s)) {
            atomic_fetch_sub(&s->running, 1);
            break;
        }
        started++;
    }
    if (started)
        sigwait(&stop, &sig);
    else
        fprintf(stderr, "hark: serve: cannot start a worker thread\n");
    shutdown(s->listener, SHUT_RDWR);
    await_workers(t, started, &s->running, &stop);
    free(t);
}

/* Where hark serve's integer option a goes, and its range; NULL for another option. */
static int *int_option(server *s, const char *a, int *lo, int *hi)
{
    if (!strcmp(a, "-j") || !strcmp(a, "--jobs"))
        return *lo = 1, *hi = CLI_MAX_JOBS, &s->o.jobs;
    if (!strcmp(a, "--port"))
        return *lo = 0, *hi = 65535, &s->port;
    if (!strcmp(a, "--max-upload-mb"))
        return *lo = 1, *hi = 4096, &s->max_upload_mb;
    if (!strcmp(a, "--timeout"))
        return *lo = 1, *hi = 3600, &s->limits.timeout_s;
    return NULL;
}

/* 1 to max printable ASCII characters without spaces: what a header value can
 * carry whole. */
static int header_token(const char *v, size_t max)
{
    size_t n = strlen(v);
    for (size_t i = 0; i < n; i++)
        if (v[i] <= ' ' || v[i] > '~')
            return 0;
    return n > 0 && n <= max;
}

/* Adds an API key. */
static int add_key(server *s, const char *key, const char *from)
{
    if (!header_token(key, MAX_KEY_LEN) || s->n_keys == MAX_KEYS) {
        fprintf(stderr, "hark: serve: %s: %s\n", from,
                s->n_keys == MAX_KEYS ? "more than 16 API keys"
                                      : "an API key is 1 to 256 printable characters, no spaces");
        return -1;
    }
    return (s->keys[s->n_keys++] = strdup(key)) ? 0 : -1;
}

/* The keys in a file, one a line (surrounding spaces and blank lines ignored). */
static int add_key_file(server *s, const char *path)
{
    char *text, *save = NULL;
    size_t size;
    hark_error e;
    if (hark_read_file(path, &text, &size, &e)) {
        fprintf(stderr, "hark: %s\n", e.msg);
        return -1;
    }
    int before = s->n_keys, rc = 0;
    for (char *line = strtok_r(text, "\r\n", &save); line && !rc;
         line = strtok_r(NULL, "\r\n", &save)) {
        line += strspn(line, " \t");
        size_t n = strlen(line);
        while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
            line[--n] = 0;
        if (n)
            rc = add_key(s, line, path);
    }
    free(text);
    if (!rc && s->n_keys == before) {
        fprintf(stderr, "hark: %s: no API key in it\n", path);
        rc = -1;
    }
    return rc;
}

/* hark serve's own options; the rest are transcription's (cli_parse_common). */
static int parse(server *s, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli_print(cli_serve_usage);
            return -1;
        }
        int lo, hi, *number = v ? int_option(s, a, &lo, &hi) : NULL;
        if (v && !strcmp(a, "--host"))
            s->host = v, i++;
        else if (v && !strcmp(a, "--api-key")) {
            if (add_key(s, v, "--api-key"))
                return 2;
            i++;
        } else if (v && !strcmp(a, "--api-key-file")) {
            if (add_key_file(s, v))
                return 1;
            i++;
        } else if (v && !strcmp(a, "--cors")) {
            if (!header_token(v, 256)) {
                fprintf(stderr, "hark: serve: --cors: an origin is 1 to 256 printable "
                                "characters, no spaces (https://app.example, or *)\n");
                return 2;
            }
            snprintf(s->cors, sizeof s->cors, "Access-Control-Allow-Origin: %s\r\n", v);
            i++;
        }
        else if (number) {
            if (cli_int_arg(v, lo, hi, number)) {
                fprintf(stderr, "hark: bad value for %s: %s (see hark --help)\n", a, v);
                return 2;
            }
            i++;
        } else {
            int r = cli_parse_common(&s->o, argc, argv, &i);
            if (r < 0)
                return 2;
            if (r == 0) {
                cli_unknown_option("serve", a);
                return 2;
            }
        }
    }
    return 0;
}

static void free_keys(server *s)
{
    for (int i = 0; i < s->n_keys; i++)
        free(s->keys[i]);
    s->n_keys = 0;
}

int cli_serve_main(int argc, char **argv)
{
    server s = {.host = "127.0.0.1", .port = 8080, .max_upload_mb = 256, .limits.timeout_s = 30};
    cli_default_options(&s.o);
    int rc = parse(&s, argc, argv);
    if (rc) {
        free_keys(&s);
        return rc < 0 ? 0 : rc; /* -1: --help */
    }
    s.limits.max_body = (size_t)s.max_upload_mb << 20;
    cli_default_threads(&s.o);
    hark_vad *vad;
    s.listener = -1;
    if ((s.model = cli_load_models(&s.o, &vad))) {
        s.params = s.o.params;
        s.params.vad.model = vad;
        jobs_config jc = {s.model, &s.params, &s.o.layout, &g_stop_now, s.cors, s.limits.max_body};
        s.jobs = jobs_new(&jc);
        s.page = studio_page(&s.page_len);
        if (s.jobs && s.page)
            s.listener = listen_on(&s);
        else
            fprintf(stderr, "hark: serve: out of memory\n");
        http_always_send(s.cors);
    }
    if (s.listener >= 0) {
        serve(&s);
        close(s.listener);
    }
    jobs_free(s.jobs);
    free(s.page);
    if (s.model) {
        hark_model_free(s.model);
        hark_vad_free(vad);
    }
    free_keys(&s);
    return s.listener >= 0 ? 0 : 1;
}
