/* hark's --word-timestamps long-form transcription is openai's transcribe() with
 * word_timestamps (greedy, temperature 0) on three samples with the default
 * model: the same segments and tokens (so the same windows: the next one starts
 * after the last word), the same words, the same segment and word times, and
 * word probabilities from the alignment pass within 0.1 %.  The reference is
 * PyTorch's (scripts/reference/word-reference -> tests/golden/torch_words.json).  A word
 * boundary may land one 20 ms frame apart where DTW meets a near-tie that fp16
 * weights in a different order of sums decide: at most 4 such, counted. */
#include <cJSON.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "hark.h"

enum { MAX_TIES = 4 };

/* The same time, or (a near-tie) one DTW frame apart: *ties counts those. */
static int same_time(double got, double want, int *ties)
{
    if (fabs(got - want) < 1e-6)
        return 1;
    ++*ties;
    return fabs(got - want) < 0.02 + 1e-6;
}

static int words_agree(hark_context *c, int s, const cJSON *want, const char *name, int *ties)
{
    int same = hark_segment_n_words(c, s) == cJSON_GetArraySize(want), w = 0;
    for (const cJSON *x = want->child; same && x; x = x->next, w++) {
        double start, end, p = cJSON_GetObjectItem(x, "probability")->valuedouble;
        float prob;
        const char *text = hark_segment_word(c, s, w, &start, &end, &prob);
        int before = *ties;
        same &= strcmp(text, cJSON_GetObjectItem(x, "word")->valuestring) == 0;
        same &= same_time(start, cJSON_GetObjectItem(x, "start")->valuedouble, ties);
        same &= same_time(end, cJSON_GetObjectItem(x, "end")->valuedouble, ties);
        same &= fabs(prob - p) <= 1e-3 * p + 1e-6;
        if (*ties > before)
            printf("%s: a DTW tie at '%s': %.2f-%.2f, PyTorch %.2f-%.2f\n", name, text, start, end,
                   cJSON_GetObjectItem(x, "start")->valuedouble,
                   cJSON_GetObjectItem(x, "end")->valuedouble);
    }
    return same;
}

static int segment_agrees(hark_context *c, int s, const cJSON *want, const char *name, int *ties)
{
    const cJSON *toks = cJSON_GetObjectItem(want, "tokens");
    int same = hark_segment_n_tokens(c, s) == cJSON_GetArraySize(toks), j = 0, seg_ties = 0;
    for (const cJSON *t = toks->child; same && t; t = t->next, j++)
        same &= hark_segment_token(c, s, j).id == t->valueint;
    /* a segment's bounds are its words' here: their ties are counted with the words */
    same &= same_time(hark_segment_start(c, s), cJSON_GetObjectItem(want, "start")->valuedouble,
                      &seg_ties);
    same &= same_time(hark_segment_end(c, s), cJSON_GetObjectItem(want, "end")->valuedouble,
                      &seg_ties);
    return same && words_agree(c, s, cJSON_GetObjectItem(want, "words"), name, ties);
}

int main(void)
{
    char err[512], path[512];
    cJSON *ref = load_json_fixture("tests/golden/torch_words.json");
    if (!ref)
        return check_summary("golden_words");
    hark_model *m = hark_model_load(cJSON_GetObjectItem(ref, "model")->valuestring, err, sizeof err);
    CHECK(m != NULL, "%s", err);
    hark_params p = hark_default_params();
    p.words.enabled = 1, p.search.beam_size = 1, p.fallback.n_temperatures = 1;
    p.fallback.no_speech_threshold = 0; /* the reference does not skip silence */
    hark_context *c = m ? hark_context_new(m, &p) : NULL;
    int ties = 0, clips = 0;
    for (cJSON *clip = cJSON_GetObjectItem(ref, "clips")->child; c && clip; clip = clip->next) {
        snprintf(path, sizeof path, "samples/%s", clip->string);
        CHECK(hark_transcribe_file(c, path) == 0, "%s", hark_last_error(c));
        CHECK(hark_n_segments(c) == cJSON_GetArraySize(clip), "%s: %d segments, PyTorch %d",
              clip->string, hark_n_segments(c), cJSON_GetArraySize(clip));
        int s = 0;
        for (const cJSON *seg = clip->child; seg && s < hark_n_segments(c); seg = seg->next, s++)
            CHECK(segment_agrees(c, s, seg, clip->string, &ties),
                  "%s: segment %d (%.2f-%.2f) differs from PyTorch's", clip->string, s,
                  hark_segment_start(c, s), hark_segment_end(c, s));
        clips++;
    }
    CHECK(clips == 3, "%d clips", clips);
    CHECK(ties <= MAX_TIES, "%d word times one frame apart (at most %d)", ties, MAX_TIES);
    hark_context_free(c);
    hark_model_free(m);
    cJSON_Delete(ref);
    return check_summary("golden_words");
}
