/* The little of HTTP/1.1 that `hark serve` speaks (cli_http.c): one request a
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
} http_request;

/* Reads a request from fd, its body at most max_body bytes (answering
 * "Expect: 100-continue").  Returns 0, or the HTTP status to refuse it with
 * (400, 408, 411, 413, 431, 501, 505), the reason in why. */
int http_read_request(int fd, size_t max_body, http_request *r, char *why, size_t n);
/* The same in two steps: the head (its checks of the body's length included),
 * then, if the request is to be served, the body. */
int http_read_head(int fd, size_t max_body, http_request *r, char *why, size_t n);
int http_read_body(int fd, http_request *r, char *why, size_t n);
/* For a request refused after its head: reads and drops the body the peer is
 * sending (unless it waits for "100 Continue"; for 10 s at most), so that closing
 * the connection with its bytes unread does not reset it before the answer is out. */
void http_discard_body(int fd, const http_request *r);
void http_request_free(http_request *r);
/* Sends a whole response and closes nothing (a 401 says "WWW-Authenticate: Bearer"). */
void http_respond(int fd, int status, const char *content_type, const char *body, size_t len);

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
