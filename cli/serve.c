/* hark serve: transcription over HTTP, as whisper.cpp's whisper-server and
 * OpenAI's audio API take it: POST /inference, /v1/audio/transcriptions or
 * /v1/audio/translations with a multipart/form-data body whose "file" is the
 * audio (and optionally response_format, language, prompt, temperature,
 * timestamp_granularities[], and whisper.cpp's fields that hark has),
 * GET /health; the same form as a job with progress (POST /v1/jobs and the rest
 * of the job API, serve_jobs.c) and GET /, the studio page that uses it
 * (studio.c).  One model, loaded once; -j N requests are transcribed at once
 * (one by default), each in a fresh context with the options hark serve was
 * started with.  The connections (reading, limits, queueing, writing, stopping
 * on SIGINT or SIGTERM) are conn.c's; here are the routes and their handlers. */
#include <arpa/inet.h>
#include <cJSON.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "conn.h"
#include "http.h"
#include "option_table.h"
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
    "  --max-buffered-mb N  request bodies held in memory at once, in all; one more is\n"
    "                       answered 503 with Retry-After (default: (-j + --queue) times\n"
    "                       --max-upload-mb; at least --max-upload-mb)\n"
    "  --max-duration S     audio longer than S seconds is refused with 413 (default\n"
    "                       86400; 0: no limit)\n"
    "  -j, --jobs N         transcriptions at once (default 1)\n"
    "  --queue N            whole requests waiting for one of them; more are answered\n"
    "                       503 with Retry-After (default 16)\n"
    "  --max-connections N  open at once, in all (default 512); --max-per-peer N: from\n"
    "                       one address (default 64).  At either, a new one takes the\n"
    "                       place of the one still sending its head that has been\n"
    "                       silent longest, or gets 503\n"
    "  --timeout N          a request's head within N s, its body at 1 kB/s after N s,\n"
    "                       and no N s without a byte (408 otherwise; default 30)\n"
    "  --api-key KEY        transcription and the job API need \"Authorization: Bearer\n"
    "                       KEY\" (repeatable)\n"
    "  --api-key-file FILE  the keys in FILE, one a line (kept out of the process list)\n"
    "  --cors ORIGIN        browsers may call from ORIGIN (https://app.example, or * for\n"
    "                       any): Access-Control-Allow-Origin, OPTIONS preflights answered\n"
    "  the model and decoding options of hark --help (-m, -t, --vad, --beam-size...) hold\n"
    "  for every request\n";

enum { MAX_KEYS = 16, MAX_KEY_LEN = 256 };

typedef struct server {
    cli_options o;
    const char *host;
    int port, listener, max_upload_mb, max_buffered_mb;
    conn_limits limits;
    hark_model *model;
    hark_params params;
    char *keys[MAX_KEYS]; /* API keys; none: no authentication */
    char cors[300];       /* "Access-Control-Allow-Origin: ...\r\n", or "" */
    int n_keys;
    serve_jobs *jobs;     /* POST /v1/jobs's */
    char *page;           /* GET /'s */
    size_t page_len;
} server;

/* should_abort: the peer is gone, or the server is to stop at once. */
static int stop_transcribing(void *user)
{
    return conn_stopping_now() || conn_peer_gone(user);
}

