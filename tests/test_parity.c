/* hark against the PyTorch reference (scripts/reference/make_test_model.py) on the
 * small random model, in all four files: HF f32/f16 and ggml f32/f16. */
#include <cJSON.h>

#include "check.h"
#include "npy.h"
#include "face.h"

#define DIR "tests/data/tiny-random/"

static cJSON *ref;

static float *npy(const char *path, int rows, int cols)
{
    float *d = NULL;
    int r = 0, c = 0;
    hark_error e;
    CHECK(hark_read_npy(path, &d, &r, &c, &e) == 0, "%s", e.msg);
    CHECK(r == rows && c == cols, "%s: %dx%d", path, r, c);
    return d;
}

static int ref_int(const char *key)
{
    return cJSON_GetObjectItem(ref, key)->valueint;
}

static void test_mel(void)
{
    float *x, *mel;
    size_t n;
    int frames;
    hark_error e;
    int content = ref_int("content_frames"), win = ref_int("window_frames");
    CHECK(hark_audio_read("tests/data/clip.wav", &x, &n, &e) == 0, "%s", e.msg);
    CHECK((int)n == ref_int("n_samples"), "samples %zu", n);
    CHECK(hark_log_mel(x, n, 480000, 80, 1, &mel, &frames, &e) == 0, "%s", e.msg);
    float *want = npy(DIR "ref_mel.npy", 80, content + win);
    double d = 0;
    for (int c = 0; c < 80; c++)
        for (int t = 0; t < content + win; t++) {
            double diff = fabs(mel[(size_t)c * frames + t] - want[(size_t)c * (content + win) + t]);
            d = diff > d ? diff : d;
        }
    printf("clip log-mel max |diff| = %.3g\n", d);
    CHECK(d <= 1e-4, "log-mel max diff %g", d);
    free(x);
    free(mel);
    free(want);
}

static void test_forward(const char *path, double tol)
{
    char err[512];
    hark_model *m = hark_model_load(path, err, sizeof err);
    CHECK(m != NULL, "%s", err);
    if (!m)
        return;
    int n_ctx = m->hp.n_audio_ctx, d = m->hp.n_audio_state, V = m->hp.n_vocab;
    float *mel = npy(DIR "ref_mel.npy", 80, ref_int("content_frames") + ref_int("window_frames"));
    float *win = malloc(sizeof(float) * 80 * 2 * n_ctx), *enc = malloc(sizeof(float) * n_ctx * d);
    float *logits = malloc(sizeof(float) * V);
    int cols = ref_int("content_frames") + ref_int("window_frames");
    for (int c = 0; c < 80; c++)
        memcpy(win + c * 2 * n_ctx, mel + (size_t)c * cols, sizeof(float) * 2 * n_ctx);
    float *want_enc = npy(DIR "ref_encoder.npy", n_ctx, d);
    float *want_logits = npy(DIR "ref_logits.npy", V, 1);
    CHECK(hark_encode(m, win, enc, NULL) == 0, "encode");
    double de = max_abs_diff(enc, want_enc, (size_t)n_ctx * d);
    hark_kv kv;
    hark_cross cross;
    CHECK(hark_cross_init(&cross, m) == 0 && hark_kv_init(&kv, m, &cross) == 0, "kv");
    hark_cross_set(m, &cross, enc);
    int seq[2] = {ref_int("sot"), ref_int("notimestamps")};
    CHECK(hark_decode(m, &kv, seq, 2, logits) == 0, "decode");
    double dl = max_abs_diff(logits, want_logits, (size_t)V);
    printf("%s: encoder max |diff| %.3g, logits max |diff| %.3g\n", path, de, dl);
    CHECK(de <= tol, "%s encoder diff %g", path, de);
    CHECK(dl <= tol, "%s logits diff %g", path, dl);
    CHECK(cross.computations == 1, "cross K/V projected %ld times", cross.computations);
    hark_kv_free(&kv);
    hark_cross_free(&cross);
    free(mel), free(win), free(enc), free(logits), free(want_enc), free(want_logits);
    hark_model_free(m);
}

/* Whole-file transcription: the tokens of every window equal the reference's. */
static void test_greedy(const char *path)
{
    char err[512];
    hark_model *m = hark_model_load(path, err, sizeof err);
    CHECK(m != NULL, "%s", err);
    if (!m)
        return;
    /* the reference decodes greedily, without timestamps or prompts */
    hark_params p = hark_default_params();
    p.timestamps = 0;
    p.search.beam_size = 1;
    p.fallback.n_temperatures = 1;
    p.prompt.condition_on_previous_text = 0;
    hark_context *c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") == 0, "%s", hark_last_error(c));
    cJSON *wins = cJSON_GetObjectItem(ref, "windows");
    CHECK(hark_n_segments(c) == cJSON_GetArraySize(wins), "%s: %d segments", path,
          hark_n_segments(c));
    int i = 0, same = 1;
    for (cJSON *w = wins->child; w && i < hark_n_segments(c); w = w->next, i++) {
        cJSON *toks = cJSON_GetObjectItem(w, "tokens");
        same &= hark_segment_n_tokens(c, i) == cJSON_GetArraySize(toks);
        int j = 0;
        for (cJSON *t = toks->child; t && j < hark_segment_n_tokens(c, i); t = t->next, j++)
            same &= hark_segment_token(c, i, j).id == t->valueint;
        CHECK(hark_segment_start(c, i) == cJSON_GetObjectItem(w, "seek")->valueint * 0.01,
              "segment %d start %g", i, hark_segment_start(c, i));
    }
    CHECK(same, "%s: greedy tokens differ from the reference", path);
    CHECK(strcmp(hark_text(c), cJSON_GetObjectItem(ref, "text")->valuestring) == 0,
          "%s: text '%s'", path, hark_text(c));
    hark_context_free(c);
    hark_model_free(m);
}

int main(void)
{
    char *json;
    size_t size;
    hark_error e;
    if (hark_read_file(DIR "ref.json", &json, &size, &e) != 0) {
        printf("FAIL %s\n", e.msg);
        return 1;
    }
    ref = cJSON_Parse(json);
    free(json);
    test_mel();
    const char *models[] = {DIR "hf-f32", DIR "model-f32.bin", DIR "hf-f32-sharded",
                            DIR "hf-f32-tokenizer-json", DIR "hf-f16", DIR "model-f16.bin"};
    for (int i = 0; i < 6; i++) {
        test_forward(models[i], i < 4 ? 1e-3 : 2e-2);
        test_greedy(models[i]);
    }
    /* bf16 keeps 8 bits of each weight (relative error up to 2^-9): measured
     * 3e-3 on the encoder and 3e-2 on logits of magnitude ~10; twice that allowed */
    test_forward(DIR "hf-bf16", 0.06);
    cJSON_Delete(ref);
    return check_summary("parity");
}
