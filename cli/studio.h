/* hark serve's page (studio.c). */
#ifndef HARK_CLI_STUDIO_H
#define HARK_CLI_STUDIO_H

#include <stddef.h>

/* The page, malloc'd, its length in *len; NULL when out of memory. */
char *studio_page(size_t *len);

#endif
