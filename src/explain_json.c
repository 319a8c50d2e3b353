/* hark explain's trace as JSON (trace.json): every number its page draws.
 * Weights are written to 6 significant digits, so a row still sums to 1 within
 * 1e-6; cross-attention rows stop where the window's audio does, the weight on
 * the padding after it given as one number ("rest"). */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "explain.h"

static cJSON *num6(double v)
{
    char s[32];
    snprintf(s, sizeof s, "%.6g", v);
    return cJSON_CreateNumber(strtod(s, NULL));
}

static cJSON *floats(const float *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, num6(v[i]));
    return a;
}

static void add_text(cJSON *o, const hark_model *m, int id)
{
    int len;
    const char *b = hark_token_bytes(&m->vocab, id, &len);
    char *t = hark_utf8_sanitize(b, (size_t)len);
    cJSON_AddStringToObject(o, "text", t ? t : "");
    free(t);
}

static cJSON *candidates(const hark_model *m, const candidate_list *c)
{
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; k < EXPLAIN_TOP && c->id[k] >= 0; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "id", c->id[k]);
        add_text(o, m, c->id[k]);
        cJSON_AddItemToObject(o, "p", num6(c->p[k]));
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static const char *token_kind(const hark_explain *x, int pos)
{
    const hark_specials *sp = &x->m->vocab.sp;
    int id = x->tokens[pos];
    if (pos < x->n_start)
        return "start";
    if (id >= sp->timestamp_begin)
        return "timestamp";
    return id < sp->eot ? "text" : "special";
}

static cJSON *tokens_json(const hark_explain *x)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < x->n_pos; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "id", x->tokens[i]);
        add_text(o, x->m, x->tokens[i]);
        cJSON_AddStringToObject(o, "kind", token_kind(x, i));
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* One cross-attention row: the audio's frames, and "rest" (the padding's weight). */
static cJSON *cross_row(const float *w, int shown, int ac)
{
    cJSON *o = cJSON_CreateObject();
    double rest = 0;
    for (int t = shown; t < ac; t++)
        rest += w[t];
    cJSON_AddItemToObject(o, "w", floats(w, shown));
    cJSON_AddItemToObject(o, "rest", num6(rest));
    return o;
}

/* Attention maps [layer][head][n_pos][cols] as nested arrays; shown < 0: rows
 * whole, else cross-attention rows of their first `shown` columns and the rest. */
static cJSON *maps_json(const hark_explain *x, const float *maps, int cols, int shown)
{
    int L = x->m->hp.n_text_layer, H = x->m->hp.n_text_head, P = x->n_pos;
    cJSON *layers = cJSON_CreateArray();
    for (int l = 0; l < L; l++) {
        cJSON *heads = cJSON_CreateArray();
        for (int h = 0; h < H; h++) {
            cJSON *rows = cJSON_CreateArray();
            for (int i = 0; i < P; i++) {
                const float *row = maps + (((size_t)l * H + h) * P + i) * cols;
                cJSON_AddItemToArray(rows, shown < 0 ? floats(row, cols) : cross_row(row, shown, cols));
            }
            cJSON_AddItemToArray(heads, rows);
        }
        cJSON_AddItemToArray(layers, heads);
    }
    return layers;
}

/* A head's summary; frames: seconds a frame (encoder heads), 0 for cross heads. */
static cJSON *stats_json(const head_stats *s, int dh, double frame_s, int grid)
{
    cJSON *o = cJSON_CreateObject();
    double mean = s->sum / s->n, sd = sqrt(fmax(s->sum2 / s->n - mean * mean, 0));
    cJSON_AddItemToObject(o, "score_std", num6(sd));
    cJSON_AddItemToObject(o, "score_std_scaled", num6(sd / sqrt(dh)));
    cJSON_AddItemToObject(o, "entropy", num6(s->entropy / s->rows));
    cJSON_AddItemToObject(o, "entropy_unscaled", num6(s->entropy_raw / s->rows));
    if (frame_s > 0) {
        cJSON_AddItemToObject(o, "mean_distance_s", num6(s->distance / s->rows * frame_s));
        cJSON *map = cJSON_CreateArray();
        for (int r = 0; r < grid; r++)
            cJSON_AddItemToArray(map, floats(s->map + (size_t)r * grid, grid));
        cJSON_AddItemToObject(o, "map", map);
    }
    return o;
}

