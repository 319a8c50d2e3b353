/* A batch's ledger: with -o, each process appends one JSON line per file to its
 * own file under OUT/.hark-ledger/, whole lines synced, so that a killed process
 * leaves a valid ledger; resuming reads them all to tell files done with today's
 * model and options from files done otherwise, and hark summary reports on them. */
#ifndef HARK_CLI_LEDGER_H
#define HARK_CLI_LEDGER_H

#include <stddef.h>

#include "cli.h"

#define CLI_LEDGER_DIR ".hark-ledger"

/* One line: a file's outcome in one process. */
typedef struct cli_record {
    char *path, *name;      /* the input, and its output name under OUT           */
    char *status;           /* "done", "failed", "skipped"; "end": a run's last line */
    char *error;            /* failed: the one-line message; else NULL             */
    char *host, *shard;     /* where, and "K/N" ("" without --shard)               */
    char *balance;          /* with --shard: "duration" or "position"             */
    char *model, *options;  /* hark_model_identity, the options' digest (hex)      */
    char *ledger;           /* the ledger file it came from (its name)             */
    double size, mtime;     /* the input's bytes and modification time (s)         */
    double audio, wall;     /* seconds of audio; seconds it took                   */
    double t, run;          /* when written, when its process started (epoch s)    */
    long pid;
} cli_record;

typedef struct cli_records {
    cli_record *v;
    size_t n, cap;
    int torn;               /* lines that did not parse: a write cut short        */
} cli_records;

/* Every ledger under out_dir, sorted by name then time ("end" lines have no name,
 * and sort first).  No ledger is no record; 0, or -1 with err ("OUT/...: why"). */
int cli_ledger_read(const char *out_dir, cli_records *r, char *err, size_t errlen);
void cli_records_free(cli_records *r);
/* The latest record of name whose status is done (any 1: or skipped; 2: or
 * failed too), NULL when none. */
const cli_record *cli_records_last(const cli_records *r, const char *name, int any);

typedef struct cli_ledger cli_ledger;
/* Opens this process's ledger OUT/.hark-ledger/HOST-SHARD-PID.jsonl for appending,
 * creating the folders; shard "K/N" or "", and how shards are made ("duration",
 * "position").  NULL with err when it cannot. */
cli_ledger *cli_ledger_open(const char *out_dir, const char *shard, const char *balance,
                            char *err, size_t errlen);
/* Appends r's line (its host, shard, pid, run and t are the ledger's), in one
 * write, synced; thread-safe.  0, or -1 with err. */
int cli_ledger_append(cli_ledger *lg, const cli_record *r, char *err, size_t errlen);
void cli_ledger_close(cli_ledger *lg);

/* The options that change a transcript, hashed: decoding, prompts, word timing,
 * layout, VAD.  Not the thread count, the jobs or the formats: outputs are the
 * same bytes for every one. */
unsigned long long cli_options_digest(const cli_options *o);
/* Creates every directory above path (path's last component is not one). */
int cli_make_parents(char *path, char *err, size_t errlen);

#endif
