/* One decoder step for the sequences of several files (hark_broker): each
 * file's thread submits its step (its sequences' tokens and KV caches, each
 * cache with its own window's cross K/V) and waits; once every thread that is
 * in its decoding phase has submitted, one of them runs a single combined step
 * (hark_decode_groups) on the broker's thread pool, as many threads as the
 * joined contexts have together (theirs wait meanwhile), so each weight is read
 * once for all the files' sequences, and hands each its logits.  Threads encoding a
 * window, or running a prompt, are not waited for.  Each submission's rows are
 * grouped as hark_decode_batch groups them alone, so every row's logits have
 * the bits they would have without the others. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "decode/decode.h"
#include "kernels/kernels.h"

typedef struct submission {
    const hark_model *m;
    hark_kv **kvs;
    const int *tokens;
    int n, rc, done;
    const float *logits; /* its rows of the combined logits, once done */
    struct submission *next;
} submission;

struct hark_broker {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int decoding;           /* threads between hark_broker_enter and _leave */
    int pending;            /* submissions waiting */
    int running;            /* a combined step is under way */
    atomic_long changes;    /* bumped (under the lock) whenever the above change */
    int threads;            /* the joined contexts' threads: the step's pool */
    hark_pool *pool;        /* made by the first step (NULL: the runner's own) */
    submission *first, **last;
    /* the combined step's buffers, touched by the thread running it alone */
    hark_kv **kvs;
    int *tokens, *size, cap_rows;
    float *logits, *scratch;
    size_t cap_logits, cap_scratch;
};

hark_broker *hark_broker_new(void)
{
    hark_broker *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->changed, NULL);
    b->last = &b->first;
    return b;
}

void hark_broker_free(hark_broker *b)
{
    if (!b)
        return;
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->changed);
    hark_pool_free(b->pool);
    free(b->kvs);
    free(b->tokens);
    free(b->size);
    free(b->logits);
    free(b->scratch);
    free(b);
}

void hark_broker_add_threads(hark_broker *b, int n)
{
    pthread_mutex_lock(&b->lock);
    b->threads += n;
    pthread_mutex_unlock(&b->lock);
}

void hark_broker_enter(hark_broker *b)
{
    pthread_mutex_lock(&b->lock);
    b->decoding++;
    pthread_mutex_unlock(&b->lock);
}

/* One fewer to wait for: the others may now be complete. */
void hark_broker_leave(hark_broker *b)
{
    pthread_mutex_lock(&b->lock);
    b->decoding--;
    atomic_fetch_add(&b->changes, 1);
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
}

/* Room for rows sequences of model m: 0, or HARK_ERR_NOMEM. */
static int reserve(hark_broker *b, const hark_model *m, int rows)
{
    size_t logits = (size_t)rows * m->hp.n_vocab, scratch = hark_decode_scratch_floats(m, rows);
    if (rows > b->cap_rows) {
        hark_kv **k = realloc(b->kvs, sizeof *k * (size_t)rows);
        b->kvs = k ? k : b->kvs;
        int *t = realloc(b->tokens, sizeof *t * (size_t)rows);
        b->tokens = t ? t : b->tokens;
        int *s = realloc(b->size, sizeof *s * (size_t)rows);
        b->size = s ? s : b->size;
        if (!k || !t || !s)
            return HARK_ERR_NOMEM;
        b->cap_rows = rows;
    }
    if (logits > b->cap_logits) {
        free(b->logits);
        b->cap_logits = (b->logits = malloc(sizeof(float) * logits)) ? logits : 0;
    }
    if (scratch > b->cap_scratch) {
        free(b->scratch);
        b->cap_scratch = (b->scratch = malloc(sizeof(float) * scratch)) ? scratch : 0;
    }
    return b->logits && b->scratch ? 0 : HARK_ERR_NOMEM;
}

/* The submissions of list as one step's rows, each cut in groups of
 * HARK_MAX_BATCH as hark_decode_batch cuts them; returns the group count. */
