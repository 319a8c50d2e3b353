/* A persistent thread pool, one per context: the numeric kernels split their
 * output (rows, heads) across it, never a reduction, so results are the same
 * bit for bit whatever the thread count. */
#ifndef HARK_POOL_H
#define HARK_POOL_H

#include <stddef.h>

typedef struct hark_pool hark_pool;

hark_pool *hark_pool_new(int n_threads);
void hark_pool_free(hark_pool *p);
/* The pool the calling thread's kernels use (NULL: run serially). */
void hark_pool_use(hark_pool *p);
int hark_pool_threads(void);
/* Runs fn(arg, i) for 0 <= i < n on the current pool and waits for all; work
 * (multiply-adds or elements, roughly) below a threshold runs in the calling
 * thread, since waking the pool costs more than small jobs. */
void hark_parallel(int n, void (*fn)(void *arg, int i), void *arg, size_t work);
/* How many spins a waiting thread pauses before it starts yielding now and
 * then: some while all pools' threads fit the cores, none when they do not. */
int hark_pool_patient_spins(void);

#endif
