/* hark explain --shapes: Whisper's forward pass as a table of tensors, stage by
 * stage, with symbolic and numeric shapes, parameters and FLOPs, from a model's
 * dimensions alone (no weights needed).
 *
 * The table is data: each row's shape, parameters and FLOPs are written as
 * formulas over the symbols B, T, C, n_head, head_size, n_mels, n_vocab, n_ctx
 * and t, so the text a reader sees is the text the numbers come from.  FLOPs
 * count the matrix products alone (a multiply-add is 2), as hark bench's
 * encoder GFLOP does; element-wise work (LayerNorm, softmax, GELU, adds) is
 * left out, a few percent at most. */
#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "face.h"

/* What a row's parameters are, for the totals by kind. */
enum kind { NONE, CONV, POS_FIXED, EMBED, POS_LEARNED, NORM, ATTN, FFN, N_KINDS };
static const char *const KIND_NAME[N_KINDS] = {
    "", "conv", "positions_fixed", "token_embedding", "positions_learned", "layernorm",
    "attention", "ffn"};

typedef struct row {
    const char *tensor, *shape, *op;
    enum kind kind;
    const char *params, *flops; /* formulas; NULL: none */
} row;

/* A stage: its rows, how often they run, and whether per window or per step. */
typedef struct stage {
    const char *name, *repeat, *per;
    int decoder; /* symbols take the text decoder's C and n_head */
    const row *rows;
    int n;
} stage;

static const row ENCODER_IN[] = {
    {"mel", "B, n_mels, 2T", "log-mel spectrogram in: 2T frames of 10 ms", NONE, NULL, NULL},
    {"conv1", "B, 2T, C", "conv1d k3 s1 + GELU: each frame from 3 frames of n_mels", CONV,
     "3n_mels*C + C", "2*2T*3n_mels*C"},
    {"x", "B, T, C", "conv1d k3 s2 + GELU: stride 2 halves the frames (20 ms each)", CONV,
     "3C*C + C", "2*T*3C*C"},
    {"x", "B, T, C", "+ sinusoidal positions: a fixed T x C table (stored, not learned)",
     POS_FIXED, "T*C", NULL},
};

static const row ENCODER_BLOCK[] = {
    {"h", "B, T, C", "LayerNorm (attn_ln)", NORM, "2C", NULL},
    {"q", "B, T, C", "Q projection: h Wq + bq", ATTN, "C*C + C", "2*T*C*C"},
    {"k", "B, T, C", "K projection: h Wk (no bias)", ATTN, "C*C", "2*T*C*C"},
    {"v", "B, T, C", "V projection: h Wv + bv", ATTN, "C*C + C", "2*T*C*C"},
    {"q, k, v", "B, n_head, T, head_size", "split into heads: C = n_head x head_size, a view",
     NONE, NULL, NULL},
    {"scores", "B, n_head, T, T",
     "q k^T / sqrt(head_size): keeps the scores' spread near 1 whatever head_size", NONE, NULL,
     "2*T*T*C"},
    {"scores", "B, n_head, T, T", "no mask: every frame sees the whole window", NONE, NULL, NULL},
    {"weights", "B, n_head, T, T", "softmax over the keys: each row sums to 1", NONE, NULL, NULL},
    {"att", "B, n_head, T, head_size", "weights v: each frame a weighted sum of values", NONE,
     NULL, "2*T*T*C"},
    {"att", "B, T, C", "merge heads (concatenate)", NONE, NULL, NULL},
    {"h", "B, T, C", "output projection: att Wo + bo", ATTN, "C*C + C", "2*T*C*C"},
    {"x", "B, T, C", "residual add: x + h", NONE, NULL, NULL},
    {"h", "B, T, C", "LayerNorm (mlp_ln)", NORM, "2C", NULL},
    {"mlp", "B, T, 4C", "fc1 + GELU: C -> 4C", FFN, "4C*C + 4C", "2*T*C*4C"},
    {"h", "B, T, C", "fc2: 4C -> C", FFN, "4C*C + C", "2*T*4C*C"},
    {"x", "B, T, C", "residual add: x + h", NONE, NULL, NULL},
};

