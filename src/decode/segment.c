/* Segments and words, the results of the long-form loop that the alignment,
 * the --max-len split, the context and the writers share: freeing them. */
#include <stdlib.h>

#include "decode/decode.h"

void hark_segment_free(hark_segment *s)
{
    for (int j = 0; j < s->n_tokens; j++)
        free(s->token_text[j]);
    for (int j = 0; j < s->n_words; j++)
        free(s->words[j].text);
    free(s->words);
    free(s->token_text);
    free(s->text);
    free(s->tokens);
    free(s->probs);
}

void hark_result_clear(hark_result *r)
{
    for (int i = 0; i < r->n; i++)
        hark_segment_free(&r->seg[i]);
    free(r->seg);
    free(r->text);
    memset(r, 0, sizeof *r);
}
