/* hark's options, each once (option_table.h says what the columns mean), and
 * the lookups the parser, --help, the hints and hark serve make in it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "option_table.h"

#define F(member) offsetof(cli_options, member)
#define P(member) offsetof(cli_options, params.member)
#define HINTS(...) ((const cli_hint[]){__VA_ARGS__, {NULL, NULL, NULL}})
#define BOTH (CLI_WCPP_SHORT | CLI_WCPP_LONG)
#define STR(x) #x
#define STRING_OF(x) STR(x)

const cli_option cli_option_table[] = {
    /* ---- model */
    {.name = "--model", .short_name = "-m", .value = "PATH", .kind = CLI_TEXT,
     .field = F(model), .flags = BOTH, .group = CLI_G_MODEL, .openai = "--model",
     .help = "Hugging Face Whisper directory or whisper.cpp .bin (default: $HARK_MODEL, else "
             "the model in models/)",
     .doc = "a Hugging Face Whisper directory or a whisper.cpp `.bin`; default `$HARK_MODEL`, "
            "else the model in `models/`"},
    {.name = "--model-dir", .value = "DIR", .kind = CLI_TEXT, .field = F(model_dir),
     .group = CLI_G_MODEL, .openai = "--model_dir",
     .help = "where -m NAME is: DIR/NAME, DIR/ggml-NAME.bin or DIR/NAME.bin (whisper.cpp's "
             "names)"},
    {.name = "--threads", .short_name = "-t", .value = "N", .kind = CLI_INT, .lo = 1,
     .hi = CLI_MAX_THREADS, .field = P(n_threads), .flags = BOTH, .group = CLI_G_MODEL,
     .openai = "--threads",
     .help = "threads per file (default: up to 4 cores; 1 with -j); results are identical "
             "for every N"},
    {.name = "--precision", .value = "P", .kind = CLI_TEXT, .take = cli_take_precision,
     .group = CLI_G_MODEL,
     .help = "the encoder's arithmetic: auto (default), f32, bf16 or int8 (lower ones where "
             "the CPU has AVX512_BF16 / VNNI; docs/perf-log.md has their accuracy)",
     .doc = "the arithmetic of the encoder's matrix products: `f32`, `bf16` (AVX512_BF16), "
            "`int8` (AVX512_VNNI; a scale per weight row and per frame) or `auto` (default: "
            "the fastest whose tokens equal f32's on hark's checks, that this CPU runs; "
            "else `f32`). A CPU without the instructions runs a named lower precision in "
            "portable C, slower than f32"},
    {.name = "--device", .value = "cpu", .kind = CLI_TEXT, .take = cli_take_device,
     .group = CLI_G_MODEL, .openai = "--device",
     .help = "openai's: taken and changes nothing (hark runs on the CPU); another device is "
             "refused"},
    {.name = "--fp16", .kind = CLI_SWITCH, .flags = CLI_NO_EFFECT, .group = CLI_G_MODEL,
     .openai = "--fp16",
     .help = "openai's, True or False: taken and changes nothing (hark computes in f32 from "
             "the weights as stored)"},

    /* ---- language and task */
    {.name = "--language", .short_name = "-l", .value = "CODE", .kind = CLI_TEXT,
     .take = cli_take_language, .flags = BOTH, .group = CLI_G_LANGUAGE,
     .openai = "--language", .form = "language",
     .help = "language of multilingual models, a code or its name (de, German), or auto "
             "(default)",
     .doc = "multilingual models: the language, a code or openai's name or alias of it in "
            "any case (`de`, `German`, `castilian`), or `auto` (default: detected on the "
            "first window); an English-only model given another language says so and "
            "transcribes English, as openai's does"},
    {.name = "--task", .value = "TASK", .kind = CLI_TEXT, .take = cli_take_task,
     .group = CLI_G_LANGUAGE, .openai = "--task", .form = "translate",
     .hints = HINTS({"-tr", "--translate", "--task translate"}),
     .help = "transcribe (default) or translate (to English; multilingual models only)"},
    {.name = "--detect-language", .kind = CLI_FLAG, .field = F(detect_language),
     .flags = CLI_WCPP_LONG, .scope = CLI_FILES, .group = CLI_G_LANGUAGE,
     .hints = HINTS({"-dl", NULL, "--detect-language"}),
     .help = "print the five most likely languages with their probabilities, and stop"},

    /* ---- decoding */
    {.name = "--beam-size", .value = "N", .kind = CLI_INT, .lo = 1, .hi = HARK_MAX_BEAMS,
     .field = P(search.beam_size), .flags = CLI_WCPP_LONG, .group = CLI_G_DECODING,
     .openai = "--beam_size", .form = "beam_size", .hints = HINTS({"-bs", NULL, "--beam-size"}),
     .help = "beams at temperature 0 (default 5; 1 = greedy)"},
    {.name = "--patience", .value = "P", .kind = CLI_FLOAT, .lo = 0, .hi = INFINITY,
     .field = P(search.patience), .flags = CLI_ABOVE_LO, .group = CLI_G_DECODING,
     .openai = "--patience", .help = "beam search patience (default 1.0)"},
    {.name = "--length-penalty", .value = "A", .kind = CLI_FLOAT, .lo = 0, .hi = INFINITY,
     .field = P(search.length_penalty), .group = CLI_G_DECODING, .openai = "--length_penalty",
     .help = "rank beams and samples by the length penalty ((5+n)/6)^A (default: by length)"},
    {.name = "--best-of", .value = "N", .kind = CLI_INT, .lo = 1, .hi = HARK_MAX_BEAMS,
     .field = P(search.best_of), .flags = CLI_WCPP_LONG, .group = CLI_G_DECODING,
     .openai = "--best_of", .form = "best_of", .hints = HINTS({"-bo", NULL, "--best-of"}),
     .help = "samples at temperature > 0 (default 5)"},
    {.name = "--temperature", .value = "LIST", .kind = CLI_LIST, .lo = 0, .hi = 10,
     .take = cli_take_temperature, .flags = CLI_WCPP_LONG, .group = CLI_G_DECODING,
     .openai = "--temperature", .form = "temperature",
     .hints = HINTS({"-tp", NULL, "--temperature"},
                    {"-nf", "--no-fallback", "--temperature 0"}),
     .help = "fallback temperatures, at most " STRING_OF(HARK_MAX_TEMPERATURES)
             " (default 0,0.2,0.4,0.6,0.8,1.0); one value with "
             "--temperature-increment-on-fallback: where its ladder starts",
     .doc = "the fallback temperatures, tried in turn while a window's transcript fails "
            "the thresholds below (default 0,0.2,0.4,0.6,0.8,1.0; at most "
            STRING_OF(HARK_MAX_TEMPERATURES) "); sampling above 0 is seeded (`--seed`), so "
            "runs repeat exactly"},
    {.name = "--temperature-increment-on-fallback", .value = "X", .kind = CLI_FLOAT, .lo = 0,
     .hi = INFINITY, .take = cli_take_temperature_increment, .flags = CLI_ABOVE_LO,
     .group = CLI_G_DECODING, .openai = "--temperature_increment_on_fallback",
     .form = "temperature_inc",
     .hints = HINTS({"-tpi", "--temperature-inc", "--temperature-increment-on-fallback"}),
     .help = "the ladder from --temperature's one value (default 0) to 1 in steps of X, as "
             "openai's",
     .doc = "openai's form of the ladder: from `--temperature`'s one value (default 0) to 1 "
            "in steps of X (`--temperature 0.2 --temperature-increment-on-fallback 0.4` is "
            "0.2,0.6,1.0)"},
    {.name = "--compression-ratio-threshold", .value = "X", .kind = CLI_FLOAT, .lo = -INFINITY,
     .hi = INFINITY, .field = P(fallback.compression_ratio_threshold), .group = CLI_G_DECODING,
     .openai = "--compression_ratio_threshold",
     .hints = HINTS({"-et", "--entropy-thold",
                     "--compression-ratio-threshold (openai's repetition test)"}),
     .help = "the next temperature when the text's zlib compression ratio is above X "
             "(default 2.4)"},
    {.name = "--logprob-threshold", .value = "X", .kind = CLI_FLOAT, .lo = -INFINITY,
     .hi = INFINITY, .field = P(fallback.logprob_threshold), .group = CLI_G_DECODING,
     .openai = "--logprob_threshold", .form = "logprob_thold",
     .hints = HINTS({"-lpt", "--logprob-thold", "--logprob-threshold"}),
     .help = "the next temperature when the average log-probability is below X "
             "(default -1.0)"},
    {.name = "--no-speech-threshold", .value = "X", .kind = CLI_FLOAT, .lo = -INFINITY,
     .hi = INFINITY, .field = P(fallback.no_speech_threshold), .group = CLI_G_DECODING,
     .openai = "--no_speech_threshold",
     .hints = HINTS({"-nth", "--no-speech-thold", "--no-speech-threshold"}),
     .help = "a window is silence when P(no speech) is above X (default 0.6) and its "
             "log-probability fails too"},
    {.name = "--seed", .value = "N", .kind = CLI_INT, .take = cli_take_seed,
     .group = CLI_G_DECODING, .help = "seed of the sampling generator (default 0)"},
    {.name = "--suppress-tokens", .value = "LIST", .kind = CLI_LIST, .lo = -1, .hi = 10000000,
     .take = cli_take_suppress_tokens, .group = CLI_G_DECODING, .openai = "--suppress_tokens",
     .help = "token ids never sampled, at most " STRING_OF(HARK_MAX_SUPPRESS_TOKENS)
             "; -1 among them: the model's own list too (default: -1; -sns keeps it)",
     .doc = "openai's `--suppress_tokens`: token ids never sampled; `-1` among them adds the "
            "model's own list (`generation_config.json`'s `suppress_tokens`), which is the "
            "default; special tokens other than eot and timestamps are never sampled either "
            "way"},
    {.name = "--suppress-nst", .short_name = "-sns", .kind = CLI_FLAG,
     .take = cli_take_suppress_nst, .flags = BOTH, .group = CLI_G_DECODING,
     .help = "whisper.cpp's: the model's non-speech tokens (-1), suppressed by default, kept "
             "among --suppress-tokens"},
    {.name = "--suppress-regex", .value = "RE", .kind = CLI_TEXT, .take = cli_take_suppress_regex,
     .flags = CLI_WCPP_LONG, .group = CLI_G_DECODING,
     .help = "tokens whose whole text matches RE (POSIX extended, the leading space included) "
             "never sampled, as whisper.cpp's",
     .doc = "whisper.cpp's option of that name: text tokens whose whole text (bytes, the "
            "leading space included) matches the POSIX extended regular expression RE are "
            "never sampled, e.g. `' ?[0-9]+'` for tokens of digits; a pattern regcomp "
            "refuses is a usage error with its reason"},

    /* ---- prompts */
    {.name = "--no-condition-on-previous-text", .kind = CLI_FLAG,
     .field = P(prompt.condition_on_previous_text), .flags = CLI_CLEARS, .group = CLI_G_PROMPT,
     .hints = HINTS({"-mc", "--max-context", "--no-condition-on-previous-text, for -mc 0"}),
     .help = "do not prompt each window with the previous window's text"},
    {.name = "--condition-on-previous-text", .kind = CLI_SWITCH,
     .field = P(prompt.condition_on_previous_text), .group = CLI_G_PROMPT,
     .openai = "--condition_on_previous_text",
     .help = "openai's, True (the default) or False: prompt each window with the previous "
             "window's text"},
    {.name = "--initial-prompt", .value = "TEXT", .kind = CLI_TEXT, .field = P(prompt.initial),
     .group = CLI_G_PROMPT, .openai = "--initial_prompt", .form = "prompt",
     .hints = HINTS({"--prompt", NULL, "--initial-prompt"}),
     .help = "prompt for the first window",
     .doc = "the prompt of the first window, as openai/whisper (`\" \" + TEXT` stripped)"},
    {.name = "--carry-initial-prompt", .kind = CLI_SWITCH, .field = P(prompt.carry_initial),
     .group = CLI_G_PROMPT, .openai = "--carry_initial_prompt",
     .help = "the initial prompt before every window's previous text, not only the first's",
     .doc = "the initial prompt before every window's previous text, which is cut to fit "
            "beside it, as openai's"},

    /* ---- timestamps, words and speakers */
    {.name = "--no-timestamps", .kind = CLI_FLAG, .field = P(timestamps), .flags = CLI_CLEARS |
     CLI_WCPP_LONG, .group = CLI_G_WORDS, .form = "no_timestamps",
     .hints = HINTS({"-nt", NULL, "--no-timestamps"}),
     .help = "no timestamp tokens: one segment per window"},
    {.name = "--word-timestamps", .kind = CLI_SWITCH, .field = P(words.enabled),
     .group = CLI_G_WORDS, .openai = "--word_timestamps", .form = "timestamp_granularities[]",
     .hints = HINTS({"-dtw", NULL, "--word-timestamps (DTW on the model's alignment heads)"}),
     .help = "word-level timing (words in the json)",
     .doc = "word timing from cross-attention DTW (`words` in the JSON); as openai's "
            "`--word_timestamps True`, segments take their words' bounds and the next window "
            "starts after the last word"},
    {.name = "--hallucination-silence-threshold", .value = "X", .kind = CLI_FLOAT, .lo = 0,
     .hi = INFINITY, .field = P(words.hallucination_silence_threshold),
     .flags = CLI_ABOVE_LO | CLI_WORDS, .group = CLI_G_WORDS,
     .openai = "--hallucination_silence_threshold",
     .help = "skip the silence before, and drop, segments of unlikely words with X s of "
             "silence around them (implies --word-timestamps)",
     .doc = "openai's option of that name: a segment of improbable, very short or very long "
            "words with silence around it (X s or more) is dropped and the silence before it "
            "skipped; implies `--word-timestamps`"},
    {.name = "--prepend-punctuations", .value = "S", .kind = CLI_TEXT,
     .field = P(words.prepend_punctuations), .group = CLI_G_WORDS, .openai = "--prepend_punctuations",
     .help = "with word timing: marks that join the next word (default: openai's "
             HARK_PREPEND_PUNCTUATIONS ")",
     .doc = "with word timing, openai's option of that name: a word that is inside S "
            "(Python's substring test) joins the next word, keeping that word's timing; "
            "default `" HARK_PREPEND_PUNCTUATIONS "`"},
    {.name = "--append-punctuations", .value = "S", .kind = CLI_TEXT,
     .field = P(words.append_punctuations), .group = CLI_G_WORDS, .openai = "--append_punctuations",
     .help = "marks that join the previous word (default: openai's " HARK_APPEND_PUNCTUATIONS
             ")",
     .doc = "with word timing, openai's option of that name: a word that is inside S joins "
            "the previous word; default `" HARK_APPEND_PUNCTUATIONS "`"},
    {.name = "--max-len", .short_name = "-ml", .value = "N", .kind = CLI_INT, .lo = 1,
     .hi = CLI_MAX_CHARS, .field = P(max_len), .flags = CLI_WORDS | BOTH, .group = CLI_G_WORDS,
     .form = "max_len",
     .help = "whisper.cpp's -ml N -sow: segments cut between words to at most N characters, "
             "in every format (1: a word a segment; implies --word-timestamps)",
     .doc = "whisper.cpp's `-ml N -sow`: each segment cut between its words into segments of "
            "at most N characters (a longer word alone; `-ml 1`: a word a segment), in every "
            "format, json included (each piece with its words' tokens, the timestamp tokens at "
            "the ends with the first and last); implies `--word-timestamps`"},
    {.name = "--split-on-word", .short_name = "-sow", .kind = CLI_FLAG,
     .flags = CLI_NO_EFFECT | BOTH, .group = CLI_G_WORDS,
     .help = "whisper.cpp's: taken and changes nothing (--max-len always cuts between words)"},
    {.name = "--max-line-width", .value = "N", .kind = CLI_INT, .lo = 1, .hi = CLI_MAX_CHARS,
     .field = F(layout.max_line_width), .flags = CLI_WORDS, .group = CLI_G_WORDS,
     .openai = "--max_line_width",
     .help = "srt/vtt: lines of at most N characters (implies --word-timestamps; cues keep to "
             "segments unless --max-line-count is given too)",
     .doc = "srt/vtt cues laid out from the words, as openai's option of that name: lines of "
            "at most N characters (cues keep to segments unless `--max-line-count` is given "
            "too, and then a pause over 3 s starts a new cue); implies `--word-timestamps`"},
    {.name = "--max-line-count", .value = "N", .kind = CLI_INT, .lo = 1, .hi = CLI_MAX_CHARS,
     .field = F(layout.max_line_count), .flags = CLI_WORDS, .group = CLI_G_WORDS,
     .openai = "--max_line_count",
     .help = "srt/vtt: cues of at most N lines (with --max-line-width)"},
    {.name = "--max-words-per-line", .value = "N", .kind = CLI_INT, .lo = 1, .hi = CLI_MAX_CHARS,
     .field = F(layout.max_words_per_line), .flags = CLI_WORDS, .group = CLI_G_WORDS,
     .openai = "--max_words_per_line",
     .help = "srt/vtt: cues of at most N words (without --max-line-width)"},
    {.name = "--highlight-words", .kind = CLI_SWITCH, .field = F(layout.highlight_words),
     .flags = CLI_WORDS, .group = CLI_G_WORDS, .openai = "--highlight_words",
     .help = "srt/vtt: a cue per word, the word underlined (implies --word-timestamps)"},
    {.name = "--diarize", .short_name = "-di", .kind = CLI_FLAG, .field = P(diarize),
     .flags = BOTH, .scope = CLI_FILES, .group = CLI_G_WORDS, .form = "diarize",
     .help = "stereo files: each segment labelled with the louder channel, (speaker 0) left "
             "or 1 right (json \"speaker\", a tsv/csv column, vtt <v Speaker0>)",
     .doc = "in a two-channel file, as of a call with a party a channel, each segment is "
            "labelled with the channel whose summed |sample| over it is more than 1.1 "
            "times the other's, `0` (left) or `1` (right), else `?`: `(speaker 0) text` in "
            "txt, srt, lrc and the `-v` lines, `<v Speaker0>text` (a WebVTT voice) in vtt, a "
            "`speaker` column in tsv and csv and a `\"speaker\"` string after each segment's "
            "`text` in json; a file with another channel count gets no labels; the text "
            "itself is the same as without it"},

    /* ---- what is transcribed */
    {.name = "--clip-timestamps", .value = "LIST", .kind = CLI_LIST, .lo = 0, .hi = 1e7,
     .take = cli_take_clip_timestamps, .group = CLI_G_CLIP, .openai = "--clip_timestamps",
     .help = "only start,end,... seconds (an odd count: the last to the end of the file), "
             "e.g. 60 or 10,20,45,50",
     .doc = "transcribe only these `start,end,...` seconds, as openai's `--clip_timestamps` "
            "(an odd count: the last clip runs to the end; `60` skips the first minute); "
            "segment times stay those of the file"},
    {.name = "--offset-t", .short_name = "-ot", .value = "MS", .kind = CLI_INT, .lo = 0,
     .hi = CLI_MAX_OFFSET_MS, .take = cli_take_clip_ms, .flags = BOTH, .group = CLI_G_CLIP,
     .form = "offset_t",
     .help = "whisper.cpp's: the clip from MS milliseconds on (as --clip-timestamps makes it; "
             "not beside it)"},
    {.name = "--duration", .short_name = "-d", .value = "MS", .kind = CLI_INT, .lo = 0,
     .hi = CLI_MAX_OFFSET_MS, .take = cli_take_clip_ms, .flags = BOTH, .group = CLI_G_CLIP,
     .form = "duration", .help = "whisper.cpp's: the clip MS milliseconds long (0: to the end)"},

    /* ---- voice activity detection */
    {.name = "--vad", .kind = CLI_FLAG, .field = F(vad), .flags = CLI_WCPP_LONG,
     .group = CLI_G_VAD,
     .help = "transcribe only the speech that Silero VAD finds, as whisper.cpp's --vad (hark "
             "ships the model); times stay the file's",
     .doc = "whisper.cpp's `--vad`: Silero VAD (shipped in `models/silero-vad/`, 1.2 MB) finds "
            "the speech first, only the speech is transcribed, and every time reported stays "
            "the file's"},
    {.name = "--vad-model", .short_name = "-vm", .value = "FILE", .kind = CLI_TEXT,
     .field = F(vad_model), .flags = CLI_TURNS_ON_VAD | CLI_IN_VAD | BOTH, .group = CLI_G_VAD,
     .help = "a whisper.cpp ggml Silero VAD (v5, v6); implies --vad"},
    {.name = "--vad-threshold", .short_name = "-vt", .value = "P", .kind = CLI_FLOAT, .lo = 0,
     .hi = 1, .field = P(vad.threshold),
     .flags = CLI_ABOVE_LO | CLI_BELOW_HI | CLI_IN_VAD | BOTH, .group = CLI_G_VAD,
     .help = "speech from this probability (default 0.5)"},
    {.name = "--vad-min-speech-duration-ms", .short_name = "-vspd", .value = "N",
     .kind = CLI_INT, .lo = 0, .hi = CLI_MAX_MS, .field = P(vad.min_speech_ms),
     .flags = CLI_IN_VAD | BOTH, .group = CLI_G_VAD,
     .help = "shorter speech dropped (default 250)"},
    {.name = "--vad-min-silence-duration-ms", .short_name = "-vsd", .value = "N",
     .kind = CLI_INT, .lo = 0, .hi = CLI_MAX_MS, .field = P(vad.min_silence_ms),
     .flags = CLI_IN_VAD | BOTH, .group = CLI_G_VAD,
     .help = "silence that ends speech (default 100)"},
    {.name = "--vad-max-speech-duration-s", .short_name = "-vmsd", .value = "X",
     .kind = CLI_FLOAT, .lo = 0, .hi = INFINITY, .field = P(vad.max_speech_s),
     .flags = CLI_IN_VAD | BOTH, .group = CLI_G_VAD,
     .help = "longer speech split at its last pause (default: no limit)"},
    {.name = "--vad-speech-pad-ms", .short_name = "-vp", .value = "N", .kind = CLI_INT,
     .lo = 0, .hi = CLI_MAX_MS, .field = P(vad.speech_pad_ms), .flags = CLI_IN_VAD | BOTH,
     .group = CLI_G_VAD, .help = "speech widened by N ms (default 30)"},
    {.name = "--vad-samples-overlap", .short_name = "-vo", .value = "X", .kind = CLI_FLOAT,
     .lo = 0, .hi = 10, .field = P(vad.samples_overlap), .flags = CLI_IN_VAD | BOTH,
     .group = CLI_G_VAD, .help = "seconds kept after each span (default 0.1)"},

    /* ---- files */
    {.name = "--output-dir", .short_name = "-o", .value = "DIR", .kind = CLI_TEXT,
     .field = F(out_dir), .scope = CLI_FILES, .group = CLI_G_FILES, .openai = "--output_dir",
     .help = "write DIR/<name>.<format> for each input"},
    {.name = "--output-file", .short_name = "-of", .value = "BASE", .kind = CLI_TEXT,
     .field = F(out_file), .flags = BOTH, .scope = CLI_FILES, .group = CLI_G_FILES,
     .help = "one input: write BASE.<format> (whisper.cpp's -of)"},
    {.name = "--format", .short_name = "-f", .value = "LIST", .kind = CLI_LIST,
     .take = cli_take_format, .scope = CLI_FILES, .group = CLI_G_FILES,
     .openai = "--output_format", .form = "response_format",
     .hints = HINTS({"-otxt", "--output-txt", "-f txt"}, {"-ovtt", "--output-vtt", "-f vtt"},
                    {"-osrt", "--output-srt", "-f srt"}, {"-olrc", "--output-lrc", "-f lrc"},
                    {"-ocsv", "--output-csv", "-f csv"}, {"-oj", "--output-json", "-f json"},
                    {"-ojf", "--output-json-full",
                     "-f json (every token with its probability)"}),
     .help = "txt,json,srt,vtt,tsv or all (openai's five; default with -o: txt,json), csv, "
             "lrc (whisper.cpp's)",
     .doc = "`txt,json,srt,vtt,tsv` or `all` (openai's five), and whisper.cpp's `csv` "
            "(`start,end,text` in milliseconds, the text quoted with quotes doubled as RFC "
            "4180 has it, where whisper.cpp writes `\\\"`) and `lrc` (`[mm:ss.xx]text` at each "
            "segment's start); one input without `-o`: printed to stdout; several inputs or a "
            "directory without `-o`: files in the current directory"},
    {.name = "--recursive", .short_name = "-r", .kind = CLI_FLAG, .field = F(recursive),
     .scope = CLI_FILES, .group = CLI_G_FILES, .help = "walk directories recursively"},
    {.name = "--jobs", .short_name = "-j", .value = "N", .kind = CLI_INT, .lo = 1,
     .hi = CLI_MAX_JOBS, .field = F(jobs), .scope = CLI_FILES, .group = CLI_G_FILES,
     .hints = HINTS({"-p", "--processors", "-j N, files at once (-t N threads within each)"}),
     .error = "-j takes a job count from 1 to " STRING_OF(CLI_MAX_JOBS),
     .help = "files transcribed at once (the model loaded once)"},
    {.name = "--combine-decode", .kind = CLI_FLAG, .field = F(combine_decode),
     .scope = CLI_FILES, .group = CLI_G_FILES,
     .help = "with -j: the files' decoder steps run together, each weight read once a step "
             "for all their sequences (the same outputs; not faster on 2 cores with the "
             "bundled model: BENCHMARKS.md)"},
    {.name = "--overwrite", .kind = CLI_FLAG, .field = F(overwrite), .scope = CLI_FILES,
     .group = CLI_G_FILES, .help = "redo files whose outputs already exist"},
    {.name = "--shard", .value = "K/N", .kind = CLI_TEXT, .take = cli_take_shard,
     .scope = CLI_FILES, .group = CLI_G_FILES, .error = "--shard takes K/N with 1 <= K <= N",
     .help = "only the K-th of N slices of the sorted file list"},
    {.name = "--max-duration", .value = "S", .kind = CLI_FLOAT, .take = cli_take_max_duration,
     .scope = CLI_FILES, .group = CLI_G_FILES,
     .error = "--max-duration takes seconds (0: no limit)",
     .help = "read at most S seconds of each input (default 86400, a day; 0: no limit): a "
             "longer one, an endless stream, is transcribed up to there and reported"},
    {.name = "--balance", .value = "HOW", .kind = CLI_TEXT, .take = cli_take_balance,
     .scope = CLI_FILES, .group = CLI_G_FILES, .error = "--balance takes duration or position",
     .help = "duration: --shard by length (headers; else size), longest first to the "
             "lightest shard (default: position)"},
    {.name = "--redo-changed", .kind = CLI_FLAG, .field = F(redo_changed), .scope = CLI_FILES,
     .group = CLI_G_FILES,
     .help = "redo files the ledger says were done with another model or other options "
             "(else they are refused)"},
    {.name = "--dry-run", .kind = CLI_FLAG, .field = F(dry_run), .scope = CLI_FILES,
     .group = CLI_G_FILES,
     .help = "list what this run (shard) would do and why; nothing is transcribed"},

    /* ---- what is printed */
    {.name = "--verbose", .short_name = "-v", .kind = CLI_SWITCH, .field = F(verbose),
     .scope = CLI_FILES, .group = CLI_G_PRINTED, .openai = "--verbose",
     .help = "print each segment as it is decoded, as openai's --verbose: [00:01.000 --> "
             "00:03.400] text (without -o, instead of the transcript; no progress bar)",
     .doc = "each segment on stdout as soon as it is final, as openai's `--verbose True` "
            "prints it: `[00:58.040 --> 01:00.940]  Ruby library for text formatting.` (hours "
            "only past the first), after `Detected language: English` when a multilingual "
            "model detected it; without `-o` these lines are the output (so `-f` needs `-o`), "
            "with several files each line starts with its file's path, and on a terminal the "
            "per-file lines replace the progress bar"},
    {.name = "--print-colors", .short_name = "-pc", .kind = CLI_FLAG, .field = F(print_colors),
     .flags = BOTH, .scope = CLI_FILES, .group = CLI_G_PRINTED,
     .help = "the text on stdout (txt, -v lines) coloured by each token's probability, red to "
             "green, as whisper.cpp's -pc",
     .doc = "the text hark prints on stdout (one file's txt, or the `-v` lines) coloured by "
            "confidence for a terminal, each character in xterm-256 colour by the probability "
            "p of the token that chose it, p³ on whisper.cpp's ten steps from red (196) to "
            "green (82); files are never coloured (so it is refused with `-o` unless `-v` "
            "prints the lines)"},
    {.name = "--quiet", .short_name = "-q", .kind = CLI_FLAG, .field = F(quiet),
     .group = CLI_G_PRINTED, .hints = HINTS({"-np", "--no-prints", "-q"}),
     .help = "no progress"},
    {.name = "--help", .short_name = "-h", .kind = CLI_FLAG, .flags = BOTH, .scope = CLI_OWN,
     .group = CLI_G_PRINTED, .help = "this help"},
    {.name = "--help-markdown", .kind = CLI_FLAG, .scope = CLI_OWN, .group = CLI_G_PRINTED,
     .help = "this reference in Markdown, with each command's own options (docs/cli.md)"},
    {.name = "--version", .kind = CLI_FLAG, .scope = CLI_OWN, .group = CLI_G_PRINTED,
     .help = "print the version"},
    {.name = NULL},
};

