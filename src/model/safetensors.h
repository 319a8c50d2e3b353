/* safetensors reading, for the Hugging Face loader. */
#ifndef HARK_SAFETENSORS_H
#define HARK_SAFETENSORS_H

#include "model/model.h"

typedef struct st_tensor {
    char name[160];
    char dtype_name[12];
    hark_raw_tensor raw;  /* raw.type is (hark_dtype)-1 for types hark cannot compute with */
    size_t begin, end;
} st_tensor;

typedef struct st_file {
    char path[1100];
    hark_map map;
    const uint8_t *data;
    size_t data_size;
    st_tensor *tensors;
    int n;
} st_file;

int hark_st_open(st_file *f, const char *path, hark_error *e);
void hark_st_close(st_file *f);
const st_tensor *hark_st_find(const st_file *f, const char *name);

#endif
