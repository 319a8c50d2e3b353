/* The public context: a model (shared, read-only), parameters, the last
 * error and the last results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "transcribe.h"

struct hark_context {
    const hark_model *model;
    hark_params params;
    hark_result result;
    hark_error error;
};

hark_params hark_default_params(void)
{
    hark_params p = {0};
    p.n_threads = 1;
    p.timestamps = 0;
    p.max_tokens = 0;
    p.language = NULL;
    p.translate = 0;
    return p;
}

hark_context *hark_context_new(const hark_model *model, const hark_params *params)
{
    if (!model)
        return NULL;
    hark_context *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->model = model;
    c->params = params ? *params : hark_default_params();
    return c;
}

void hark_context_free(hark_context *c)
{
    if (!c)
        return;
    hark_result_clear(&c->result);
    free(c);
}

const char *hark_last_error(const hark_context *c)
{
    return c ? c->error.msg : "no context";
}

int hark_transcribe(hark_context *c, const float *samples, size_t n)
{
    c->error.msg[0] = 0;
    if (!samples && n)
        return hark_fail(&c->error, HARK_ERR_ARG, "no samples given");
    return hark_run(c->model, &c->params, samples, n, &c->result, &c->error);
}

int hark_transcribe_file(hark_context *c, const char *path)
{
    float *x;
    size_t n;
    c->error.msg[0] = 0;
    hark_result_clear(&c->result);
    int rc = hark_audio_read(path, &x, &n, &c->error);
    if (rc)
        return rc;
    rc = hark_run(c->model, &c->params, x, n, &c->result, &c->error);
    if (rc && strncmp(c->error.msg, path, strlen(path)) != 0) {
        char msg[sizeof c->error.msg];
        snprintf(msg, sizeof msg, "%s", c->error.msg);
        hark_fail(&c->error, rc, "%s: %s", path, msg);
    }
    free(x);
    return rc;
}

static const hark_segment *seg(const hark_context *c, int i)
{
    return c && i >= 0 && i < c->result.n ? &c->result.seg[i] : NULL;
}

const char *hark_text(const hark_context *c) { return c && c->result.text ? c->result.text : ""; }
const char *hark_language(const hark_context *c) { return c ? c->result.language : ""; }
double hark_audio_seconds(const hark_context *c) { return c ? c->result.audio_seconds : 0; }
int hark_n_segments(const hark_context *c) { return c ? c->result.n : 0; }
const char *hark_segment_text(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->text : ""; }
double hark_segment_start(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->start : 0; }
double hark_segment_end(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->end : 0; }
int hark_segment_n_tokens(const hark_context *c, int i) { return seg(c, i) ? seg(c, i)->n_tokens : 0; }

hark_token_info hark_segment_token(const hark_context *c, int i, int j)
{
    hark_token_info t = {-1, 0.0f, ""};
    const hark_segment *s = seg(c, i);
    if (s && j >= 0 && j < s->n_tokens) {
        t.id = s->tokens[j];
        t.p = s->probs[j];
        t.text = s->token_text[j];
    }
    return t;
}

/* For the writers: the raw result. */
const hark_result *hark_context_result(const hark_context *c) { return &c->result; }
