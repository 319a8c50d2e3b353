/* The HTTP of `hark serve`: a request head of at most 16 kB, a body sized by
 * Content-Length alone (chunked bodies are refused with 411), reads that time
 * out, and multipart/form-data fields.  Every length comes from the peer, so
 * each is checked before it is used. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "http.h"

enum { MAX_HEAD = 16384 };

static int refuse(int status, char *why, size_t n, const char *reason)
{
    snprintf(why, n, "%s", reason);
    return status;
}

/* Sets the socket's next wait to what is left of deadline_s seconds after t0,
 * at most gap_s; 0 when nothing is left. */
static int wait_left(int fd, const struct timespec *t0, double deadline_s, int gap_s)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    double left = deadline_s - (double)(t.tv_sec - t0->tv_sec) - (t.tv_nsec - t0->tv_nsec) / 1e9;
    if (left <= 0)
        return 0;
    if (left > gap_s)
        left = gap_s;
    struct timeval tv = {(time_t)left, (suseconds_t)((left - (double)(time_t)left) * 1e6)};
    if (!tv.tv_sec && !tv.tv_usec)
        tv.tv_usec = 1; /* 0 would mean no limit */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return 1;
}

static int timed_out(ssize_t k)
{
    return k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* Reads until the blank line that ends the head, all of it within timeout_s
 * (a peer that sends it a byte at a time holds a worker no longer); *got:
 * bytes read in all. */
static int read_head(int fd, char *buf, size_t *got, int timeout_s, char *why, size_t n)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    *got = 0;
    while (*got < MAX_HEAD) {
        ssize_t k = wait_left(fd, &t0, timeout_s, timeout_s)
                        ? recv(fd, buf + *got, MAX_HEAD - *got, 0) : (errno = EAGAIN, -1);
        if (timed_out(k)) {
            snprintf(why, n, "the request head did not arrive within %d s", timeout_s);
            return 408;
        }
        if (k <= 0)
            return refuse(400, why, n, "the request ended before its head did");
        *got += (size_t)k;
        buf[*got] = 0;
        if (strstr(buf, "\r\n\r\n"))
            return 0;
    }
    return refuse(431, why, n, "the request head is over 16 kB");
}

/* The value of header name in the head (lines after the first), or NULL;
 * copied into out (n bytes, cut to fit). */
static const char *header(const char *head, const char *name, char *out, size_t n)
{
    size_t len = strlen(name);
    for (const char *line = strstr(head, "\r\n"); line && line[2] != '\r';
         line = strstr(line + 2, "\r\n")) {
        const char *h = line + 2, *end = strstr(h, "\r\n");
        if (strncasecmp(h, name, len) || h[len] != ':' || !end)
            continue;
        h += len + 1;
        while (*h == ' ' || *h == '\t')
            h++;
        while (end > h && (end[-1] == ' ' || end[-1] == '\t'))
            end--; /* the whitespace around a value is not part of it */
        size_t k = (size_t)(end - h) < n - 1 ? (size_t)(end - h) : n - 1;
        memcpy(out, h, k);
        out[k] = 0;
        return out;
    }
    return NULL;
}

static int parse_request_line(const char *head, http_request *r, char *why, size_t n)
{
    char version[16] = "";
    if (sscanf(head, "%7s %255s %15s", r->method, r->path, version) != 3 ||
        strncmp(version, "HTTP/1.", 7))
        return refuse(strncmp(version, "HTTP/", 5) ? 400 : 505, why, n, "a malformed request line");
    return 0;
}

/* The body's length from Content-Length, within max. */
static int body_length(const char *head, size_t max, size_t *len, char *why, size_t n)
{
    char v[64], *end;
    *len = 0;
    if (header(head, "Transfer-Encoding", v, sizeof v))
        return refuse(411, why, n, "send the body with a Content-Length, not chunked");
    if (!header(head, "Content-Length", v, sizeof v))
        return 0;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || errno || v[0] == '-')
        return refuse(400, why, n, "a malformed Content-Length");
    if (x > max)
        return refuse(413, why, n, "the body is larger than --max-upload-mb allows");
    *len = (size_t)x;
    return 0;
}

