/* hark test's reports: the run as JSON (--report) and as JUnit XML (--junit). */
#include <cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "face.h"
#include "base/base.h"

static int write_file_atomically(const char *path, const char *text)
{
    hark_error e = {{0}};
    if (hark_write_file(path, text, strlen(text), &e) == 0)
        return 0;
    fprintf(stderr, "hark: test: %s\n", e.msg);
    return -1;
}

/* JSON and XML need valid UTF-8; a transcript may hold broken characters. */
static void add_string(cJSON *obj, const char *key, const char *value)
{
    if (!value) {
        cJSON_AddNullToObject(obj, key);
        return;
    }
    char *v = hark_utf8_sanitize(value, strlen(value));
    cJSON_AddStringToObject(obj, key, v ? v : "");
    free(v);
}

static void add_edit_counts(cJSON *j, const hark_edits *w, const hark_edits *c)
{
    cJSON_AddNumberToObject(j, "ref_words", (double)w->ref);
    cJSON_AddNumberToObject(j, "errors", (double)hark_edit_count(w));
    cJSON_AddNumberToObject(j, "substitutions", (double)w->sub);
    cJSON_AddNumberToObject(j, "deletions", (double)w->del);
    cJSON_AddNumberToObject(j, "insertions", (double)w->ins);
    cJSON_AddNumberToObject(j, "ref_chars", (double)c->ref);
    cJSON_AddNumberToObject(j, "char_errors", (double)hark_edit_count(c));
}

static cJSON *case_json(const test_case *c)
{
    cJSON *j = cJSON_CreateObject(), *reasons = cJSON_CreateArray();
    add_string(j, "path", c->name);
    add_string(j, "audio", c->audio);
    add_string(j, "reference", c->reference);
    add_string(j, "hypothesis", c->hypothesis);
    add_string(j, "reference_normalized", c->ref_norm);
    add_string(j, "hypothesis_normalized", c->hyp_norm);
    cJSON_AddNumberToObject(j, "wer", c->wer);
    cJSON_AddNumberToObject(j, "cer", c->cer);
    add_edit_counts(j, &c->words, &c->chars);
    cJSON_AddNumberToObject(j, "seconds", c->seconds);
    if (c->baseline_wer >= 0)
        cJSON_AddNumberToObject(j, "baseline_wer", c->baseline_wer);
    else
        cJSON_AddNullToObject(j, "baseline_wer");
    cJSON_AddBoolToObject(j, "pass", c->n_reasons == 0);
    add_string(j, "error", c->error);
    for (int i = 0; i < c->n_reasons; i++)
        cJSON_AddItemToArray(reasons, cJSON_CreateString(c->reasons[i]));
    cJSON_AddItemToObject(j, "reasons", reasons);
    return j;
}

static void add_limit(cJSON *j, const char *key, double v)
{
    if (v >= 0)
        cJSON_AddNumberToObject(j, key, v);
    else
        cJSON_AddNullToObject(j, key);
}

/* The options the run used, so that a report says how it was made. */
static cJSON *options_json(const test_options *o)
{
    const hark_params *p = &o->cli.params;
    char model[PATH_MAX];
    cJSON *j = cJSON_CreateObject(), *temps = cJSON_CreateArray();
    add_string(j, "input", o->input);
    add_string(j, "model", cli_model_path(&o->cli, model, sizeof model) == 0 ? model : NULL);
    add_limit(j, "max_wer", o->max_wer);
    add_limit(j, "max_total_wer", o->max_total_wer);
    add_string(j, "baseline", o->baseline_path);
    add_string(j, "language", p->language);
    add_string(j, "task", p->translate ? "translate" : "transcribe");
    cJSON_AddNumberToObject(j, "threads", p->n_threads);
    cJSON_AddNumberToObject(j, "beam_size", p->search.beam_size);
    cJSON_AddNumberToObject(j, "best_of", p->search.best_of);
    cJSON_AddNumberToObject(j, "patience", p->search.patience);
    cJSON_AddNumberToObject(j, "length_penalty", p->search.length_penalty);
    for (int i = 0; i < p->fallback.n_temperatures; i++)
        cJSON_AddItemToArray(temps, cJSON_CreateNumber(p->fallback.temperatures[i]));
    cJSON_AddItemToObject(j, "temperature", temps);
    cJSON_AddNumberToObject(j, "compression_ratio_threshold", p->fallback.compression_ratio_threshold);
    cJSON_AddNumberToObject(j, "logprob_threshold", p->fallback.logprob_threshold);
    cJSON_AddNumberToObject(j, "no_speech_threshold", p->fallback.no_speech_threshold);
    cJSON_AddBoolToObject(j, "condition_on_previous_text", p->prompt.condition_on_previous_text);
    cJSON_AddBoolToObject(j, "timestamps", p->timestamps);
    /* timed words move the windows (openai's seek after the last word), so the text */
    cJSON_AddBoolToObject(j, "word_timestamps", p->words.enabled);
    add_limit(j, "hallucination_silence_threshold",
              p->words.hallucination_silence_threshold > 0 ? p->words.hallucination_silence_threshold : -1);
    /* merged marks take their neighbour's timing: with timed words, the seek */
    add_string(j, "prepend_punctuations",
               p->words.prepend_punctuations ? p->words.prepend_punctuations : HARK_PREPEND_PUNCTUATIONS);
    add_string(j, "append_punctuations",
               p->words.append_punctuations ? p->words.append_punctuations : HARK_APPEND_PUNCTUATIONS);
    add_string(j, "initial_prompt", p->prompt.initial);
    cJSON_AddBoolToObject(j, "carry_initial_prompt", p->prompt.carry_initial);
    cJSON *sup = cJSON_AddArrayToObject(j, "suppress_tokens");
    for (int i = 0; sup && i < p->suppress.n_tokens; i++)
        cJSON_AddItemToArray(sup, cJSON_CreateNumber(p->suppress.tokens[i]));
    if (sup && p->suppress.n_tokens == 0)
        cJSON_AddItemToArray(sup, cJSON_CreateNumber(-1));
    cJSON_AddNumberToObject(j, "seed", (double)p->search.seed);
    return j;
}

