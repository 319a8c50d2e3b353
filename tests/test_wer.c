/* Text normalisation and WER/CER scoring: exact values. */
#include "check.h"
#include "wer.h"

static void expect_norm(const char *in, const char *want)
{
    char *got = hark_normalize_text(in);
    CHECK(got && strcmp(got, want) == 0, "normalise [%s]: got [%s] want [%s]", in,
          got ? got : "(null)", want);
    free(got);
}

static void test_case_punctuation_space(void)
{
    expect_norm("Hello, World!", "hello world");
    expect_norm("  THE   quick\tbrown\n\nfox.  ", "the quick brown fox");
    expect_norm("Don't stop", "don't stop");
    expect_norm("DON\xE2\x80\x99T", "don't");            /* U+2019 becomes ' */
    expect_norm("'quoted' students' rock'n'roll", "quoted students rock'n'roll");
    expect_norm("well-known state\xE2\x80\x94of\xE2\x80\x93the-art", "well known state of the art");
    expect_norm("\"What?\" (she said) ... ok;", "what she said ok");
    expect_norm("", "");
    expect_norm(" .,!? ", "");
    expect_norm("\x01tab\x04" "bed\x1a", "tab bed");      /* control characters separate */
}

static void test_unicode_case(void)
{
    expect_norm("\xC3\x89L\xC3\x88VE \xC3\x9C" "BER", "\xC3\xA9l\xC3\xA8ve \xC3\xBC" "ber");
    expect_norm("\xC5\x81\xC3\x93" "D\xC5\xB9", "\xC5\x82\xC3\xB3" "d\xC5\xBA"); /* ŁÓDŹ */
    expect_norm("\xC4\xB0stanbul \xC5\xB8", "istanbul \xC3\xBF");              /* İ Ÿ */
    expect_norm("\xC8\x98" "A", "\xC8\x99" "a");                               /* Ș */
    expect_norm("\xC6\xAF\xE1\xBB\x9C" "NG", "\xC6\xB0\xE1\xBB\x9D" "ng");    /* ƯỜNG */
    expect_norm("\xCE\xA3\xCE\x9F\xCE\xA6\xCE\x9F\xCE\xA3", "\xCF\x83\xCE\xBF\xCF\x86\xCE\xBF\xCF\x83");
    expect_norm("\xD0\x9C\xD0\x98\xD0\xA0", "\xD0\xBC\xD0\xB8\xD1\x80");       /* МИР */
    expect_norm("caf\xC3\xA9\xC2\xA0" "bar\xC2\xAD" "ber", "caf\xC3\xA9 barber"); /* nbsp, soft hyphen */
    expect_norm("a\xFF" "b", "a b");                                           /* invalid byte */
}

static void test_numbers(void)
{
    expect_norm("0", "zero");
    expect_norm("42", "forty two");
    expect_norm("forty-two", "forty two");
    expect_norm("Forty Two", "forty two");
    expect_norm("1999", "one thousand nine hundred ninety nine");
    expect_norm("one thousand nine hundred and ninety-nine",
                "one thousand nine hundred ninety nine");
    expect_norm("105", "one hundred five");
    expect_norm("one hundred and five", "one hundred five");
    expect_norm("rock and roll, a hundred and the rest", "rock and roll a hundred and the rest");
    expect_norm("999999", "nine hundred ninety nine thousand nine hundred ninety nine");
    expect_norm("1,000,001", "one million one");
    expect_norm("12,345 and 1,2", "twelve thousand three hundred forty five and one two");
    expect_norm("2000000000", "two billion");
    expect_norm("3.14", "three point one four");
    expect_norm("007", "zero zero seven");
    expect_norm("1234567890123", "one two three four five six seven eight nine zero one two three");
    expect_norm("1st 2ND 3rd 4th 12th 20th 21st 100th", "first second third fourth twelfth "
                "twentieth twenty first one hundredth");
    expect_norm("mp3 4x4", "mp three four x four");
    expect_norm("It's 10:30, $5!", "it's ten thirty five");
}

