/* The hark command: the subcommand named first (hark test, hark serve...: the
 * table in commands.c) or transcription, which takes the rest of the line. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int main(int argc, char **argv)
{
    cli_blas_reexec_if_slow(argv);
    atexit(cli_check_stdout);
    for (const cli_command *c = cli_commands; argc > 1 && c->name; c++)
        if (c->run && strcmp(argv[1], c->name) == 0)
            return c->run(argc - 1, argv + 1);
    return cli_transcribe_main(argc, argv);
}
