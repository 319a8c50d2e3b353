/* hark serve's connections (conn.c): one thread reads every request and writes
 * every answer over non-blocking sockets, with the limits (connections in all and
 * per peer, deadlines, minimum rates) that keep slow or many peers from locking
 * the server; a route's handler gets only a whole request, on that thread (short
 * answers: /health, a page, a job's status) or on one of the -j workers (a
 * transcription), taken from a bounded queue. */
#ifndef HARK_CLI_CONN_H
#define HARK_CLI_CONN_H

#include <stddef.h>

#include "http.h"

typedef struct conn conn;

enum {
    CONN_WORKER = 1, /* the handler runs on a worker, once the body is in */
    CONN_KEY = 2,    /* the request needs an API key (conn_app.unauthorized) */
};

/* A route: method and path (a '*' in it takes one segment of a path, as in
 * "/v1/jobs/ID/result"), how it is served, and its handler, which answers through
 * conn_answer (or not at all, for a peer gone) and returns the status for the log. */
typedef struct conn_route {
    const char *method, *path;
    int flags;
    int (*handle)(void *app, conn *c);
} conn_route;

typedef struct conn_app {
    void *app; /* the handlers' first argument */
    const conn_route *routes;
    int n_routes;
    /* a request that no route takes: its answer (404, 405), its status returned */
    int (*unrouted)(void *app, conn *c);
    /* NULL when a CONN_KEY route's request may go on, else why not (401) */
    const char *(*unauthorized)(void *app, const http_request *r);
    /* answers an error in the API's form, with extra header lines (or NULL) */
    void (*error)(conn *c, int status, const char *extra, const char *message);
    int quiet; /* no log line per request */
} conn_app;

typedef struct conn_limits {
    size_t max_body;     /* a larger body: 413 */
    int timeout_s;       /* the head within it, the body at 1 kB/s after it, no gap longer */
    int workers;         /* threads for CONN_WORKER routes */
    int queue;           /* whole requests waiting for a worker; more: 503 */
    int max_connections; /* open at once, in all */
    int max_per_peer;    /* open at once from one address */
    size_t max_buffered; /* request bodies held in memory, in all; a body past it: 503 */
} conn_limits;

/* Serves the listening socket until SIGINT or SIGTERM (blocked here, in every
 * thread): the first stops taking connections and lets the requests begun be
 * answered, a second makes conn_stopping_now() true.  Returns 0, or -1 (said on
 * stderr) when it cannot start. */
int conn_serve(int listener, const conn_limits *lim, const conn_app *app);

/* For handlers: the request (whole, body included). */
const http_request *conn_request(const conn *c);
/* The peer's address, as logged. */
const char *conn_peer(const conn *c);
/* The answer (copied; the last one given counts). */
void conn_answer(conn *c, int status, const char *extra, const char *content_type,
                 const char *body, size_t len);
/* For a handler: it is done with the request's body (stored elsewhere), which is
 * freed and no longer counted in max_buffered. */
void conn_drop_body(conn *c);
/* For a worker's handler: whether the peer has gone (closed or reset); one that
 * only ended its side after its request (shutdown(SHUT_WR)) is still there and
 * gets its answer.  Cheap enough to call between windows of a transcription. */
int conn_peer_gone(conn *c);
/* Whether a second SIGINT or SIGTERM came: work under way should stop. */
int conn_stopping_now(void);
/* Whether the first came: no connection is taken any more, so work that no
 * peer waits on (conn_detach's) has nobody left to read its outcome. */
int conn_stopping(void);

/* For a handler on the loop thread: the request's work goes on after its answer
 * (a job's 202), on a worker in its turn, with no connection: run(app, w) there,
 * w a request of its own that has this one's body (conn_request) and arg
 * (conn_arg), logged as METHOD PATH with run's status.  The body stays counted
 * in max_buffered until run drops it or returns.  Returns 0, or -1 when the
 * queue is full or memory is short (nothing queued, the body still c's). */
int conn_detach(conn *c, const char *method, const char *path, int (*run)(void *app, conn *w),
                void *arg);
void *conn_arg(const conn *c);
/* Whether a route's path pattern takes path. */
int conn_path_matches(const char *pattern, const char *path);

#endif
