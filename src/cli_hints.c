/* What hark calls whisper.cpp's command-line options, for the error an unknown
 * option gets: people come to hark with whisper.cpp's habits (-otxt, -ml 1,
 * -nf), and one line naming hark's way saves a trip through --help. */
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
    {"-of", "--output-file", IS_HARKS "-o DIR (files named after their inputs)"},
    {"-ot", "--offset-t", IS_HARKS "--clip-timestamps START, in seconds"},
    {"-d", "--duration", IS_HARKS "--clip-timestamps START,END, in seconds"},
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
};

const char *cli_whispercpp_equivalent(const char *option)
{
    for (size_t i = 0; i < sizeof WHISPERCPP / sizeof WHISPERCPP[0]; i++)
        if (strcmp(option, WHISPERCPP[i][0]) == 0 ||
            (WHISPERCPP[i][1] && strcmp(option, WHISPERCPP[i][1]) == 0))
            return WHISPERCPP[i][2];
    return NULL;
}
