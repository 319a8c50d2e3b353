/* hark explain's page, DIR/index.html: one self-contained file, the trace inside
 * it as JSON and a script that draws it on canvases (no network, no other files):
 * explain_draw.js, which hark serve's studio page draws a window with too.
 * When the script has drawn everything, the body gets data-drawn="ok"; an error
 * shows in a red box (id js-error): the test reads both from the rendered page. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "explain.h"

static const char HEAD[] =
    "<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>hark explain</title>\n"
    "<style>\n"
    "body{font:14px/1.4 sans-serif;margin:16px;color:#222;background:#fff}\n"
    "h1{font-size:20px}\n"
    "#js-error{background:#c00;color:#fff;padding:8px}\n";

/* After the styles: the error box's hook, the heading, the drawing's place. */
static const char BODY[] =
    "</style></head>\n<body>\n"
    "<script>window.onerror=function(m){var e=document.createElement('div');e.id='js-error';"
    "e.textContent='error: '+m;document.body.prepend(e)};</script>\n"
    "<h1>hark explain</h1><div id=explain></div>\n";

static const char DRAW[] =
    "drawExplain(TRACE,document.getElementById('explain'));document.body.dataset.drawn='ok';\n"
    "</script></body></html>\n";

char *explain_page(const char *trace_json)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    if (!f)
        return NULL;
    /* "</" cannot end the script early: the JSON escapes no slash, so break it */
    fputs(HEAD, f);
    fputs(hark_asset_explain_css, f);
    fputs(BODY, f);
    fputs("<script>const TRACE=", f);
    for (const char *p = trace_json; *p; p++) {
        if (p[0] == '<' && p[1] == '/')
            fputs("<\\", f);
        else
            fputc(*p, f);
    }
    fputs(";\n", f);
    fputs(hark_asset_explain_draw_js, f);
    fputs(DRAW, f);
    if (fclose(f) != 0) {
        free(s);
        return NULL;
    }
    return s;
}
