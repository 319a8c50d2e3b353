/* What hark calls whisper.cpp's command-line options, for the error an unknown
 * option gets: people come to hark with whisper.cpp's habits (-otxt, -ml 1,
 * -nf), and one line naming hark's way saves a trip through --help. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define IS_HARKS "is hark's "

static const char *const WHISPERCPP[][3] = {
    {"-otxt", "--output-txt", IS_HARKS "-f txt"},
    {"-ovtt", "--output-vtt", IS_HARKS "-f vtt"},
    {"-osrt", "--output-srt", IS_HARKS "-f srt"},
    {"-olrc", "--output-lrc", IS_HARKS "-f lrc"},
    {"-ocsv", "--output-csv", IS_HARKS "-f csv"},
    {"-oj", "--output-json", IS_HARKS "-f json"},
    {"-ojf", "--output-json-full", IS_HARKS "-f json (every token with its probability)"},
    {"-bo", NULL, IS_HARKS "--best-of"},
    {"-bs", NULL, IS_HARKS "--beam-size"},
    {"-tp", NULL, IS_HARKS "--temperature"},
    {"-tpi", "--temperature-inc", IS_HARKS "--temperature-increment-on-fallback"},
    {"-nf", "--no-fallback", IS_HARKS "--temperature 0"},
    {"-lpt", "--logprob-thold", IS_HARKS "--logprob-threshold"},
    {"-nth", "--no-speech-thold", IS_HARKS "--no-speech-threshold"},
    {"-et", "--entropy-thold", IS_HARKS "--compression-ratio-threshold (openai's repetition test)"},
    {"-mc", "--max-context", IS_HARKS "--no-condition-on-previous-text, for -mc 0"},
    {"-tr", "--translate", IS_HARKS "--task translate"},
    {"-dl", NULL, IS_HARKS "--detect-language"},
    {"-nt", NULL, IS_HARKS "--no-timestamps"},
    {"--prompt", NULL, IS_HARKS "--initial-prompt"},
    {"-np", "--no-prints", IS_HARKS "-q"},
    {"-pp", "--print-progress", "is hark's default on a terminal (a progress bar; -q hides it)"},
    {"-tdrz", "--tinydiarize", "needs a tinydiarize model; hark's --diarize labels a stereo "
                               "file's channels"},
    {"-p", "--processors", IS_HARKS "-j N, files at once (-t N threads within each)"},
    {"-ng", "--no-gpu", "has no use here: hark runs on the CPU"},
    {"-fa", "--flash-attn", "has no use here: hark's attention kernels are always on"},
    {"-nfa", "--no-flash-attn", "has no use here: hark's attention kernels are always on"},
    {"-dev", NULL, "has no use here: hark runs on the CPU"},
    {"-oved", "--ov-e-device", "has no use here: hark runs on the CPU"},
    {"-dtw", NULL, IS_HARKS "--word-timestamps (DTW on the model's alignment heads)"},
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
};

void cli_unknown_option(const char *command, const char *option)
{
    const char *whispercpp = cli_whispercpp_equivalent(option);
    char who[40] = "", see[40] = ""; /* "serve: ", "serve " */
    if (command) {
        snprintf(who, sizeof who, "%s: ", command);
        snprintf(see, sizeof see, "%s ", command);
    }
    if (whispercpp)
        fprintf(stderr, "hark: %sunknown option %s: whisper.cpp's %s %s (see hark %s--help)\n",
                who, option, option, whispercpp, see);
    else
        fprintf(stderr, "hark: %sunknown option %s (see hark %s--help)\n", who, option, see);
}

const char *cli_whispercpp_equivalent(const char *option)
{
    for (size_t i = 0; i < sizeof WHISPERCPP / sizeof WHISPERCPP[0]; i++)
        if (strcmp(option, WHISPERCPP[i][0]) == 0 ||
            (WHISPERCPP[i][1] && strcmp(option, WHISPERCPP[i][1]) == 0))
            return WHISPERCPP[i][2];
    return NULL;
}