/* POST /inference, /v1/audio/transcriptions, /v1/audio/translations: on a worker. */
static int transcribe(void *app, conn *c)
{
    const server *s = app;
    const http_request *r = conn_request(c);
    form_field file;
    request_options q;
    hark_params p = s->params;
    char path[512], msg[700];
    const char *bad = serve_upload_options(r, s->model, &file, &q, &p);
    if (bad)
        return serve_error(c, 400, bad);
    if (serve_save_upload(&file, path, sizeof path))
        return serve_error(c, 500, "cannot store the upload in the temporary directory");
    conn_drop_body(c); /* stored: the memory goes back for other uploads */
    p.callbacks.should_abort = stop_transcribing;
    p.callbacks.should_abort_user = c;
    hark_context *ctx = hark_context_new(s->model, &p);
    int rc = ctx ? hark_transcribe_file(ctx, path) : HARK_ERR_NOMEM;
    unlink(path);
    int status = 200;
    if (rc == HARK_ERR_ABORTED && !conn_stopping_now()) {
        status = 499; /* nginx's "client closed request", for the log: nobody to answer */
    } else if (rc == HARK_ERR_ABORTED) {
        status = serve_error(c, 503, "the server is stopping: send the file again later");
    } else if (rc) {
        status = serve_failure(ctx, rc, &p, path, file.filename, msg, sizeof msg);
        serve_error(c, status, msg);
    } else {
        const char *type;
        char *body = serve_render(ctx, q.format, &p, &s->o.layout, &type);
        if (body)
            conn_answer(c, 200, NULL, type, body, strlen(body));
        else
            status = serve_error(c, 500, "out of memory");
        free(body);
    }
    hark_context_free(ctx);
    return status;
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

/* For the routes that need a key (CONN_KEY): NULL when the request may go on
 * (no keys, or "Bearer KEY" with one of them), else why not.  Asked as soon as
 * the head is in, before any body is read. */
static const char *unauthorized(void *app, const http_request *r)
{
    const server *s = app;
    if (!s->n_keys)
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

/* GET /: the studio page (studio.c; it asks for the key itself, at the API's 401). */
static int home(void *app, conn *c)
{
    const server *s = app;
    conn_answer(c, 200, NULL, "text/html; charset=utf-8", s->page, s->page_len);
    return 200;
}

static int health(void *app, conn *c)
{
    (void)app;
    conn_answer(c, 200, NULL, "application/json", "{\"status\":\"ok\"}", 15);
    return 200;
}

static int unrouted(void *app, conn *c);

static int is_job_api(const char *path)
{
    return !strncmp(path, "/v1/jobs", 8) || !strcmp(path, "/v1/options");
}

/* OPTIONS, a browser's preflight (with --cors; 405 without): what it may send
 * (OpenAI's SDK: Authorization). */
static int preflight(void *app, conn *c)
{
    const server *s = app;
    if (!*s->cors)
        return unrouted(app, c);
    conn_answer(c, 204, is_job_api(conn_request(c)->path)
                ? "Access-Control-Allow-Methods: GET, POST, DELETE, OPTIONS\r\n"
                  "Access-Control-Allow-Headers: authorization, content-type\r\n"
                  "Access-Control-Max-Age: 600\r\n"
                : "Access-Control-Allow-Methods: GET, POST, OPTIONS\r\n"
                  "Access-Control-Allow-Headers: authorization, content-type\r\n"
                  "Access-Control-Max-Age: 600\r\n", "text/plain", "", 0);
    return 204;
}

/* The job API's handlers (serve_jobs.c), given this server's jobs. */
static int job_post(void *app, conn *c)
{
    return jobs_post(((server *)app)->jobs, c);
}

static int job_get(void *app, conn *c)
{
    return jobs_get(((server *)app)->jobs, c);
}

static int job_delete(void *app, conn *c)
{
    return jobs_delete(((server *)app)->jobs, c);
}

static int job_result(void *app, conn *c)
{
    return jobs_result(((server *)app)->jobs, c);
}

static int job_explain(void *app, conn *c)
{
    return jobs_explain(((server *)app)->jobs, c);
}

static int job_options(void *app, conn *c)
{
    return jobs_options(((server *)app)->jobs, c);
}

/* The routes: a transcription and a window's explain, on a worker once the body
 * is in (and the key checked before); the rest answered on the connection thread
 * (a job's POST there too: its transcription is queued for a worker, with no
 * connection waiting on it).  Another endpoint is a line here. */
static const conn_route ROUTES[] = {
    {"POST", "/inference", CONN_WORKER | CONN_KEY, transcribe},
    {"POST", "/v1/audio/transcriptions", CONN_WORKER | CONN_KEY, transcribe},
    {"POST", "/v1/audio/translations", CONN_WORKER | CONN_KEY, transcribe},
    {"POST", "/v1/jobs", CONN_KEY, job_post},
    {"GET", "/v1/jobs/*", CONN_KEY, job_get},
    {"DELETE", "/v1/jobs/*", CONN_KEY, job_delete},
    {"GET", "/v1/jobs/*/result", CONN_KEY, job_result},
    {"POST", "/v1/jobs/*/explain", CONN_WORKER | CONN_KEY, job_explain},
    {"GET", "/v1/options", CONN_KEY, job_options},
    {"GET", "/health", 0, health},
    {"GET", "/", 0, home},
    {"OPTIONS", "/inference", 0, preflight},
    {"OPTIONS", "/v1/audio/transcriptions", 0, preflight},
    {"OPTIONS", "/v1/audio/translations", 0, preflight},
    {"OPTIONS", "/v1/jobs", 0, preflight},
    {"OPTIONS", "/v1/jobs/*", 0, preflight},
    {"OPTIONS", "/v1/jobs/*/result", 0, preflight},
    {"OPTIONS", "/v1/jobs/*/explain", 0, preflight},
    {"OPTIONS", "/v1/options", 0, preflight},
    {"OPTIONS", "/health", 0, preflight},
};

/* What no route takes: 405 for a path that some route has, 404 for the others. */
static int unrouted(void *app, conn *c)
{
    (void)app;
    const char *path = conn_request(c)->path;
    int known = 0;
    for (size_t i = 0; i < sizeof ROUTES / sizeof *ROUTES; i++)
        known |= conn_path_matches(ROUTES[i].path, path);
    if (known && is_job_api(path))
        return serve_error(c, 405, "method not allowed: POST /v1/jobs, GET or DELETE /v1/jobs/ID, "
                           "GET /v1/jobs/ID/result, POST /v1/jobs/ID/explain, GET /v1/options");
    if (known)
        return serve_error(c, 405, "method not allowed: POST /inference, "
                           "/v1/audio/transcriptions and /v1/audio/translations, GET /health");
    return serve_error(c, 404, "no such endpoint: POST /inference, POST /v1/audio/transcriptions, "
                       "POST /v1/audio/translations, GET /health, the job API (docs/serving.md)");
}

/* A socket bound to addr and listening; -1 with errno set if not. */
static int bound_socket(const struct addrinfo *addr)
{
    int one = 1, fd = socket(addr->ai_family, addr->ai_socktype, addr->ai_protocol);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, addr->ai_addr, addr->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0)
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

/* Serves until SIGINT or SIGTERM (conn.c). */
static void serve(server *s)
{
    s->limits.workers = s->o.jobs > 0 ? s->o.jobs : 1;
    conn_app app = {.app = s, .routes = ROUTES, .n_routes = sizeof ROUTES / sizeof *ROUTES,
                    .unrouted = unrouted, .unauthorized = unauthorized, .error = serve_respond_error,
                    .quiet = s->o.quiet};
    conn_serve(s->listener, &s->limits, &app);
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
    if (!strcmp(a, "--max-buffered-mb"))
        return *lo = 1, *hi = 1 << 20, &s->max_buffered_mb;
    if (!strcmp(a, "--timeout"))
        return *lo = 1, *hi = 3600, &s->limits.timeout_s;
    if (!strcmp(a, "--queue"))
        return *lo = 0, *hi = 4096, &s->limits.queue;
    if (!strcmp(a, "--max-connections"))
        return *lo = 1, *hi = 100000, &s->limits.max_connections;
    if (!strcmp(a, "--max-per-peer"))
        return *lo = 1, *hi = 100000, &s->limits.max_per_peer;
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
        } else if (number) {
            if (cli_int_arg(v, lo, hi, number)) {
                fprintf(stderr, "hark: bad value for %s: %s (see hark --help)\n", a, v);
                return 2;
            }
            i++;
        } else {
            int r = !strcmp(a, "--max-duration") /* the option table's, as hark FILE's */
                        ? cli_parse_option(&s->o, argc, argv, &i, CLI_FILES)
                        : cli_parse_common(&s->o, argc, argv, &i);
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

/* The limits on bodies: each (--max-upload-mb) and all held at once
 * (--max-buffered-mb, by default as many as the workers and the queue hold);
 * -1 when the total could never take one. */
static int body_limits(server *s)
{
    int workers = s->o.jobs > 0 ? s->o.jobs : 1;
    size_t mb = s->max_buffered_mb ? (size_t)s->max_buffered_mb
                                   : (size_t)(workers + s->limits.queue) * (size_t)s->max_upload_mb;
    if (mb < (size_t)s->max_upload_mb) {
        fprintf(stderr, "hark: serve: --max-buffered-mb %d is under --max-upload-mb %d: an upload "
                "that large could never be taken\n", s->max_buffered_mb, s->max_upload_mb);
        return -1;
    }
    s->limits.max_body = (size_t)s->max_upload_mb << 20;
    s->limits.max_buffered = mb << 20;
    return 0;
}

/* The job table and the page, made once; -1 when out of memory. */
static int open_jobs(server *s)
{
    jobs_config jc = {s->model, &s->params, &s->o.layout, s->limits.max_body};
    s->jobs = jobs_new(&jc);
    s->page = studio_page(&s->page_len);
    if (s->jobs && s->page)
        return 0;
    fprintf(stderr, "hark: serve: out of memory\n");
    return -1;
}

int cli_serve_main(int argc, char **argv)
{
    server s = {.host = "127.0.0.1", .port = 8080, .max_upload_mb = 256,
                .limits = {.timeout_s = 30, .queue = 16, .max_connections = 512, .max_per_peer = 64}};
    cli_default_options(&s.o);
    int rc = parse(&s, argc, argv);
    if (!rc && body_limits(&s))
        rc = 2;
    if (rc) {
        free_keys(&s);
        return rc < 0 ? 0 : rc; /* -1: --help */
    }
    cli_default_threads(&s.o);
    hark_vad *vad;
    s.listener = -1;
    if ((s.model = cli_load_models(&s.o, &vad))) {
        s.params = s.o.params;
        s.params.vad.model = vad;
        if (!open_jobs(&s))
            s.listener = listen_on(&s);
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
