/* The hark command: the subcommand named first (hark test, hark serve...) or
 * transcription, which takes the rest of the command line. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* hark's subcommands, by the word that names them */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} COMMANDS[] = {
    {"quantize", cli_quantize_main}, {"mel", cli_mel_main},       {"test", cli_test_main},
    {"bench", cli_bench_main},       {"vad", cli_vad_main},       {"stream", cli_stream_main},
    {"serve", cli_serve_main},
};

int main(int argc, char **argv)
{
    cli_blas_reexec_if_slow(argv);
    atexit(cli_check_stdout);
    for (size_t i = 0; argc > 1 && i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (strcmp(argv[1], COMMANDS[i].name) == 0)
            return COMMANDS[i].run(argc - 1, argv + 1);
    return cli_transcribe_main(argc, argv);
}
