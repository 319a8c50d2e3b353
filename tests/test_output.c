/* The writers, field by field: JSON parsed back and compared with the API's
 * values; srt, vtt and tsv lines parsed and compared with the segments. */
#include <cJSON.h>

#include <string.h>

#include "check.h"
#include "hark.h"
#include "face.h"

static double stamp(const char *s, int srt)
{
    int h = 0, m = 0, sec = 0, ms = 0;
    if (srt ? sscanf(s, "%d:%d:%d,%d", &h, &m, &sec, &ms) != 4
            : (sscanf(s, "%d:%d:%d.%d", &h, &m, &sec, &ms) != 4 &&
               (h = 0, sscanf(s, "%d:%d.%d", &m, &sec, &ms) != 3)))
        return -1;
    return h * 3600 + m * 60 + sec + ms / 1000.0;
}

static void test_json(hark_context *c)
{
    char *text = hark_format_output(c, "json", NULL);
    cJSON *root = cJSON_Parse(text);
    CHECK(root != NULL, "json parses");
    CHECK(strcmp(cJSON_GetObjectItem(root, "text")->valuestring, hark_text(c)) == 0, "text");
    CHECK(strcmp(cJSON_GetObjectItem(root, "language")->valuestring, "en") == 0, "language");
    cJSON *segs = cJSON_GetObjectItem(root, "segments");
    CHECK(cJSON_GetArraySize(segs) == hark_n_segments(c), "segment count");
    int i = 0;
    for (cJSON *s = segs ? segs->child : NULL; s; s = s->next, i++) {
        CHECK(cJSON_GetObjectItem(s, "id")->valueint == i, "id %d", i);
        CHECK(cJSON_IsNumber(cJSON_GetObjectItem(s, "seek")), "seek");
        CHECK(fabs(cJSON_GetObjectItem(s, "start")->valuedouble - hark_segment_start(c, i)) < 1e-9 &&
                  fabs(cJSON_GetObjectItem(s, "end")->valuedouble - hark_segment_end(c, i)) < 1e-9,
              "times of segment %d", i);
        CHECK(strcmp(cJSON_GetObjectItem(s, "text")->valuestring, hark_segment_text(c, i)) == 0, "text %d", i);
        cJSON *toks = cJSON_GetObjectItem(s, "tokens");
        CHECK(cJSON_GetArraySize(toks) == hark_segment_n_tokens(c, i), "tokens of %d", i);
        int j = 0;
        for (cJSON *t = toks->child; t; t = t->next, j++) {
            hark_token_info ti = hark_segment_token(c, i, j);
            double p = cJSON_GetObjectItem(t, "p")->valuedouble;
            CHECK(cJSON_GetObjectItem(t, "id")->valueint == ti.id && fabs(p - ti.p) < 1e-6 &&
                      p > 0 && p <= 1 && strcmp(cJSON_GetObjectItem(t, "text")->valuestring, ti.text) == 0,
                  "token %d.%d", i, j);
        }
        const char *nums[] = {"temperature", "avg_logprob", "compression_ratio", "no_speech_prob"};
        for (int k = 0; k < 4; k++)
            CHECK(cJSON_IsNumber(cJSON_GetObjectItem(s, nums[k])), "%s", nums[k]);
        CHECK(fabs(cJSON_GetObjectItem(s, "avg_logprob")->valuedouble - hark_segment_avg_logprob(c, i)) < 1e-5,
              "avg_logprob %d", i);
    }
    cJSON_Delete(root);
    free(text);
}

/* srt: index, "HH:MM:SS,mmm --> HH:MM:SS,mmm", text, blank; vtt: header, then
 * "[HH:]MM:SS.mmm --> ...", text, blank; tsv: header, then ms<TAB>ms<TAB>text. */
