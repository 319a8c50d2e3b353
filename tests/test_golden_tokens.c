/* hark and the PyTorch reference agree token for token on every golden clip
 * with the default model (greedy, no timestamps, no prompt), and hark's beam
 * search is openai's BeamSearchDecoder on the first window of every sample
 * and each later window wholly inside it (5 beams, timestamps), and on the
 * first without timestamps: the reference comes from scripts/reference/golden_reference.py. */
#include <cJSON.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "decode/decode.h"
#include "face.h"
#include "window.h"

/* Where hark's and PyTorch's sequences first part, or -1 where they are the same.
 * any_time: a timestamp matches any timestamp at the same position (a near-tie
 * between two times, which rounding decides, need not choose the same one). */
static int first_difference(const hark_window *w, const cJSON *toks, int ts_begin, int any_time)
{
    const cJSON *t = toks->child;
    int i = 0;
    for (; i < w->n && t; i++, t = t->next) {
        int a = w->tokens[i], b = t->valueint;
        if (a != b && !(any_time && a >= ts_begin && b >= ts_begin))
            return i;
    }
    return i == w->n && !t ? -1 : i;
}

/* hark's beam search on one window against the reference's tokens and sum
 * (with timestamps unless "timestamps" is false): the same text tokens and
 * timestamp positions, the same sum, and the same timestamps too in all but
 * *ts_ties windows. */
static int beam_agrees(const hark_model *m, const hark_cross *cross, const cJSON *want,
                       const char *name, int *ts_ties)
{
    hark_decode_opts o = {0};
    o.timestamps = !cJSON_IsFalse(cJSON_GetObjectItem(want, "timestamps"));
    o.sample_len = m->hp.n_text_ctx / 2, o.lang_token = o.task_token = -1;
    o.beam_size = 5, o.patience = 1, o.length_penalty = -1, o.max_initial_timestamp = 50;
    hark_window w;
    CHECK(hark_decode_window(m, cross, &o, NULL, &w) == 0, "%s: beam search", name);
    const cJSON *toks = cJSON_GetObjectItem(want, "tokens");
    int ts = m->vocab.sp.timestamp_begin;
    int text_at = first_difference(&w, toks, ts, 1), at = first_difference(&w, toks, ts, 0);
    double sum = cJSON_GetObjectItem(want, "sum_logprob")->valuedouble;
    CHECK(text_at < 0, "%s: hark's beam-search tokens differ from PyTorch's from token %d", name,
          text_at);
    CHECK(fabs(w.sum_logprob - sum) < 2e-3 * fabs(sum) + 1e-3, "%s: sum_logprob %.5f, PyTorch %.5f",
          name, w.sum_logprob, sum);
    if (text_at < 0 && at >= 0) {
        printf("%s: a timestamp tie at token %d (hark %d, PyTorch %d)\n", name, at, w.tokens[at],
               cJSON_GetArrayItem(toks, at)->valueint);
        ++*ts_ties;
    }
    hark_window_free(&w);
    return at < 0;
}

static void test_beam_search(void)
{
    char *json, err[512], path[512];
    size_t size;
    hark_error e;
    if (hark_read_file("tests/golden/torch_beam.json", &json, &size, &e) != 0) {
        SKIP("%s", e.msg);
        return;
    }
    cJSON *ref = cJSON_Parse(json);
    free(json);
    hark_model *m = hark_model_load(cJSON_GetObjectItem(ref, "model")->valuestring, err, sizeof err);
    CHECK(m != NULL, "%s", err);
    hark_cross cross;
    int windows = 0, tried = 0, agree = 0, ts_ties = 0, without_ts = 0, stride = check_stride();
    if (m)
        hark_cross_init(&cross, m);
    for (cJSON *w = cJSON_GetObjectItem(ref, "windows")->child; m && w; w = w->next, windows++) {
        /* "name.wav" (its first window), "name.wav@SEEK" or "name.wav@0 without timestamps",
         * with "seek" in frames */
        snprintf(path, sizeof path, "samples/%.*s", (int)strcspn(w->string, "@"), w->string);
        const cJSON *seek = cJSON_GetObjectItem(w, "seek");
        without_ts += cJSON_IsFalse(cJSON_GetObjectItem(w, "timestamps"));
        if (windows % stride)
            continue;
        tried++;
        test_mel t;
        if (test_file_mel(m, path, &t) == 0) {
            test_encode_window(m, &t, seek ? seek->valueint : 0, &cross);
            agree += beam_agrees(m, &cross, w, w->string, &ts_ties);
        }
        free(t.mel);
    }
    printf("%d of %d sample windows (%d listed): identical beam-search tokens in hark and PyTorch\n",
           agree, tried, windows);
    CHECK(windows - without_ts >= 16 && without_ts >= 10, "%d sample windows, %d without timestamps",
          windows, without_ts);
    CHECK(ts_ties <= 1, "%d windows with a timestamp tie", ts_ties);
    if (m)
        hark_cross_free(&cross);
    hark_model_free(m);
    cJSON_Delete(ref);
}

int main(void)
{
    test_beam_search();
    char *json, err[512], path[512];
    size_t size;
    hark_error e;
    if (hark_read_file("tests/golden/torch_greedy.json", &json, &size, &e) != 0) {
        SKIP("%s", e.msg);
        return check_summary("golden_tokens");
    }
    cJSON *ref = cJSON_Parse(json);
    free(json);
    const char *model_dir = cJSON_GetObjectItem(ref, "model")->valuestring;
    hark_model *m = hark_model_load(model_dir, err, sizeof err);
    CHECK(m != NULL, "%s", err);
    hark_params p = hark_default_params();
    p.timestamps = 0, p.search.beam_size = 1, p.fallback.n_temperatures = 1, p.prompt.condition_on_previous_text = 0;
    p.fallback.no_speech_threshold = 0; /* the reference does not skip silence */
    hark_context *c = m ? hark_context_new(m, &p) : NULL;
    int clips = 0, tried = 0, agree = 0, stride = check_stride();
    for (cJSON *clip = cJSON_GetObjectItem(ref, "tokens")->child; c && clip; clip = clip->next) {
        if (clips++ % stride)
            continue;
        snprintf(path, sizeof path, "tests/golden/%s", clip->string);
        CHECK(hark_transcribe_file(c, path) == 0, "%s", hark_last_error(c));
        int same = hark_n_segments(c) <= 1, k = 0;
        cJSON *t = clip->child;
        for (int s = 0; s < hark_n_segments(c); s++)
            for (int j = 0; j < hark_segment_n_tokens(c, s); j++, k++, t = t ? t->next : NULL)
                same &= t && hark_segment_token(c, s, j).id == t->valueint;
        same &= t == NULL && k == cJSON_GetArraySize(clip);
        CHECK(same, "%s: hark's greedy tokens differ from PyTorch's", clip->string);
        tried++, agree += same;
    }
    printf("%d of %d golden clips (%d listed): identical greedy tokens in hark and PyTorch\n", agree,
           tried, clips);
    CHECK(clips == 40, "%d clips", clips);
    hark_context_free(c);
    hark_model_free(m);
    cJSON_Delete(ref);
    return check_summary("golden_tokens");
}
