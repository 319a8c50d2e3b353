/* The option table as people read it: hark --help (the commands, then each
 * group's options, wrapped to 80 columns) and hark --help-markdown, which is
 * docs/cli.md (the same with every spelling, value range and hark serve field
 * in one table, each command's own --help, and whisper.cpp's spellings). */
#include <stdio.h>
#include <string.h>

#include "option_table.h"

/* the options' help within 80 columns; the commands' longer synopses to 90 */
enum { WIDTH = 80, HELP_COLUMN = 28, COMMANDS_WIDTH = 90, SUMMARY_COLUMN = 41 };

static const char *const GROUP_TITLES[CLI_N_GROUPS] = {
    [CLI_G_MODEL] = "model and machine",
    [CLI_G_LANGUAGE] = "language and task",
    [CLI_G_DECODING] = "decoding",
    [CLI_G_PROMPT] = "prompts",
    [CLI_G_WORDS] = "timestamps, words and speakers",
    [CLI_G_CLIP] = "what is transcribed",
    [CLI_G_VAD] = "voice activity detection (whisper.cpp's)",
    [CLI_G_FILES] = "files",
    [CLI_G_PRINTED] = "what is printed",
};

/* A line being built, printed when full. */
typedef struct line {
    char s[COMMANDS_WIDTH * 4];
    int len;
} line;

static void put(line *l, const char *s, size_t n)
{
    if (l->len + n >= sizeof l->s)
        n = sizeof l->s - 1 - (size_t)l->len;
    memcpy(l->s + l->len, s, n);
    l->len += (int)n;
    l->s[l->len] = 0;
}

static void pad_to(line *l, int col)
{
    while (l->len < col)
        put(l, " ", 1);
}

/* left, then text from column col (two spaces past left if it reaches col),
 * its words wrapped to width, further lines starting at col. */
static void print_wrapped(const char *left, int col, int width, const char *text)
{
    line l = {.len = 0};
    put(&l, left, strlen(left));
    if (l.len && l.len + 2 > col)
        put(&l, "  ", 2);
    pad_to(&l, col);
    int fresh = 1; /* nothing of text on this line yet */
    for (const char *w = text + strspn(text, " "); *w; w += strspn(w, " ")) {
        size_t n = strcspn(w, " ");
        if (!fresh && l.len + 1 + (int)n > width) {
            cli_print(l.s), cli_print("\n");
            l.len = 0, fresh = 1;
            pad_to(&l, col);
        }
        if (!fresh)
            put(&l, " ", 1);
        put(&l, w, n);
        fresh = 0, w += n;
    }
    cli_print(l.s), cli_print("\n");
}

/* "-m, --model PATH" and such; with indent, the long names of options without a
 * short one in a column of their own. */
static void spellings(const cli_option *opt, int indent, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s%s%s%s", indent ? "  " : "", opt->short_name ? opt->short_name : "",
             opt->short_name ? ", " : indent ? "    " : "", opt->name, opt->value ? " " : "",
             opt->value ? opt->value : "");
}

/* The commands, "usage: hark ..." and a line each. */
static void print_commands(void)
{
    for (const cli_command *c = cli_commands; c->name; c++) {
        char left[200];
        snprintf(left, sizeof left, "%s hark%s%s %s", c == cli_commands ? "usage:" : "      ",
                 *c->name ? " " : "", c->name, c->args);
        print_wrapped(left, SUMMARY_COLUMN, COMMANDS_WIDTH, c->summary);
    }
}

/* openai's switches, "--fp16, --verbose...": the options that take True or False;
 * with quote, each in backquotes. */
static void switch_names(char *out, size_t n, const char *quote)
{
    size_t len = 0;
    *out = 0;
    for (const cli_option *opt = cli_option_table; opt->name && len < n; opt++)
        if (opt->kind == CLI_SWITCH)
            len += (size_t)snprintf(out + len, n - len, "%s%s%s%s", len ? ", " : "", quote,
                                    opt->name, quote);
}

void cli_print_help(void)
{
    char left[200], switches[300], note[600];
    print_commands();
    for (int g = 0; g < CLI_N_GROUPS; g++) {
        cli_print("\n"), cli_print(GROUP_TITLES[g]), cli_print(":\n");
        for (const cli_option *opt = cli_option_table; opt->name; opt++)
            if (opt->group == (cli_group)g) {
                spellings(opt, 1, left, sizeof left);
                print_wrapped(left, HELP_COLUMN, WIDTH, opt->help);
            }
    }
    switch_names(switches, sizeof switches, "");
    snprintf(note, sizeof note, "openai-whisper's underscored spellings are taken "
             "(--word_timestamps, --output_format), and its switches also take its True or "
             "False after them (--word-timestamps True): %s.", switches);
    cli_print("\n");
    print_wrapped("", 0, WIDTH, note);
}

/* ------------------------------------------------------------ Markdown */

/* s into a table cell: its pipes escaped, and with plain, the characters
 * Markdown would read as markup (help text is not Markdown; doc text is). */
static void print_cell(const char *s, int plain)
{
    char buf[2];
    for (; *s; s++) {
        if (*s == '|' || (plain && (*s == '<' || *s == '*' || *s == '`')))
            cli_print("\\");
        buf[0] = *s, buf[1] = 0;
        cli_print(buf);
    }
}

