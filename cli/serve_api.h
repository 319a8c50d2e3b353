/* hark serve's API: the request's form fields and the answer's formats
 * (serve_api.c). */
#ifndef HARK_CLI_SERVE_API_H
#define HARK_CLI_SERVE_API_H

#include "http.h"
#include "hark.h"

/* The per-request options read from the form (p points into its buffers). */
typedef struct request_options {
    char format[16], language[16], prompt[2048];
    char why[160]; /* a bad field's message */
} request_options;

/* The form's fields (OpenAI's and whisper.cpp's) into p; NULL, or why the request is
 * refused (400). */
const char *serve_request_options(const http_request *r, request_options *q, hark_params *p);
/* The transcript as format asks (json, text, verbose_json, or a writer's), malloc'd;
 * NULL when out of memory.  *content_type: its media type. */
char *serve_render(const hark_context *ctx, const char *format, const hark_params *p,
                   const char **content_type);

#endif
