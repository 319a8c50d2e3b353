/* The little of HTTP/1.1 that `hark serve` speaks (cli_http.c): one request a
 * connection, its body sized by Content-Length, multipart/form-data fields. */
#ifndef HARK_CLI_HTTP_H
#define HARK_CLI_HTTP_H

#include <stddef.h>

typedef struct http_request {
    char method[8];
    char path[256];
    char content_type[256];
    char *head;            /* the bytes read: the head, then the start of the body */
    char *body;            /* Content-Length bytes */
    size_t body_len;
} http_request;

/* Reads a request from fd, its body at most max_body bytes (answering
 * "Expect: 100-continue").  Returns 0, or the HTTP status to refuse it with
 * (400, 408, 411, 413, 431, 501, 505), the reason in why. */
int http_read_request(int fd, size_t max_body, http_request *r, char *why, size_t n);
void http_request_free(http_request *r);
/* Sends a whole response and closes nothing. */
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
