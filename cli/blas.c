/* OpenBLAS's choice of kernels, checked before the CLI does any work.
 *
 * Debian's OpenBLAS 0.3.21 does not recognise newer Intel cores and falls back
 * to its SSE3 "Prescott" kernels: on such a Xeon hark's encoder ran five times
 * slower than with the AVX-512 kernels (figures: docs/perf-log.md, "Figures
 * behind code comments").  OpenBLAS reads
 * OPENBLAS_CORETYPE only when it is loaded, so the CLI runs itself again with
 * the variable set.  A core the user named is never overridden.
 *
 * The same goes for OpenBLAS's threads: it starts one a core when it is
 * loaded, and they spin for about a tenth of a second waiting for work that
 * hark never gives them (every OpenBLAS call runs inside hark's own threads,
 * OpenBLAS held to one).  On two cores that spinning took a tenth of the CPU
 * time of transcribing a short file with -t 2.  So
 * when the user set none of the variables OpenBLAS reads for its thread count,
 * the CLI runs with OPENBLAS_NUM_THREADS=1; `hark bench`'s sgemm probe still
 * raises the count to -t with openblas_set_num_threads.  Whatever the variables say,
 * OpenBLAS then runs one thread inside each of hark's: -t N means N busy cores, and
 * results do not depend on N. */
#include "cli.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

/* OpenBLAS cores whose sgemm uses AVX2+FMA or AVX-512. */
static int core_is_vectorised(const char *core)
{
    static const char *const fast[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake",
                                       "SapphireRapids"};
    for (size_t i = 0; i < sizeof fast / sizeof *fast; i++)
        if (strcmp(core, fast[i]) == 0)
            return 1;
    return 0;
}

/* The OpenBLAS core to ask for instead of CURRENT; NULL when CURRENT is fine. */
static const char *better_core(const char *current)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (!current || core_is_vectorised(current))
        return NULL;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "Haswell";
#endif
    (void)current;
    return NULL;
}

static int blas_threads_chosen(void)
{
    return getenv("OPENBLAS_NUM_THREADS") || getenv("GOTO_NUM_THREADS") ||
           getenv("OMP_NUM_THREADS");
}

/* Whether /proc/self/exe is the file this process was started as.  It is not
 * under valgrind (the tool's binary) or when the dynamic loader was run with
 * hark as its argument (the loader): running that again would start the
 * tool or the loader without its own arguments. */
static int self_is_program(void)
{
    const char *started_as = (const char *)getauxval(AT_EXECFN);
    struct stat self, program;
    return started_as && stat("/proc/self/exe", &self) == 0 && stat(started_as, &program) == 0 &&
           self.st_dev == program.st_dev && self.st_ino == program.st_ino;
}

/* OpenBLAS's own thread count as the process started (hark bench reports it). */
static int threads_at_start = 1;

int cli_blas_threads_at_start(void)
{
    return threads_at_start;
}

void cli_blas_reexec_if_slow(char **argv)
{
    int again = 0;
    if (!getenv("OPENBLAS_CORETYPE")) {
        const char *core = better_core(openblas_get_corename());
        again |= core && setenv("OPENBLAS_CORETYPE", core, 1) == 0;
    }
    if (!blas_threads_chosen() && openblas_get_num_threads() > 1)
        again |= setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0;
    if (again && self_is_program())
        execv("/proc/self/exe", argv);
    /* no exec: go on with the kernels there are, OpenBLAS held to one thread inside
     * hark's own (the library leaves that process-wide setting to the program) */
    threads_at_start = openblas_get_num_threads();
    openblas_set_num_threads(1);
}
