/* Multilingual models: language detection against the PyTorch reference,
 * the [sot, language, task] start sequence, and language selection errors. */
#include <cJSON.h>

#include "check.h"
#include "decode/decode.h"
#include "face.h"

#define DIR "tests/data/tiny-random/multi"

static cJSON *ref;

static double ref_prob(const char *code)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(ref, "language_probs"), code)->valuedouble;
}

static void test_detect(hark_model *m, const float *x, size_t n)
{
    hark_context *c = hark_context_new(m, NULL);
    const char *codes[8];
    float probs[8];
    int k = hark_detect_language(c, x, n, codes, probs, 8);
    CHECK(k == 3, "%d languages", k);
    for (int i = 0; k == 3 && i < 3; i++) {
        double want = ref_prob(codes[i]);
        CHECK(fabs(probs[i] - want) < 1e-4, "P(%s) %g vs %g", codes[i], probs[i], want);
        CHECK(i == 0 || probs[i] <= probs[i - 1], "sorted");
    }
    CHECK(k == 3 && strcmp(codes[0], "en") == 0, "most likely: %s", k ? codes[0] : "");
    hark_context_free(c);
}

static void test_start_sequence(hark_model *m, const float *x, size_t n)
{
    const hark_specials *s = &m->vocab.sp;
    int len = 2 * m->hp.n_audio_ctx, frames;
    float *mel, *win = malloc(sizeof(float) * 80 * len);
    float *enc = malloc(sizeof(float) * m->hp.n_audio_ctx * m->hp.n_audio_state);
    float *logits = malloc(sizeof(float) * m->hp.n_vocab);
    hark_error e;
    hark_log_mel(x, n, 480000, 80, 1, &mel, &frames, &e);
    hark_mel_window(mel, frames, 80, 0, frames, len, win);
    hark_encode(m, win, enc, NULL);
    hark_cross cross;
    hark_kv kv;
    hark_cross_init(&cross, m);
    hark_cross_set(m, &cross, enc);
    const char *codes[] = {"de", "en"};
    for (int i = 0; i < 2; i++) {
        hark_decode_opts o = {0};
        o.lang_token = s->first_lang + (i == 0 ? 2 : 0);
        o.task_token = s->transcribe;
        int seq[16], sot_index, k = hark_start_sequence(m, &o, seq, 16, &sot_index);
        CHECK(k == 4 && seq[0] == s->sot && seq[1] == o.lang_token && seq[2] == s->transcribe &&
                  seq[3] == s->notimestamps, "start sequence of %d tokens", k);
        hark_kv_init(&kv, m, &cross);
        hark_decode(m, &kv, seq, k, logits);
        cJSON *top = cJSON_GetObjectItem(cJSON_GetObjectItem(ref, "top5_after_start"), codes[i]);
        int j = 0;
        for (cJSON *t = top->child; t; t = t->next, j++) {
            int best = 0; /* the j-th largest logit */
            for (int v = 0; v < m->hp.n_vocab; v++) {
                int above = 0;
                for (int u = 0; u < m->hp.n_vocab; u++)
                    above += logits[u] > logits[v];
                if (above == j) {
                    best = v;
                    break;
                }
            }
            CHECK(best == t->valueint, "%s: rank %d token %d, reference %d", codes[i], j, best,
                  t->valueint);
        }
        hark_kv_free(&kv);
    }
    hark_cross_free(&cross);
    free(mel), free(win), free(enc), free(logits);
}

static void test_selection(hark_model *m)
{
    CHECK(m->vocab.multilingual && m->vocab.sp.n_langs == 3, "multilingual with 3 languages");
    hark_params p = hark_default_params();
    p.language = "fr";
    hark_context *c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") != 0, "fr is not a language of the model");
    CHECK(strcmp(hark_last_error(c), DIR ": the model has no language \"fr\"") == 0, "%s",
          hark_last_error(c));
    hark_context_free(c);
    p.language = "de";
    p.translate = 1;
    c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") == 0, "%s", hark_last_error(c));
    CHECK(strcmp(hark_language(c), "de") == 0, "language %s", hark_language(c));
    hark_context_free(c);
    p.language = "GERMAN"; /* openai's name, any case: the code */
    c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") == 0, "%s", hark_last_error(c));
    CHECK(strcmp(hark_language(c), "de") == 0, "language %s", hark_language(c));
    hark_context_free(c);
    p.language = "klingon";
    c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") != 0, "klingon is no language");
    CHECK(strcmp(hark_last_error(c), "tests/data/clip.wav: unknown language \"klingon\": a "
                 "Whisper language code (en, de, ...) or its name (English, German, ...)") == 0,
          "%s", hark_last_error(c));
    hark_context_free(c);
    p.language = NULL;
    c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") == 0, "%s", hark_last_error(c));
    CHECK(strcmp(hark_language(c), "en") == 0, "detected %s", hark_language(c));
    hark_context_free(c);
}

/* openai's LANGUAGES and TO_LANGUAGE_CODE: codes in token order, names, aliases */
static void test_names(void)
{
    const char *cases[][3] = {{"en", "en", "english"}, {"English", "en", "english"},
                              {"yue", "yue", "cantonese"}, {"Haitian Creole", "ht", "haitian creole"},
                              {"haitian", "ht", "haitian creole"}, {"Castilian", "es", "spanish"},
                              {"mandarin", "zh", "chinese"}, {"JW", "jw", "javanese"},
                              {"he", "he", "hebrew"}, {"Burmese", "my", "myanmar"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *code = hark_language_code(cases[i][0]), *name = hark_language_name(cases[i][0]);
        CHECK(code && !strcmp(code, cases[i][1]), "%s: code %s", cases[i][0], code);
        CHECK(name && !strcmp(name, cases[i][2]), "%s: name %s", cases[i][0], name);
    }
    const char *none[] = {"", "auto", "xx", "englishh", "e", NULL};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        CHECK(!hark_language_code(none[i]) && !hark_language_name(none[i]), "%s is no language",
              none[i] ? none[i] : "NULL");
    CHECK(!strcmp(hark_lang_code(0), "en") && !strcmp(hark_lang_code(6), "fr") &&
              !strcmp(hark_lang_code(98), "su") && !strcmp(hark_lang_code(99), "yue") &&
              !hark_lang_code(100) && !hark_lang_code(-1), "token order");
}

int main(void)
{
    test_names();
    char err[512], *json;
    size_t size;
    hark_error e;
    if (hark_read_file(DIR "/ref_language.json", &json, &size, &e)) {
        printf("FAIL %s\n", e.msg);
        return 1;
    }
    ref = cJSON_Parse(json);
    free(json);
    hark_model *m = hark_model_load(DIR, err, sizeof err);
    CHECK(m != NULL, "%s", err);
    float *x;
    size_t n;
    CHECK(hark_audio_read("tests/data/clip.wav", &x, &n, &e) == 0, "%s", e.msg);
    if (m) {
        test_detect(m, x, n);
        test_start_sequence(m, x, n);
        test_selection(m);
    }
    free(x);
    hark_model_free(m);
    cJSON_Delete(ref);
    return check_summary("language");
}
