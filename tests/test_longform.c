/* Long-form transcription with timestamps and the previous-text prompt equals
 * openai's transcribe() loop, re-implemented in PyTorch on the random test
 * model (scripts/hark_model.py transcribe_greedy -> ref_longform.json):
 * the same segments, times and tokens, window after window. */
#include <cJSON.h>

#include "check.h"
#include "face.h"

/* segs (a JSON array) against the context's segments. */
static void compare(hark_context *c, cJSON *segs, const char *what)
{
    CHECK(hark_n_segments(c) == cJSON_GetArraySize(segs), "%s: %d segments, reference %d", what,
          hark_n_segments(c), cJSON_GetArraySize(segs));
    int i = 0;
    double prev_end = 0;
    for (cJSON *s = segs->child; s && i < hark_n_segments(c); s = s->next, i++) {
        double a = cJSON_GetObjectItem(s, "start")->valuedouble, b = cJSON_GetObjectItem(s, "end")->valuedouble;
        double start = hark_segment_start(c, i), end = hark_segment_end(c, i);
        CHECK(fabs(start - a) < 1e-6 && fabs(end - b) < 1e-6,
              "%s segment %d: %.2f-%.2f, reference %.2f-%.2f", what, i, start, end, a, b);
        cJSON *toks = cJSON_GetObjectItem(s, "tokens");
        int same = hark_segment_n_tokens(c, i) == cJSON_GetArraySize(toks), j = 0;
        for (cJSON *t = toks->child; t && same; t = t->next, j++)
            same = hark_segment_token(c, i, j).id == t->valueint;
        CHECK(same, "%s segment %d tokens differ", what, i);
        /* on the 20 ms grid, in order, never overlapping */
        CHECK(fabs(start * 50 - round(start * 50)) < 1e-6 && fabs(end * 50 - round(end * 50)) < 1e-6,
              "%s segment %d off the 20 ms grid", what, i);
        CHECK(start >= prev_end - 1e-9 && end > start, "%s segment %d overlaps or is empty", what, i);
        prev_end = end;
    }
}

/* An initial prompt: encoded as " " + text (the tokenizer against the
 * reference's ids), then the same segments as openai's loop starting from it. */
static void test_initial_prompt(hark_model *m, cJSON *ref)
{
    const char *text = cJSON_GetObjectItem(ref, "initial_prompt")->valuestring;
    char spaced[256];
    snprintf(spaced, sizeof spaced, " %s", text);
    int *ids, n = hark_tokenize(&m->vocab, spaced, &ids);
    cJSON *want = cJSON_GetObjectItem(ref, "prompt_tokens");
    int same = n == cJSON_GetArraySize(want), j = 0;
    for (cJSON *t = want->child; t && same; t = t->next, j++)
        same = ids[j] == t->valueint;
    CHECK(same, "prompt encodes to %d tokens unlike the reference", n);
    free(ids);
    hark_params p = hark_default_params();
    p.search.beam_size = 1, p.fallback.n_temperatures = 1, p.fallback.no_speech_threshold = 0;
    p.prompt.initial = text;
    hark_context *c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") == 0, "%s", hark_last_error(c));
    compare(c, cJSON_GetObjectItem(ref, "segments_with_prompt"), "with prompt");
    hark_context_free(c);
    /* openai strips the prompt before " " + it */
    char padded[300];
    snprintf(padded, sizeof padded, " \t%s \n", text);
    p.prompt.initial = padded;
    c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") == 0, "%s", hark_last_error(c));
    compare(c, cJSON_GetObjectItem(ref, "segments_with_prompt"), "with a padded prompt");
    hark_context_free(c);
    /* carry_initial_prompt: the prompt before every window's previous text */
    p.prompt.initial = text, p.prompt.carry_initial = 1;
    c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") == 0, "%s", hark_last_error(c));
    compare(c, cJSON_GetObjectItem(ref, "segments_carrying_prompt"), "carrying the prompt");
    hark_context_free(c);
}

/* No-speech skipping: a window whose P(nospeech) is above the threshold and
 * whose average log-probability is below logprob_threshold yields nothing. */
static void test_silence_rule(hark_model *m)
{
    hark_params p = hark_default_params();
    p.search.beam_size = 1, p.fallback.n_temperatures = 1;
    p.fallback.no_speech_threshold = 1e-9f; /* every window "sounds silent" */
    p.fallback.logprob_threshold = 0.0f;    /* and is unlikely enough */
    hark_context *c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") == 0, "%s", hark_last_error(c));
    CHECK(hark_n_segments(c) == 0, "%d segments from windows judged silent", hark_n_segments(c));
    hark_context_free(c);
    p.fallback.logprob_threshold = -1e9f;   /* likely enough: kept despite P(nospeech) */
    c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") == 0, "%s", hark_last_error(c));
    CHECK(hark_n_segments(c) > 0, "likely text is kept");
    hark_context_free(c);
}

/* on_segment: each segment once, in order, with the bounds and text the
 * context ends with, and called while the file is still being transcribed
 * (the first call sees fewer segments than the file has). */
typedef struct seen {
    hark_context *c;
    int n, count_at_first;
    double start[64], end[64];
    char text[64][256];
} seen;

static void record_segment(double start, double end, const char *text, void *user)
{
    seen *s = user;
    if (s->n == 0)
        s->count_at_first = hark_n_segments(s->c);
    if (s->n < 64) {
        s->start[s->n] = start, s->end[s->n] = end;
        snprintf(s->text[s->n], sizeof s->text[0], "%s", text);
    }
    s->n++;
}