static cJSON *totals_json(const test_run *run)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "files", run->n);
    cJSON_AddNumberToObject(j, "failed", run->failed);
    cJSON_AddNumberToObject(j, "wer", run->wer);
    cJSON_AddNumberToObject(j, "cer", run->cer);
    add_edit_counts(j, &run->words, &run->chars);
    add_string(j, "reason", run->total_reason[0] ? run->total_reason : NULL);
    cJSON_AddBoolToObject(j, "pass", cli_test_run_passed(run));
    return j;
}

int cli_test_write_report(const test_options *o, const test_run *run)
{
    cJSON *root = cJSON_CreateObject(), *files = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "hark_version", HARK_VERSION);
    cJSON_AddItemToObject(root, "options", options_json(o));
    for (int i = 0; i < run->n; i++)
        cJSON_AddItemToArray(files, case_json(&run->cases[i]));
    cJSON_AddItemToObject(root, "files", files);
    cJSON_AddItemToObject(root, "total", totals_json(run));
    cJSON_AddBoolToObject(root, "pass", cli_test_run_passed(run));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    int rc = text ? write_file_atomically(o->report_path, text) : -1;
    free(text);
    return rc;
}

/* Text for an XML attribute or element: the five entities escaped, and the
 * characters XML 1.0 cannot hold at all (controls, broken UTF-8) as U+FFFD. */
static void put_xml(FILE *f, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int valid;
        size_t len = hark_utf8_next(s + i, n - i, &cp, &valid);
        if (cp == '&' || cp == '<' || cp == '>' || cp == '"' || cp == '\'')
            fputs(cp == '&' ? "&amp;" : cp == '<' ? "&lt;" : cp == '>' ? "&gt;"
                  : cp == '"' ? "&quot;" : "&apos;", f);
        else if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xFFFE ||
                 cp == 0xFFFF || !valid)
            fputs("\xEF\xBF\xBD", f);
        else
            fwrite(s + i, 1, len, f);
        i += len;
    }
}

static void put_junit_case(FILE *f, const test_case *c)
{
    fputs("  <testcase classname=\"hark.test\" name=\"", f);
    put_xml(f, c->name);
    fprintf(f, "\" time=\"%.3f\"", c->seconds);
    if (!c->n_reasons) {
        fputs("/>\n", f);
        return;
    }
    fputs(">\n    <failure message=\"", f);
    for (int i = 0; i < c->n_reasons; i++) {
        fputs(i ? "; " : "", f);
        put_xml(f, c->reasons[i]);
    }
    fputs("\">hypothesis: ", f);
    put_xml(f, c->hyp_norm);
    fputs("\nreference: ", f);
    put_xml(f, c->ref_norm);
    fputs("</failure>\n  </testcase>\n", f);
}

/* One testcase per file, and a TOTAL one when --max-total-wer asks for it. */
static void put_junit(FILE *f, const test_options *o, const test_run *run)
{
    int total_case = o->max_total_wer >= 0;
    double seconds = 0;
    for (int i = 0; i < run->n; i++)
        seconds += run->cases[i].seconds;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"hark test ", f);
    put_xml(f, o->input);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" time=\"%.3f\">\n",
            run->n + total_case, run->failed + (run->total_reason[0] != 0), seconds);
    for (int i = 0; i < run->n; i++)
        put_junit_case(f, &run->cases[i]);
    if (total_case && run->total_reason[0]) {
        fputs("  <testcase classname=\"hark.test\" name=\"TOTAL\">\n    <failure message=\"", f);
        put_xml(f, run->total_reason);
        fputs("\"/>\n  </testcase>\n", f);
    } else if (total_case) {
        fputs("  <testcase classname=\"hark.test\" name=\"TOTAL\"/>\n", f);
    }
    fputs("</testsuite>\n", f);
}

int cli_test_write_junit(const test_options *o, const test_run *run)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) {
        fprintf(stderr, "hark: test: out of memory\n");
        return -1;
    }
    put_junit(f, o, run);
    fclose(f);
    int rc = write_file_atomically(o->junit_path, text);
    free(text);
    return rc;
}

