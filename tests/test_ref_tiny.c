/* Parity with the real reference: whisper.cpp's own ggml file of tiny.en
 * dimensions (random weights), against openai/whisper's encoder output and
 * first-step logits; and the vocabulary-only ggml file. */
#include "check.h"
#include "npy.h"
#include "face.h"

static void test_vocab_only(void)
{
    char path[1024];
    if (!shared_path(path, sizeof path, "fixtures/for-tests-ggml-tiny.en.bin")) {
        SKIP("%s absent: ggml vocabulary test not run", path);
        return;
    }
    char err[512] = "";
    hark_model *m = hark_model_load(path, err, sizeof err);
    CHECK(m == NULL, "a file without tensors must not load for transcription");
    CHECK(strstr(err, "no tensors") != NULL && strstr(err, path) == err, "error: %s", err);
    hark_model *v = calloc(1, sizeof *v);
    hark_error e;
    CHECK(hark_load_ggml_vocab_only(v, path, &e) == 0, "%s", e.msg);
    CHECK(v->hp.n_vocab == 51864 && v->hp.n_audio_state == 384 && v->hp.n_mels == 80, "hparams");
    CHECK(v->vocab.sp.eot == 50256 && v->vocab.sp.sot == 50257, "eot %d", v->vocab.sp.eot);
    CHECK(v->vocab.sp.translate == 50357 && v->vocab.sp.notimestamps == 50362 &&
              v->vocab.sp.timestamp_begin == 50363, "specials %d", v->vocab.sp.translate);
    CHECK(!v->vocab.multilingual, "tiny.en is English-only");
    int ids[] = {15496, 995};
    char *text = hark_detokenize(&v->vocab, ids, 2);
    CHECK(text && strcmp(text, "Hello world") == 0, "decoded '%s'", text);
    free(text);
    int *enc, n = hark_tokenize(&v->vocab, "Hello world", &enc);
    CHECK(n == 2 && enc[0] == 15496 && enc[1] == 995, "encoded %d tokens", n);
    free(enc);
    hark_model_free(v);
}

static hark_model *load_random_tiny(void)
{
    char path[1024], err[512];
    if (!shared_path(path, sizeof path, "fixtures/ref-tiny.en/ggml-random-tiny.en-f16.bin")) {
        SKIP("%s absent: tiny.en parity not run", path);
        return NULL;
    }
    hark_model *m = hark_model_load(path, err, sizeof err);
    CHECK(m != NULL, "%s", err);
    return m;
}

static float *load_ref(const char *rel, int rows, int cols)
{
    char path[1024];
    float *data = NULL;
    int r, c;
    hark_error e;
    shared_path(path, sizeof path, rel);
    CHECK(hark_read_npy(path, &data, &r, &c, &e) == 0, "%s", e.msg);
    CHECK(r == rows && c == cols, "%s is %dx%d", rel, r, c);
    return data;
}

static void test_forward(hark_model *m)
{
    float *mel = load_ref("fixtures/ref-tiny.en/jfk_mel80.npy", 80, 3000);
    float *ref_enc = load_ref("fixtures/ref-tiny.en/encoder_out.npy", 1500, 384);
    float *ref_logits = load_ref("fixtures/ref-tiny.en/logits_sot_notimestamps.npy", 2, 51864);
    float *enc = malloc(sizeof(float) * 1500 * 384);
    float *logits = malloc(sizeof(float) * 51864);
    CHECK(hark_encode(m, mel, enc, NULL) == 0, "encode");
    double d = max_abs_diff(enc, ref_enc, 1500 * 384);
    printf("tiny.en encoder max |diff| = %.3g\n", d);
    CHECK(d <= 5e-3, "encoder max diff %g", d);
    hark_kv kv;
    hark_cross cross;
    CHECK(hark_cross_init(&cross, m) == 0 && hark_kv_init(&kv, m, &cross) == 0, "kv");
    hark_cross_set(m, &cross, ref_enc);
    int sot = 50257, notimestamps = 50362;
    CHECK(hark_decode(m, &kv, &sot, 1, logits) == 0, "decode sot");
    d = max_abs_diff(logits, ref_logits, 51864);
    printf("tiny.en logits after sot max |diff| = %.3g\n", d);
    CHECK(d <= 5e-3, "logits after sot max diff %g", d);
    CHECK(hark_decode(m, &kv, &notimestamps, 1, logits) == 0, "decode notimestamps");
    d = max_abs_diff(logits, ref_logits + 51864, 51864);
    printf("tiny.en logits after notimestamps max |diff| = %.3g\n", d);
    CHECK(d <= 5e-3, "logits after notimestamps max diff %g", d);
    CHECK(cross.computations == 1, "cross K/V projected %ld times", cross.computations);
    hark_kv_free(&kv);
    hark_cross_free(&cross);
    free(mel);
    free(ref_enc);
    free(ref_logits);
    free(enc);
    free(logits);
}

int main(void)
{
    test_vocab_only();
    hark_model *m = load_random_tiny();
    if (m)
        test_forward(m);
    hark_model_free(m);
    return check_summary("ref_tiny");
}