static void test_subtitles(hark_context *c, int srt)
{
    char *text = hark_format_output(c, srt ? "srt" : "vtt", NULL), *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    if (!srt) {
        CHECK(line && strcmp(line, "WEBVTT") == 0, "vtt header");
        line = strtok_r(NULL, "\n", &save);
    }
    for (int i = 0; i < hark_n_segments(c); i++) {
        if (srt) {
            CHECK(line && atoi(line) == i + 1, "srt index %d", i + 1);
            line = strtok_r(NULL, "\n", &save);
        }
        char a[32] = "", b[32] = "";
        CHECK(line && sscanf(line, "%31s --> %31s", a, b) == 2, "cue timing line %d", i);
        CHECK(fabs(stamp(a, srt) - hark_segment_start(c, i)) < 0.0006 &&
                  fabs(stamp(b, srt) - hark_segment_end(c, i)) < 0.0006,
              "cue %d times %s %s", i, a, b);
        CHECK(srt ? strlen(a) == 12 : (strlen(a) == 9 || strlen(a) == 12), "stamp format %s", a);
        line = strtok_r(NULL, "\n", &save); /* the text line */
        CHECK(line != NULL && strstr(line, "-->") == NULL, "cue %d text", i);
        line = strtok_r(NULL, "\n", &save);
    }
    CHECK(line == NULL, "nothing after the last cue");
    free(text);
}

static void test_tsv(hark_context *c)
{
    char *text = hark_format_output(c, "tsv", NULL), *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    CHECK(line && strcmp(line, "start\tend\ttext") == 0, "tsv header");
    for (int i = 0; i < hark_n_segments(c); i++) {
        line = strtok_r(NULL, "\n", &save);
        long a = -1, b = -1;
        CHECK(line && sscanf(line, "%ld\t%ld\t", &a, &b) == 2, "tsv row %d", i);
        CHECK(a == lround(hark_segment_start(c, i) * 1000) && b == lround(hark_segment_end(c, i) * 1000),
              "tsv times %ld %ld", a, b);
    }
    free(text);
}

/* ------------------------------------------------------------ word cues */

static hark_word W[] = {{" The", 0.0, 0.3, 1, 1}, {" quick", 0.3, 0.6, 1, 1}, {" brown", 0.6, 0.9, 1, 1},
                        {" fox", 0.9, 1.2, 1, 1},  {" jumps", 1.2, 1.5, 1, 1}, {" over", 5.0, 5.3, 1, 1},
                        {" the", 5.3, 5.5, 1, 1},  {" lazy", 5.5, 5.8, 1, 1},  {" dog.", 5.8, 6.2, 1, 1}};

/* Two segments of hand-made words: 0-1.5 s and, after a pause, 5-6.2 s. */
static hark_result two_segments(hark_segment seg[2])
{
    memset(seg, 0, 2 * sizeof *seg);
    seg[0] = (hark_segment){.start = 0, .end = 1.5, .text = " The quick brown fox jumps",
                            .words = W, .n_words = 5};
    seg[1] = (hark_segment){.start = 5, .end = 6.2, .text = " over the lazy dog.", .words = W + 5,
                            .n_words = 4};
    return (hark_result){.seg = seg, .n = 2};
}

static void expect_cues(const hark_result *r, const hark_output_params *p, const char *what, const char *want)
{
    char *got = hark_format_result(r, p, "srt");
    CHECK(got && strcmp(got, want) == 0, "%s: got\n%s", what, got ? got : "(null)");
    free(got);
}

/* openai's --max_line_width, --max_line_count and --max_words_per_line, and
 * --highlight_words within such cues; the expected cues worked out by hand
 * from openai/whisper's ResultWriter rules. */
