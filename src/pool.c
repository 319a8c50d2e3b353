/* The thread pool: workers sleep on a condition variable between jobs; a job
 * is a task count and a function; tasks are claimed with an atomic counter and
 * the calling thread works too. */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct hark_pool {
    pthread_t *workers;
    int n_workers;
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    long generation;       /* bumped for each job */
    int stopping, busy;    /* workers still on the current job */
    void (*fn)(void *, int);
    void *arg;
    int n_tasks;
    atomic_int next;
};

static _Thread_local hark_pool *current;

static void run_tasks(hark_pool *p)
{
    for (int i; (i = atomic_fetch_add(&p->next, 1)) < p->n_tasks;)
        p->fn(p->arg, i);
}

static void *worker(void *arg)
{
    hark_pool *p = arg;
    long seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stopping && p->generation == seen)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stopping)
            break;
        seen = p->generation;
        pthread_mutex_unlock(&p->lock);
        run_tasks(p);
        pthread_mutex_lock(&p->lock);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

hark_pool *hark_pool_new(int n_threads)
{
    hark_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    int want = n_threads > 1 ? n_threads - 1 : 0;
    p->workers = calloc((size_t)(want ? want : 1), sizeof(pthread_t));
    for (int i = 0; p->workers && i < want; i++) {
        if (pthread_create(&p->workers[i], NULL, worker, p) != 0)
            break; /* fewer threads still compute the same results */
        p->n_workers++;
    }
    return p;
}

void hark_pool_free(hark_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n_workers; i++)
        pthread_join(p->workers[i], NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p->workers);
    free(p);
}

void hark_pool_use(hark_pool *p)
{
    current = p;
}

int hark_pool_threads(void)
{
    return current ? current->n_workers + 1 : 1;
}

enum { MIN_PARALLEL_WORK = 1 << 18 };

void hark_parallel(int n, void (*fn)(void *arg, int i), void *arg, size_t work)
{
    hark_pool *p = current;
    if (!p || p->n_workers == 0 || n <= 1 || work < MIN_PARALLEL_WORK) {
        for (int i = 0; i < n; i++)
            fn(arg, i);
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->arg = arg;
    p->n_tasks = n;
    atomic_store(&p->next, 0);
    p->busy = p->n_workers;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    run_tasks(p);
    pthread_mutex_lock(&p->lock);
    while (p->busy > 0)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}
