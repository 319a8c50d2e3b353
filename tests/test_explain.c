/* hark explain's trace, through hark.h alone, on samples/sample01-en-us.wav with the
 * default model and on the f32 random test model (f32 cross K/V, the other score
 * path): attention rows sum to 1 within 1e-5, decoder self-attention is exactly 0
 * above the diagonal, the logit lens at the last layer is the logits (its top
 * candidates equal the step's within 1e-6, and the trace's own max |diff| is at
 * most 1e-6), each token's replayed probability is the search's within 1e-4, the
 * tokens are plain transcription's, the trace is the same for 1 and 3 threads, and
 * the cross-attention weights are PyTorch's within 1e-3 (check_reference). */
#include <cJSON.h>

#include "check.h"
#include "hark.h"

/* Every row of a [rows][n] array of numbers (plus extra[i], if given) sums to 1
 * within 1e-5; above_zero: entries past the diagonal must be exactly 0. */
static void rows_sum_to_one(const cJSON *rows, const char *what, int above_zero)
{
    int i = 0, worst_row = -1, nonzero = 0;
    double worst = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, rows) {
        const cJSON *w = cJSON_IsObject(row) ? cJSON_GetObjectItem(row, "w") : row, *v;
        double sum = cJSON_IsObject(row) ? cJSON_GetObjectItem(row, "rest")->valuedouble : 0;
        int j = 0;
        cJSON_ArrayForEach(v, w) {
            sum += v->valuedouble;
            nonzero += above_zero && j > i && v->valuedouble != 0.0;
            j++;
        }
        if (fabs(sum - 1) > worst)
            worst = fabs(sum - 1), worst_row = i;
        i++;
    }
    CHECK(worst <= 1e-5, "%s: row %d sums to 1 %+g", what, worst_row, worst);
    if (above_zero)
        CHECK(nonzero == 0, "%s: %d weights above the diagonal are not 0", what, nonzero);
}

static void check_attention(const cJSON *t)
{
    const cJSON *layer, *head;
    int l = 0;
    cJSON_ArrayForEach(layer, cJSON_GetObjectItem(t, "decoder_self")) {
        char what[64];
        int h = 0;
        cJSON_ArrayForEach(head, layer) {
            snprintf(what, sizeof what, "self-attention %d.%d", l, h++);
            rows_sum_to_one(head, what, 1);
        }
        h = 0;
        cJSON_ArrayForEach(head, cJSON_GetArrayItem(cJSON_GetObjectItem(t, "cross"), l)) {
            snprintf(what, sizeof what, "cross-attention %d.%d", l, h++);
            rows_sum_to_one(head, what, 0);
        }
        l++;
    }
    CHECK(l > 0, "no decoder layers in the trace");
    cJSON_ArrayForEach(layer, cJSON_GetObjectItem(t, "encoder_heads"))
        cJSON_ArrayForEach(head, layer) rows_sum_to_one(cJSON_GetObjectItem(head, "map"), "encoder map", 0);
}

/* The lens's last layer has the step's candidates: same ids, same probabilities. */
static void check_lens(const cJSON *t)
{
    const cJSON *checks = cJSON_GetObjectItem(t, "checks"), *step;
    double diff = cJSON_GetObjectItem(checks, "lens_last_layer_max_abs_diff")->valuedouble;
    CHECK(diff <= 1e-6, "lens at the last layer vs logits: max |diff| %g", diff);
    double p = cJSON_GetObjectItem(checks, "replay_p_max_abs_diff")->valuedouble;
    CHECK(p <= 1e-4, "replayed probabilities vs the search's: max |diff| %g", p);
    int bad = 0, steps = 0;
    cJSON_ArrayForEach(step, cJSON_GetObjectItem(t, "steps")) {
        int pos = cJSON_GetObjectItem(step, "position")->valueint;
        const cJSON *lens = cJSON_GetArrayItem(cJSON_GetObjectItem(t, "lens"), pos);
        const cJSON *last = cJSON_GetArrayItem(lens, cJSON_GetArraySize(lens) - 1);
        const cJSON *top = cJSON_GetObjectItem(step, "top");
        for (int k = 0; k < cJSON_GetArraySize(top); k++) {
            const cJSON *a = cJSON_GetArrayItem(top, k), *b = cJSON_GetArrayItem(last, k);
            bad += !b || cJSON_GetObjectItem(a, "id")->valueint != cJSON_GetObjectItem(b, "id")->valueint ||
                   fabs(cJSON_GetObjectItem(a, "p")->valuedouble - cJSON_GetObjectItem(b, "p")->valuedouble) > 1e-6;
        }
        steps++;
    }
    CHECK(steps > 1 && bad == 0, "%d of %d steps' candidates differ from the lens's last layer", bad, steps);
}