/* The body, at 1 kB/s on average once timeout_s has passed, with no gap longer
 * than timeout_s: a link that slow still sends 256 MB, a peer that drips holds
 * its worker no longer than its bytes pay for. */
static int read_body(int fd, http_request *r, size_t have, char *why, size_t n)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (have < r->body_len) {
        double deadline = r->timeout_s + (double)have / 1024;
        ssize_t k = wait_left(fd, &t0, deadline, r->timeout_s)
                        ? recv(fd, r->body + have, r->body_len - have, 0) : (errno = EAGAIN, -1);
        if (timed_out(k)) {
            snprintf(why, n, "the body came too slowly (under 1 kB/s, or %d s without a byte)",
                     r->timeout_s);
            return 408;
        }
        if (k <= 0)
            return refuse(400, why, n, "the body ended before its Content-Length");
        have += (size_t)k;
    }
    return 0;
}

int http_read_head(int fd, const http_limits *lim, http_request *r, char *why, size_t n)
{
    memset(r, 0, sizeof *r);
    r->timeout_s = lim->timeout_s;
    if (!(r->head = malloc(MAX_HEAD + 1)))
        return refuse(503, why, n, "out of memory");
    int rc = read_head(fd, r->head, &r->head_read, lim->timeout_s, why, n);
    if (!rc)
        rc = parse_request_line(r->head, r, why, n);
    if (!rc)
        rc = body_length(r->head, lim->max_body, &r->body_len, why, n);
    if (rc)
        return rc;
    header(r->head, "Content-Type", r->content_type, sizeof r->content_type);
    header(r->head, "Authorization", r->authorization, sizeof r->authorization);
    return 0;
}

/* How much of the body came with the head (a pipelined request after it: not counted). */
static size_t body_in_head(const http_request *r)
{
    const char *start = strstr(r->head, "\r\n\r\n") + 4;
    size_t have = r->head_read - (size_t)(start - r->head);
    return have < r->body_len ? have : r->body_len;
}

static int waits_for_continue(const http_request *r)
{
    char v[64];
    return header(r->head, "Expect", v, sizeof v) && strcasecmp(v, "100-continue") == 0;
}

int http_read_body(int fd, http_request *r, char *why, size_t n)
{
    size_t have = body_in_head(r);
    if (!(r->body = malloc(r->body_len + 1)))
        return refuse(413, why, n, "no memory for a body that large");
    memcpy(r->body, strstr(r->head, "\r\n\r\n") + 4, have);
    if (have < r->body_len && waits_for_continue(r))
        send(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25, MSG_NOSIGNAL);
    return read_body(fd, r, have, why, n);
}

int http_read_request(int fd, const http_limits *lim, http_request *r, char *why, size_t n)
{
    int rc = http_read_head(fd, lim, r, why, n);
    return rc ? rc : http_read_body(fd, r, why, n);
}

/* Closing a connection with bytes unread resets it, and a reset drops what is
 * still unsent of the answer: a peer refused while it sends its body (411, 413,
 * 401) would see the reset and not the answer.  So the answer is followed by
 * our end of the connection, and what the peer still sends is read and dropped
 * until it closes its end (nginx's and Apache's "lingering close"): for at most
 * 10 s, and 2 s without a byte. */
void http_linger(int fd)
{
    char sink[16384];
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    shutdown(fd, SHUT_WR);
    while (wait_left(fd, &t0, 10, 2) && recv(fd, sink, sizeof sink, 0) > 0)
        ;
}

void http_respond(int fd, int status, const char *content_type, const char *body, size_t len)
{
    http_respond_with(fd, status, NULL, content_type, body, len);
}

void http_request_free(http_request *r)
{
    free(r->head);
    free(r->body);
    memset(r, 0, sizeof *r);
}

