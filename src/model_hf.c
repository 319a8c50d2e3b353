#include "internal.h"
int hark_load_hf(hark_model *model, const char *dir, hark_error *e)
{
    (void)model;
    return hark_fail(e, HARK_ERR_FORMAT, "%s: not yet", dir);
}
