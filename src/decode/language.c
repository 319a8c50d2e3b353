/* Language of multilingual models: named by the user, or detected as openai
 * does it: one decoder step from [sot] on the first window, softmax over the
 * language tokens only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decode.h"

int hark_rank_languages(const hark_model *m, const float *mel_window, float *enc,
                        hark_cross *cross, int *order, float *probs)
{
    int n = m->vocab.sp.n_langs;
    float *p = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!p)
        return HARK_ERR_NOMEM;
    int rc = hark_encode(m, mel_window, enc, NULL);
    if (!rc) {
        hark_cross_set(m, cross, enc);
        rc = hark_language_probs(m, cross, p);
    }
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 1; i < n; i++) /* insertion sort: stable, n <= 100 */
        for (int j = i; j > 0 && p[order[j]] > p[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int i = 0; i < n; i++)
        probs[i] = p[order[i]];
    free(p);
    return rc;
}

int hark_select_language(const hark_model *m, const hark_params *p, const float *mel_window,
                         float *enc, hark_cross *cross, char *code, size_t code_len,
                         int *lang_token, hark_error *e)
{
    /* a language named (check_params refused unknown ones), else NULL, "" or "auto" */
    int i = hark_lang_index(p->language);
    if (i >= 0) {
        if (i >= m->vocab.sp.n_langs)
            return hark_fail(e, HARK_ERR_ARG, "%s: the model has no language \"%s\"", m->path,
                             p->language);
        snprintf(code, code_len, "%s", hark_lang_code(i));
        *lang_token = m->vocab.sp.first_lang + i;
        return 0;
    }
    int n = m->vocab.sp.n_langs;
    int *order = malloc(sizeof(int) * (size_t)(n ? n : 1));
    float *probs = malloc(sizeof(float) * (size_t)(n ? n : 1));
    int rc = order && probs && n > 0 ? hark_rank_languages(m, mel_window, enc, cross, order, probs)
                                     : HARK_ERR_NOMEM;
    if (!rc) {
        const char *c = hark_lang_code(order[0]);
        snprintf(code, code_len, "%s", c ? c : "unknown");
        *lang_token = m->vocab.sp.first_lang + order[0];
    } else {
        hark_fail_decode(e, rc, m);
    }
    free(order);
    free(probs);
    return rc;
}
