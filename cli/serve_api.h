/* hark serve's API: the request's form fields and the answer's formats
 * (serve_api.c). */
#ifndef HARK_CLI_SERVE_API_H
#define HARK_CLI_SERVE_API_H

#include <cJSON.h>

#include "conn.h"
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
/* A transcription request's upload (its "file" field, into file) and its fields into
 * q and p (as serve_request_options; vad=false turns the server's VAD off, vad=true
 * needs one; /v1/audio/translations translates): NULL, or why it is refused (400). */
const char *serve_upload_options(const http_request *r, const hark_model *m, form_field *file,
                                 request_options *q, hark_params *p);
/* The upload under a temporary name in $TMPDIR (what it is comes from its bytes, for
 * libsndfile and ffmpeg alike, not its name); 0, or -1 with nothing left behind. */
int serve_save_upload(const form_field *f, char *path, size_t n);
/* Why the transcription of the upload stored at tmp (name: as the client named it)
 * returned rc (nor 0 nor HARK_ERR_ABORTED), into out: the context's error with the
 * upload's name for tmp's; returns the status: 413 past --max-duration, 500 out of
 * memory (or without a context), else 400. */
int serve_failure(const hark_context *ctx, int rc, const hark_params *p, const char *tmp,
                  const char *name, char *out, size_t n);
/* An error as OpenAI's API words one: {"error": {"message": ..., "type": ...}}, with
 * extra header lines (or NULL). */
void serve_respond_error(conn *c, int status, const char *extra, const char *message);
/* serve_respond_error without extra lines; returns status (a handler's for the log). */
int serve_error(conn *c, int status, const char *message);
/* root as the answer's JSON body, root deleted (NULL: out of memory, a 500);
 * returns the status given. */
int serve_respond_json(conn *c, int status, cJSON *root);
/* The media type of a response_format's or a writer's format. */
const char *serve_content_type(const char *format);
/* The transcript as format asks (json, text, verbose_json, or a writer's), malloc'd;
 * NULL when out of memory.  *content_type: its media type. */
char *serve_render(const hark_context *ctx, const char *format, const hark_params *p,
                   const hark_output_params *layout, const char **content_type);

#endif
