/* The HTTP/1.1 of `hark serve` (http.c), as pure code over bytes: a request read
 * incrementally (its head parsed strictly as RFC 9112 asks, its body sized by
 * Content-Length or sent chunked), answers formatted into memory, and
 * multipart/form-data fields.  No sockets here: conn.c does the reading and
 * writing, so that this can be fuzzed whole (tests/fuzz/fuzz_http.c). */
#ifndef HARK_CLI_HTTP_H
#define HARK_CLI_HTTP_H

#include <stddef.h>

enum {
    HTTP_MAX_HEAD = 16384, /* a longer head: 431 */
    HTTP_MORE = -1,        /* http_reader_feed: the request is not whole yet */
    HTTP_HEAD = -2,        /* http_reader_feed: the head is in, the body is to be decided */
};

typedef struct http_request {
    char method[8];
    char path[256];          /* the request-target's path, without its query */
    char query[1024];        /* its query, after the '?' ("" when none) */
    char content_type[256];
    char authorization[512]; /* cut to fit: a longer value ends 511 bytes long */
    int minor;               /* HTTP/1.minor: 0 or 1 */
    int expect_continue;     /* "Expect: 100-continue" */
    int chunked;             /* "Transfer-Encoding: chunked" */
    size_t content_length;   /* declared (0 when chunked or none) */
    char *body;              /* the body as it came, NUL-terminated; NULL before */
    size_t body_len;
} http_request;

/* A request as its bytes come: the head (held in buf), then the body. */
typedef struct http_reader {
    http_request r;
    char *buf;          /* the head's bytes (HTTP_MAX_HEAD + 1) */
    size_t have;        /* of them */
    int phase;          /* 0 the head, 1 the body, 2 done */
    size_t body_cap;    /* r.body's room */
    size_t max_body;    /* set by http_reader_body: a larger body is refused (413) */
    /* chunked: the state of the chunk being read, bytes of it left, the line's length */
    int chunk_state;
    size_t chunk_left, line_len;
} http_reader;

/* Feeds len bytes; *used says how many were taken (bytes after the request are
 * left: one request a connection).  Returns HTTP_MORE, HTTP_HEAD once the head
 * is in (the caller decides, then calls http_reader_body or refuses), 0 once the
 * request is whole, or the HTTP status to refuse it with, the reason in why. */
int http_reader_feed(http_reader *rd, const char *in, size_t len, size_t *used, char *why,
                     size_t n);
/* After HTTP_HEAD: the body is to be read too, up to max bytes.  Returns 0 when
 * there is none (the request is whole), HTTP_MORE, or 413 when its
 * Content-Length is larger than max (a chunked one is refused as it passes max). */
int http_reader_body(http_reader *rd, size_t max, char *why, size_t n);
void http_reader_free(http_reader *rd);

/* A whole answer, malloc'd (*len its length): the status line, Content-Type,
 * Content-Length (none for 204), "WWW-Authenticate: Bearer" for a 401, the
 * lines set by http_always_send, extra ("Name: value\r\n"..., or NULL),
 * "Connection: close", then the body.  NULL when out of memory. */
char *http_response(int status, const char *extra, const char *content_type, const char *body,
                    size_t body_len, size_t *len);
/* Header lines that every answer carries from now on (hark serve's --cors), set
 * before any connection is served; NULL for none.  lines must outlive them. */
void http_always_send(const char *lines);
const char *http_reason(int status);

/* The multipart/form-data field called name: its bytes and, for a file, its
 * file name ("" when none).  Returns 0, or -1 when the body has no such field. */
typedef struct form_field {
    const char *data;
    size_t len;
    char filename[128];
} form_field;
int http_form_field(const http_request *r, const char *name, form_field *f);
/* The next field called name after f (which a call above found). */
int http_form_next(const http_request *r, const char *name, form_field *f);

#endif
