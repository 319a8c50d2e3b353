/* NumPy .npy files of float32 matrices (npy.c): hark mel's output, and the
 * reference fixtures the tests compare against. */
#ifndef HARK_NPY_H
#define HARK_NPY_H

#include "base/base.h"

int hark_write_npy(const char *path, const float *data, int rows, int cols, hark_error *e);
/* Accepts 1-D and 2-D little-endian float32 C-order arrays (*data malloc'd). */
int hark_read_npy(const char *path, float **data, int *rows, int *cols, hark_error *e);

#endif