/* Each contextual pair: the same text token at its two positions, a cosine a
 * layer, each within [-1, 1]; sample01 has one ("." twice). */
static void check_contextual(const cJSON *t, int want_pairs)
{
    const cJSON *pair, *c;
    int pairs = 0, bad = 0, layers = cJSON_GetArraySize(cJSON_GetObjectItem(t, "decoder_self"));
    cJSON_ArrayForEach(pair, cJSON_GetObjectItem(t, "contextual")) {
        const cJSON *pos = cJSON_GetObjectItem(pair, "positions"), *toks = cJSON_GetObjectItem(t, "tokens");
        int id = cJSON_GetObjectItem(pair, "id")->valueint;
        for (int k = 0; k < 2; k++)
            bad += cJSON_GetObjectItem(cJSON_GetArrayItem(toks, cJSON_GetArrayItem(pos, k)->valueint), "id")->valueint != id;
        bad += cJSON_GetArraySize(cJSON_GetObjectItem(pair, "cosine")) != layers;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(pair, "cosine")) bad += fabs(c->valuedouble) > 1 + 1e-6;
        pairs++;
    }
    CHECK(bad == 0 && pairs >= want_pairs, "%d contextual pairs, %d wrong", pairs, bad);
}

/* The trace's taken tokens are plain transcription's window 0, id for id. */
static void check_tokens(const hark_model *m, const float *x, size_t n, const cJSON *t)
{
    hark_context *plain = hark_context_new(m, NULL);
    CHECK(hark_transcribe(plain, x, n) == 0, "%s", hark_last_error(plain));
    int want[512], n_want = 0, got[512], n_got = 0;
    for (int i = 0; i < hark_n_segments(plain) && hark_segment_seek(plain, i) == 0; i++)
        for (int j = 0; j < hark_segment_n_tokens(plain, i) && n_want < 512; j++)
            want[n_want++] = hark_segment_token(plain, i, j).id;
    const cJSON *tok;
    cJSON_ArrayForEach(tok, cJSON_GetObjectItem(t, "tokens"))
        if (strcmp(cJSON_GetObjectItem(tok, "kind")->valuestring, "start") && n_got < 512)
            got[n_got++] = cJSON_GetObjectItem(tok, "id")->valueint;
    CHECK(n_want > 0 && n_got == n_want && !memcmp(got, want, sizeof(int) * (size_t)n_got),
          "%d tokens traced, %d transcribed", n_got, n_want);
    hark_context_free(plain);
}

/* The cross-attention weights equal PyTorch's (scripts/reference/explain-reference:
 * openai's softmax(q.k / sqrt(d_head)) over the n_audio_ctx frames, same mel, same tokens)
 * within XATTN_TOL absolute: every layer's, head's and token's largest weight, its
 * padding weight and its weights summed over 0.2 s spans, and the alignment heads'
 * rows frame by frame; the argmax frame is PyTorch's for every token whose largest
 * weight leads the second by more than 2 * XATTN_TOL (a near tie may fall either way). */
#define XATTN_TOL 1e-3
#define XATTN_REF "tests/data/explain/cross_attention_ref.json"

static double ref_at(const cJSON *a, int l, int h, int i)
{
    return cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetArrayItem(a, l), h), i)->valuedouble;
}

