/* hark's tools beside transcription: hark mel (the log-mel transcription uses,
 * as .npy) and hark quantize (a model written as a ggml .bin of another type). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "npy.h"

int cli_mel_main(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    int n_mels = 80;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--n-mels") == 0 && i + 1 < argc)
            n_mels = atoi(argv[++i]);
        else if (!in)
            in = argv[i];
        else
            return cli_usage_exit("mel takes one input file");
    }
    if (!in || !out)
        return cli_usage_exit("usage: hark mel FILE -o OUT.npy");
    if (n_mels != 80 && n_mels != 128)
        return cli_usage_exit("--n-mels must be 80 or 128");
    char err[600];
    float *x, *mel;
    size_t n;
    int frames;
    if (hark_read_audio(in, &x, &n, err, sizeof err) ||
        hark_log_mel_spectrogram(x, n, 30 * HARK_SAMPLE_RATE, n_mels, &mel, &frames, err,
                                 sizeof err)) {
        fprintf(stderr, "hark: %s\n", err);
        return 1;
    }
    free(x);
    hark_error e = {{0}};
    int rc = hark_write_npy(out, mel, n_mels, frames, &e);
    free(mel);
    if (rc)
        fprintf(stderr, "hark: %s\n", e.msg);
    return rc ? 1 : 0;
}

int cli_quantize_main(int argc, char **argv)
{
    if (argc != 4)
        return cli_usage_exit("usage: hark quantize IN OUT TYPE");
    if (!hark_model_write_type(argv[3]))
        return cli_usage_exit("TYPE is one of f32 f16 q8_0 q5_0 q5_1 q4_0 q4_1");
    char err[600];
    hark_model *m = hark_model_load(argv[1], err, sizeof err);
    if (!m) {
        fprintf(stderr, "hark: %s\n", err);
        return 1;
    }
    int rc = hark_model_write(m, argv[2], argv[3], err, sizeof err);
    if (rc)
        fprintf(stderr, "hark: %s\n", err);
    hark_model_free(m);
    return rc ? 1 : 0;
}
