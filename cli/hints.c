/* What hark calls whisper.cpp's command-line options, for the error an unknown
 * option gets: people come to hark with whisper.cpp's habits (-otxt, -ml 1,
 * -nf), and one line naming hark's way saves a trip through --help.  The option
 * table names the spellings that are another of hark's options (-bs is hark's
 * --beam-size); this file answers the rest. */
#include <stdio.h>
#include <string.h>

#include "option_table.h"

/* whisper.cpp's options that are no option of hark's: the whole answer */
static const cli_hint OTHERS[] = {
    {"-pp", "--print-progress", "is hark's default on a terminal (a progress bar; -q hides it)"},
    {"-tdrz", "--tinydiarize", "needs a tinydiarize model; hark's --diarize labels a stereo "
                               "file's channels"},
    {"-ng", "--no-gpu", "has no use here: hark runs on the CPU"},
    {"-fa", "--flash-attn", "has no use here: hark's attention kernels are always on"},
    {"-nfa", "--no-flash-attn", "has no use here: hark's attention kernels are always on"},
    {"-dev", NULL, "has no use here: hark runs on the CPU"},
    {"-oved", "--ov-e-device", "has no use here: hark runs on the CPU"},
    {"-wt", "--word-thold", "has no use here: hark's word timing (--word-timestamps) is "
                            "openai's, which has no threshold"},
    {"-ac", "--audio-ctx", "has no equivalent: hark encodes the model's whole window, as "
                           "openai (a shorter audio context changes the transcript)"},
    {"-on", "--offset-n", "has no equivalent: --clip-timestamps chooses the time transcribed"},
    {"-ps", "--print-special", "has no equivalent: -f json lists every token with its id"},
    {"-ls", "--log-score", "has no equivalent: -f json has each token's probability and each "
                           "segment's avg_logprob"},
    {"-owts", "--output-words", "has no equivalent: -f srt --highlight-words underlines each "
                                "word as it is said"},
    {"-fp", "--font-path", "has no equivalent (hark writes no karaoke script)"},
    {"-debug", "--debug-mode", "has no equivalent: -f json holds every token and statistic"},
    {"--grammar", NULL, "has no equivalent: hark has no grammar-constrained decoding "
                        "(--suppress-regex and --initial-prompt steer it)"},
    {"--grammar-rule", NULL, "has no equivalent: hark has no grammar-constrained decoding"},
    {"--grammar-penalty", NULL, "has no equivalent: hark has no grammar-constrained decoding"},
    /* its server's and its stream example's */
    {"--convert", NULL, "has no use here: hark serve decodes what libsndfile cannot read "
                        "with ffmpeg whenever ffmpeg is installed"},
    {"-kc", NULL, "is hark stream's --keep-context"},
    {"-vth", "--vad-thold", "is hark stream --vad's --vad-threshold (Silero's speech "
                            "probability rather than an energy ratio)"},
    {"-fth", "--freq-thold", "has no use here: hark stream --vad uses Silero VAD, no "
                             "high-pass filter"},
    {"-c", "--capture", "has no equivalent: hark stream reads PCM from stdin (arecord -D "
                        "DEVICE -q -f S16_LE -c 1 -r 16000 -t raw | hark stream)"},
    {NULL, NULL, NULL},
};

/* The k-th of whisper.cpp's spellings that hark answers, from k = 0: the option
 * table's (*table: 1; its use follows "is hark's"), then OTHERS; NULL past them. */
static const cli_hint *hint(int k, int *table)
{
    for (const cli_option *opt = cli_option_table; opt->name; opt++)
        for (const cli_hint *h = opt->hints; h && h->short_name; h++)
            if (k-- == 0)
                return *table = 1, h;
    *table = 0;
    for (const cli_hint *h = OTHERS; h->short_name; h++)
        if (k-- == 0)
            return h;
    return NULL;
}

int cli_whispercpp_spelling(int k, const char **short_name, const char **long_name,
                            char *answer, size_t n)
{
    int table;
    const cli_hint *h = hint(k, &table);
    if (!h)
        return -1;
    snprintf(answer, n, "%s%s", table ? "is hark's " : "", h->use);
    *short_name = h->short_name;
    *long_name = h->long_name;
    return 0;
}

/* What hark has for whisper.cpp's option, into answer ("" when it is none of them). */
static void answer_for(const char *option, char *answer, size_t n)
{
    const char *s, *l;
    for (int k = 0; cli_whispercpp_spelling(k, &s, &l, answer, n) == 0; k++)
        if (strcmp(option, s) == 0 || (l && strcmp(option, l) == 0))
            return;
    *answer = 0;
}

void cli_unknown_option(const char *command, const char *option)
{
    char who[40] = "", see[40] = "", answer[300]; /* "serve: ", "serve " */
    answer_for(option, answer, sizeof answer);
    if (command) {
        snprintf(who, sizeof who, "%s: ", command);
        snprintf(see, sizeof see, "%s ", command);
    }
    if (*answer)
        fprintf(stderr, "hark: %sunknown option %s: whisper.cpp's %s %s (see hark %s--help)\n",
                who, option, option, answer, see);
    else
        fprintf(stderr, "hark: %sunknown option %s (see hark %s--help)\n", who, option, see);
}
