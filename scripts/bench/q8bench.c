/* hark_matvec_q8 against an older revision's (old_matvec_q8: that revision's
 * q8dot.c with its symbols renamed, see scripts/bench/q8bench), interleaved old, new,
 * old, new... in each of `rounds` rounds, best call per shape: a busy host
 * slows both alike.  Also the largest difference from the portable path, and
 * whether the two revisions' results are the same to the bit. */
#include "base/base.h"
#include "kernels/kernels.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
void old_matvec_q8(float *y, const int8_t *xq, const float *d8, const float *s8, int m,
                   const void *w, hark_dtype t, int rows, int cols, int r0, int r1);
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    struct { int rows, cols, m, reps, copies; } sh[] = {
        {2048, 512, 1, 200, 1}, {1536, 384, 1, 200, 1}, {51864, 512, 1, 6, 3},
        {2048, 512, 5, 100, 1}, {2048, 512, 2, 100, 1}};
    hark_dtype types[] = {HARK_Q8_0, HARK_Q5_0, HARK_Q4_1};
    for (size_t s = 0; s < sizeof sh / sizeof sh[0]; s++)
      for (int ti = 0; ti < 3; ti++) {
        int rows = sh[s].rows, cols = sh[s].cols, m = sh[s].m;
        hark_dtype t = types[ti];
        if (ti && (s == 2 || s == 4)) continue;
        size_t rb = hark_row_bytes(t, cols);
        uint8_t *w[3];
        float *row = malloc(4 * cols), *x = malloc(4 * cols * m), *d8 = malloc(cols * m), *s8 = malloc(cols * m);
        float *y = malloc(4 * rows * m), *yo = malloc(4 * rows * m), *yp = malloc(4 * rows * m);
        int8_t *xq = malloc(cols * m);
        srand(1);
        for (int k = 0; k < sh[s].copies; k++) {
            w[k] = aligned_alloc(4096, (rb * rows + 4095) / 4096 * 4096);
            for (int r = 0; r < rows; r++) {
                for (int c = 0; c < cols; c++) row[c] = rand() / (float)RAND_MAX - 0.5f;
                hark_quantize_row(w[k] + r * rb, row, t, cols);
            }
        }
        for (int i = 0; i < cols * m; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
        hark_q8_quantize(xq, d8, s8, x, m, cols);
        double best[2] = {1e9, 1e9};
        int call = 0;
        for (int rd = 0; rd < rounds; rd++)
            for (int v = 0; v < 2; v++)
                for (int i = 0; i < sh[s].reps; i++) {
                    const uint8_t *ww = w[call++ % sh[s].copies];
                    double t0 = now();
                    if (v) hark_matvec_q8(y, xq, d8, s8, m, ww, t, rows, cols, 0, rows);
                    else old_matvec_q8(yo, xq, d8, s8, m, ww, t, rows, cols, 0, rows);
                    double dt = now() - t0;
                    if (dt < best[v]) best[v] = dt;
                }
        hark_matvec_q8(y, xq, d8, s8, m, w[0], t, rows, cols, 0, rows);
        old_matvec_q8(yo, xq, d8, s8, m, w[0], t, rows, cols, 0, rows);
        hark_kernels_force_portable(1);
        hark_matvec_q8(yp, xq, d8, s8, m, w[0], t, rows, cols, 0, rows);
        hark_kernels_force_portable(0);
        double dn = 0, dold = 0, mag = 1e-9;
        for (int i = 0; i < rows * m; i++) {
            mag = fmax(mag, fabs(yp[i]));
            dn = fmax(dn, fabs(y[i] - yp[i])); dold = fmax(dold, fabs(yo[i] - yp[i]));
        }
        printf("%-5s %5dx%-4d m=%d  old %.4f ms  new %.4f ms  (%.2fx)  %5.1f -> %5.1f GB/s  "
               "max|d| vs portable: old %.2g new %.2g (rel %.2g); new vs old: %s\n",
               hark_dtype_name(t), rows, cols, m, best[0], best[1], best[0] / best[1],
               rb * rows / best[0] / 1e6, rb * rows / best[1] / 1e6, dold, dn, dn / mag,
               memcmp(y, yo, sizeof *y * rows * m) ? "differ" : "identical");
        fflush(stdout);
        for (int k = 0; k < sh[s].copies; k++) free(w[k]);
        free(row), free(x), free(d8), free(s8), free(y), free(yo), free(yp), free(xq);
      }
    return 0;
}