static const struct cue_case {
    int width, count, per_line, highlight, segments;
    const char *what, *want;
} CUE_CASES[] = {
    {0, 0, 0, 0, 2, "no layout: a cue a segment",
     "1\n00:00:00,000 --> 00:00:01,500\nThe quick brown fox jumps\n\n"
     "2\n00:00:05,000 --> 00:00:06,200\nover the lazy dog.\n\n"},
    {0, 0, 2, 0, 2, "2 words a cue, within segments",
     "1\n00:00:00,000 --> 00:00:00,600\nThe quick\n\n2\n00:00:00,600 --> 00:00:01,200\nbrown fox\n\n"
     "3\n00:00:01,200 --> 00:00:01,500\njumps\n\n4\n00:00:05,000 --> 00:00:05,500\nover the\n\n"
     "5\n00:00:05,500 --> 00:00:06,200\nlazy dog.\n\n"},
    {10, 0, 0, 0, 2, "10 characters a line, cues still the segments",
     "1\n00:00:00,000 --> 00:00:01,500\nThe quick\nbrown fox\njumps\n\n"
     "2\n00:00:05,000 --> 00:00:06,200\nover the\nlazy dog.\n\n"},
    {10, 2, 0, 0, 2, "10 characters, 2 lines a cue, a new cue after the 3.5 s pause",
     "1\n00:00:00,000 --> 00:00:01,200\nThe quick\nbrown fox\n\n2\n00:00:01,200 --> 00:00:01,500\njumps\n\n"
     "3\n00:00:05,000 --> 00:00:06,200\nover the\nlazy dog.\n\n"},
    {10, 2, 0, 1, 1, "highlighted words across a line break",
     "1\n00:00:00,000 --> 00:00:00,300\n<u>The</u> quick\nbrown fox\n\n"
     "2\n00:00:00,300 --> 00:00:00,600\nThe <u>quick</u>\nbrown fox\n\n"
     "3\n00:00:00,600 --> 00:00:00,900\nThe quick\n<u>brown</u> fox\n\n"
     "4\n00:00:00,900 --> 00:00:01,200\nThe quick\nbrown <u>fox</u>\n\n"
     "5\n00:00:01,200 --> 00:00:01,500\n<u>jumps</u>\n\n"},
};

static void test_word_cues(void)
{
    hark_segment seg[2];
    hark_result r = two_segments(seg);
    hark_output_params p = {0};
    for (size_t i = 0; i < sizeof CUE_CASES / sizeof *CUE_CASES; i++) {
        const struct cue_case *c = &CUE_CASES[i];
        p.max_line_width = c->width, p.max_line_count = c->count;
        p.max_words_per_line = c->per_line, p.highlight_words = c->highlight;
        r.n = c->segments;
        expect_cues(&r, &p, c->what, c->want);
    }
    /* widths count characters, not bytes: " caf\u00e9" is 5 wide */
    hark_word accented[] = {{" The", 0, 0.3, 1, 1}, {" caf\xc3\xa9", 0.3, 0.6, 1, 1}};
    hark_segment one = {.start = 0, .end = 0.6, .text = " The caf\xc3\xa9", .words = accented, .n_words = 2};
    hark_result r1 = {.seg = &one, .n = 1};
    p = (hark_output_params){.max_line_width = 8};
    expect_cues(&r1, &p, "a two-byte character", "1\n00:00:00,000 --> 00:00:00,600\nThe caf\xc3\xa9\n\n");
}

static void expect_format(const hark_result *r, const hark_output_params *p, const char *format,
                          const char *want)
{
    char *got = hark_format_result(r, p, format);
    CHECK(got && strcmp(got, want) == 0, "%s: got\n%s", format, got ? got : "(null)");
    free(got);
}

/* --diarize's labels as whisper.cpp writes them: "(speaker 0) " before the text in
 * txt and srt, a WebVTT voice span, a tsv column, a json field after the text;
 * '?' when neither channel is louder; a segment without a label has none. */