/* The value cell: "`N` (1 to 64)", "`True` or `False` after it, or nothing". */
static void print_value(const cli_option *opt)
{
    char range[100], cell[200];
    cli_range_text(opt, range, sizeof range);
    if (opt->kind == CLI_SWITCH)
        snprintf(cell, sizeof cell, "nothing, `True` or `False`");
    else if (!opt->value)
        *cell = 0;
    else
        snprintf(cell, sizeof cell, "`%s`%s%s%s", opt->value, *range ? " (" : "", range,
                 *range ? ")" : "");
    print_cell(cell, 0);
}

/* The whisper.cpp cell: the spellings hark takes, and those it answers. */
static void print_whispercpp(const cli_option *opt)
{
    char cell[600] = "";
    size_t len = 0;
    if (opt->flags & CLI_WCPP_SHORT)
        len += (size_t)snprintf(cell + len, sizeof cell - len, "`%s`", opt->short_name);
    if (opt->flags & CLI_WCPP_LONG)
        len += (size_t)snprintf(cell + len, sizeof cell - len, "%s`%s`", len ? ", " : "",
                                opt->name);
    for (const cli_hint *h = opt->hints; h && h->short_name && len < sizeof cell; h++)
        len += (size_t)snprintf(cell + len, sizeof cell - len, "%s`%s`%s%s%s",
                                h == opt->hints ? (len ? " (not " : "(not ") : ", ",
                                h->short_name, h->long_name ? ", `" : "",
                                h->long_name ? h->long_name : "", h->long_name ? "`" : "");
    if (opt->hints && len < sizeof cell)
        snprintf(cell + len, sizeof cell - len, ")");
    print_cell(cell, 0);
}

static void print_option_row(const cli_option *opt)
{
    char names[200];
    snprintf(names, sizeof names, "%s%s%s`%s`", opt->short_name ? "`" : "",
             opt->short_name ? opt->short_name : "", opt->short_name ? "`, " : "", opt->name);
    cli_print("| "), cli_print(names), cli_print(" | ");
    print_value(opt);
    cli_print(" | ");
    if (opt->openai)
        cli_print("`"), cli_print(opt->openai), cli_print("`");
    cli_print(" | ");
    print_whispercpp(opt);
    cli_print(" | ");
    if (opt->form)
        cli_print("`"), cli_print(opt->form), cli_print("`");
    cli_print(" | ");
    print_cell(opt->doc ? opt->doc : opt->help, !opt->doc);
    if (opt->scope == CLI_FILES)
        cli_print(" (transcription of files only)");
    cli_print(" |\n");
}

static void print_markdown_options(void)
{
    char switches[300];
    switch_names(switches, sizeof switches, "`");
    cli_print("\n## Options\n\nTranscription's options; `hark test`, `hark bench`, `hark serve` "
              "and `hark stream` take them too, but for those marked *transcription of files "
              "only*. openai-whisper's underscored spellings are taken as hark's "
              "(`--word_timestamps`, `--output_format`), and its switches (");
    cli_print(switches);
    cli_print(") also take its `True` or `False` after them. A whisper.cpp spelling in "
              "parentheses is not taken: hark's error for it names the option of that row. "
              "*hark serve* is the form field of a request that sets the option.\n");
    for (int g = 0; g < CLI_N_GROUPS; g++) {
        cli_print("\n### "), cli_print(GROUP_TITLES[g]), cli_print("\n\n");
        cli_print("| option | value | openai-whisper | whisper.cpp | hark serve | meaning |\n"
                  "|---|---|---|---|---|---|\n");
        for (const cli_option *opt = cli_option_table; opt->name; opt++)
            if (opt->group == (cli_group)g)
                print_option_row(opt);
    }
}

static void print_markdown_commands(void)
{
    cli_print("\n## Commands\n\n| command | what it does |\n|---|---|\n");
    for (const cli_command *c = cli_commands; c->name; c++) {
        char synopsis[200];
        snprintf(synopsis, sizeof synopsis, "`hark%s%s %s`", *c->name ? " " : "", c->name,
                 c->args);
        cli_print("| "), print_cell(synopsis, 0), cli_print(" | ");
        print_cell(c->summary, 1), cli_print(" |\n");
    }
    for (const cli_command *c = cli_commands; c->name; c++)
        if (c->usage) {
            cli_print("\n### hark "), cli_print(c->name), cli_print("\n\n```\n");
            cli_print(c->usage), cli_print("```\n");
        }
}

static void print_markdown_whispercpp(void)
{
    char answer[300];
    const char *s, *l;
    cli_print("\n## whisper.cpp's options\n\nWhat hark answers when given one of "
              "whisper.cpp's options that it does not take (`hark: unknown option -nf: "
              "whisper.cpp's -nf is hark's --temperature 0`).\n\n"
              "| whisper.cpp | hark |\n|---|---|\n");
    for (int k = 0; cli_whispercpp_spelling(k, &s, &l, answer, sizeof answer) == 0; k++) {
        cli_print("| `"), cli_print(s), cli_print("`");
        if (l)
            cli_print(", `"), cli_print(l), cli_print("`");
        cli_print(" | "), print_cell(answer, 1), cli_print(" |\n");
    }
}

void cli_print_markdown(void)
{
    cli_print("# hark's command line\n\n"
              "<!-- Generated by `hark --help-markdown` (`make docs`) from cli/option_table.c "
              "and each command's --help: edit those, not this file. -->\n\n"
              "hark's commands, each command's own options, the options of transcription "
              "with every spelling hark takes, and whisper.cpp's spellings hark answers.\n");
    print_markdown_commands();
    print_markdown_options();
    print_markdown_whispercpp();
}