/* The PyTorch fixture, parsed (NULL: absent, said as a skip, or not JSON). */
static cJSON *read_reference(void)
{
    FILE *f = fopen(XATTN_REF, "rb");
    if (!f) {
        SKIP("%s absent: cross-attention not compared with PyTorch's", XATTN_REF);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    size_t got = text ? fread(text, 1, (size_t)size, f) : 0;
    fclose(f);
    if (text)
        text[got] = 0;
    cJSON *ref = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK(ref != NULL, "%s is not JSON", XATTN_REF);
    return ref;
}

/* Whether the trace decoded the fixture's tokens (else it is of another model or
 * decoding). */
static int same_tokens(const cJSON *t, const cJSON *ref)
{
    const cJSON *toks = cJSON_GetObjectItem(t, "tokens"), *rtoks = cJSON_GetObjectItem(ref, "tokens");
    int P = cJSON_GetArraySize(toks), same = P == cJSON_GetArraySize(rtoks);
    for (int i = 0; same && i < P; i++)
        same = cJSON_GetObjectItem(cJSON_GetArrayItem(toks, i), "id")->valueint ==
               cJSON_GetArrayItem(rtoks, i)->valueint;
    CHECK(same, "the trace's tokens are not %s's: rerun scripts/reference/explain-reference", XATTN_REF);
    return same;
}

/* The largest differences from the fixture, over every layer, head and token. */
typedef struct xattn_diff {
    double max, rest, span, row;
    int rows, argmax_bad, argmax_compared;
} xattn_diff;

/* One row of the trace (token i of layer l, head h) against the fixture's summary
 * of it: its largest weight and where, its weight on the padding, its span sums. */
static void compare_row(const cJSON *ref, const cJSON *row, int l, int h, int i, xattn_diff *d)
{
    int frames = cJSON_GetObjectItem(ref, "frames")->valueint;
    int span = cJSON_GetObjectItem(ref, "span")->valueint, arg = -1;
    double best = -1, sum = 0;
    const cJSON *rs = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetArrayItem(
        cJSON_GetObjectItem(ref, "spans"), l), h), i)->child;
    const cJSON *e = cJSON_GetObjectItem(row, "w")->child;
    for (int j = 0; j < frames; j++, e = e->next) {
        double v = e->valuedouble;
        if (v > best)
            best = v, arg = j;
        sum += v;
        if ((j + 1) % span == 0 || j + 1 == frames) {
            d->span = fmax(d->span, fabs(sum - rs->valuedouble));
            sum = 0, rs = rs->next;
        }
    }
    d->max = fmax(d->max, fabs(best - ref_at(cJSON_GetObjectItem(ref, "max"), l, h, i)));
    d->rest = fmax(d->rest, fabs(cJSON_GetObjectItem(row, "rest")->valuedouble -
                                 ref_at(cJSON_GetObjectItem(ref, "rest"), l, h, i)));
    if (ref_at(cJSON_GetObjectItem(ref, "margin"), l, h, i) > 2 * XATTN_TOL) {
        d->argmax_compared++;
        d->argmax_bad += arg != (int)ref_at(cJSON_GetObjectItem(ref, "argmax"), l, h, i);
    }
}

/* Every row's summary; 0, or -1 when a row's frame count is not the fixture's. */
static int compare_summaries(const cJSON *t, const cJSON *ref, xattn_diff *d)
{
    int frames = cJSON_GetObjectItem(ref, "frames")->valueint;
    int P = cJSON_GetArraySize(cJSON_GetObjectItem(t, "tokens"));
    const cJSON *cross = cJSON_GetObjectItem(t, "cross");
    for (int l = 0; l < cJSON_GetArraySize(cross); l++) {
        const cJSON *layer = cJSON_GetArrayItem(cross, l);
        for (int h = 0; h < cJSON_GetArraySize(layer); h++)
            for (int i = 0; i < P; i++) {
                const cJSON *row = cJSON_GetArrayItem(cJSON_GetArrayItem(layer, h), i);
                int n = cJSON_GetArraySize(cJSON_GetObjectItem(row, "w"));
                if (n != frames) {
                    CHECK(0, "%d frames traced, %d in the reference", n, frames);
                    return -1;
                }
                compare_row(ref, row, l, h, i, d);
            }
    }
    return 0;
}

/* The alignment heads' rows, which the fixture holds whole. */
static void compare_full_rows(const cJSON *t, const cJSON *ref, xattn_diff *d)
{
    const cJSON *cross = cJSON_GetObjectItem(t, "cross"), *full;
    cJSON_ArrayForEach(full, cJSON_GetObjectItem(ref, "rows")) {
        int l = cJSON_GetObjectItem(full, "layer")->valueint, h = cJSON_GetObjectItem(full, "head")->valueint;
        const cJSON *head = cJSON_GetArrayItem(cJSON_GetArrayItem(cross, l), h), *rrow;
        int i = 0;
        cJSON_ArrayForEach(rrow, cJSON_GetObjectItem(full, "w")) {
            const cJSON *w = cJSON_GetObjectItem(cJSON_GetArrayItem(head, i++), "w"), *a, *b = rrow->child;
            cJSON_ArrayForEach(a, w) {
                if (b)
                    d->row = fmax(d->row, fabs(a->valuedouble - b->valuedouble)), b = b->next;
            }
            d->rows++;
        }
    }
}