int cli_is_option(const char *arg, const char *name)
{
    const cli_option *opt = cli_find_option(arg, CLI_OWN);
    return opt && strcmp(opt->name, name) == 0;
}

const cli_option *cli_find_option(const char *name, cli_scope scope)
{
    for (const cli_option *opt = cli_option_table; opt->name; opt++)
        if ((scope == CLI_OWN || opt->scope == CLI_SHARED || opt->scope == scope) &&
            (strcmp(name, opt->name) == 0 ||
             (opt->short_name && strcmp(name, opt->short_name) == 0)))
            return opt;
    return NULL;
}

void *cli_option_field(cli_options *o, const cli_option *opt)
{
    return (char *)o + opt->field;
}

int *cli_param_int(hark_params *p, const cli_option *opt)
{
    size_t at = offsetof(cli_options, params);
    int is_int = opt->kind == CLI_FLAG || opt->kind == CLI_SWITCH || opt->kind == CLI_INT;
    if (!is_int || opt->take || opt->field < at || opt->field >= at + sizeof *p)
        return NULL;
    return (int *)((char *)p + (opt->field - at));
}

void cli_range_text(const cli_option *opt, char *out, size_t n)
{
    int has_lo = isfinite(opt->lo), has_hi = isfinite(opt->hi);
    const char *lt = opt->flags & CLI_ABOVE_LO ? "<" : "<=";
    *out = 0;
    if ((opt->kind != CLI_INT && opt->kind != CLI_FLOAT && opt->kind != CLI_LIST) ||
        (opt->lo == 0 && opt->hi == 0))
        return;
    if (has_lo && has_hi && !(opt->flags & (CLI_ABOVE_LO | CLI_BELOW_HI)))
        snprintf(out, n, "%.10g to %.10g", opt->lo, opt->hi);
    else if (has_lo && has_hi)
        snprintf(out, n, "%.10g %s %s %s %.10g", opt->lo, lt, opt->value,
                 opt->flags & CLI_BELOW_HI ? "<" : "<=", opt->hi);
    else if (has_lo)
        snprintf(out, n, "%s %s %.10g", opt->value, opt->flags & CLI_ABOVE_LO ? ">" : ">=",
                 opt->lo);
}
