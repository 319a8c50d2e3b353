/* hark vad FILE... [VAD options]: the speech spans --vad transcribes, a line each,
 * start and end in seconds tab-separated (with several files, the file first), as
 * whisper.cpp's vad-speech-segments example finds them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vad.h"

/* The spans of one file into *spans (malloc'd); returns their count, or -1 after
 * printing the error. */
static int file_spans(const hark_vad *vad, const hark_params *p, const char *path,
                      hark_span **spans)
{
    char err[600];
    float *s = NULL, *probs = NULL;
    size_t n;
    if (hark_read_audio(path, &s, &n, err, sizeof err)) {
        fprintf(stderr, "hark: %s\n", err);
        return -1;
    }
    size_t chunks = hark_vad_n_chunks(n);
    probs = malloc(sizeof(float) * (chunks ? chunks : 1));
    *spans = malloc(sizeof(hark_span) * (2 * chunks + 2));
    int k = probs && *spans && chunks < (size_t)(1 << 30) && !hark_vad_probs(vad, s, n, probs)
                ? hark_vad_spans(probs, (int)chunks, p, *spans)
                : -1;
    if (k < 0)
        fprintf(stderr, "hark: %s: out of memory for voice activity detection\n", path);
    free(s);
    free(probs);
    return k;
}

static void print_spans(const char *path, const hark_span *spans, int k)
{
    char line[160];
    for (int i = 0; i < k; i++) {
        snprintf(line, sizeof line, "%.100s%s%.2f\t%.2f\n", path ? path : "", path ? "\t" : "",
                 spans[i].start / 100.0, spans[i].end / 100.0);
        cli_print(line);
    }
}

/* Options: whisper.cpp's VAD settings alone; the inputs gathered in inputs. */
static int parse(cli_options *o, int argc, char **argv, char **inputs, int *n)
{
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-' || !strcmp(argv[i], "-")) {
            inputs[(*n)++] = argv[i];
            continue;
        }
        int rc = i + 1 < argc ? cli_parse_vad_option(o, argv[i], argv[i + 1]) : 1;
        if (rc == 1) {
            fprintf(stderr, "hark: vad: unknown option %s (usage: hark vad FILE... "
                            "[--vad-model FILE] [--vad-threshold P]...: see hark --help)\n", argv[i]);
            return 2;
        }
        if (rc < 0) {
            fprintf(stderr, "hark: bad value for %s: %s (see hark --help)\n", argv[i], argv[i + 1]);
            return 2;
        }
        i++;
    }
    if (*n == 0) {
        fprintf(stderr, "hark: vad: no audio files (usage: hark vad FILE... [VAD options])\n");
        return 2;
    }
    return 0;
}

int cli_vad_main(int argc, char **argv)
{
    cli_options o;
    cli_default_options(&o);
    o.vad = 1;
    char **inputs = calloc((size_t)argc, sizeof(char *));
    int n = 0, rc = inputs ? parse(&o, argc, argv, inputs, &n) : 1;
    hark_vad *vad = NULL;
    if (!rc && cli_load_vad(&o, &vad))
        rc = 1;
    for (int i = 0; i < n && vad; i++) {
        hark_span *spans = NULL;
        int k = file_spans(vad, &o.params, inputs[i], &spans);
        if (k < 0)
            rc = 1;
        else
            print_spans(n > 1 ? inputs[i] : NULL, spans, k);
        free(spans);
    }
    hark_vad_free(vad);
    free(inputs);
    cli_flush_stdout();
    return rc;
}
