/* src/utf8.c: one character at a time, the valid flag, and whole-string
 * sanitising, against what Python's bytes.decode("utf-8", errors="replace")
 * gives for the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/base.h"

#define R "\xEF\xBF\xBD" /* U+FFFD */

static void test_decode(void)
{
    uint32_t c;
    CHECK(hark_utf8_decode("\xF0\x9F\x98\x80", 4, &c) == 4 && c == 0x1F600, "emoji %x", c);
    CHECK(hark_utf8_decode("\xC3\xA9", 2, &c) == 2 && c == 0xE9, "e acute %x", c);
    CHECK(hark_utf8_decode("\xC3", 1, &c) == 1 && c == 0xFFFD, "truncated %x", c);
    CHECK(hark_utf8_decode("\xC0\xAF", 2, &c) == 1 && c == 0xFFFD, "overlong %x", c);
    CHECK(hark_utf8_decode("\xED\xA0\x80", 3, &c) == 1 && c == 0xFFFD, "surrogate %x", c);
    /* a valid start cut short is replaced whole, as Python's errors="replace" does */
    CHECK(hark_utf8_decode("\xE2\x82" "b", 3, &c) == 2 && c == 0xFFFD, "cut short %x", c);
    CHECK(hark_utf8_decode("\xF4\x90\x80\x80", 4, &c) == 1 && c == 0xFFFD, "past U+10FFFF");
    CHECK(hark_utf8_decode("\xF4\x8F\xBF\xBF", 4, &c) == 4 && c == 0x10FFFF, "U+10FFFF %x", c);
    /* n bounds the read: a complete sequence past n is cut short */
    CHECK(hark_utf8_decode("\xE2\x82\xAC", 2, &c) == 2 && c == 0xFFFD, "bounded %x", c);
}

/* A real U+FFFD in the text is valid; a replaced part is not. */
static void test_valid_flag(void)
{
    uint32_t c;
    int valid = -1;
    CHECK(hark_utf8_next(R, 3, &c, &valid) == 3 && c == 0xFFFD && valid == 1, "real U+FFFD %d",
          valid);
    CHECK(hark_utf8_next("\xFF", 1, &c, &valid) == 1 && c == 0xFFFD && valid == 0, "0xFF %d",
          valid);
    CHECK(hark_utf8_next("a", 1, &c, &valid) == 1 && c == 'a' && valid == 1, "ascii %d", valid);
    CHECK(hark_utf8_next("\xE0\x80\xAF", 3, &c, &valid) == 1 && valid == 0, "overlong %d", valid);
}

static void expect_sanitized(const char *in, size_t n, const char *want)
{
    char *got = hark_utf8_sanitize(in, n);
    CHECK(got && strcmp(got, want) == 0, "sanitize '%s': '%s'", want, got ? got : "(null)");
    free(got);
}

/* the expected strings are Python's b"...".decode("utf-8", "replace") */
static void test_sanitize(void)
{
    expect_sanitized("plain", 5, "plain");
    expect_sanitized("", 0, "");
    expect_sanitized("\xff" "a\xc3\xa9\xe2\x82" "b\x80", 8, R "a\xc3\xa9" R "b" R);
    expect_sanitized("\xf0\x9f\x98", 3, R);
    expect_sanitized("\xf5\x80", 2, R R);
    expect_sanitized("\xe0\x80\xaf", 3, R R R);
    /* bytes past n are not read: "\xE2\x82\xAC" cut at 2 is one replaced part */
    expect_sanitized("abcdef", 3, "abc");
    expect_sanitized("x\xE2\x82\xAC", 3, "x" R);
}

int main(void)
{
    test_decode();
    test_valid_flag();
    test_sanitize();
    return check_summary("utf8");
}