static const row ENCODER_OUT[] = {
    {"x", "B, T, C", "final LayerNorm (ln_post): the audio features", NORM, "2C", NULL},
};

static const row CROSS_KV[] = {
    {"cross k", "B, T, C", "K projection of the audio features: fixed for the window", ATTN,
     "C*C", "2*T*C*C"},
    {"cross v", "B, T, C", "V projection of the audio features, likewise", ATTN, "C*C + C",
     "2*T*C*C"},
};

static const row DECODER_IN[] = {
    {"token", "B, 1", "the last token's id (B: sequences stepped together, beams)", NONE, NULL,
     NULL},
    {"x", "B, 1, C", "token embedding: a row of the n_vocab x C table (tied to the output)",
     EMBED, "n_vocab*C", NULL},
    {"x", "B, 1, C", "+ learned position t: a row of the n_ctx x C table (why n_ctx tokens at most)",
     POS_LEARNED, "n_ctx*C", NULL},
};

static const row DECODER_BLOCK[] = {
    {"h", "B, 1, C", "LayerNorm (attn_ln)", NORM, "2C", NULL},
    {"q, k, v", "B, 1, C", "Q, K, V projections of the new token (K without bias)", ATTN,
     "3C*C + 2C", "2*3C*C"},
    {"self_k, self_v", "B, t+1, C",
     "appended to the KV cache: under the causal mask past rows never change", NONE, NULL, NULL},
    {"q", "B, n_head, 1, head_size", "split into heads", NONE, NULL, NULL},
    {"scores", "B, n_head, 1, t+1", "q k^T / sqrt(head_size): the newest row of the score matrix",
     NONE, NULL, "2t*C + 2C"},
    {"scores", "B, n_head, 1, t+1",
     "causal mask: later keys get -inf (a prompt's rows mask their upper triangle)", NONE, NULL,
     NULL},
    {"weights", "B, n_head, 1, t+1", "softmax over the keys", NONE, NULL, NULL},
    {"att", "B, n_head, 1, head_size", "weights v", NONE, NULL, "2t*C + 2C"},
    {"h", "B, 1, C", "merge heads, output projection + bo", ATTN, "C*C + C", "2*C*C"},
    {"x", "B, 1, C", "residual add", NONE, NULL, NULL},
    {"h", "B, 1, C", "LayerNorm (cross_attn_ln)", NORM, "2C", NULL},
    {"q", "B, 1, C", "cross-attention Q projection + bq", ATTN, "C*C + C", "2*C*C"},
    {"scores", "B, n_head, 1, T", "q k^T / sqrt(head_size) against the window's cross k", NONE,
     NULL, "2*T*C"},
    {"weights", "B, n_head, 1, T", "softmax over the T frames: where the token listens", NONE,
     NULL, NULL},
    {"att", "B, n_head, 1, head_size", "weights v (cross v)", NONE, NULL, "2*T*C"},
    {"h", "B, 1, C", "merge heads, output projection + bo", ATTN, "C*C + C", "2*C*C"},
    {"x", "B, 1, C", "residual add", NONE, NULL, NULL},
    {"h", "B, 1, C", "LayerNorm (mlp_ln)", NORM, "2C", NULL},
    {"mlp", "B, 1, 4C", "fc1 + GELU: C -> 4C", FFN, "4C*C + 4C", "2*C*4C"},
    {"h", "B, 1, C", "fc2: 4C -> C", FFN, "4C*C + C", "2*4C*C"},
    {"x", "B, 1, C", "residual add", NONE, NULL, NULL},
};

static const row DECODER_OUT[] = {
    {"x", "B, 1, C", "final LayerNorm (ln)", NORM, "2C", NULL},
    {"logits", "B, 1, n_vocab", "x E^T: the token embedding again (tied); text exists only here",
     NONE, NULL, "2*C*n_vocab"},
};

