/* Monotonic time for timings (benchmarks, progress, ledgers): only differences mean
 * anything, and they never jump with the wall clock. */
#include <time.h>

#include "base/base.h"

double hark_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
