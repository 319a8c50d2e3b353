/* hark test: golden-transcript regression runs (to be written). */
#include <stdio.h>

#include "cli.h"

int cli_test_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "hark: test: not implemented yet\n");
    return 2;
}
