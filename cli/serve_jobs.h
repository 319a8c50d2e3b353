/* hark serve's transcription jobs (serve_jobs.c): POST /v1/jobs takes the same
 * form as /inference and answers 202 with a job's id at once, the transcription
 * going on on the worker that took it; GET /v1/jobs/ID says how far it is and the
 * segments so far; GET /v1/jobs/ID/result?format=F is the CLI's file; DELETE
 * /v1/jobs/ID cancels it (or forgets a finished one); POST /v1/jobs/ID/explain?window=N
 * is hark explain's trace of a window; GET /v1/options the server's defaults.
 * At most JOBS_MAX are held; a finished one is forgotten JOBS_KEEP_S after. */
#ifndef HARK_CLI_SERVE_JOBS_H
#define HARK_CLI_SERVE_JOBS_H

#include <stdatomic.h>

#include "http.h"
#include "hark.h"

enum { JOBS_MAX = 16, JOBS_KEEP_S = 600 };

typedef struct serve_jobs serve_jobs;
typedef struct serve_job serve_job;

typedef struct jobs_config {
    const hark_model *model;
    const hark_params *params;         /* the server's, the defaults of every job  */
    const hark_output_params *layout;  /* the writers' (srt and vtt cues)          */
    const atomic_int *stop_now;        /* nonzero: the server is stopping at once  */
    const char *cors;                  /* hark serve --cors's header line, or ""   */
    size_t max_upload;                 /* bytes                                    */
} jobs_config;

serve_jobs *jobs_new(const jobs_config *c);
/* Forgets every job (their uploads removed); none may be running. */
void jobs_free(serve_jobs *js);
/* Whether r is for the job API (which needs the API key as transcription does). */
int jobs_path(const http_request *r);
/* Answers r, a jobs_path request; returns its HTTP status.  *run: a job the calling
 * worker runs (jobs_run) once the connection is closed, or NULL. */
int jobs_route(serve_jobs *js, int fd, const http_request *r, serve_job **run);
/* Transcribes job j on the calling thread; returns the status for the log (200;
 * 499: cancelled; 503: the server stopped it; 4xx/500: failed), its path in path. */
int jobs_run(serve_jobs *js, serve_job *j, char *path, size_t n);

#endif