static const char *reason_phrase(int status)
{
    switch (status) {
    case 204: return "No Content";
    case 200: return "OK";
    case 202: return "Accepted";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Internal Server Error";
    }
}

static const char *always_sent = "";

void http_always_send(const char *lines)
{
    always_sent = lines ? lines : "";
}

void http_respond_with(int fd, int status, const char *extra, const char *content_type,
                       const char *body, size_t len)
{
    char head[1536], length[48] = "";
    if (status != 204) /* which has no body, and says no length */
        snprintf(length, sizeof length, "Content-Length: %zu\r\n", len);
    int k = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%s%s%s%s"
                     "Connection: close\r\n\r\n",
                     status, reason_phrase(status), content_type, length,
                     status == 401 ? "WWW-Authenticate: Bearer\r\n" : "", always_sent,
                     extra ? extra : "");
    send(fd, head, (size_t)k < sizeof head ? (size_t)k : sizeof head - 1, MSG_NOSIGNAL);
    for (size_t at = 0; at < len;) {
        ssize_t sent = send(fd, body + at, len - at, MSG_NOSIGNAL);
        if (sent <= 0)
            return;
        at += (size_t)sent;
    }
}

/* The boundary parameter of a multipart/form-data content type, into out. */
static int boundary_of(const char *content_type, char *out, size_t n)
{
    const char *b = strstr(content_type, "boundary=");
    if (strncasecmp(content_type, "multipart/form-data", 19) || !b)
        return -1;
    b += 9;
    int quoted = *b == '"';
    b += quoted;
    size_t k = 0;
    while (b[k] && b[k] != (quoted ? '"' : ';') && b[k] != ' ' && k + 3 < n)
        k++;
    if (k == 0 || k > 70) /* RFC 2046: 1 to 70 characters */
        return -1;
    snprintf(out, n, "--%.*s", (int)k, b);
    return 0;
}

/* Within a part's head [h, end): parameter param (name, filename) of its
 * Content-Disposition, into out. */
static int disposition(const char *h, const char *end, const char *param, char *out, size_t n)
{
    char key[32];
    snprintf(key, sizeof key, " %s=\"", param);
    size_t klen = strlen(key);
    for (const char *p = h; p + klen < end; p++) {
        if (memcmp(p, key, klen) && (p[0] != ';' || memcmp(p + 1, key + 1, klen - 1)))
            continue;
        const char *v = p + klen, *q = memchr(v, '"', (size_t)(end - v));
        if (!q)
            return -1;
        snprintf(out, n, "%.*s", (int)(q - v), v);
        return 0;
    }
    return -1;
}

int http_form_field(const http_request *r, const char *name, form_field *f)
{
    f->data = NULL;
    return http_form_next(r, name, f);
}

int http_form_next(const http_request *r, const char *name, form_field *f)
{
    char delim[80], field[128];
    if (boundary_of(r->content_type, delim, sizeof delim))
        return -1;
    size_t dl = strlen(delim);
    const char *end = r->body + r->body_len, *from = f->data ? f->data + f->len : r->body;
    const char *p = memmem(from, (size_t)(end - from), delim, dl);
    while (p && (size_t)(end - p) > dl + 2 && p[dl] == '\r' && p[dl + 1] == '\n') {
        const char *h = p + dl + 2, *data = memmem(h, (size_t)(end - h), "\r\n\r\n", 4);
        if (!data)
            return -1;
        data += 4;
        const char *next = memmem(data, (size_t)(end - data), delim, dl);
        if (!next || next - data < 2)
            return -1;
        if (disposition(h, data, "name", field, sizeof field) == 0 && strcmp(field, name) == 0) {
            f->data = data;
            f->len = (size_t)(next - 2 - data); /* the CRLF before the delimiter */
            if (disposition(h, data, "filename", f->filename, sizeof f->filename))
                f->filename[0] = 0;
            return 0;
        }
        p = next;
    }
    return -1;
}