static void test_speaker_labels(void)
{
    hark_segment seg[3];
    hark_result r = two_segments(seg);
    seg[0].speaker = '0', seg[1].speaker = '?';
    seg[2] = (hark_segment){.start = 7, .end = 8, .text = " Unlabelled."};
    r.n = 3;
    r.diarized = 1; /* transcribed with params.diarize */
    hark_output_params p = {0};
    expect_format(&r, &p, "txt", "(speaker 0) The quick brown fox jumps\n(speaker ?) over the lazy dog.\n"
                                 "Unlabelled.\n");
    expect_format(&r, &p, "vtt", "WEBVTT\n\n00:00.000 --> 00:01.500\n<v Speaker0>The quick brown fox jumps\n\n"
                                 "00:05.000 --> 00:06.200\n<v Speaker?>over the lazy dog.\n\n"
                                 "00:07.000 --> 00:08.000\nUnlabelled.\n\n");
    expect_format(&r, &p, "tsv", "start\tend\tspeaker\ttext\n0\t1500\t0\tThe quick brown fox jumps\n"
                                 "5000\t6200\t?\tover the lazy dog.\n7000\t8000\t\tUnlabelled.\n");
    p.max_line_width = 10, p.max_line_count = 2; /* word cues: the first word's segment's */
    r.n = 2;
    expect_format(&r, &p, "srt", "1\n00:00:00,000 --> 00:00:01,200\n(speaker 0) The quick\nbrown fox\n\n"
                                 "2\n00:00:01,200 --> 00:00:01,500\n(speaker 0) jumps\n\n"
                                 "3\n00:00:05,000 --> 00:00:06,200\n(speaker ?) over the\nlazy dog.\n\n");
    char *json = hark_format_result(&r, &p, "json");
    CHECK(json && strstr(json, "\"text\":\" over the lazy dog.\",\"speaker\":\"?\",\"tokens\""),
          "json speaker after the text: %s", json);
    free(json);
    seg[0].speaker = seg[1].speaker = 0;
    expect_format(&r, &p, "tsv", "start\tend\tspeaker\ttext\n0\t1500\t\tThe quick brown fox jumps\n"
                                 "5000\t6200\t\tover the lazy dog.\n");
}

/* whisper.cpp's csv (quotes doubled, as RFC 4180) and lrc ([mm:ss.xx] at each
 * segment's start, minutes past 99 as they come), plain and diarized. */
static void test_csv_lrc(void)
{
    hark_segment seg[3];
    hark_result r = two_segments(seg);
    seg[1].text = " He said \"no\", \"\"twice\".";
    seg[2] = (hark_segment){.start = 6000.456, .end = 6001, .text = " Late."};
    r.n = 3;
    hark_output_params p = {0};
    expect_format(&r, &p, "csv", "start,end,text\n0,1500,\"The quick brown fox jumps\"\n"
                                 "5000,6200,\"He said \"\"no\"\", \"\"\"\"twice\"\".\"\n"
                                 "6000456,6001000,\"Late.\"\n");
    expect_format(&r, &p, "lrc", "[by:hark]\n[00:00.00]The quick brown fox jumps\n"
                                 "[00:05.00]He said \"no\", \"\"twice\".\n[100:00.46]Late.\n");
    r.diarized = 1;
    seg[0].speaker = '1', seg[1].speaker = '?';
    expect_format(&r, &p, "csv", "start,end,speaker,text\n0,1500,1,\"The quick brown fox jumps\"\n"
                                 "5000,6200,?,\"He said \"\"no\"\", \"\"\"\"twice\"\".\"\n"
                                 "6000456,6001000,,\"Late.\"\n");
    expect_format(&r, &p, "lrc", "[by:hark]\n[00:00.00](speaker 1) The quick brown fox jumps\n"
                                 "[00:05.00](speaker ?) He said \"no\", \"\"twice\".\n[100:00.46]Late.\n");
}

static int token_of(const hark_model *m, const char *bytes)
{
    int id = hark_vocab_lookup(&m->vocab, bytes, (int)strlen(bytes));
    CHECK(id >= 0, "the vocabulary has a token for byte %02x", (unsigned char)bytes[0]);
    return id;
}

/* --print-colors: whisper.cpp's palette by p^3; the opening blank outside the
 * colours, specials skipped, a character split over two tokens one colour (the
 * less likely token's), an unfinished one U+FFFD. */
static void test_colored(const hark_model *m)
{
    int tokens[] = {token_of(m, " "), token_of(m, " "), token_of(m, "T"), token_of(m, "\xc3"), token_of(m, "\xa9"),
                    m->vocab.sp.eot, token_of(m, "!"), token_of(m, "\xe2")};
    float probs[] = {1, 0.1f, 1, 0.9f, 0.5f, 1, 0, 0.95f};
    hark_segment s = {.tokens = tokens, .probs = probs, .n_tokens = 8};
    char *got = hark_colored_text(&m->vocab, &s);
    const char *want = "  \033[38;5;82mT\033[0m\033[38;5;202m\xc3\xa9\033[0m\033[38;5;196m!\033[0m"
                       "\033[38;5;118m\xef\xbf\xbd\033[0m";
    CHECK(got && strcmp(got, want) == 0, "colored text: %s", got ? got : "(null)");
    free(got);
}

