/* safetensors files: an 8-byte little-endian header length, a JSON header
 * naming each tensor's dtype, shape and [begin, end) data offsets, then the
 * data.  Every offset is checked to lie inside the file, to match its shape,
 * and not to overlap another tensor. */
#include "model/safetensors.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_HEADER = 100 * 1000 * 1000 };

static int dtype_of(const char *s, hark_dtype *t, size_t *size)
{
    static const struct { const char *name; int hark; size_t size; } types[] = {
        {"F32", HARK_F32, 4}, {"F16", HARK_F16, 2}, {"BF16", HARK_BF16, 2}, {"F64", -1, 8},
        {"I64", -1, 8}, {"U64", -1, 8}, {"I32", -1, 4}, {"U32", -1, 4}, {"I16", -1, 2},
        {"U16", -1, 2}, {"I8", -1, 1}, {"U8", -1, 1}, {"BOOL", -1, 1}, {"F8_E5M2", -1, 1},
        {"F8_E4M3", -1, 1}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(s, types[i].name) == 0) {
            *t = types[i].hark < 0 ? (hark_dtype)-1 : (hark_dtype)types[i].hark;
            *size = types[i].size;
            return 0;
        }
    return -1;
}

static int parse_entry(st_file *f, const cJSON *it, st_tensor *t, hark_error *e)
{
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(it, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(it, "shape");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(it, "data_offsets");
    size_t esz;
    if (!cJSON_IsString(dt) || !cJSON_IsArray(shape) || !cJSON_IsArray(off) ||
        cJSON_GetArraySize(off) != 2 || cJSON_GetArraySize(shape) > 4)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: malformed header entry for %s", f->path, it->string);
    if (dtype_of(dt->valuestring, &t->raw.type, &esz))
        return hark_fail(e, HARK_ERR_FORMAT, "%s: tensor %s has unknown dtype %s", f->path,
                         it->string, dt->valuestring);
    snprintf(t->dtype_name, sizeof t->dtype_name, "%s", dt->valuestring);
    double count = 1;
    t->raw.ndim = cJSON_GetArraySize(shape);
    for (int i = 0; i < t->raw.ndim; i++) {
        const cJSON *s = cJSON_GetArrayItem(shape, i);
        if (!cJSON_IsNumber(s) || s->valuedouble < 0 || s->valuedouble > 1e12)
            return hark_fail(e, HARK_ERR_FORMAT, "%s: tensor %s has a bad shape", f->path, it->string);
        t->raw.shape[i] = (int64_t)s->valuedouble;
        count *= s->valuedouble;
    }
    double b = cJSON_GetArrayItem(off, 0)->valuedouble, en = cJSON_GetArrayItem(off, 1)->valuedouble;
    if (!(b >= 0 && en >= b && en <= (double)f->data_size))
        return hark_fail(e, HARK_ERR_FORMAT, "%s: tensor %s offsets [%.0f, %.0f) lie outside the %zu data bytes",
                         f->path, it->string, b, en, f->data_size);
    if (en - b != count * (double)esz)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: tensor %s holds %.0f bytes, its shape needs %.0f",
                         f->path, it->string, en - b, count * (double)esz);
    t->begin = (size_t)b;
    t->end = (size_t)en;
    t->raw.data = f->data + t->begin;
    snprintf(t->name, sizeof t->name, "%s", it->string);
    return 0;
}

static int by_begin(const void *a, const void *b)
{
    const st_tensor *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int check_overlap(st_file *f, hark_error *e)
{
    st_tensor *s = malloc(sizeof(st_tensor) * (size_t)(f->n ? f->n : 1));
    if (!s)
        return hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", f->path);
    memcpy(s, f->tensors, sizeof(st_tensor) * (size_t)f->n);
    qsort(s, (size_t)f->n, sizeof *s, by_begin);
    int rc = 0;
    for (int i = 1; i < f->n && !rc; i++)
        if (s[i].begin < s[i - 1].end && s[i].end > s[i].begin)
            rc = hark_fail(e, HARK_ERR_FORMAT, "%s: tensors %s and %s overlap", f->path,
                           s[i - 1].name, s[i].name);
    free(s);
    return rc;
}

static int parse_header(st_file *f, const char *json, size_t len, hark_error *e)
{
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return hark_fail(e, HARK_ERR_FORMAT, "%s: header is not valid JSON", f->path);
    }
    int n = cJSON_GetArraySize(root), rc = 0;
    f->tensors = calloc((size_t)(n ? n : 1), sizeof(st_tensor));
    if (!f->tensors)
        rc = hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", f->path);
    for (const cJSON *it = root->child; it && !rc; it = it->next) {
        if (strcmp(it->string, "__metadata__") == 0)
            continue;
        if (strlen(it->string) >= sizeof f->tensors[0].name)
            rc = hark_fail(e, HARK_ERR_FORMAT, "%s: tensor name too long", f->path);
        else if (!(rc = parse_entry(f, it, &f->tensors[f->n], e)))
            f->n++;
    }
    cJSON_Delete(root);
    return rc ? rc : check_overlap(f, e);
}

int hark_st_open(st_file *f, const char *path, hark_error *e)
{
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", path);
    int rc = hark_map_file(path, &f->map, e);
    if (rc)
        return rc;
    const uint8_t *d = f->map.data;
    if (f->map.size < 8)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: too short for a safetensors header", path);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | d[i];
    if (n > MAX_HEADER || n > f->map.size - 8)
        return hark_fail(e, HARK_ERR_FORMAT,
                         "%s: header length %llu exceeds the file (%zu bytes)", path,
                         (unsigned long long)n, f->map.size);
    f->data = d + 8 + n;
    f->data_size = f->map.size - 8 - n;
    return parse_header(f, (const char *)d + 8, (size_t)n, e);
}

void hark_st_close(st_file *f)
{
    free(f->tensors);
    f->tensors = NULL;
    hark_map_release(&f->map);
}

const st_tensor *hark_st_find(const st_file *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->tensors[i].name, name) == 0)
            return &f->tensors[i];
    return NULL;
}