static void check_reference(const cJSON *t)
{
    cJSON *ref = read_reference();
    xattn_diff d = {0};
    if (!ref || !same_tokens(t, ref) || compare_summaries(t, ref, &d)) {
        cJSON_Delete(ref);
        return;
    }
    compare_full_rows(t, ref, &d);
    if (getenv("HARK_TEST_VERBOSE"))
        printf("# cross-attention vs PyTorch: max |diff| largest %.3g, rest %.3g, spans %.3g, "
               "%d alignment-head rows %.3g; argmax %d of %d differ\n",
               d.max, d.rest, d.span, d.rows, d.row, d.argmax_bad, d.argmax_compared);
    CHECK(d.max <= XATTN_TOL && d.rest <= XATTN_TOL && d.span <= XATTN_TOL,
          "cross-attention vs PyTorch: max |diff| largest %g, rest %g, spans %g", d.max, d.rest, d.span);
    CHECK(d.rows > 0 && d.row <= XATTN_TOL, "alignment heads' %d rows vs PyTorch: max |diff| %g", d.rows, d.row);
    CHECK(d.argmax_compared > 0 && d.argmax_bad == 0, "argmax frame differs from PyTorch's in %d of %d rows",
          d.argmax_bad, d.argmax_compared);
    cJSON_Delete(ref);
}

static char *trace(const hark_model *m, int threads, const float *x, size_t n)
{
    hark_params p = hark_default_params();
    p.n_threads = threads;
    hark_context *ctx = hark_context_new(m, &p);
    hark_explain *ex = hark_explain_new(0);
    int rc = hark_transcribe_explained(ctx, x, n, ex);
    CHECK(rc == 0, "%s", hark_last_error(ctx));
    char *json = hark_explain_json(ex);
    hark_explain_free(ex);
    hark_context_free(ctx);
    return json;
}

/* real: a trained model, whose window's tokens all make segments (a random model's
 * tail after its last timestamp pair is cut, as openai's is) */
static void check_model(const char *model, const char *audio, int real)
{
    char err[600];
    float *x;
    size_t n;
    hark_model *m = hark_model_load(model, err, sizeof err);
    CHECK(m != NULL, "%s", err);
    CHECK(hark_read_audio(audio, &x, &n, err, sizeof err) == 0, "%s", err);
    if (!m || !x)
        return;
    char *json = trace(m, 1, x, n);
    cJSON *t = json ? cJSON_Parse(json) : NULL;
    CHECK(t != NULL, "%s: the trace is not JSON", model);
    if (t) {
        check_attention(t);
        check_lens(t);
        check_contextual(t, real);
        if (real)
            check_tokens(m, x, n, t);
        if (real && !strcmp(model, "models/hark-en-tiny"))
            check_reference(t);
    }
    if (real) {
        char *json3 = trace(m, 3, x, n);
        CHECK(json && json3 && !strcmp(json, json3), "the trace differs with 3 threads");
        free(json3);
    }
    cJSON_Delete(t);
    free(json);
    free(x);
    hark_model_free(m);
}

/* No window 5 in a short clip: an error that says so, and no trace. */
static void check_missing_window(void)
{
    char err[600];
    float *x;
    size_t n;
    hark_model *m = hark_model_load("tests/data/tiny-random/hf-f32", err, sizeof err);
    CHECK(hark_read_audio("tests/data/clip.wav", &x, &n, err, sizeof err) == 0, "%s", err);
    hark_context *ctx = hark_context_new(m, NULL);
    hark_explain *ex = hark_explain_new(5);
    CHECK(hark_transcribe_explained(ctx, x, n, ex) == HARK_ERR_ARG, "window 5 of a short clip");
    CHECK(strstr(hark_last_error(ctx), "no window 5 to explain") != NULL, "%s", hark_last_error(ctx));
    CHECK(hark_explain_json(ex) == NULL, "a trace of no window");
    CHECK(hark_explain_new(-1) == NULL, "window -1");
    hark_explain_free(ex);
    hark_context_free(ctx);
    hark_model_free(m);
    free(x);
}

int main(void)
{
    check_model("models/hark-en-tiny", "samples/sample01-en-us.wav", 1);
    check_model("tests/data/tiny-random/hf-f32", "tests/data/clip.wav", 0);
    check_missing_window();
    return check_summary("test_explain");
}
