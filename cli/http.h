/* The little of HTTP/1.1 that `hark serve` speaks (http.c): one request a
 * connection, its body sized by Content-Length, multipart/form-data fields. */
#ifndef HARK_CLI_HTTP_H
#define HARK_CLI_HTTP_H

#include <stddef.h>

typedef struct http_request {
    char method[8];
    char path[256];
    char content_type[256];
    char authorization[512]; /* cut to fit: a longer value ends 511 bytes long */
    char *head;            /* the bytes read: the head, then the start of the body */
    size_t head_read;      /* how many */
    char *body;            /* Content-Length bytes */
    size_t body_len;
    int timeout_s;         /* http_limits's, for the body */
} http_request;

typedef struct http_limits {
    size_t max_body; /* a larger Content-Length is refused (413) */
    int timeout_s;   /* the head within it, the body at 1 kB/s after it, no gap longer (408) */
} http_limits;

/* Reads a request from fd within lim (answering "Expect: 100-continue").
 * Returns 0, or the HTTP status to refuse it with (400, 408, 411, 413, 431,
 * 501, 505), the reason in why. */
int http_read_request(int fd, const http_limits *lim, http_request *r, char *why, size_t n);
/* The same in two steps: the head (its checks of the body's length included),
 * then, if the request is to be served, the body. */
int http_read_head(int fd, const http_limits *lim, http_request *r, char *why, size_t n);
int http_read_body(int fd, http_request *r, char *why, size_t n);
/* Before closing a connection: ends our side and reads and drops what the peer
 * still sends (a body refused: 10 s at most), so that the close does not reset
 * the connection before the peer has the answer. */
void http_linger(int fd);
void http_request_free(http_request *r);
/* Sends a whole response and closes nothing (a 401 says "WWW-Authenticate: Bearer"). */
void http_respond(int fd, int status, const char *content_type, const char *body, size_t len);
/* The same with extra header lines ("Name: value\r\n"..., up to 1 kB in all). */
void http_respond_with(int fd, int status, const char *extra, const char *content_type,
                       const char *body, size_t len);
/* Header lines that every response carries from now on (hark serve's --cors), set
 * before any connection is served; NULL for none.  lines must outlive them. */
void http_always_send(const char *lines);

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
