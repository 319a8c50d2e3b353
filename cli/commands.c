/* hark's commands: the word that names each, its synopsis and what it does, as
 * --help and docs/cli.md list them, and the function main() runs for it. */
#include "cli.h"

const cli_command cli_commands[] = {
    {"", "[options] FILE|DIR...", "transcribe audio files (\"-\" reads stdin)", NULL, NULL},
    {"test", "MANIFEST|DIR [options]", "golden-transcript regression test", cli_test_usage,
     cli_test_main},
    {"mel", "FILE -o OUT.npy [--n-mels N]", "write the log-mel transcription uses", NULL,
     cli_mel_main},
    {"bench", "-m MODEL [-t N] [--json] [--audio FILE]", "speed and memory benchmark",
     cli_bench_usage, cli_bench_main},
    {"vad", "FILE... [VAD options]", "the speech spans --vad transcribes, in seconds",
     cli_vad_usage, cli_vad_main},
    {"stream", "[FILE] [--step MS] [--length MS] [options]",
     "live transcription of 16 kHz mono 16-bit PCM (stdin, a FIFO)", cli_stream_usage,
     cli_stream_main},
    {"serve", "[--host A] [--port N] [--max-upload-mb N] [-j N] [options]",
     "speech to text over HTTP, N requests at once (default 1): POST /inference "
     "(whisper.cpp's server) or /v1/audio/transcriptions (OpenAI's API)", cli_serve_usage,
     cli_serve_main},
    {"explain", "--shapes [-m MODEL | --dims NAME] [--json] | AUDIO [-o DIR] [--window N] "
     "[--occlusion]", "see inside the model: shapes, attention, logit lens", cli_explain_usage,
     cli_explain_main},
    {"summary", "OUT [INPUTS...] [-r] [--json]",
     "a batch's ledgers in OUT: done, failed, missing; per host; shards to resubmit", NULL,
     cli_summary_main},
    {"quantize", "IN OUT TYPE",
     "write IN (HF dir or .bin) as a ggml .bin of TYPE: f32 f16 q8_0 q5_0 q5_1 q4_0 q4_1", NULL,
     cli_quantize_main},
    {NULL, NULL, NULL, NULL, NULL},
};
