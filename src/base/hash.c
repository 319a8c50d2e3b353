/* FNV-1a, 64 bits: the tokenizer's table and the identities batch ledgers keep
 * (a model's, a set of options') hash bytes this one way. */
#include "base/base.h"

uint64_t hark_hash(uint64_t h, const void *data, size_t n)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}
