/* hark's option table: each option of transcription once, with every spelling it
 * answers to (hark's, openai-whisper's, whisper.cpp's), what it takes, what it
 * sets, its hark serve form field and its help.  The parser (options.c), --help
 * and docs/cli.md (option_doc.c), whisper.cpp's hints (hints.c) and hark serve's
 * form (serve_api.c) all read it (option_table.c); the values with a meaning of
 * their own are read in option_values.c. */
#ifndef HARK_CLI_OPTION_TABLE_H
#define HARK_CLI_OPTION_TABLE_H

#include <stddef.h>

#include "cli.h"

/* What follows an option on the command line. */
typedef enum cli_kind {
    CLI_FLAG,   /* nothing: its int field becomes 1 (0 with CLI_CLEARS)               */
    CLI_SWITCH, /* nothing, or openai's True or False after it: its int field         */
    CLI_INT,    /* a whole number from lo to hi: an int field                         */
    CLI_FLOAT,  /* a number from lo to hi (infinite: no bound): a float field         */
    CLI_TEXT,   /* a word or text: a const char * field, or its reader checks it      */
    CLI_LIST,   /* comma-separated values from lo to hi: its reader takes them        */
} cli_kind;

/* An option's properties (cli_option.flags). */
enum {
    CLI_CLEARS = 1 << 0,     /* a flag that sets its field to 0 (--no-timestamps)      */
    CLI_ABOVE_LO = 1 << 1,   /* a number's lo is not in its range (X > 0)              */
    CLI_BELOW_HI = 1 << 2,   /* nor its hi                                             */
    CLI_WORDS = 1 << 3,      /* needs the words' timing: implies --word-timestamps     */
    CLI_TURNS_ON_VAD = 1 << 4, /* implies --vad                                       */
    CLI_NO_EFFECT = 1 << 5,  /* taken as the other CLIs write it, changes nothing      */
    CLI_IN_VAD = 1 << 6,     /* hark vad takes it too                                  */
    CLI_WCPP_SHORT = 1 << 7, /* whisper.cpp spells it as hark's short name too         */
    CLI_WCPP_LONG = 1 << 8,  /* and as hark's long name                                */
};

/* Which commands take an option. */
typedef enum cli_scope {
    CLI_SHARED, /* every command that transcribes (hark, test, bench, serve, stream) */
    CLI_FILES,  /* transcription of files alone (hark [options] FILE|DIR...)         */
    CLI_OWN,    /* read by the command itself before the table (--help, --version)  */
} cli_scope;

/* The sections of --help and docs/cli.md, in order (their titles: option_doc.c). */
typedef enum cli_group {
    CLI_G_MODEL, CLI_G_LANGUAGE, CLI_G_DECODING, CLI_G_PROMPT, CLI_G_WORDS, CLI_G_CLIP,
    CLI_G_VAD, CLI_G_FILES, CLI_G_PRINTED, CLI_N_GROUPS
} cli_group;

/* A whisper.cpp option hark does not take under that name, answered with this
 * option: "whisper.cpp's -bs is hark's --beam-size". */
typedef struct cli_hint {
    const char *short_name, *long_name; /* whisper.cpp's spellings (long may be NULL) */
    const char *use;                    /* hark's way, starting with this option's name */
} cli_hint;

typedef struct cli_option cli_option;

/* A value's reader, for the options whose value means more than a number: 0 when
 * taken, -1 for a bad value (the caller says so), -2 after printing why. */
typedef int (*cli_take)(cli_options *o, const cli_option *opt, const char *v);

struct cli_option {
    const char *name;       /* hark's long spelling, "--beam-size"                     */
    const char *short_name; /* its short one, "-t" (whisper.cpp's -ml among them), or NULL */
    const char *value;      /* what follows, in --help ("N"); NULL for flags, switches */
    cli_kind kind;
    double lo, hi;          /* a number's range, a list's values' range                */
    size_t field;           /* offsetof(cli_options, ...) of what it sets              */
    cli_take take;          /* the value's reader, when it is not just stored          */
    unsigned flags;         /* CLI_* above                                             */
    cli_scope scope;
    cli_group group;
    const char *openai;     /* openai-whisper's spelling ("--beam_size"), or NULL      */
    const cli_hint *hints;  /* whisper.cpp's other spellings of it, {NULL}-ended, or NULL */
    const char *form;       /* hark serve's form field that sets it, or NULL           */
    const char *error;      /* a bad value's message, when not "bad value for X: V"    */
    const char *help;       /* its --help text (wrapped there)                         */
    const char *doc;        /* docs/cli.md's fuller text (Markdown); NULL: the help    */
};

/* The table, in --help's order within each group; NULL-named at its end. */
extern const cli_option cli_option_table[];

/* Parses argv[*i] if it is an option that scope's commands take, with its value:
 * 1 when taken (*i past its value), 0 when it is none (or its value is missing),
 * -1 after printing why its value is bad.  cli_parse_common is CLI_SHARED's. */
int cli_parse_option(cli_options *o, int argc, char **argv, int *i, cli_scope scope);
/* The option spelt name (hark's long or short spelling) that scope's commands
 * take (CLI_OWN: any option), or NULL. */
const cli_option *cli_find_option(const char *name, cli_scope scope);
/* Whether arg is one of the option's spellings ("-h" is "--help"). */
int cli_is_option(const char *arg, const char *name);
/* Where an option's field is in o (the option must have one). */
void *cli_option_field(cli_options *o, const cli_option *opt);
/* The int field of an option that sets one of hark_params', in p; NULL if not. */
int *cli_param_int(hark_params *p, const cli_option *opt);
/* A number's range as --help and docs/cli.md say it: "1 to 64", "> 0"; "" if none. */
void cli_range_text(const cli_option *opt, char *out, size_t n);

/* The values' readers (option_values.c), named in the table. */
int cli_take_language(cli_options *o, const cli_option *opt, const char *v);
int cli_take_task(cli_options *o, const cli_option *opt, const char *v);
int cli_take_precision(cli_options *o, const cli_option *opt, const char *v);
int cli_take_device(cli_options *o, const cli_option *opt, const char *v);
int cli_take_temperature(cli_options *o, const cli_option *opt, const char *v);
int cli_take_temperature_increment(cli_options *o, const cli_option *opt, const char *v);
int cli_take_suppress_tokens(cli_options *o, const cli_option *opt, const char *v);
int cli_take_suppress_nst(cli_options *o, const cli_option *opt, const char *v);
int cli_take_suppress_regex(cli_options *o, const cli_option *opt, const char *v);
int cli_take_seed(cli_options *o, const cli_option *opt, const char *v);
int cli_take_clip_timestamps(cli_options *o, const cli_option *opt, const char *v);
int cli_take_clip_ms(cli_options *o, const cli_option *opt, const char *v);
int cli_take_format(cli_options *o, const cli_option *opt, const char *v);
int cli_take_shard(cli_options *o, const cli_option *opt, const char *v);
int cli_take_balance(cli_options *o, const cli_option *opt, const char *v);
int cli_take_max_duration(cli_options *o, const cli_option *opt, const char *v);
/* A number's value: the whole of s within opt's range, into *x; 0, or -1. */
int cli_float_arg(const char *s, const cli_option *opt, float *x);

/* hark --help: the commands, then the options by group (option_doc.c). */
void cli_print_help(void);
/* docs/cli.md: the commands, each one's own options, the option table and
 * whisper.cpp's spellings, in Markdown. */
void cli_print_markdown(void);

#endif
