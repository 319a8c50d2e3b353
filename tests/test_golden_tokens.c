/* hark and the PyTorch reference agree token for token on every golden clip
 * with the default model (greedy, no timestamps, no prompt): the reference
 * tokens come from scripts/golden_reference.py. */
#include <cJSON.h>

#include "check.h"
#include "internal.h"

int main(void)
{
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
    p.timestamps = 0, p.beam_size = 1, p.n_temperatures = 1, p.condition_on_previous_text = 0;
    p.no_speech_threshold = 0; /* the reference does not skip silence */
    hark_context *c = m ? hark_context_new(m, &p) : NULL;
    int clips = 0, agree = 0;
    for (cJSON *clip = cJSON_GetObjectItem(ref, "tokens")->child; c && clip; clip = clip->next) {
        snprintf(path, sizeof path, "tests/golden/%s", clip->string);
        CHECK(hark_transcribe_file(c, path) == 0, "%s", hark_last_error(c));
        int same = hark_n_segments(c) <= 1, k = 0;
        cJSON *t = clip->child;
        for (int s = 0; s < hark_n_segments(c); s++)
            for (int j = 0; j < hark_segment_n_tokens(c, s); j++, k++, t = t ? t->next : NULL)
                same &= t && hark_segment_token(c, s, j).id == t->valueint;
        same &= t == NULL && k == cJSON_GetArraySize(clip);
        CHECK(same, "%s: hark's greedy tokens differ from PyTorch's", clip->string);
        clips++, agree += same;
    }
    printf("%d of %d golden clips: identical greedy tokens in hark and PyTorch\n", agree, clips);
    CHECK(clips == 40, "%d clips", clips);
    hark_context_free(c);
    hark_model_free(m);
    cJSON_Delete(ref);
    return check_summary("golden_tokens");
}
