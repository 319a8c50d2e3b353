/* hark serve's connection handling: one thread (the caller's) runs an epoll loop
 * over non-blocking sockets; each connection is a small state machine fed the
 * bytes that come (http.c's reader), under deadlines and minimum rates; a whole,
 * authorised request is answered on this thread or handed to the -j
 * transcription workers through a bounded queue, and their answer comes back
 * here to be written.  So a worker never waits on a peer, and a peer that drips
 * costs a descriptor and a few kB, not a worker.
 *
 * Why our own loop rather than a library: Debian's libmicrohttpd (0.9.75 in
 * bookworm) would give the loop and per-IP limits, but not the strictness asked
 * of the parser (whitespace before a colon, folded lines, repeated
 * Content-Length), nor a way to tell a half-closed peer from a gone one; and its
 * parser could not be fuzzed as pure code.  The loop is ~400 lines; the parser
 * (http.c) has no sockets at all and is fuzzed whole (tests/fuzz/fuzz_http.c).
 *
 * Limits: --max-connections in all and --max-per-peer from one address.  At
 * either limit a new connection takes the place of the one still sending its
 * head that has been silent the longest (nothing begun: a peer that drips its
 * head, or sends nothing, is the one to go), else it is answered 503 with
 * Retry-After; so neither a storm of slow heads from elsewhere nor one from the
 * same address (a NAT) locks out a quick request.  (Not the oldest: a storm that
 * reconnects as fast as it is pushed out would make a quick request's
 * connection the oldest within milliseconds, before its head is in; and a
 * connection that has sent nothing yet is given a second before it may go, as a
 * quick request held up on a loaded machine may need.)
 * Bodies held in memory (being read, queued, worked on) are counted against
 * max_buffered, each at its Content-Length from its head on (a chunked one at
 * its room as it grows) until its handler is done with it (conn_drop_body, or
 * its answer): one that would pass it is answered 503 with Retry-After, so
 * memory is bounded by that, not by connections times the upload limit. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "conn.h"

/* A connection's phase; C_QUEUED: queued or being worked on (the worker's then:
 * the loop reads no more of it than its state and peer), C_DEAD: closed, freed
 * once the events read with it are handled.  Work detached from its connection
 * (conn_detach) is a conn too, with no socket (fd -1): queued, then dead. */
enum { C_HEAD, C_BODY, C_QUEUED, C_WRITING, C_LINGER, C_DEAD };
enum { LINGER_S = 10, LINGER_GAP_S = 2 };
/* a new connection's time to send its first bytes before it may be pushed out */
#define FIRST_BYTES_S 1.0
/* to a peer turned away for want of room: when to try again */
#define RETRY_AFTER "Retry-After: 5\r\n"

typedef struct loop loop;

struct conn {
    int fd, state, status, in_epoll;
    char peer[64];
    loop *l;
    http_reader rd;
    size_t held; /* bytes of the body budget (max_buffered) counted for it */
    const conn_route *route;
    int (*run)(void *app, conn *w); /* detached work: what the worker runs, and its arg */
    void *arg;
    double t_open, t_phase, t_last, probed; /* accepted, phase begun, last byte, last probe */
    char *out;                              /* the answer, out_at of out_len bytes sent */
    size_t out_len, out_at;
    conn *prev, *next; /* every open connection, oldest first */
    conn *qnext;       /* in the work queue or the done list */
};

struct loop {
    const conn_limits *lim;
    const conn_app *app;
    int ep, listener, sig, wake, open, stopping;
    /* the bodies' bytes counted, at most lim->max_buffered: added to by the loop
     * alone, taken from by workers too (conn_drop_body) */
    atomic_size_t held;
    conn *first, *last, *dead;
    pthread_mutex_t mu; /* the queue and the done list, shared with the workers */
    pthread_cond_t work;
    conn *queue, *queue_end, *done;
    int queued, idle, quit;
};

static atomic_int g_stop_now, g_stopping;
static char TAG_LISTENER, TAG_SIGNAL, TAG_WAKE; /* epoll's marks for the loop's own fds */