#define STAGE(name, repeat, per, dec, rows) {name, repeat, per, dec, rows, sizeof rows / sizeof *rows}
static const stage STAGES[] = {
    STAGE("encoder", "1", "window", 0, ENCODER_IN),
    STAGE("encoder block", "n_audio_layer", "window", 0, ENCODER_BLOCK),
    STAGE("encoder out", "1", "window", 0, ENCODER_OUT),
    STAGE("cross K/V", "n_text_layer", "window", 1, CROSS_KV),
    STAGE("decoder", "1", "step", 1, DECODER_IN),
    STAGE("decoder block", "n_text_layer", "step", 1, DECODER_BLOCK),
    STAGE("decoder out", "1", "step", 1, DECODER_OUT),
};
enum { N_STAGES = sizeof STAGES / sizeof *STAGES };

/* ------------------------------------------------------------ formulas */

typedef struct env {
    const hark_dims *d;
    int decoder;
} env;

/* The numeric value of symbol s (len bytes); -1 for an unknown one. */
static double symbol(const env *e, const char *s, size_t len)
{
    const hark_dims *d = e->d;
    int c = e->decoder ? d->n_text_state : d->n_audio_state;
    int h = e->decoder ? d->n_text_head : d->n_audio_head;
    struct { const char *name; double v; } syms[] = {
        {"B", 1}, {"T", d->n_audio_ctx}, {"C", c}, {"n_head", h}, {"head_size", c / h},
        {"n_mels", d->n_mels}, {"n_vocab", d->n_vocab}, {"n_ctx", d->n_text_ctx},
        {"t", d->n_text_ctx / 2}, {"n_audio_layer", d->n_audio_layer},
        {"n_text_layer", d->n_text_layer}};
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
        if (strlen(syms[i].name) == len && !strncmp(syms[i].name, s, len))
            return syms[i].v;
    return -1;
}

/* One factor: a number, a symbol, or a number then a symbol ("4C" = 4 x C). */
static double factor(const env *e, const char **p)
{
    double v = 1;
    while (**p == ' ')
        (*p)++;
    if (isdigit((unsigned char)**p))
        v = strtod(*p, (char **)p);
    const char *s = *p;
    while (isalnum((unsigned char)**p) || **p == '_')
        (*p)++;
    return *p > s ? v * symbol(e, s, (size_t)(*p - s)) : v;
}

/* A formula: products ('*') summed ('+'), e.g. "3n_mels*C + C" or "t+1". */
static double eval(const env *e, const char *f, const char *end)
{
    double sum = 0, prod = factor(e, &f);
    while (f < end && *f) {
        char op = *f++;
        double v = factor(e, &f);
        if (op == '*') {
            prod *= v;
        } else {
            sum += prod;
            prod = v;
        }
        while (*f == ' ')
            f++;
    }
    return sum + prod;
}

static double eval_all(const env *e, const char *f)
{
    return f ? eval(e, f, f + strlen(f)) : 0;
}

/* A shape's numbers: each comma-separated formula evaluated. */
static int shape_numbers(const env *e, const char *shape, double *out, int max)
{
    int n = 0;
    for (const char *p = shape; *p && n < max;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        out[n++] = eval(e, p, end);
        p = comma ? comma + 1 : end;
    }
    return n;
}

/* ------------------------------------------------------------ totals */

typedef struct totals {
    double params[N_KINDS], all;
    double window_flops, step_flops;  /* encoder and cross K/V; one decoding step */
    double block_attn, block_ffn;     /* an encoder block's parameters */
    double kv_token_bytes, cross_window_bytes, score_layer_bytes;
} totals;

