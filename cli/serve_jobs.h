/* hark serve's transcription jobs (serve_jobs.c): POST /v1/jobs takes the same
 * form as /inference and answers 202 with a job's id at once, the transcription
 * then queued for a worker with no connection waiting on it; GET /v1/jobs/ID says
 * how far it is and the segments so far; GET /v1/jobs/ID/result?format=F is the
 * CLI's file; DELETE /v1/jobs/ID cancels it (or forgets a finished one); POST
 * /v1/jobs/ID/explain?window=N is hark explain's trace of a window (on a worker);
 * GET /v1/options the server's defaults.  All but the explain are answered on the
 * connection loop's thread (conn.c), so a job's progress is seen while every
 * worker transcribes.  At most JOBS_MAX are held; a finished one is forgotten
 * JOBS_KEEP_S after. */
#ifndef HARK_CLI_SERVE_JOBS_H
#define HARK_CLI_SERVE_JOBS_H

#include "conn.h"
#include "hark.h"

enum { JOBS_MAX = 16, JOBS_KEEP_S = 600 };

typedef struct serve_jobs serve_jobs;

typedef struct jobs_config {
    const hark_model *model;
    const hark_params *params;        /* the server's, the defaults of every job */
    const hark_output_params *layout; /* the writers' (srt and vtt cues)         */
    size_t max_upload;                /* bytes                                   */
} jobs_config;

serve_jobs *jobs_new(const jobs_config *c);
/* Forgets every job (their uploads removed); none may be running or queued. */
void jobs_free(serve_jobs *js);

/* The handlers, each answering c and returning its status (conn.h's routes).
 * POST /v1/jobs, GET and DELETE /v1/jobs/ID, GET /v1/jobs/ID/result and
 * GET /v1/options: on the loop's thread; POST /v1/jobs/ID/explain: on a worker. */
int jobs_post(serve_jobs *js, conn *c);
int jobs_get(serve_jobs *js, conn *c);
int jobs_delete(serve_jobs *js, conn *c);
int jobs_result(serve_jobs *js, conn *c);
int jobs_explain(serve_jobs *js, conn *c);
int jobs_options(serve_jobs *js, conn *c);

#endif
