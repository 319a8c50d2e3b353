/* Word timing and probabilities against openai's find_alignment, recomputed in
 * PyTorch on the random test model (scripts/reference/make_test_model.py -> ref_words.json). */
#include <cJSON.h>

#include "check.h"
#include "decode/decode.h"
#include "face.h"

/* The reference's tokens aligned as one segment, merged with the marks given
 * (NULL: openai's), against its words. */
static void check_words(const hark_model *m, const hark_cross *cross, const cJSON *ref,
                        const char *prepend, const char *append, const cJSON *words)
{
    cJSON *toks = cJSON_GetObjectItem(ref, "tokens");
    hark_segment seg = {0};
    seg.n_tokens = cJSON_GetArraySize(toks);
    seg.tokens = malloc(sizeof(int) * seg.n_tokens);
    seg.probs = malloc(sizeof(float) * seg.n_tokens);
    int i = 0;
    for (cJSON *t = toks->child; t; t = t->next, i++)
        seg.tokens[i] = t->valueint, seg.probs[i] = 0.5f;
    hark_decode_opts o = {0};
    o.lang_token = o.task_token = -1;
    o.prepend_punctuations = prepend, o.append_punctuations = append;
    CHECK(hark_align_words(m, cross, &o, cJSON_GetObjectItem(ref, "frames")->valueint, 0.0, 0.0,
                           &seg, 1) == 0, "align");
    CHECK(seg.n_words == cJSON_GetArraySize(words), "%d words", seg.n_words);
    i = 0;
    for (cJSON *w = words->child; w && i < seg.n_words; w = w->next, i++) {
        const char *want = cJSON_GetObjectItem(w, "word")->valuestring;
        double s = cJSON_GetObjectItem(w, "start")->valuedouble, t = cJSON_GetObjectItem(w, "end")->valuedouble;
        CHECK(strcmp(seg.words[i].text, want) == 0, "word %d '%s' vs '%s'", i, seg.words[i].text, want);
        CHECK(fabs(seg.words[i].start - s) < 1e-6 && fabs(seg.words[i].end - t) < 1e-6,
              "'%s': %.2f-%.2f, reference %.2f-%.2f", want, seg.words[i].start, seg.words[i].end, s, t);
        /* openai's: the mean over the word's tokens of each one's probability among the
         * text tokens in the alignment pass (not decoding's, which were 0.5 here) */
        double p = cJSON_GetObjectItem(w, "probability")->valuedouble;
        CHECK(fabs(seg.words[i].probability - p) <= 1e-3 * p, "'%s': probability %.4g, reference %.4g",
              want, seg.words[i].probability, p);
    }
    for (int k = 0; k < seg.n_words; k++)
        free(seg.words[k].text);
    free(seg.words), free(seg.tokens), free(seg.probs);
}

int main(void)
{
    char err[512];
    cJSON *ref = load_json_fixture("tests/data/tiny-random/ref_words.json");
    if (!ref)
        return check_summary("align");
    hark_model *m = hark_model_load("tests/data/tiny-random/hf-f32", err, sizeof err);
    CHECK(m != NULL, "%s", err);
    float *x, *mel;
    size_t n;
    int frames, len = 2 * m->hp.n_audio_ctx;
    hark_error e;
    CHECK(hark_audio_read("tests/data/clip.wav", &x, &n, &e) == 0, "%s", e.msg);
    hark_log_mel(x, n, 480000, 80, 1, &mel, &frames, &e);
    float *win = malloc(sizeof(float) * 80 * len);
    float *enc = malloc(sizeof(float) * m->hp.n_audio_ctx * m->hp.n_audio_state);
    hark_mel_window(mel, frames, 80, 0, frames, len, win);
    hark_encode(m, win, enc, NULL);
    hark_cross cross;
    hark_cross_init(&cross, m);
    hark_cross_set(m, &cross, enc);

    cJSON *marks = cJSON_GetObjectItem(ref, "custom_marks");
    check_words(m, &cross, ref, NULL, NULL, cJSON_GetObjectItem(ref, "words"));
    /* --prepend-punctuations "(Then" --append-punctuations ".?": the word " Then" is
     * inside the first (Python's `in`), so it joins the next one; "!", "\"", ",", ")"
     * stand alone */
    CHECK(marks != NULL, "ref_words.json has custom_marks");
    if (marks)
        check_words(m, &cross, ref, cJSON_GetObjectItem(marks, "prepend")->valuestring,
                    cJSON_GetObjectItem(marks, "append")->valuestring,
                    cJSON_GetObjectItem(marks, "words"));
    hark_cross_free(&cross);
    free(x), free(mel), free(win), free(enc);
    hark_model_free(m);
    cJSON_Delete(ref);
    return check_summary("align");
}
