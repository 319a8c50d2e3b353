/* Byte-level BPE: GPT-2's real ranks (gpt2.tiktoken) encode known ids and
 * round-trip English and non-Latin text; partial characters and invalid bytes
 * decode safely. */
#include "check.h"
#include "face.h"

static int b64(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

static int unbase64(const char *s, int n, char *out)
{
    int len = 0, bits = 0;
    unsigned acc = 0;
    for (int i = 0; i < n && s[i] != '='; i++) {
        acc = (acc << 6 | (unsigned)b64(s[i])) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[len++] = (char)((acc >> bits) & 0xff);
        }
    }
    return len;
}

/* Loads gpt2.tiktoken ("base64 rank" lines) as an English Whisper vocabulary. */
static int load_tiktoken(hark_vocab *v, const char *path)
{
    char *text;
    size_t size;
    hark_error e;
    if (hark_read_file(path, &text, &size, &e))
        return -1;
    hark_vocab_alloc(v, 51864, path, &e);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *sp = strchr(line, ' '), bytes[256];
        int rank = atoi(sp + 1), len = unbase64(line, (int)(sp - line), bytes);
        hark_vocab_set(v, rank, bytes, len);
        v->rank[rank] = rank;
    }
    free(text);
    hark_vocab_set(v, 50256, "<|endoftext|>", 13);
    hark_vocab_default_specials(v, 50256, 1500);
    hark_vocab_name_specials(v);
    return hark_vocab_index(v, &e);
}

static void roundtrip(const hark_vocab *v, const char *text, int max_tokens)
{
    int *ids, n = hark_tokenize(v, text, &ids);
    char *back = hark_detokenize(v, ids, n);
    CHECK(back && strcmp(back, text) == 0, "round trip of '%s' gave '%s'", text, back);
    CHECK(n > 0 && n <= max_tokens, "'%s' took %d tokens", text, n);
    free(ids);
    free(back);
}

static void test_gpt2(void)
{
    char path[1024];
    if (!shared_path(path, sizeof path, "fixtures/gpt2.tiktoken")) {
        SKIP("%s absent: GPT-2 BPE tests not run", path);
        return;
    }
    hark_vocab v;
    CHECK(load_tiktoken(&v, path) == 0, "load");
    int *ids, n = hark_tokenize(&v, "Hello world", &ids);
    CHECK(n == 2 && ids[0] == 15496 && ids[1] == 995, "Hello world -> %d tokens", n);
    free(ids);
    /* " And so, my fellow Americans" as GPT-2 encodes it */
    n = hark_tokenize(&v, " And so, my fellow Americans", &ids);
    int want[] = {843, 523, 11, 616, 5891, 3399};
    CHECK(n == 6 && memcmp(ids, want, sizeof want) == 0, "fellow Americans: %d tokens", n);
    free(ids);
    roundtrip(&v, "The quick brown fox jumps over the lazy dog.  Twice!\n", 16);
    roundtrip(&v, "Ça va? Größe, naïve café — «quotes»", 40);
    roundtrip(&v, "Привет, как дела? Это тест.", 40);
    roundtrip(&v, "日本語のテキストと中文文本", 60);
    roundtrip(&v, "emoji 🎉🎶 and tabs\tand\r\nnewlines", 30);
    roundtrip(&v, "they're we've I'll it's 12345 3.14", 20);
    /* a character whose bytes span two tokens comes out whole only together */
    n = hark_tokenize(&v, "🎉", &ids);
    CHECK(n >= 2, "🎉 spans %d tokens", n);
    char *part = hark_detokenize(&v, ids, 1), *whole = hark_detokenize(&v, ids, n);
    CHECK(strcmp(whole, "🎉") == 0, "whole '%s'", whole);
    CHECK(strstr(part, "\xef\xbf\xbd") != NULL, "a partial character decodes to U+FFFD");
    free(ids), free(part), free(whole);
    /* special ids are not text */
    int specials[] = {50257, 15496, 50362, 50363};
    char *t = hark_detokenize(&v, specials, 4);
    CHECK(strcmp(t, "Hello") == 0, "specials skipped: '%s'", t);
    free(t);
    int len;
    CHECK(strcmp(hark_token_bytes(&v, 50363, &len), "<|0.00|>") == 0, "timestamp name");
    CHECK(strcmp(hark_token_bytes(&v, 50258, &len), "<|en|>") == 0, "first language name");
    hark_vocab_free(&v);
}

#define R "\xef\xbf\xbd"

static void test_invalid_bytes(void)
{
    hark_vocab v;
    hark_error e;
    hark_vocab_alloc(&v, 300, "test", &e);
    for (int i = 0; i < 256; i++) {
        char b = (char)i;
        hark_vocab_set(&v, i, &b, 1);
    }
    hark_vocab_default_specials(&v, 256, 10);
    hark_vocab_name_specials(&v);
    hark_vocab_index(&v, &e);
    /* what Python's bytes.decode("utf-8", errors="replace") gives (openai-whisper's
     * tokenizer; HF's from_utf8_lossy agrees): one U+FFFD per maximal subpart */
    static const struct {
        const char *bytes, *text;
    } cases[] = {
        {"\xff" "a\xc3\xa9\xe2\x82" "b\x80", R "a\xc3\xa9" R "b" R},
        {"\xc1\x82", R R},                         /* overlong 'B' */
        {"\xe0\x80\xaf", R R R},                     /* overlong '/' */
        {"\xed\xa0\x80", R R R},                     /* a surrogate */
        {"\xf4\x90\x80\x80", R R R R},                /* past U+10FFFF */
        {"\xf5\x80", R R},
        {"\xf0\x9f\x98", R},                        /* cut short at the end */
        {"\xf0\x9f\x98" "a", R "a"},
        {"\xef\xbf\xbd" "ok", R "ok"},                 /* a real U+FFFD stays */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int ids[8], n = 0;
        for (const char *b = cases[c].bytes; *b; b++)
            ids[n++] = (unsigned char)*b;
        char *t = hark_detokenize(&v, ids, n);
        CHECK(strcmp(t, cases[c].text) == 0, "case %zu: '%s'", c, t);
        free(t);
    }
    char *t;
    int bad[] = {-5, 100000};
    t = hark_detokenize(&v, bad, 2);
    CHECK(t && t[0] == 0, "out-of-range ids are skipped");
    free(t);
    hark_vocab_free(&v);
}

int main(void)
{
    test_gpt2();
    test_invalid_bytes();
    return check_summary("tokenizer");
}
