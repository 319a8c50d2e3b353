/* The encoder's matrices packed for bf16 or int8 products (kernels/lowp.c),
 * made once per model and precision on first use and kept until the model is
 * freed: a model is shared read-only by contexts on many threads, so the
 * first one to ask packs, under a lock, and the others wait for it. */
#include "model/model.h"

#include <pthread.h>
#include <stdlib.h>

struct hark_packed_cache {
    pthread_mutex_t lock;
    hark_packed *sets[3]; /* by hark_prec; [0] (f32) unused */
    int n;                /* matrices in each set */
};

hark_packed_cache *hark_packed_cache_new(void)
{
    hark_packed_cache *c = calloc(1, sizeof *c);
    if (c)
        pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void free_set(hark_packed *set, int n)
{
    for (int i = 0; set && i < n; i++)
        hark_packed_free(&set[i]);
    free(set);
}

void hark_packed_cache_free(hark_packed_cache *c)
{
    if (!c)
        return;
    for (int p = 0; p < 3; p++)
        free_set(c->sets[p], c->n);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* The decoder's cross-attention K and V projections of each layer, after the encoder's. */
static const hark_weight *cross_weight(const hark_model *m, int i)
{
    const hark_attn *a = &m->dec[i / 2].cross;
    return i % 2 ? &a->v : &a->k;
}

/* conv1, conv2, then each layer's q, k, v, o, fc1, fc2, then the cross K, V. */
static hark_packed *pack_encoder(const hark_model *m, hark_prec prec, int n)
{
    hark_packed *set = calloc((size_t)n, sizeof *set);
    int rc = set ? 0 : -1, cross = 2 + HARK_ENC_PACKED * m->hp.n_audio_layer;
    for (int i = cross; !rc && i < n; i++)
        rc = hark_pack(&set[i], cross_weight(m, i - cross), prec);
    for (int i = 0; !rc && i < cross; i++) {
        const hark_block *b = i >= 2 ? &m->enc[(i - 2) / HARK_ENC_PACKED] : NULL;
        const hark_weight *all[HARK_ENC_PACKED] = {
            b ? &b->attn.q : NULL, b ? &b->attn.k : NULL, b ? &b->attn.v : NULL,
            b ? &b->attn.o : NULL, b ? &b->fc1 : NULL,    b ? &b->fc2 : NULL};
        const hark_weight *w = i == 0 ? &m->conv1 : i == 1 ? &m->conv2 : all[(i - 2) % HARK_ENC_PACKED];
        rc = hark_pack(&set[i], w, prec);
    }
    if (rc) {
        free_set(set, n);
        return NULL;
    }
    return set;
}

const hark_packed *hark_model_packed(const hark_model *m, hark_prec prec)
{
    hark_packed_cache *c = m->packed;
    if (!c || prec == HARK_PREC_F32)
        return NULL;
    pthread_mutex_lock(&c->lock);
    c->n = hark_model_packed_count(m);
    if (!c->sets[prec])
        c->sets[prec] = pack_encoder(m, prec, c->n);
    hark_packed *set = c->sets[prec];
    pthread_mutex_unlock(&c->lock);
    return set;
}

int hark_model_packed_count(const hark_model *m)
{
    return 2 + HARK_ENC_PACKED * m->hp.n_audio_layer + 2 * m->hp.n_text_layer;
}

size_t hark_model_packed_bytes(const hark_model *m, hark_prec prec)
{
    const hark_packed *set = hark_model_packed(m, prec);
    size_t bytes = 0;
    for (int i = 0; set && i < hark_model_packed_count(m); i++)
        bytes += hark_packed_bytes(&set[i]);
    return bytes;
}
