/* The thread pool: a job is a task count and a function; tasks are claimed
 * with an atomic counter and the calling thread works too.  Between jobs the
 * workers spin for a while before sleeping on a condition variable: a decode
 * step is some forty short jobs, and waking a sleeping thread through the
 * kernel costs tens of microseconds on a VM, as long as the jobs themselves.
 * Spinning keeps the `-t N` promise of N busy cores, no more. */
#include "base/base.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* About 100-300 microseconds of pause instructions: longer than the gaps
 * between one token's jobs, short next to a window's non-parallel work.  Every
 * so often the spinner yields, so that more threads than cores still move: at
 * once when this process runs more pool threads than there are cores (-j N
 * with -t M), else only after PATIENT_SPINS (some microseconds), because a
 * yield is a system call (a microsecond or more on a VM) and a job that
 * arrives meanwhile waits for it. */
enum { SPIN_LIMIT = 1 << 14, PATIENT_SPINS = 256, SPINS_PER_YIELD = 64 };

static atomic_int live_threads; /* the threads of every pool, callers included */

static int cores(void)
{
    static atomic_int n;
    if (atomic_load(&n) == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        atomic_store(&n, c > 0 ? (int)c : 1);
    }
    return atomic_load(&n);
}

int hark_pool_patient_spins(void)
{
    return atomic_load(&live_threads) <= cores() ? PATIENT_SPINS : 0;
}

static void spin_once(int spin, int patient)
{
    if (spin >= patient && spin % SPINS_PER_YIELD == SPINS_PER_YIELD - 1)
        sched_yield();
    else
        cpu_relax();
}

struct hark_pool {
    pthread_t *workers;
    int n_workers;
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    atomic_long generation; /* bumped for each job */
    atomic_int stopping;
    atomic_int busy;        /* workers still on the current job */
    atomic_int sleepers;    /* workers waiting on `wake` */
    atomic_int caller_asleep;
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

/* Waits until the generation moves on from `seen` (or the pool stops) and
 * returns the new one.  The sleeper count is raised before the generation is
 * read again, and the caller bumps the generation before it reads the count,
 * so one of the two always sees the other (no lost wake-up). */
static long await_job(hark_pool *p, long seen)
{
    long g;
    int patient = hark_pool_patient_spins();
    for (int spin = 0; spin < SPIN_LIMIT; spin++) {
        if ((g = atomic_load(&p->generation)) != seen || atomic_load(&p->stopping))
            return g;
        spin_once(spin, patient);
    }
    pthread_mutex_lock(&p->lock);
    atomic_fetch_add(&p->sleepers, 1);
    while ((g = atomic_load(&p->generation)) == seen && !atomic_load(&p->stopping))
        pthread_cond_wait(&p->wake, &p->lock);
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->lock);
    return g;
}

static void *worker(void *arg)
{
    hark_pool *p = arg;
    long seen = 0;
    for (;;) {
        seen = await_job(p, seen);
        if (atomic_load(&p->stopping))
            break;
        run_tasks(p);
        if (atomic_fetch_sub(&p->busy, 1) == 1 && atomic_load(&p->caller_asleep)) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->lock);
        }
    }
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
    atomic_fetch_add(&live_threads, p->n_workers + 1);
    return p;
}

static void wake_sleepers(hark_pool *p)
{
    if (atomic_load(&p->sleepers) == 0)
        return;
    pthread_mutex_lock(&p->lock);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

void hark_pool_free(hark_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    atomic_store(&p->stopping, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n_workers; i++)
        pthread_join(p->workers[i], NULL);
    atomic_fetch_sub(&live_threads, p->n_workers + 1);
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

hark_pool *hark_pool_current(void)
{
    return current;
}

int hark_pool_threads(void)
{
    return current ? current->n_workers + 1 : 1;
}

/* The caller's side of the hand-shake in await_job, for the job's end. */
static void await_workers(hark_pool *p)
{
    int patient = hark_pool_patient_spins();
    for (int spin = 0; spin < SPIN_LIMIT; spin++) {
        if (atomic_load(&p->busy) == 0)
            return;
        spin_once(spin, patient);
    }
    pthread_mutex_lock(&p->lock);
    atomic_store(&p->caller_asleep, 1);
    while (atomic_load(&p->busy) > 0)
        pthread_cond_wait(&p->done, &p->lock);
    atomic_store(&p->caller_asleep, 0);
    pthread_mutex_unlock(&p->lock);
}

/* Below this much work (multiply-adds, roughly) a job runs on the calling
 * thread: a hand-over to spinning workers costs a few microseconds. */
enum { MIN_PARALLEL_WORK = 1 << 15 };

void hark_parallel(int n, void (*fn)(void *arg, int i), void *arg, size_t work)
{
    hark_pool *p = current;
    if (!p || p->n_workers == 0 || n <= 1 || work < MIN_PARALLEL_WORK) {
        for (int i = 0; i < n; i++)
            fn(arg, i);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    p->n_tasks = n;
    atomic_store(&p->next, 0);
    atomic_store(&p->busy, p->n_workers);
    atomic_fetch_add(&p->generation, 1); /* publishes the job's fields */
    wake_sleepers(p);
    run_tasks(p);
    await_workers(p);
}