static void test_on_segment(hark_model *m)
{
    static seen s;
    hark_params p = hark_default_params();
    p.search.beam_size = 1, p.fallback.n_temperatures = 1, p.fallback.no_speech_threshold = 0;
    p.callbacks.on_segment = record_segment, p.callbacks.on_segment_user = &s;
    s.c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(s.c, "tests/data/clip.wav") == 0, "%s", hark_last_error(s.c));
    int n = hark_n_segments(s.c);
    CHECK(s.n == n, "on_segment called %d times for %d segments", s.n, n);
    CHECK(n > 1 && s.count_at_first < n, "first call saw %d of %d segments: not as they come",
          s.count_at_first, n);
    for (int i = 0; i < n && i < s.n && i < 64; i++)
        CHECK(s.start[i] == hark_segment_start(s.c, i) && s.end[i] == hark_segment_end(s.c, i) &&
              strncmp(s.text[i], hark_segment_text(s.c, i), sizeof s.text[0] - 1) == 0,
              "segment %d reported as %.2f-%.2f \"%s\"", i, s.start[i], s.end[i], s.text[i]);
    hark_context_free(s.c);
}

/* on_progress: after each window, nondecreasing, the last call at the end of
 * the audio (its length in whole 10 ms frames). */
typedef struct progress {
    int calls, backwards;
    double done, total;
} progress;

static void record_progress(double done, double total, void *user)
{
    progress *p = user;
    p->backwards |= p->calls && done < p->done;
    p->calls++, p->done = done, p->total = total;
}

static void test_on_progress(hark_model *m)
{
    progress pr = {0};
    hark_params p = hark_default_params();
    p.search.beam_size = 1, p.fallback.n_temperatures = 1, p.fallback.no_speech_threshold = 0;
    p.callbacks.on_progress = record_progress, p.callbacks.on_progress_user = &pr;
    hark_context *c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") == 0, "%s", hark_last_error(c));
    double seconds = hark_audio_seconds(c);
    CHECK(pr.calls > 1 && !pr.backwards, "%d progress calls, backwards %d", pr.calls, pr.backwards);
    CHECK(pr.done == pr.total && fabs(pr.total - seconds) < 0.01,
          "last progress %.3f of %.3f, the audio %.3f s", pr.done, pr.total, seconds);
    hark_context_free(c);
}

/* should_abort: asked before each window; the windows before the abort keep their
 * segments (the full run's, up to where its third window begins) and its text */
static int abort_at_third(void *user)
{
    return ++*(int *)user >= 3;
}

static void test_should_abort(hark_model *m)
{
    hark_params p = hark_default_params();
    p.search.beam_size = 1, p.fallback.n_temperatures = 1, p.fallback.no_speech_threshold = 0;
    hark_context *full = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(full, "tests/data/clip.wav") == 0, "%s", hark_last_error(full));
    int asked = 0, windows = 0, kept = 0;
    p.callbacks.should_abort = abort_at_third, p.callbacks.should_abort_user = &asked;
    hark_context *c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") == HARK_ERR_ABORTED, "not aborted");
    CHECK(strcmp(hark_last_error(c), "tests/data/clip.wav: transcription aborted") == 0, "%s",
          hark_last_error(c));
    char text[4096] = "";
    for (int i = 0; i < hark_n_segments(full); i++) {
        windows += !i || hark_segment_seek(full, i) != hark_segment_seek(full, i - 1);
        if (windows < 3) {
            kept++;
            strncat(text, hark_segment_text(full, i), sizeof text - strlen(text) - 1);
        }
    }
    CHECK(asked == 3 && windows >= 3, "asked %d times, %d windows", asked, windows);
    CHECK(hark_n_segments(c) == kept && kept > 0, "%d segments kept, the full run's first two "
          "windows have %d", hark_n_segments(c), kept);
    CHECK(strcmp(hark_text(c), text) == 0, "text \"%s\", want \"%s\"", hark_text(c), text);
    hark_context_free(c);
    hark_context_free(full);
}

int main(void)
{
    char err[512];
    cJSON *ref = load_json_fixture("tests/data/tiny-random/ref_longform.json");
    if (!ref)
        return check_summary("longform");
    /* f16 models too: their cross K/V are f16 and prompts take the widened path */
    const char *models[] = {"tests/data/tiny-random/hf-f32", "tests/data/tiny-random/model-f32.bin",
                            "tests/data/tiny-random/hf-f16", "tests/data/tiny-random/model-f16.bin"};
    for (int k = 0; k < 4; k++) {
        hark_model *m = hark_model_load(models[k], err, sizeof err);
        CHECK(m != NULL, "%s", err);
        if (!m)
            continue;
        hark_params p = hark_default_params();
        p.search.beam_size = 1, p.fallback.n_temperatures = 1, p.fallback.no_speech_threshold = 0;
        hark_context *c = hark_context_new(m, &p);
        CHECK(hark_transcribe_file(c, "tests/data/clip.wav") == 0, "%s", hark_last_error(c));
        compare(c, cJSON_GetObjectItem(ref, "segments"), models[k]);
        if (k == 0) {
            test_initial_prompt(m, ref);
            test_silence_rule(m);
            test_on_segment(m);
            test_on_progress(m);
            test_should_abort(m);
        }
        hark_context_free(c);
        hark_model_free(m);
    }
    cJSON_Delete(ref);
    return check_summary("longform");
}
