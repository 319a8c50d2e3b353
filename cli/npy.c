/* NumPy .npy files of float32 matrices: hark mel's output, and the reference
 * fixtures the tests compare against. */
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hark_write_npy(const char *path, const float *data, int rows, int cols, hark_error *e)
{
    char head[128];
    int n = snprintf(head + 10, sizeof head - 10,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols);
    size_t pad = (64 - (10 + (size_t)n + 1) % 64) % 64; /* the data 64-byte aligned */
    unsigned short hlen = (unsigned short)(n + pad + 1);
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (char)(hlen & 0xff), head[9] = (char)(hlen >> 8);
    memset(head + 10 + n, ' ', pad);
    head[10 + n + pad] = '\n';
    const void *parts[] = {head, data};
    size_t sizes[] = {10 + (size_t)hlen, (size_t)rows * (size_t)cols * sizeof(float)};
    return hark_write_parts(path, parts, sizes, 2, e);
}

/* Accepts 1-D and 2-D little-endian float32 C-order arrays. */
int hark_read_npy(const char *path, float **data, int *rows, int *cols, hark_error *e)
{
    char *buf;
    size_t size;
    int rc = hark_read_file(path, &buf, &size, e);
    if (rc)
        return rc;
    rc = hark_fail(e, HARK_ERR_FORMAT, "%s: not a float32 .npy file", path);
    if (size < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
        goto out;
    size_t hlen = (unsigned char)buf[8] | ((size_t)(unsigned char)buf[9] << 8);
    if (10 + hlen > size || !strstr(buf + 10, "'<f4'") || strstr(buf + 10, "True"))
        goto out;
    char *shape = strstr(buf + 10, "'shape': (");
    if (!shape)
        goto out;
    long r = 0, c = 1;
    if (sscanf(shape + 10, "%ld, %ld", &r, &c) < 1 || r <= 0 || c <= 0)
        goto out;
    if ((size - 10 - hlen) / 4 != (size_t)(r * c))
        goto out;
    *data = malloc(sizeof(float) * (size_t)(r * c));
    if (!*data) {
        rc = hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", path);
        goto out;
    }
    memcpy(*data, buf + 10 + hlen, sizeof(float) * (size_t)(r * c));
    *rows = (int)r;
    *cols = (int)c;
    rc = 0;
out:
    free(buf);
    return rc;
}
