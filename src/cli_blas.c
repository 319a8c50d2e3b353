/* OpenBLAS's choice of kernels, checked before the CLI does any work.
 *
 * Debian's OpenBLAS 0.3.21 does not recognise newer Intel cores and falls back
 * to its SSE3 "Prescott" kernels: on such a Xeon hark's encoder ran 5x slower
 * (tiny.en 1941 ms against 387 ms with the AVX-512 kernels).  OpenBLAS reads
 * OPENBLAS_CORETYPE only when it is loaded, so the CLI runs itself again with
 * the variable set.  A core the user named is never overridden. */
#include "cli.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>
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

void cli_blas_reexec_if_slow(char **argv)
{
    if (getenv("OPENBLAS_CORETYPE"))
        return;
    const char *core = better_core(openblas_get_corename());
    if (!core || setenv("OPENBLAS_CORETYPE", core, 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    unsetenv("OPENBLAS_CORETYPE"); /* no exec: go on with the kernels there are */
}
