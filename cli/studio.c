/* hark serve's page (GET /): cli/studio/studio.html with its styles and scripts put in
 * where it marks them, one self-contained page (no other request for a file, nothing
 * from the network).  explain_draw.js and explain.css are hark explain's own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "studio.h"

/* html up to mark, then the parts; returns what follows mark (NULL: no mark). */
static const char *upto(FILE *f, const char *html, const char *mark, const char *a,
                        const char *b)
{
    const char *at = strstr(html, mark);
    if (!at)
        return NULL;
    fwrite(html, 1, (size_t)(at - html), f);
    fputs(a, f);
    fputs(b, f);
    return at + strlen(mark);
}

char *studio_page(size_t *len)
{
    char *s = NULL;
    FILE *f = open_memstream(&s, len);
    if (!f)
        return NULL;
    const char *rest = upto(f, hark_asset_studio_html, "/*STYLE*/", hark_asset_explain_css,
                            hark_asset_studio_css);
    rest = rest ? upto(f, rest, "/*SCRIPT*/", hark_asset_explain_draw_js, hark_asset_studio_js)
                : NULL;
    if (rest)
        fputs(rest, f);
    if (fclose(f) != 0 || !rest) {
        free(s);
        return NULL;
    }
    return s;
}
