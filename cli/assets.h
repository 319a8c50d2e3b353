/* Files built into the program (scripts/embed.sh, a Makefile rule): the pages that
 * hark serve answers and hark explain writes, kept in the tree as the files they are
 * (cli/studio/, cli/explain_draw.js, cli/explain.css).  Each NUL-terminated. */
#ifndef HARK_CLI_ASSETS_H
#define HARK_CLI_ASSETS_H

extern const char hark_asset_explain_draw_js[], hark_asset_explain_css[];
extern const char hark_asset_studio_html[], hark_asset_studio_css[], hark_asset_studio_js[];

#endif
