/*
 * UTF-8 decoding as Python's bytes.decode(errors="replace") and Rust's
 * String::from_utf8_lossy do it (Unicode's "maximal subpart" practice): what
 * openai-whisper's tokenizer and Hugging Face's give for byte-level BPE output
 * that is not whole characters.
 */
#ifndef HARK_UTF8_H
#define HARK_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Decodes one UTF-8 character of s (n bytes left, n > 0) into *cp and returns
 * the bytes it used.  Bytes that start no valid character (overlong forms,
 * surrogates, values past U+10FFFF, a sequence cut short) yield U+FFFD once
 * for their maximal subpart: the longest start of a valid sequence, or one
 * byte, so "\xE2\x82b" is U+FFFD then "b", and "\xC0\xAF" two U+FFFD. */
size_t hark_utf8_decode(const char *s, size_t n, uint32_t *cp);

/* hark_utf8_decode, and whether the bytes it used are a valid character (a
 * U+FFFD in the text is one; a replaced part is not). */
size_t hark_utf8_next(const char *s, size_t n, uint32_t *cp, int *valid);

/* A malloc'd, NUL-terminated copy of n bytes with each invalid part replaced
 * by U+FFFD as hark_utf8_decode reads it; NULL when out of memory. */
char *hark_utf8_sanitize(const char *s, size_t n);
/* Characters of a NUL-terminated string as Python's len() counts them (code
 * points: the bytes that do not continue a character). */
size_t hark_utf8_chars(const char *s);

#endif
