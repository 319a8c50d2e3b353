/* hark vad FILE... [VAD options]: the speech spans --vad transcribes, a line each,
 * start and end in seconds tab-separated (with several files, the file first), as
 * whisper.cpp's vad-speech-segments example finds them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* One file's spans, a line each; returns 0, or 1 after printing the error. */
static int print_spans(const hark_vad *vad, const hark_params *p, const char *path,
                       const char *label)
{
    char err[600], line[64];
    float *s = NULL;
    size_t n;
    if (hark_read_audio(path, &s, &n, err, sizeof err)) {
        fprintf(stderr, "hark: %s\n", err);
        return 1;
    }
    size_t most = 2 * ((n + HARK_VAD_CHUNK - 1) / HARK_VAD_CHUNK) + 2; /* two a chunk at most */
    double *start = malloc(sizeof(double) * most), *end = malloc(sizeof(double) * most);
    int k = start && end && most < (size_t)1 << 30
                ? hark_vad_speech_spans(vad, p, s, n, start, end, (int)most)
                : HARK_ERR_NOMEM;
    if (k < 0)
        fprintf(stderr, "hark: %s: %s\n", path, k == HARK_ERR_NOMEM ? "out of memory for voice "
                "activity detection" : "too long for voice activity detection");
    for (int i = 0; i < k; i++) {
        if (label) {
            cli_print(label);
            cli_print("\t");
        }
        snprintf(line, sizeof line, "%.2f\t%.2f\n", start[i], end[i]);
        cli_print(line);
    }
    free(s);
    free(start);
    free(end);
    return k < 0;
}

const char cli_vad_usage[] =
    "usage: hark vad FILE... [VAD options]\n"
    "  the speech spans hark --vad transcribes, a line each: start and end in seconds,\n"
    "  tab-separated (with several files, the file first)\n"
    "  --vad-model FILE (-vm), --vad-threshold P (-vt), --vad-min-speech-duration-ms N\n"
    "  (-vspd), --vad-min-silence-duration-ms N (-vsd), --vad-max-speech-duration-s X\n"
    "  (-vmsd), --vad-speech-pad-ms N (-vp), --vad-samples-overlap X (-vo): as hark --help\n";

/* Options: whisper.cpp's VAD settings alone; the inputs gathered in inputs. */
static int parse(cli_options *o, int argc, char **argv, char **inputs, int *n)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            cli_print(cli_vad_usage);
            return -1;
        }
        if (argv[i][0] != '-' || !strcmp(argv[i], "-")) {
            inputs[(*n)++] = argv[i];
            continue;
        }
        int rc = i + 1 < argc ? cli_parse_vad_option(o, argv[i], argv[i + 1]) : 1;
        if (rc == 1) {
            fprintf(stderr, "hark: vad: unknown option %s (see hark vad --help)\n", argv[i]);
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
    if (rc < 0) { /* --help */
        free(inputs);
        return 0;
    }
    hark_vad *vad = NULL;
    if (!rc && cli_load_vad(&o, &vad))
        rc = 1;
    for (int i = 0; i < n && vad; i++)
        if (print_spans(vad, &o.params, inputs[i], n > 1 ? inputs[i] : NULL))
            rc = 1;
    hark_vad_free(vad);
    free(inputs);
    cli_flush_stdout();
    return rc;
}