static totals sum_up(const hark_dims *d)
{
    totals t = {0};
    for (int s = 0; s < N_STAGES; s++) {
        env e = {d, STAGES[s].decoder};
        double repeat = eval_all(&e, STAGES[s].repeat);
        for (int r = 0; r < STAGES[s].n; r++) {
            const row *w = &STAGES[s].rows[r];
            double p = eval_all(&e, w->params), f = eval_all(&e, w->flops) * repeat;
            t.params[w->kind] += p * repeat;
            t.all += p * repeat;
            *(STAGES[s].per[0] == 'w' ? &t.window_flops : &t.step_flops) += f;
            if (STAGES[s].rows == ENCODER_BLOCK)
                *(w->kind == FFN ? &t.block_ffn : &t.block_attn) += w->kind >= ATTN ? p : 0;
        }
    }
    /* hark keeps the self-attention cache in f32, the cross K/V in f16 (f32 models: f32) */
    t.kv_token_bytes = 2.0 * d->n_text_layer * d->n_text_state * 4;
    t.cross_window_bytes = 2.0 * d->n_text_layer * d->n_audio_ctx * d->n_text_state * 2;
    t.score_layer_bytes = (double)d->n_audio_head * d->n_audio_ctx * d->n_audio_ctx * 4;
    return t;
}

/* ------------------------------------------------------------ json */

static cJSON *dims_json(const hark_dims *d)
{
    cJSON *o = cJSON_CreateObject();
    const int v[] = {d->n_mels, d->n_vocab, d->n_audio_ctx, d->n_audio_state, d->n_audio_head,
                     d->n_audio_layer, d->n_text_ctx, d->n_text_state, d->n_text_head,
                     d->n_text_layer};
    const char *names[] = {"n_mels", "n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head",
                           "n_audio_layer", "n_text_ctx", "n_text_state", "n_text_head",
                           "n_text_layer"};
    for (int i = 0; i < 10; i++)
        cJSON_AddNumberToObject(o, names[i], v[i]);
    return o;
}

static cJSON *row_json(const env *e, const row *w)
{
    cJSON *o = cJSON_CreateObject();
    double nums[4];
    int n = shape_numbers(e, w->shape, nums, 4);
    cJSON_AddStringToObject(o, "tensor", w->tensor);
    cJSON_AddStringToObject(o, "shape", w->shape);
    cJSON_AddItemToObject(o, "numbers", cJSON_CreateDoubleArray(nums, n));
    cJSON_AddStringToObject(o, "op", w->op);
    if (w->kind != NONE)
        cJSON_AddStringToObject(o, "kind", KIND_NAME[w->kind]);
    cJSON_AddStringToObject(o, "params_formula", w->params ? w->params : "0");
    cJSON_AddNumberToObject(o, "params", eval_all(e, w->params));
    cJSON_AddStringToObject(o, "flops_formula", w->flops ? w->flops : "0");
    cJSON_AddNumberToObject(o, "flops", eval_all(e, w->flops));
    return o;
}

static cJSON *stage_json(const hark_dims *d, const stage *s)
{
    env e = {d, s->decoder};
    cJSON *o = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "stage", s->name);
    cJSON_AddStringToObject(o, "repeat", s->repeat);
    cJSON_AddNumberToObject(o, "times", eval_all(&e, s->repeat));
    cJSON_AddStringToObject(o, "per", s->per);
    for (int r = 0; r < s->n; r++)
        cJSON_AddItemToArray(rows, row_json(&e, &s->rows[r]));
    cJSON_AddItemToObject(o, "rows", rows);
    return o;
}

static cJSON *totals_json(const totals *t)
{
    cJSON *o = cJSON_CreateObject(), *kinds = cJSON_CreateObject();
    for (int k = 1; k < N_KINDS; k++)
        cJSON_AddNumberToObject(kinds, KIND_NAME[k], t->params[k]);
    cJSON_AddNumberToObject(o, "total_params", t->all);
    cJSON_AddItemToObject(o, "params_by_kind", kinds);
    cJSON_AddNumberToObject(o, "encoder_block_ffn_share", t->block_ffn / (t->block_ffn + t->block_attn));
    cJSON_AddNumberToObject(o, "window_flops", t->window_flops);
    cJSON_AddNumberToObject(o, "step_flops", t->step_flops);
    cJSON_AddNumberToObject(o, "kv_cache_bytes_per_token", t->kv_token_bytes);
    cJSON_AddNumberToObject(o, "cross_kv_bytes_per_window", t->cross_window_bytes);
    cJSON_AddNumberToObject(o, "encoder_score_bytes_per_layer", t->score_layer_bytes);
    return o;
}

