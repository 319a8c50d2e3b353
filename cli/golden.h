/* hark test's data: the cases, the options and the run, shared by the runner
 * (golden.c) and its reports (golden_report.c). */
#ifndef HARK_CLI_TEST_H
#define HARK_CLI_TEST_H

#include <cJSON.h>

#include "cli.h"
#include "wer.h"

#define MAX_REASONS 3

typedef struct test_case {
    char *name;           /* as the manifest or directory names it: the report's key */
    char *audio;          /* the path opened                                         */
    char *reference;      /* the expected transcript, as written                     */
    int line;             /* manifest line (0 for a directory)                       */
    char *hypothesis;     /* hark's transcript; NULL when it could not be made       */
    char *error;          /* why it could not                                        */
    char *ref_norm, *hyp_norm;
    hark_edits words, chars;
    double wer, cer, seconds;
    double baseline_wer;  /* < 0: not in the baseline                                */
    char reasons[MAX_REASONS][600];
    int n_reasons;
} test_case;

typedef struct test_options {
    cli_options cli;
    const char *input;
    double max_wer, max_total_wer; /* percent; < 0: no limit */
    const char *baseline_path, *report_path, *junit_path;
    cJSON *baseline;
} test_options;

typedef struct test_run {
    test_case *cases;
    int n, cap;
    hark_edits words, chars; /* summed over the files */
    double wer, cer;
    int failed;              /* files that failed */
    char total_reason[200];  /* why the total failed, "" when it did not */
} test_run;

/* Whether every file and the total passed (inline: the runner and its reports
 * both ask, and neither is below the other). */
static inline int cli_test_run_passed(const test_run *run)
{
    return run->failed == 0 && !run->total_reason[0];
}
/* --report FILE.json and --junit FILE.xml, each written to a temporary name and
 * renamed; 0, or -1 after printing why. */
int cli_test_write_report(const test_options *o, const test_run *run);
int cli_test_write_junit(const test_options *o, const test_run *run);

#endif