static cJSON *heads_json(const head_stats *s, int layers, int heads, int dh, double frame_s,
                         int grid)
{
    cJSON *a = cJSON_CreateArray();
    for (int l = 0; l < layers; l++) {
        cJSON *row = cJSON_CreateArray();
        for (int h = 0; h < heads; h++)
            cJSON_AddItemToArray(row, stats_json(&s[l * heads + h], dh, frame_s, grid));
        cJSON_AddItemToArray(a, row);
    }
    return a;
}

static cJSON *lens_json(const hark_explain *x)
{
    int L = x->m->hp.n_text_layer;
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < x->n_pos; i++) {
        cJSON *layers = cJSON_CreateArray();
        for (int l = 0; l < L; l++)
            cJSON_AddItemToArray(layers, candidates(x->m, &x->lens[(size_t)i * L + l]));
        cJSON_AddItemToArray(a, layers);
    }
    return a;
}

/* Each step from the last start token on: what it took, its candidates. */
static cJSON *steps_json(const hark_explain *x, double *p_diff)
{
    const hark_hparams *hp = &x->m->hp;
    double kv_token = 2.0 * hp->n_text_layer * hp->n_text_state * sizeof(float);
    cJSON *a = cJSON_CreateArray();
    for (int pos = x->n_start - 1; pos < x->n_pos; pos++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "position", pos);
        if (pos + 1 < x->n_pos) {
            cJSON_AddNumberToObject(o, "token", x->tokens[pos + 1]);
            add_text(o, x->m, x->tokens[pos + 1]);
            cJSON_AddItemToObject(o, "p_search", num6(x->p_search[pos + 1]));
            cJSON_AddItemToObject(o, "p_replay", num6(x->p_replay[pos + 1]));
            *p_diff = fmax(*p_diff, fabs(x->p_search[pos + 1] - x->p_replay[pos + 1]));
        }
        cJSON_AddItemToObject(o, "top", candidates(x->m, &x->top[pos]));
        cJSON_AddNumberToObject(o, "suppressed", x->n_suppressed[pos]);
        cJSON_AddNumberToObject(o, "kv_cache_bytes", kv_token * (pos + 1));
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *window_json(const hark_explain *x)
{
    cJSON *o = cJSON_CreateObject(), *heads = cJSON_CreateArray();
    cJSON_AddNumberToObject(o, "index", x->want);
    cJSON_AddNumberToObject(o, "seek", x->seek);
    cJSON_AddNumberToObject(o, "start_s", x->seek / 100.0);
    cJSON_AddNumberToObject(o, "frame_s", 0.02);
    cJSON_AddNumberToObject(o, "frames", x->m->hp.n_audio_ctx);
    cJSON_AddNumberToObject(o, "audio_frames", x->audio_frames);
    cJSON_AddNumberToObject(o, "n_start", x->n_start);
    for (int i = 0; i < x->m->n_alignment_heads; i++)
        cJSON_AddItemToArray(heads, cJSON_CreateIntArray(x->m->alignment_heads[i], 2));
    cJSON_AddItemToObject(o, "alignment_heads", heads);
    return o;
}

static cJSON *shapes_of(const hark_model *m)
{
    hark_dims d = hark_model_dims(m);
    char *s = hark_shapes(&d, "json");
    cJSON *o = s ? cJSON_Parse(s) : NULL;
    free(s);
    return o;
}

static double cosine(const float *a, const float *b, int d)
{
    double ab = 0, aa = 0, bb = 0;
    for (int i = 0; i < d; i++)
        ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0;
}

/* The same text token at positions i < j: its hidden states' cosine after each
 * layer (same token, different context). */
static cJSON *contextual_pair(const hark_explain *x, int i, int j)
{
    int L = x->m->hp.n_text_layer, d = x->m->hp.n_text_state;
    cJSON *o = cJSON_CreateObject(), *cos = cJSON_CreateArray();
    cJSON_AddNumberToObject(o, "id", x->tokens[i]);
    add_text(o, x->m, x->tokens[i]);
    cJSON_AddItemToObject(o, "positions", cJSON_CreateIntArray((int[]){i, j}, 2));
    for (int l = 0; l < L; l++)
        cJSON_AddItemToArray(cos, num6(cosine(x->hidden + ((size_t)l * x->n_pos + i) * d,
                                              x->hidden + ((size_t)l * x->n_pos + j) * d, d)));
    cJSON_AddItemToObject(o, "cosine", cos);
    return o;
}

/* Every pair of positions holding the same text token (the first 32). */
static cJSON *contextual_json(const hark_explain *x)
{
    cJSON *a = cJSON_CreateArray();
    int pairs = 0;
    for (int i = x->n_start; i < x->n_pos; i++)
        for (int j = i + 1; j < x->n_pos && pairs < 32; j++)
            if (x->tokens[i] == x->tokens[j] && x->tokens[i] < x->m->vocab.sp.eot) {
                cJSON_AddItemToArray(a, contextual_pair(x, i, j));
                pairs++;
            }
    return a;
}

/* --occlusion: each text token's log-probability drop per span, each head's rho. */
static cJSON *occlusion_json(const hark_explain *x)
{
    const hark_hparams *hp = &x->m->hp;
    cJSON *o = cJSON_CreateObject(), *effect = cJSON_CreateArray(), *rho = cJSON_CreateArray();
    cJSON_AddNumberToObject(o, "span_s", x->occlusion_s);
    cJSON_AddNumberToObject(o, "spans", x->n_spans);
    for (int pos = 0; pos < x->n_pos; pos++)
        cJSON_AddItemToArray(effect, floats(x->effect + (size_t)pos * x->n_spans, x->n_spans));
    for (int l = 0; l < hp->n_text_layer; l++)
        cJSON_AddItemToArray(rho, floats(x->head_rho + (size_t)l * hp->n_text_head, hp->n_text_head));
    cJSON_AddItemToObject(o, "effect", effect);
    cJSON_AddItemToObject(o, "head_rho", rho);
    return o;
}

char *hark_explain_json(const hark_explain *x)
{
    if (!x || !x->found)
        return NULL;
    const hark_hparams *hp = &x->m->hp;
    double p_diff = 0;
    cJSON *o = cJSON_CreateObject(), *checks = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "window", window_json(x));
    cJSON_AddItemToObject(o, "shapes", shapes_of(x->m));
    cJSON_AddItemToObject(o, "tokens", tokens_json(x));
    cJSON_AddItemToObject(o, "steps", steps_json(x, &p_diff));
    cJSON_AddItemToObject(o, "lens", lens_json(x));
    cJSON_AddItemToObject(o, "decoder_self", maps_json(x, x->self, x->n_pos, -1));
    cJSON_AddItemToObject(o, "cross", maps_json(x, x->xattn, hp->n_audio_ctx, x->audio_frames));
    cJSON_AddItemToObject(o, "cross_heads", heads_json(x->dec_cross, hp->n_text_layer, hp->n_text_head,
                                                       hp->n_text_state / hp->n_text_head, 0, 0));
    cJSON_AddItemToObject(o, "encoder_heads", heads_json(x->enc, hp->n_audio_layer, hp->n_audio_head,
                                                         hp->n_audio_state / hp->n_audio_head, 0.02, x->grid));
    cJSON_AddItemToObject(o, "contextual", contextual_json(x));
    if (x->effect)
        cJSON_AddItemToObject(o, "occlusion", occlusion_json(x));
    cJSON_AddNumberToObject(checks, "lens_last_layer_max_abs_diff", x->lens_diff);
    cJSON_AddNumberToObject(checks, "replay_p_max_abs_diff", p_diff);
    cJSON_AddItemToObject(o, "checks", checks);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}
