/* A model's identity: what a batch ledger records so that a resumed batch can
 * tell whether a file was transcribed with the model it is running now. */
#include "model/model.h"
#include "base/base.h"

/* Pages of the weights hashed: their headers (shapes, types, offsets) sit in the
 * first MiB, and a fine-tuned model keeps them all, so pages spread over the
 * rest tell retrained weights apart without reading gigabytes. */
enum { HEAD = 1 << 20, PAGE = 4096, SAMPLES = 64 };

static uint64_t hash_map(uint64_t h, const hark_map *m)
{
    uint64_t size = m->size;
    h = hark_hash(h, &size, sizeof size);
    h = hark_hash(h, m->data, m->size < HEAD ? m->size : HEAD);
    if (m->size <= HEAD + PAGE)
        return h;
    for (size_t i = 0; i <= SAMPLES; i++) { /* the last page included */
        size_t at = HEAD + (m->size - HEAD - PAGE) / SAMPLES * i;
        h = hark_hash(h, m->data + at, PAGE);
    }
    return h;
}

unsigned long long hark_model_identity(const hark_model *m)
{
    /* what the model's JSON files set beside the weights: its dimensions, the
     * tokens it suppresses and its alignment heads */
    uint64_t h = hark_hash(HARK_HASH_START, &m->hp, sizeof m->hp);
    h = hark_hash(h, m->suppress, sizeof *m->suppress * (size_t)m->n_suppress);
    h = hark_hash(h, m->alignment_heads, sizeof m->alignment_heads[0] * (size_t)m->n_alignment_heads);
    for (int i = 0; i < m->n_maps; i++)
        h = hash_map(h, &m->maps[i]);
    return h;
}