static char *shapes_json(const hark_dims *d)
{
    cJSON *o = cJSON_CreateObject(), *stages = cJSON_CreateArray();
    totals t = sum_up(d);
    cJSON_AddItemToObject(o, "dims", dims_json(d));
    cJSON_AddStringToObject(o, "symbols", "B sequences stepped together (1 here), T audio frames "
                            "after conv2 (20 ms each), C width, head_size = C / n_head, t tokens "
                            "already in the KV cache (n_ctx / 2 here)");
    for (int s = 0; s < N_STAGES; s++)
        cJSON_AddItemToArray(stages, stage_json(d, &STAGES[s]));
    cJSON_AddItemToObject(o, "stages", stages);
    cJSON_AddItemToObject(o, "totals", totals_json(&t));
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

/* ------------------------------------------------------------ text */

/* x with a unit prefix: "1.77 G", "590 k", "12" */
static const char *human(char *buf, size_t n, double x)
{
    static const char *const unit[] = {"", " k", " M", " G", " T"};
    int u = 0;
    while (fabs(x) >= 1000 && u < 4) {
        x /= 1000;
        u++;
    }
    snprintf(buf, n, u ? "%.3g%s" : "%.0f%s", x, unit[u]);
    return buf;
}

static void numbers_text(char *buf, size_t n, const env *e, const char *shape)
{
    double nums[4];
    int k = shape_numbers(e, shape, nums, 4), at = snprintf(buf, n, "(");
    for (int i = 0; i < k && at < (int)n; i++)
        at += snprintf(buf + at, n - (size_t)at, i ? ", %.0f" : "%.0f", nums[i]);
    snprintf(buf + at, at < (int)n ? n - (size_t)at : 0, ")");
}

static void stage_text(FILE *f, const hark_dims *d, const stage *s)
{
    env e = {d, s->decoder};
    char nums[64], sym[64], p[32], fl[32];
    fprintf(f, "\n%s (x%.0f per %s)\n", s->name, eval_all(&e, s->repeat), s->per);
    for (int r = 0; r < s->n; r++) {
        const row *w = &s->rows[r];
        numbers_text(nums, sizeof nums, &e, w->shape);
        snprintf(sym, sizeof sym, "(%s)", w->shape);
        fprintf(f, "  %-15s %-25s %-22s %9s %9s  %s\n", w->tensor, sym, nums,
                w->params ? human(p, sizeof p, eval_all(&e, w->params)) : "-",
                w->flops ? human(fl, sizeof fl, eval_all(&e, w->flops)) : "-", w->op);
    }
}

static void totals_text(FILE *f, const totals *t)
{
    char a[32], b[32];
    fprintf(f, "\nparameters: %.0f (%s)\n", t->all, human(a, sizeof a, t->all));
    for (int k = 1; k < N_KINDS; k++)
        fprintf(f, "  %-19s %11.0f  %5.1f %%\n", KIND_NAME[k], t->params[k],
                100 * t->params[k] / t->all);
    fprintf(f, "  an encoder block: attention %.0f, FFN %.0f: FFN is %.1f %% (8C^2 of 12C^2)\n",
            t->block_attn, t->block_ffn, 100 * t->block_ffn / (t->block_ffn + t->block_attn));
    fprintf(f, "FLOPs: %sFLOP a window (encoder and cross K/V), %sFLOP a decoding step\n",
            human(a, sizeof a, t->window_flops), human(b, sizeof b, t->step_flops));
    fprintf(f, "KV cache: %.0f bytes a token (K and V, every layer, f32)\n", t->kv_token_bytes);
    fprintf(f, "cross K/V: %.0f bytes a window (%sB, f16)\n", t->cross_window_bytes,
            human(a, sizeof a, t->cross_window_bytes));
    fprintf(f, "encoder scores: %.0f bytes a layer if every head's T x T were held (%sB)\n",
            t->score_layer_bytes, human(a, sizeof a, t->score_layer_bytes));
}

static char *shapes_text(const hark_dims *d)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    if (!f)
        return NULL;
    totals t = sum_up(d);
    fprintf(f, "Whisper: %d mels, %d tokens; encoder: T=%d frames, C=%d, %d heads of %d, "
            "%d layers; decoder: n_ctx=%d, C=%d, %d heads of %d, %d layers\n",
            d->n_mels, d->n_vocab, d->n_audio_ctx, d->n_audio_state, d->n_audio_head,
            d->n_audio_state / d->n_audio_head, d->n_audio_layer, d->n_text_ctx,
            d->n_text_state, d->n_text_head, d->n_text_state / d->n_text_head, d->n_text_layer);
    fprintf(f, "B: sequences stepped together (1 here); t: tokens already in the KV cache "
            "(n_ctx/2 here)\n\n  %-15s %-25s %-22s %9s %9s  %s\n", "tensor", "shape", "numbers",
            "params", "FLOPs", "operation");
    for (int i = 0; i < N_STAGES; i++)
        stage_text(f, d, &STAGES[i]);
    totals_text(f, &t);
    if (fclose(f) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

/* ------------------------------------------------------------ the API */

static int dims_ok(const hark_dims *d)
{
    const int v[] = {d->n_mels, d->n_vocab, d->n_audio_ctx, d->n_audio_state, d->n_audio_head,
                     d->n_audio_layer, d->n_text_ctx, d->n_text_state, d->n_text_head,
                     d->n_text_layer};
    for (int i = 0; i < 10; i++)
        if (v[i] <= 0 || v[i] > 1 << 20)
            return 0;
    return d->n_audio_state % d->n_audio_head == 0 && d->n_text_state % d->n_text_head == 0;
}

char *hark_shapes(const hark_dims *dims, const char *format)
{
    if (!dims || !format || !dims_ok(dims))
        return NULL;
    if (!strcmp(format, "json"))
        return shapes_json(dims);
    return strcmp(format, "text") ? NULL : shapes_text(dims);
}

hark_dims hark_model_dims(const hark_model *m)
{
    const hark_hparams *h = &m->hp;
    hark_dims d = {h->n_mels, h->n_vocab, h->n_audio_ctx, h->n_audio_state, h->n_audio_head,
                   h->n_audio_layer, h->n_text_ctx, h->n_text_state, h->n_text_head,
                   h->n_text_layer};
    return d;
}

int hark_whisper_dims(const char *name, hark_dims *dims)
{
    /* openai/whisper's released checkpoints: width, heads, layers (encoder, decoder:
     * turbo's decoder has 4), mels, tokens (.en models: one fewer, 51864) */
    static const struct { const char *name; int c, h, enc, dec, mels, vocab; } sizes[] = {
        {"tiny", 384, 6, 4, 4, 80, 51865},          {"tiny.en", 384, 6, 4, 4, 80, 51864},
        {"base", 512, 8, 6, 6, 80, 51865},          {"base.en", 512, 8, 6, 6, 80, 51864},
        {"small", 768, 12, 12, 12, 80, 51865},      {"small.en", 768, 12, 12, 12, 80, 51864},
        {"medium", 1024, 16, 24, 24, 80, 51865},    {"medium.en", 1024, 16, 24, 24, 80, 51864},
        {"large", 1280, 20, 32, 32, 80, 51865},     {"large-v2", 1280, 20, 32, 32, 80, 51865},
        {"large-v3", 1280, 20, 32, 32, 128, 51866}, {"large-v3-turbo", 1280, 20, 32, 4, 128, 51866},
    };
    for (size_t i = 0; name && dims && i < sizeof sizes / sizeof *sizes; i++) {
        if (strcmp(name, sizes[i].name))
            continue;
        hark_dims d = {sizes[i].mels, sizes[i].vocab, 1500, sizes[i].c, sizes[i].h, sizes[i].enc,
                       448, sizes[i].c, sizes[i].h, sizes[i].dec};
        *dims = d;
        return 0;
    }
    return HARK_ERR_ARG;
}
