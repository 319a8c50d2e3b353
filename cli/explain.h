/* hark explain's parts: its options and command (explain.c), one window's trace
 * written out (explain_trace.c). */
#ifndef HARK_CLI_EXPLAIN_H
#define HARK_CLI_EXPLAIN_H

#include "cli.h"

typedef struct explain_options {
    cli_options cli;     /* -m and the decoding options, as transcription's */
    int shapes, json;    /* --shapes, --json                                  */
    const char *dims;    /* --dims NAME: openai's dimensions, no weights      */
    const char *audio;   /* the file whose window is traced                   */
    const char *out_dir; /* -o DIR (default "explain")                        */
    int window;          /* --window N, from 0                                */
    int occlusion;       /* --occlusion: spans of 0.2 s masked in turn         */
} explain_options;

/* The page that draws a trace (index.html): self-contained, the trace inside it;
 * malloc'd, NULL when out of memory (explain_page.c). */
char *explain_page(const char *trace_json);
/* Traces window o->window of o->audio into o->out_dir; returns the exit status. */
int explain_audio(const explain_options *o);

#endif
