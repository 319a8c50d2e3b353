/* The thread pool: every task of every job runs exactly once, the caller
 * returns only after all of them, whether the workers were spinning or asleep
 * when the job came, and small jobs stay on the calling thread. */
#include "check.h"
#include "base/base.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

enum { MAX_TASKS = 64, BIG_WORK = 1 << 20 };

typedef struct job {
    atomic_int runs[MAX_TASKS];
    pthread_t caller;
    atomic_int off_caller; /* tasks that ran on another thread */
    atomic_int sum;
} job;

/* About a microsecond of work, so that a task outlasts a worker's hand-over. */
static void busy_wait(void)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 1000);
}

static void count_task(void *arg, int i)
{
    job *j = arg;
    busy_wait();
    atomic_fetch_add(&j->runs[i], 1);
    atomic_fetch_add(&j->sum, i + 1);
    if (!pthread_equal(pthread_self(), j->caller))
        atomic_fetch_add(&j->off_caller, 1);
}

static void job_reset(job *j)
{
    for (int i = 0; i < MAX_TASKS; i++)
        atomic_store(&j->runs[i], 0);
    j->caller = pthread_self();
    atomic_store(&j->off_caller, 0);
    atomic_store(&j->sum, 0);
}

/* Runs one job of n tasks and checks that each ran once before the return. */
static int run_and_count(job *j, int n, size_t work)
{
    job_reset(j);
    hark_parallel(n, count_task, j, work);
    int bad = atomic_load(&j->sum) != n * (n + 1) / 2;
    for (int i = 0; i < n; i++)
        bad |= atomic_load(&j->runs[i]) != 1;
    for (int i = n; i < MAX_TASKS; i++)
        bad |= atomic_load(&j->runs[i]) != 0;
    return bad;
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* Two tasks that each wait (sleeping, up to 2 s) for the other to start: they
 * meet only if a worker takes one while the caller holds the other.  Whether a
 * worker wins a race for tiny tasks is up to the scheduler (on a loaded machine
 * the caller can finish thousands of jobs first); this is not. */
typedef struct meeting {
    atomic_int started;
    pthread_t who[2];
} meeting;

static void meet_task(void *arg, int i)
{
    meeting *m = arg;
    m->who[i] = pthread_self();
    atomic_fetch_add(&m->started, 1);
    for (int waited = 0; atomic_load(&m->started) < 2 && waited < 20000; waited++)
        pause_us(100);
}

static int pair_ran_apart(void)
{
    meeting m = {0};
    hark_parallel(2, meet_task, &m, BIG_WORK);
    return atomic_load(&m.started) == 2 && !pthread_equal(m.who[0], m.who[1]);
}

/* Thousands of back-to-back jobs (the workers spin between them), then jobs
 * with pauses long enough for the workers to go to sleep. */
static void test_every_task_once(int threads)
{
    hark_pool *p = hark_pool_new(threads);
    hark_pool_use(p);
    CHECK(hark_pool_threads() == threads, "%d threads: pool has %d", threads, hark_pool_threads());
    job j;
    int bad = 0, spread = 0;
    for (int k = 0; k < 5000; k++) {
        bad += run_and_count(&j, 1 + k % MAX_TASKS, BIG_WORK);
        spread += atomic_load(&j.off_caller) > 0;
    }
    CHECK(bad == 0, "%d threads: %d of 5000 back-to-back jobs lost or repeated a task", threads, bad);
    int slept_bad = 0;
    for (int k = 0; k < 40; k++) {
        pause_us(k % 2 ? 2000 : 50); /* past the spin limit, and within it */
        slept_bad += run_and_count(&j, MAX_TASKS, BIG_WORK);
    }
    CHECK(slept_bad == 0, "%d threads: %d of 40 jobs after a pause went wrong", threads, slept_bad);
    if (threads == 1)
        CHECK(spread == 0, "1 thread: %d jobs ran tasks off the calling thread", spread);
    else
        CHECK(pair_ran_apart(), "%d threads: a worker did not take the second task", threads);
    hark_pool_use(NULL);
    hark_pool_free(p);
}

static void test_small_jobs_stay_on_caller(void)
{
    hark_pool *p = hark_pool_new(2);
    hark_pool_use(p);
    job j;
    int bad = 0, off = 0;
    for (int k = 0; k < 200; k++) {
        bad += run_and_count(&j, 8, 100);
        off += atomic_load(&j.off_caller);
    }
    CHECK(bad == 0 && off == 0, "small jobs: %d wrong, %d tasks off the caller", bad, off);
    hark_pool_use(NULL);
    bad = run_and_count(&j, 8, BIG_WORK);
    CHECK(bad == 0 && atomic_load(&j.off_caller) == 0, "no pool in use: tasks must run serially");
    hark_pool_free(p);
}

/* A pool freed while its workers sleep, and one freed while they spin. */
static void test_free_sleeping_and_spinning(void)
{
    for (int sleep_first = 0; sleep_first < 2; sleep_first++) {
        hark_pool *p = hark_pool_new(3);
        hark_pool_use(p);
        job j;
        int bad = run_and_count(&j, 16, BIG_WORK);
        if (sleep_first)
            pause_us(5000);
        hark_pool_use(NULL);
        hark_pool_free(p);
        CHECK(bad == 0, "pool freed %s: its job went wrong", sleep_first ? "asleep" : "spinning");
    }
}

/* Waiting threads pause before yielding only while every pool's threads fit
 * the cores: pools of as many threads as cores, then one more, and back. */
static void test_patience_follows_thread_count(void)
{
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    CHECK(hark_pool_patient_spins() > 0, "no pool: patient (%d)", hark_pool_patient_spins());
    hark_pool *fit = hark_pool_new(cores);
    CHECK(hark_pool_patient_spins() > 0, "%d threads on %d cores: patient", cores, cores);
    hark_pool *more = hark_pool_new(1);
    CHECK(hark_pool_patient_spins() == 0, "%d threads on %d cores: yields at once", cores + 1, cores);
    hark_pool_free(more);
    CHECK(hark_pool_patient_spins() > 0, "back to %d threads: patient", cores);
    hark_pool_free(fit);
}

int main(void)
{
    for (int threads = 1; threads <= 4; threads++)
        test_every_task_once(threads);
    test_small_jobs_stay_on_caller();
    test_free_sleeping_and_spinning();
    test_patience_follows_thread_count();
    return check_summary("test_pool");
}
