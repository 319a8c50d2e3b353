/* hark explain AUDIO: one window transcribed as usual and traced; the trace
 * written as DIR/trace.json, drawn as DIR/index.html (explain_page.c), summed up
 * on stdout. */
#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "explain.h"
#include "base/base.h"

/* The trace of window o->window as JSON, or NULL after printing why. */
static char *trace_json(const explain_options *o, const hark_model *m, const float *x, size_t n)
{
    hark_context *ctx = hark_context_new(m, &o->cli.params);
    hark_explain *ex = hark_explain_new(o->window);
    char *json = NULL;
    if (ex && o->occlusion)
        hark_explain_set_occlusion(ex, 0.2);
    if (!ctx || !ex)
        fprintf(stderr, "hark: explain: out of memory\n");
    else if (hark_transcribe_explained(ctx, x, n, ex) != 0)
        fprintf(stderr, "hark: explain: %s: %s\n", o->audio, hark_last_error(ctx));
    else if (!(json = hark_explain_json(ex)))
        fprintf(stderr, "hark: explain: out of memory\n");
    hark_explain_free(ex);
    hark_context_free(ctx);
    return json;
}

static int write_out(const char *dir, const char *name, const char *text)
{
    char path[4096];
    hark_error e = {{0}};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (hark_write_file(path, text, strlen(text), &e) == 0)
        return 0;
    fprintf(stderr, "hark: explain: %s\n", e.msg);
    return 1;
}

/* --occlusion: each decoder layer's heads' rank correlations, alignment heads starred. */
static void occlusion_summary(const cJSON *t)
{
    const cJSON *o = cJSON_GetObjectItem(t, "occlusion"), *layer, *rho;
    const cJSON *heads = cJSON_GetObjectItem(cJSON_GetObjectItem(t, "window"), "alignment_heads");
    if (!o)
        return;
    printf("\nocclusion: rank correlation of each head's attention with the log-probability lost\n"
           "when %.1f s of audio is masked (* alignment heads)\n", cJSON_GetObjectItem(o, "span_s")->valuedouble);
    int l = 0;
    cJSON_ArrayForEach(layer, cJSON_GetObjectItem(o, "head_rho")) {
        int h = 0;
        printf("  layer %d:", l);
        cJSON_ArrayForEach(rho, layer) {
            int star = 0;
            const cJSON *a;
            cJSON_ArrayForEach(a, heads)
                star |= cJSON_GetArrayItem(a, 0)->valueint == l && cJSON_GetArrayItem(a, 1)->valueint == h;
            printf(" %+.2f%s", rho->valuedouble, star ? "*" : " ");
            h++;
        }
        printf("\n");
        l++;
    }
}

/* The taken tokens' ids on one line, then the text, the first candidates of
 * each step, and the trace's own checks. */
static void summary(const cJSON *t, const char *dir)
{
    const cJSON *tok, *step, *w = cJSON_GetObjectItem(t, "window");
    printf("window %d at %.2f s:", cJSON_GetObjectItem(w, "index")->valueint,
           cJSON_GetObjectItem(w, "start_s")->valuedouble);
    cJSON_ArrayForEach(tok, cJSON_GetObjectItem(t, "tokens"))
        if (strcmp(cJSON_GetObjectItem(tok, "kind")->valuestring, "start"))
            printf(" %d", cJSON_GetObjectItem(tok, "id")->valueint);
    printf("\n\n   pos  token            p     next-token candidates\n");
    cJSON_ArrayForEach(step, cJSON_GetObjectItem(t, "steps")) {
        const cJSON *text = cJSON_GetObjectItem(step, "text"), *c;
        printf("  %4d  %-15s %5.3f  ", cJSON_GetObjectItem(step, "position")->valueint,
               text ? text->valuestring : "(end)",
               text ? cJSON_GetObjectItem(step, "p_search")->valuedouble : 0.0);
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(step, "top"))
            printf(" %s %.2f |", cJSON_GetObjectItem(c, "text")->valuestring,
                   cJSON_GetObjectItem(c, "p")->valuedouble);
        printf("\n");
    }
    occlusion_summary(t);
    const cJSON *checks = cJSON_GetObjectItem(t, "checks");
    printf("\nlogit lens at the last layer vs the logits: max |diff| %g\n"
           "each token's probability replayed vs the search's: max |diff| %g\n"
           "wrote %s/trace.json and %s/index.html\n",
           cJSON_GetObjectItem(checks, "lens_last_layer_max_abs_diff")->valuedouble,
           cJSON_GetObjectItem(checks, "replay_p_max_abs_diff")->valuedouble, dir, dir);
}

static int write_trace(const char *dir, const char *json)
{
    cJSON *t = cJSON_Parse(json);
    int rc = !t;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "hark: explain: %s: cannot create (%s)\n", dir, strerror(errno));
        rc = 1;
    }
    if (!rc)
        rc = write_out(dir, "trace.json", json);
    char *page = rc ? NULL : explain_page(json);
    if (!rc && (!page || write_out(dir, "index.html", page)))
        rc = 1;
    if (!rc)
        summary(t, dir);
    free(page);
    cJSON_Delete(t);
    return rc;
}

int explain_audio(const explain_options *o)
{
    float *x = NULL;
    size_t n = 0;
    char err[600];
    if (hark_read_audio(o->audio, &x, &n, err, sizeof err) != 0) {
        fprintf(stderr, "hark: explain: %s\n", err);
        return 1;
    }
    hark_model *m = cli_load_model(&o->cli);
    char *json = m ? trace_json(o, m, x, n) : NULL;
    int rc = json ? write_trace(o->out_dir ? o->out_dir : "explain", json) : 1;
    free(json);
    hark_model_free(m);
    free(x);
    return rc;
}
