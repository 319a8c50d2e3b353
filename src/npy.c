/* NumPy .npy files of float32 matrices: hark mel's output, and the reference
 * fixtures the tests compare against. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hark_write_npy(const char *path, const float *data, int rows, int cols, hark_error *e)
{
    char header[128];
    int n = snprintf(header, sizeof header,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols);
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return hark_fail(e, HARK_ERR_IO, "%s: cannot create", tmp);
    unsigned short hlen = (unsigned short)(n + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(hlen & 0xff, f);
    fputc(hlen >> 8, f);
    fwrite(header, 1, (size_t)n, f);
    for (int i = 0; i < pad; i++)
        fputc(' ', f);
    fputc('\n', f);
    fwrite(data, sizeof(float), (size_t)rows * cols, f);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        remove(tmp);
        return hark_fail(e, HARK_ERR_IO, "%s: write failed", path);
    }
    return 0;
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