static int gather(hark_broker *b, submission *list)
{
    int rows = 0, groups = 0;
    for (submission *s = list; s; s = s->next)
        for (int i = 0; i < s->n; i += HARK_MAX_BATCH) {
            int k = s->n - i < HARK_MAX_BATCH ? s->n - i : HARK_MAX_BATCH;
            memcpy(b->kvs + rows, s->kvs + i, sizeof *b->kvs * (size_t)k);
            memcpy(b->tokens + rows, s->tokens + i, sizeof *b->tokens * (size_t)k);
            b->size[groups++] = k;
            rows += k;
        }
    return groups;
}

/* Runs the submissions of list (one model) as one step; sets each's rc and logits. */
static void run_step(hark_broker *b, submission *list)
{
    const hark_model *m = list->m;
    int rows = 0, rc = 0;
    for (submission *s = list; s; s = s->next)
        rows += s->n;
    for (submission *s = list; s; s = s->next)
        rc |= s->m != m; /* contexts on different models cannot share a step */
    rc = rc ? HARK_ERR_ARG : reserve(b, m, rows);
    if (!rc) {
        int groups = gather(b, list);
        rc = hark_decode_groups(m, b->kvs, b->tokens, rows, b->size, groups, b->logits, b->scratch);
    }
    size_t at = 0;
    for (submission *s = list; s; at += (size_t)s->n, s = s->next) {
        s->rc = rc;
        s->logits = b->logits + at * m->hp.n_vocab;
    }
}

/* The step's pool: the contexts' threads together, no more than the cores. */
static int pool_threads(const hark_broker *b)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 && b->threads > cores ? (int)cores : b->threads;
}

/* Whether the waiting submissions are all there are to wait for. */
static int complete(const hark_broker *b)
{
    return !b->running && b->pending > 0 && b->pending >= b->decoding;
}

/* Waits (the lock held) until the broker's state changes.  A step is a few
 * milliseconds and the others' turn between steps less: a sleeping thread
 * woken through the kernel waits far longer than that on a VM, so the waiter
 * first yields its core for a while, watching the change count. */
enum { YIELDS = 2000 };

static void await_change(hark_broker *b)
{
    long seen = atomic_load(&b->changes);
    pthread_mutex_unlock(&b->lock);
    for (int i = 0; i < YIELDS && atomic_load(&b->changes) == seen; i++)
        sched_yield();
    pthread_mutex_lock(&b->lock);
    if (atomic_load(&b->changes) == seen)
        pthread_cond_wait(&b->changed, &b->lock);
}

int hark_broker_step(hark_broker *b, const hark_model *m, hark_kv **kvs, const int *tokens, int n,
                    const float **logits)
{
    submission me = {m, kvs, tokens, n, 0, 0, NULL, NULL};
    pthread_mutex_lock(&b->lock);
    *b->last = &me;
    b->last = &me.next;
    b->pending++;
    atomic_fetch_add(&b->changes, 1);
    while (!me.done) {
        if (!complete(b)) {
            await_change(b);
            continue;
        }
        submission *list = b->first;
        b->first = NULL, b->last = &b->first, b->pending = 0, b->running = 1;
        if (!b->pool && pool_threads(b) > 1)
            b->pool = hark_pool_new(pool_threads(b));
        hark_pool *own = hark_pool_current();
        pthread_mutex_unlock(&b->lock);
        hark_pool_use(b->pool ? b->pool : own);
        run_step(b, list);
        hark_pool_use(own);
        pthread_mutex_lock(&b->lock);
        for (submission *s = list; s; s = s->next)
            s->done = 1;
        b->running = 0;
        atomic_fetch_add(&b->changes, 1);
        pthread_cond_broadcast(&b->changed);
    }
    pthread_mutex_unlock(&b->lock);
    *logits = me.logits;
    return me.rc;
}