/* whisper.cpp's --max-len with --split-on-word: pieces of at most N characters
 * cut between words, each with its words' tokens (the timestamps at the ends go
 * with the first and last piece) and bounds. */
static void test_split_segment(void)
{
    enum { TS = 1000, EOT = 900 };
    int tokens[] = {TS, 1, 2, 3, 4, TS + 50};
    float probs[] = {0.9f, 0.8f, 0.7f, 0.6f, 0.5f, 0.4f};
    char *texts[] = {"<|0.00|>", " The", " quick", " br", "own", "<|1.00|>"};
    hark_word words[] = {{" The", 0, 0.2, 0.8f, 1}, {" quick", 0.2, 0.5, 0.7f, 1},
                         {" brown", 0.5, 0.9, 0.55f, 2}};
    hark_segment s = {.seek = 100, .start = 0, .end = 1, .text = " The quick brown", .tokens = tokens,
                      .probs = probs, .token_text = texts, .n_tokens = 6, .words = words,
                      .n_words = 3, .avg_logprob = -0.25f};
    hark_segment *pc;
    int n;
    CHECK(hark_split_segment(&s, 16, EOT, &pc, &n) == 0 && n == 0 && !pc, "fits: whole (%d)", n);
    CHECK(hark_split_segment(&s, 9, EOT, &pc, &n) == 0 && n == 2, "9 characters: %d pieces", n);
    if (n == 2) {
        CHECK(!strcmp(pc[0].text, " The quick") && !strcmp(pc[1].text, " brown"), "texts [%s] [%s]",
              pc[0].text, pc[1].text);
        CHECK(pc[0].n_tokens == 3 && pc[0].tokens[0] == TS && pc[0].tokens[2] == 2 &&
                  pc[1].n_tokens == 3 && pc[1].tokens[0] == 3 && pc[1].tokens[2] == TS + 50 &&
                  pc[1].probs[1] == 0.5f && !strcmp(pc[1].token_text[2], "<|1.00|>"),
              "tokens split at the word, timestamps at the ends");
        CHECK(pc[0].start == 0 && pc[0].end == 0.5 && pc[1].start == 0.5 && pc[1].end == 0.9 &&
                  pc[1].n_words == 1 && pc[1].words[0].n_tokens == 2 && pc[1].seek == 100 &&
                  pc[1].avg_logprob == -0.25f, "bounds, words and statistics");
    }
    for (int k = 0; k < n; k++)
        hark_segment_free(&pc[k]);
    free(pc);
    CHECK(hark_split_segment(&s, 1, EOT, &pc, &n) == 0 && n == 3 && !strcmp(pc[2].text, " brown") &&
              pc[1].n_tokens == 1 && pc[1].tokens[0] == 2, "1 character: a word a piece");
    for (int k = 0; k < n; k++)
        hark_segment_free(&pc[k]);
    free(pc);
}

int main(void)
{
    char err[512];
    hark_model *m = hark_model_load("tests/data/tiny-random/hf-f32", err, sizeof err);
    CHECK(m != NULL, "%s", err);
    hark_params p = hark_default_params();
    p.search.beam_size = 1, p.fallback.n_temperatures = 1;
    hark_context *c = hark_context_new(m, &p);
    CHECK(hark_transcribe_file(c, "tests/data/clip.wav") == 0, "%s", hark_last_error(c));
    CHECK(hark_n_segments(c) >= 2, "%d segments", hark_n_segments(c));
    test_json(c);
    test_subtitles(c, 1);
    test_subtitles(c, 0);
    test_tsv(c);
    CHECK(hark_format_output(c, "doc", NULL) == NULL, "unknown format");
    test_word_cues();
    test_speaker_labels();
    test_csv_lrc();
    test_split_segment();
    test_colored(m);
    CHECK(hark_segment_speaker(c, 0) == HARK_SPEAKER_NONE, "samples of a mono file: no speaker");
    hark_context_free(c);
    hark_model_free(m);
    return check_summary("output");
}