static void expect_edits(const char *ref, const char *hyp, int words, long n, long s, long d,
                         long i)
{
    hark_edits e;
    int rc = words ? hark_word_edits(ref, hyp, &e) : hark_char_edits(ref, hyp, &e);
    CHECK(rc == 0 && e.ref == n && e.sub == s && e.del == d && e.ins == i,
          "%s [%s] vs [%s]: ref %ld S %ld D %ld I %ld, want %ld %ld %ld %ld",
          words ? "words" : "chars", ref, hyp, e.ref, e.sub, e.del, e.ins, n, s, d, i);
}

static void test_word_edits(void)
{
    expect_edits("the cat sat", "the cat sat", 1, 3, 0, 0, 0);
    expect_edits("the cat sat", "the dog sat", 1, 3, 1, 0, 0);
    expect_edits("the cat sat", "the sat", 1, 3, 0, 1, 0);
    expect_edits("the cat sat", "the cat sat down", 1, 3, 0, 0, 1);
    expect_edits("a b c d", "", 1, 4, 0, 4, 0);
    expect_edits("", "x y", 1, 0, 0, 0, 2);
    expect_edits("", "", 1, 0, 0, 0, 0);
    expect_edits("a b c d e f", "x a b d e f g", 1, 6, 0, 1, 2);
    hark_edits e;
    hark_word_edits("the cat sat on the mat", "a cat sat mat", &e);
    CHECK(hark_edit_count(&e) == 3, "errors %ld", hark_edit_count(&e));
    CHECK(fabs(hark_error_rate(hark_edit_count(&e), e.ref) - 0.5) < 1e-12, "WER 3/6");
    CHECK(hark_error_rate(4, 4) == 1.0, "empty hypothesis is 100%%");
    CHECK(hark_error_rate(0, 0) == 0.0, "empty against empty is 0");
    CHECK(hark_error_rate(2, 0) == 1.0, "words against an empty reference are 100%%");
    CHECK(fabs(hark_error_rate(1, 8) - 0.125) < 1e-12, "1/8");
}

static void test_char_edits(void)
{
    expect_edits("kitten", "sitting", 0, 6, 2, 0, 1);
    expect_edits("ab cd", "abcd", 0, 5, 0, 1, 0); /* the space is a character */
    expect_edits("abc", "", 0, 3, 0, 3, 0);
    expect_edits("", "ab", 0, 0, 0, 0, 2);
    /* multi-byte characters count once: é (2 bytes), € (3), 😀 (4) */
    expect_edits("caf\xC3\xA9", "cafe", 0, 4, 1, 0, 0);
    expect_edits("\xE2\x82\xAC\xF0\x9F\x98\x80", "\xE2\x82\xAC", 0, 2, 0, 1, 0);
    expect_edits("\xC3\xA9\xC3\xA9", "\xC3\xA9\xC3\xA8", 0, 2, 1, 0, 0);
}

/* The scoring as hark test does it: normalise, then count. */
static void test_end_to_end(void)
{
    char *ref = hark_normalize_text("In 1999, the U.S. had 42 states?!");
    char *hyp = hark_normalize_text("in nineteen ninety nine the us had forty-two states");
    hark_edits w;
    hark_word_edits(ref, hyp, &w);
    /* ref: in one thousand nine hundred ninety nine the u s had forty two states (14)
     * hyp: in nineteen ninety nine the us had forty two states (10) */
    CHECK(w.ref == 14 && w.sub == 2 && w.del == 4 && w.ins == 0, "ref %ld S %ld D %ld I %ld",
          w.ref, w.sub, w.del, w.ins);
    free(ref);
    free(hyp);
}

int main(void)
{
    test_case_punctuation_space();
    test_unicode_case();
    test_numbers();
    test_word_edits();
    test_char_edits();
    test_end_to_end();
    return check_summary("wer");
}