int conn_stopping_now(void)
{
    return atomic_load(&g_stop_now);
}

int conn_stopping(void)
{
    return atomic_load(&g_stopping);
}

void *conn_arg(const conn *c)
{
    return c->arg;
}

const http_request *conn_request(const conn *c)
{
    return &c->rd.r;
}

const char *conn_peer(const conn *c)
{
    return c->peer;
}

void conn_answer(conn *c, int status, const char *extra, const char *content_type,
                 const char *body, size_t len)
{
    free(c->out);
    c->out = http_response(status, extra, content_type, body, len, &c->out_len);
    c->out_at = 0;
    c->status = status;
}

int conn_peer_gone(conn *c)
{
    struct pollfd p = {c->fd, POLLIN | POLLRDHUP, 0};
    if (poll(&p, 1, 0) <= 0)
        return 0;
    if (p.revents & (POLLERR | POLLHUP))
        return 1;
    if (!(p.revents & POLLRDHUP))
        return 0; /* bytes after the request: still there */
    /* The peer ended its side: gone, or half-closed and waiting for the answer.
     * An interim answer tells them apart: a closed socket answers it with a
     * reset, seen at the next call.  HTTP/1.0 has none: its end is its going. */
    if (!c->rd.r.minor)
        return 1;
    double now = hark_now_s();
    if (now - c->probed < 1)
        return 0;
    c->probed = now;
    static const char probe[] = "HTTP/1.1 102 Processing\r\n\r\n";
    return send(c->fd, probe, sizeof probe - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
           errno != EAGAIN && errno != EWOULDBLOCK;
}

/* ------------------------------------------------------------ the loop's side */

static void watch(loop *l, conn *c, unsigned events)
{
    struct epoll_event e = {.events = events, .data.ptr = c};
    epoll_ctl(l->ep, c->in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &e);
    c->in_epoll = 1;
}

static void unwatch(loop *l, conn *c)
{
    if (c->in_epoll)
        epoll_ctl(l->ep, EPOLL_CTL_DEL, c->fd, NULL);
    c->in_epoll = 0;
}

static void close_conn(loop *l, conn *c)
{
    unwatch(l, c);
    close(c->fd);
    *(c->prev ? &c->prev->next : &l->first) = c->next;
    *(c->next ? &c->next->prev : &l->last) = c->prev;
    l->open--;
    c->state = C_DEAD;
    c->next = l->dead;
    l->dead = c;
}

/* c's body freed and no longer counted: its handler is done with it. */
static void drop_body(loop *l, conn *c)
{
    atomic_fetch_sub(&l->held, c->held);
    c->held = 0;
    free(c->rd.r.body);
    c->rd.r.body = NULL;
    c->rd.r.body_len = c->rd.body_cap = 0;
}

void conn_drop_body(conn *c)
{
    drop_body(c->l, c);
}

static void free_dead(loop *l)
{
    while (l->dead) {
        conn *c = l->dead;
        l->dead = c->next;
        drop_body(l, c);
        http_reader_free(&c->rd);
        free(c->out);
        free(c);
    }
}

/* The peer's text made safe to log: no control characters or escapes. */
static void printable(const char *text, char *out, size_t n)
{
    snprintf(out, n, "%s", *text ? text : "-");
    for (char *o = out; *o; o++)
        if ((unsigned char)*o < 0x20 || (unsigned char)*o >= 0x7f)
            *o = '?';
}

static void log_line(const loop *l, const conn *c)
{
    char method[8], path[256];
    if (l->app->quiet)
        return;
    printable(c->rd.r.method, method, sizeof method);
    printable(c->rd.r.path, path, sizeof path);
    fprintf(stderr, "hark: %s %s %s %d (%.2f s)\n", c->peer, method, path, c->status,
            hark_now_s() - c->t_open);
}

/* The request has its status (and, but for a peer gone, its answer): logged,
 * then the answer written. */
static void finish(loop *l, conn *c)
{
    log_line(l, c);
    drop_body(l, c);
    if (!c->out) {
        close_conn(l, c);
        return;
    }
    c->state = C_WRITING;
    c->t_phase = c->t_last = hark_now_s();
    watch(l, c, EPOLLOUT);
}

/* An error answered at once (the body, if any, is read and dropped after it). */
static void refuse(loop *l, conn *c, int status, const char *extra, const char *why)
{
    l->app->error(c, status, extra, why);
    c->status = status;
    finish(l, c);
}

/* The answer sent: our side ends, and what the peer still sends is read and
 * dropped until it closes (nginx's and Apache's "lingering close"), for 10 s at
 * most and 2 s without a byte: closing with bytes unread would reset the
 * connection, and a reset loses what the peer has not yet read of the answer
 * (a 401 or 413 to a peer still sending its body). */
static void on_writable(loop *l, conn *c)
{
    ssize_t k = send(c->fd, c->out + c->out_at, c->out_len - c->out_at, MSG_NOSIGNAL);
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (k <= 0) {
        close_conn(l, c);
        return;
    }
    c->out_at += (size_t)k;
    c->t_last = hark_now_s();
    if (c->out_at < c->out_len)
        return;
    shutdown(c->fd, SHUT_WR);
    c->state = C_LINGER;
    c->t_phase = c->t_last;
    watch(l, c, EPOLLIN | EPOLLRDHUP);
}

/* ------------------------------------------------------------ requests */

int conn_path_matches(const char *pattern, const char *path)
{
    for (; *pattern; pattern++) {
        if (*pattern == '*') {
            size_t k = strcspn(path, "/");
            if (!k)
                return 0;
            path += k;
        } else if (*pattern != *path++) {
            return 0;
        }
    }
    return !*path;
}

static const conn_route *find_route(const conn_app *app, const http_request *r)
{
    for (int i = 0; i < app->n_routes; i++)
        if (!strcmp(app->routes[i].method, r->method) && conn_path_matches(app->routes[i].path, r->path))
            return &app->routes[i];
    return NULL;
}

/* Work for a worker, queued unless as many wait as the queue holds beyond the
 * idle workers; -1 then. */
static int push(loop *l, conn *c)
{
    pthread_mutex_lock(&l->mu);
    int full = l->queued >= l->idle + l->lim->queue;
    if (!full) {
        c->qnext = NULL;
        *(l->queue ? &l->queue_end->qnext : &l->queue) = c;
        l->queue_end = c;
        l->queued++;
        pthread_cond_signal(&l->work);
    }
    pthread_mutex_unlock(&l->mu);
    return full ? -1 : 0;
}

/* A whole request for a worker: queued, or 503 (try again later). */
static void enqueue(loop *l, conn *c)
{
    if (push(l, c)) {
        refuse(l, c, 503, RETRY_AFTER, "the server is busy: every worker has a request, and the queue is full");
        return;
    }
    unwatch(l, c); /* the worker's now, until it hands it back */
    c->state = C_QUEUED;
}

int conn_detach(conn *c, const char *method, const char *path, int (*run)(void *app, conn *w),
                void *arg)
{
    conn *w = calloc(1, sizeof *w);
    if (!w)
        return -1;
    *w = (conn){.fd = -1, .state = C_QUEUED, .l = c->l, .rd.r = c->rd.r, .held = c->held,
                .route = c->route, .run = run, .arg = arg, .t_open = hark_now_s()};
    w->rd.body_cap = c->rd.body_cap;
    snprintf(w->peer, sizeof w->peer, "%s", c->peer);
    snprintf(w->rd.r.method, sizeof w->rd.r.method, "%s", method);
    snprintf(w->rd.r.path, sizeof w->rd.r.path, "%s", path);
    if (push(c->l, w)) {
        free(w);
        return -1;
    }
    c->rd.r.body = NULL; /* w's now, freed on the loop when its work is done */
    c->rd.r.body_len = c->rd.body_cap = c->held = 0;
    return 0;
}

/* Counts c's body in the budget at what it may grow to (its Content-Length, or a
 * chunked body's room so far); -1 when the bodies held would pass max_buffered. */
static int hold(loop *l, conn *c)
{
    size_t want = c->rd.r.chunked ? c->rd.body_cap : c->rd.r.content_length;
    if (want <= c->held)
        return 0;
    if (want - c->held > l->lim->max_buffered - atomic_load(&l->held))
        return -1; /* (the workers only lower it meanwhile) */
    atomic_fetch_add(&l->held, want - c->held);
    c->held = want;
    return 0;
}

static void too_full(loop *l, conn *c)
{
    refuse(l, c, 503, RETRY_AFTER, "the server is busy: the uploads it holds fill "
           "--max-buffered-mb; try again later");
}

static void request_whole(loop *l, conn *c)
{
    if (c->route->flags & CONN_WORKER) {
        enqueue(l, c);
        return;
    }
    c->status = c->route->handle(l->app->app, c);
    finish(l, c);
}

/* The head is in: routed, its key checked, its length checked (in that order:
 * a peer without the key learns nothing of the limits), then its body read. */
static void head_in(loop *l, conn *c)
{
    char why[200];
    http_request *r = &c->rd.r;
    const char *denied;
    if (!(c->route = find_route(l->app, r))) {
        c->status = l->app->unrouted(l->app->app, c);
        finish(l, c);
    } else if ((c->route->flags & CONN_KEY) && (denied = l->app->unauthorized(l->app->app, r))) {
        refuse(l, c, 401, NULL, denied);
    } else {
        int rc = http_reader_body(&c->rd, l->lim->max_body, why, sizeof why);
        if (rc > 0)
            refuse(l, c, rc, NULL, why);
        else if (hold(l, c))
            too_full(l, c);
        else if (rc == 0)
            request_whole(l, c);
        else {
            c->state = C_BODY;
            c->t_phase = hark_now_s();
            if (r->expect_continue && r->minor)
                send(c->fd, "HTTP/1.1 100 Continue\r\n\r\n", 25, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
    }
}

/* Bytes from the peer, fed to the request's reader; what comes after a whole
 * request is left unread (one request a connection). */
static void on_bytes(loop *l, conn *c, const char *in, size_t len)
{
    char why[200];
    while (len && (c->state == C_HEAD || c->state == C_BODY)) {
        size_t used;
        int rc = http_reader_feed(&c->rd, in, len, &used, why, sizeof why);
        in += used;
        len -= used;
        if (rc == HTTP_HEAD)
            head_in(l, c);
        else if (rc > 0)
            refuse(l, c, rc, NULL, why);
        else if (c->rd.r.chunked && hold(l, c))
            too_full(l, c); /* its room grew past what is left */
        else if (rc == 0)
            request_whole(l, c);
    }
}

/* The peer ended its side before its request did. */
static void ended_early(loop *l, conn *c)
{
    const char *why = c->state == C_HEAD ? "the request ended before its head did"
                      : c->rd.r.chunked  ? "the body ended before its last chunk"
                                         : "the body ended before its Content-Length";
    refuse(l, c, 400, NULL, why);
}

static void on_readable(loop *l, conn *c)
{
    char buf[16384];
    ssize_t k = recv(c->fd, buf, sizeof buf, 0);
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (k > 0)
        c->t_last = hark_now_s();
    if (c->state == C_LINGER) {
        if (k <= 0)
            close_conn(l, c);
    } else if (k < 0) {
        close_conn(l, c); /* reset: nobody to answer */
    } else if (k == 0) {
        ended_early(l, c);
    } else {
        on_bytes(l, c, buf, (size_t)k);
    }
}

/* ------------------------------------------------------------ time limits */

/* A connection past its phase's deadline: a head not in within timeout_s, a body
 * under 1 kB/s once timeout_s has passed (a link that slow still sends 256 MB)
 * or timeout_s without a byte, an answer not taken for timeout_s, a lingering
 * close over.  Returns 1 when it was ended or answered. */
static int past_deadline(loop *l, conn *c, double now)
{
    int t = l->lim->timeout_s;
    char why[200];
    if (c->state == C_HEAD && now - c->t_open > t) {
        snprintf(why, sizeof why, "the request head did not arrive within %d s", t);
        refuse(l, c, 408, NULL, why);
    } else if (c->state == C_BODY &&
               (now - c->t_phase > t + (double)c->rd.r.body_len / 1024 || now - c->t_last > t)) {
        snprintf(why, sizeof why, "the body came too slowly (under 1 kB/s, or %d s without a byte)", t);
        refuse(l, c, 408, NULL, why);
    } else if ((c->state == C_WRITING && now - c->t_last > t) ||
               (c->state == C_LINGER && (now - c->t_phase > (l->stopping ? 1 : LINGER_S) ||
                                         now - c->t_last > LINGER_GAP_S))) {
        close_conn(l, c);
    } else {
        return 0;
    }
    return 1;
}

static void check_deadlines(loop *l)
{
    double now = hark_now_s();
    for (conn *c = l->first, *next; c; c = next) {
        next = c->next;
        past_deadline(l, c, now);
    }
}

/* ------------------------------------------------------------ admission */

/* Whether c may give way to a new connection: still sending its head (nothing
 * begun) but past its first second if it has sent nothing, or, when lingering
 * ones count too, answered. */
static int may_go(const conn *c, int lingering, double now)
{
    if (c->state == C_HEAD)
        return c->t_last > c->t_open || now - c->t_open >= FIRST_BYTES_S;
    return lingering && c->state == C_LINGER;
}

/* Of the connections that may give way to a new one, the one silent the
 * longest; from peer, or from anyone when peer is NULL. */
static conn *most_idle(const loop *l, const char *peer, int lingering)
{
    conn *idle = NULL;
    double now = hark_now_s();
    for (conn *c = l->first; c; c = c->next)
        if (may_go(c, lingering, now) && (!peer || !strcmp(c->peer, peer)) &&
            (!idle || c->t_last < idle->t_last))
            idle = c;
    return idle;
}

static int from_peer(const loop *l, const char *peer)
{
    int n = 0;
    for (const conn *c = l->first; c; c = c->next)
        n += c->state != C_LINGER && !strcmp(c->peer, peer);
    return n;
}

static void too_many(loop *l, conn *c)
{
    refuse(l, c, 503, RETRY_AFTER, "too many connections: try again later");
}


/* Closed to make room in all: one still sending its head is answered 503 first,
 * as far as its socket's buffer takes it. */
static void drop_now(loop *l, conn *c)
{
    if (c->state == C_HEAD) {
        l->app->error(c, 503, RETRY_AFTER, "too many connections: try again later");
        log_line(l, c);
        if (c->out)
            send(c->fd, c->out, c->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    close_conn(l, c);
}

/* Room for a connection from peer: at the limit in all, the most idle one is
 * closed (a head dripped: answered 503 if its buffer takes it); at the peer's
 * limit, its most idle one still sending its head is answered 503.  Returns 0
 * when there is no room (nothing to give way). */
static int make_room(loop *l, const char *peer)
{
    conn *c;
    if (l->open >= l->lim->max_connections) {
        if (!(c = most_idle(l, NULL, 1)))
            return 0;
        drop_now(l, c);
    }
    if (from_peer(l, peer) >= l->lim->max_per_peer) {
        if (!(c = most_idle(l, peer, 0)))
            return 0;
        too_many(l, c);
    }
    return 1;
}

/* ------------------------------------------------------------ accepting */

static void link_conn(loop *l, conn *c)
{
    c->prev = l->last;
    *(l->last ? &l->last->next : &l->first) = c;
    l->last = c;
    l->open++;
}

/* A new connection: room made for it, or answered 503 (closed at once when even
 * the answers' lingering has taken twice the limit's descriptors); its request
 * read at once if it came with it (before any later one may push it out). */
static void admit(loop *l, int fd, const struct sockaddr_storage *a, socklen_t len)
{
    conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return;
    }
    c->fd = fd;
    c->l = l;
    c->t_open = c->t_phase = c->t_last = hark_now_s();
    if (getnameinfo((const struct sockaddr *)a, len, c->peer, sizeof c->peer, NULL, 0, NI_NUMERICHOST))
        snprintf(c->peer, sizeof c->peer, "-");
    int room = make_room(l, c->peer);
    link_conn(l, c);
    if (!room && l->open > 2 * l->lim->max_connections) {
        close_conn(l, c);
    } else if (!room) {
        too_many(l, c);
    } else {
        watch(l, c, EPOLLIN | EPOLLRDHUP);
        on_readable(l, c);
    }
}

static void on_listener(loop *l)
{
    for (int i = 0; i < 64; i++) {
        struct sockaddr_storage a;
        socklen_t len = sizeof a;
        int fd = accept4(l->listener, (struct sockaddr *)&a, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            admit(l, fd, &a, len);
        } else {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED && errno != EINTR)
                nanosleep(&(struct timespec){0, 10000000}, NULL); /* out of descriptors: a while */
            return;
        }
    }
}

/* ------------------------------------------------------------ workers */

static void work(loop *l, conn *c)
{
    if (c->fd < 0)
        c->status = c->run(l->app->app, c); /* no peer: it sees conn_stopping() itself */
    else if (conn_stopping_now())
        l->app->error(c, 503, NULL, "the server is stopping: send the file again later");
    else if (conn_peer_gone(c))
        c->status = 499; /* nginx's "client closed request", for the log: nobody to answer */
    else
        c->status = c->route->handle(l->app->app, c);
}

/* A worker: queued requests one after another, each handed back to the loop
 * (the done list, and a word on the eventfd) to have its answer written. */
static void *worker(void *arg)
{
    loop *l = arg;
    uint64_t one = 1;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!l->queue && !l->quit)
            pthread_cond_wait(&l->work, &l->mu);
        conn *c = l->queue;
        if (!c)
            break;
        l->queue = c->qnext;
        l->queued--;
        l->idle--;
        pthread_mutex_unlock(&l->mu);
        work(l, c);
        pthread_mutex_lock(&l->mu);
        c->qnext = l->done;
        l->done = c;
        l->idle++;
        if (write(l->wake, &one, sizeof one) < 0) { /* full: the loop has a word already */ }
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

static void on_wake(loop *l)
{
    uint64_t x;
    if (read(l->wake, &x, sizeof x) < 0) { /* another read took it */ }
    pthread_mutex_lock(&l->mu);
    conn *c = l->done;
    l->done = NULL;
    pthread_mutex_unlock(&l->mu);
    while (c) {
        conn *next = c->qnext;
        if (c->fd >= 0) {
            finish(l, c);
        } else { /* detached work: logged, then its body freed */
            log_line(l, c);
            c->state = C_DEAD;
            c->next = l->dead;
            l->dead = c;
        }
        c = next;
    }
}

/* ------------------------------------------------------------ stopping */

/* The first SIGINT or SIGTERM: no more connections, and those whose request is
 * not yet whole are answered 503; a second: the work under way stops too. */
static void on_signal(loop *l)
{
    struct signalfd_siginfo si;
    if (read(l->sig, &si, sizeof si) < 0)
        return;
    if (l->stopping) {
        atomic_store(&g_stop_now, 1);
        return;
    }
    l->stopping = 1;
    atomic_store(&g_stopping, 1);
    epoll_ctl(l->ep, EPOLL_CTL_DEL, l->listener, NULL);
    shutdown(l->listener, SHUT_RDWR);
    for (conn *c = l->first, *next; c; c = next) {
        next = c->next;
        if (c->state == C_HEAD || c->state == C_BODY)
            refuse(l, c, 503, RETRY_AFTER, "the server is stopping: send the file again later");
    }
}

static void dispatch(loop *l, const struct epoll_event *e)
{
    void *p = e->data.ptr;
    conn *c = p;
    if (p == &TAG_LISTENER)
        on_listener(l);
    else if (p == &TAG_SIGNAL)
        on_signal(l);
    else if (p == &TAG_WAKE)
        on_wake(l);
    else if (c->state == C_WRITING)
        on_writable(l, c);
    else if (c->state == C_HEAD || c->state == C_BODY || c->state == C_LINGER)
        on_readable(l, c);
}

static void run(loop *l)
{
    struct epoll_event ev[64];
    double checked = 0;
    while (!l->stopping || l->open) {
        int n = epoll_wait(l->ep, ev, 64, 100);
        for (int i = 0; i < n; i++)
            dispatch(l, &ev[i]);
        double now = hark_now_s();
        if (now - checked >= 0.1) {
            check_deadlines(l);
            checked = now;
        }
        free_dead(l);
    }
}

/* ------------------------------------------------------------ setting up */

/* The descriptors the limits need (a connection's socket, and as many again for
 * the answers' lingering closes and the workers' files), the soft limit raised
 * to them where the hard one allows; else the limit on connections lowered. */
static int fit_descriptors(int connections)
{
    struct rlimit r;
    rlim_t need = 2 * (rlim_t)connections + 64;
    if (getrlimit(RLIMIT_NOFILE, &r))
        return connections;
    if (r.rlim_cur < need) {
        r.rlim_cur = r.rlim_max != RLIM_INFINITY && r.rlim_max < need ? r.rlim_max : need;
        setrlimit(RLIMIT_NOFILE, &r);
        getrlimit(RLIMIT_NOFILE, &r);
    }
    if (r.rlim_cur >= need)
        return connections;
    int fit = r.rlim_cur > 66 ? (int)((r.rlim_cur - 64) / 2) : 1;
    fprintf(stderr, "hark: serve: %d connections at most (the limit on open files)\n", fit);
    return fit;
}

static int add_fd(loop *l, int fd, void *tag)
{
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = tag};
    return fd < 0 ? -1 : epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &e);
}

/* The loop's own descriptors: epoll, SIGINT and SIGTERM (blocked in every thread
 * from here on, the workers included), the workers' eventfd, the listener. */
static int open_loop(loop *l)
{
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    l->sig = signalfd(-1, &stop, SFD_NONBLOCK | SFD_CLOEXEC);
    l->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    l->ep = epoll_create1(EPOLL_CLOEXEC);
    int flags = fcntl(l->listener, F_GETFL);
    if (l->ep < 0 || add_fd(l, l->sig, &TAG_SIGNAL) || add_fd(l, l->wake, &TAG_WAKE) ||
        fcntl(l->listener, F_SETFL, flags | O_NONBLOCK) || add_fd(l, l->listener, &TAG_LISTENER)) {
        fprintf(stderr, "hark: serve: cannot set up the connection loop (%s)\n", strerror(errno));
        return -1;
    }
    return 0;
}

static void close_loop(loop *l)
{
    int fds[] = {l->ep, l->sig, l->wake};
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->work);
}

int conn_serve(int listener, const conn_limits *lim, const conn_app *app)
{
    conn_limits fit = *lim;
    fit.max_connections = fit_descriptors(lim->max_connections);
    loop l = {.lim = &fit, .app = app, .listener = listener, .ep = -1, .sig = -1, .wake = -1};
    pthread_mutex_init(&l.mu, NULL);
    pthread_cond_init(&l.work, NULL);
    pthread_t *t = calloc((size_t)lim->workers, sizeof *t);
    int started = 0;
    if (t && !open_loop(&l))
        while (started < lim->workers && !pthread_create(&t[started], NULL, worker, &l))
            started++;
    l.idle = started;
    if (started == lim->workers)
        run(&l);
    else
        fprintf(stderr, "hark: serve: cannot start the workers\n");
    pthread_mutex_lock(&l.mu);
    l.quit = 1;
    pthread_cond_broadcast(&l.work);
    pthread_mutex_unlock(&l.mu);
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    on_wake(&l); /* detached work that ended after the last connection */
    free_dead(&l);
    free(t);
    close_loop(&l);
    return started == lim->workers ? 0 : -1;
}
