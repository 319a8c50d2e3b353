/* The file list of a batch: the inputs named on the command line, directories
 * walked, sorted and deduplicated the same way on every machine (inputs.c), and
 * the slice of it a shard keeps (shard.c). */
#ifndef HARK_CLI_INPUTS_H
#define HARK_CLI_INPUTS_H

#include <stddef.h>

enum { PENDING = 0, DONE = 1, FAILED = 2 };

typedef struct cli_file {
    char *path;        /* the audio file, as named or as found                  */
    char *name;        /* output name under -o, without the format's extension  */
    char *clash;       /* with -o: an earlier input with the same output name   */
    char *text;        /* without -o: its transcript, waiting for its turn      */
    char *error;       /* failed: why, for the ledger                           */
    int state;         /* PENDING, DONE or FAILED                               */
    double seconds;    /* --balance duration: its length, or its estimate       */
} cli_file;

typedef struct cli_files {
    cli_file *v;
    size_t n, cap;
    int failed;        /* inputs that could not be walked */
    int any_dir;       /* a directory was named: this is a batch */
} cli_files;

/* Files as named, directories walked (recursively with -r), sorted bytewise by
 * path with each path once; what cannot be walked is reported and counted. */
void cli_collect_inputs(cli_files *l, char **inputs, int n, int recursive);
/* Inputs that would write the same outputs: all but the first in path order get
 * clash, decided on the whole list so that every shard agrees. */
void cli_mark_clashes(cli_files *l);
void cli_file_free(cli_file *f);
void cli_files_free(cli_files *l);

/* --shard K/N: keeps slice K (1-based) of N; by_duration: --balance duration. */
void cli_keep_shard(cli_files *l, int k, int n, int by_duration);
typedef struct cli_shard_total {
    int files;
    double seconds;    /* from the headers, sizes where they cannot tell */
} cli_shard_total;
/* Which shard (1-based) of n each file of the whole list belongs to, into shard[]
 * (l->n of them), and when totals (n of them) is not NULL, each shard's files and
 * seconds.  0, or -1 out of memory. */
int cli_assign_shards(cli_files *l, int n, int by_duration, int *shard, cli_shard_total *totals);

#endif
