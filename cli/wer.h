/* Text normalisation and word/character error rates for golden-transcript
 * tests.  Internal API (used by `hark test` and tests/test_wer.c), not part of
 * include/hark.h.
 *
 * Normalisation, applied to reference and hypothesis alike:
 *  - lowercase: ASCII, Latin-1, Latin Extended-A/B (regular pairs), Latin
 *    Extended Additional, Greek, Cyrillic, Armenian, fullwidth A-Z; final
 *    sigma folds to sigma.  Accents are kept; no Unicode composition.
 *  - punctuation, symbols, control characters and every kind of space or dash
 *    separate words (so "well-known" is "well known", "a,b" is "a b"); soft
 *    hyphen and zero-width (non-)joiners vanish; invalid UTF-8 is a symbol.
 *  - apostrophes (' U+2019 U+02BC) are kept, as ', only between two letters:
 *    "Don't" -> "don't", "'quoted'" -> "quoted".
 *  - numbers become English words, the canonical form both sides meet in:
 *    "42" -> "forty two", "1,999" -> "one thousand nine hundred ninety nine"
 *    (no "and", no hyphens; up to 999,999,999,999), "3.5" -> "three point
 *    five", "21st" -> "twenty first"; digit strings with a leading zero or of
 *    more than 12 digits are read digit by digit ("007" -> "zero zero seven").
 *    Written-out numbers need nothing but the hyphen rule ("forty-two") and
 *    dropping "and" after hundred/thousand/million/billion when a number word
 *    follows ("one hundred and five" -> "one hundred five").
 *  - words are separated by exactly one space, none leading or trailing.
 *
 * Error counts come from a Levenshtein alignment (substitution, deletion and
 * insertion cost 1 each); WER aligns words, CER aligns the Unicode code points
 * of the normalised text, spaces between words included (as jiwer does).
 */
#ifndef HARK_WER_H
#define HARK_WER_H

#include <stddef.h>
#include <stdint.h>

/* The normalised form of text (malloc'd, caller frees; NULL when out of memory). */
char *hark_normalize_text(const char *text);

typedef struct hark_edits {
    long ref;            /* reference length: words or code points */
    long hyp;            /* hypothesis length                       */
    long sub, del, ins;  /* edits of one minimal alignment          */
} hark_edits;

/* Edits turning ref into hyp, both already normalised; words or characters.
 * Returns 0, or HARK_ERR_NOMEM. */
int hark_word_edits(const char *ref, const char *hyp, hark_edits *out);
int hark_char_edits(const char *ref, const char *hyp, hark_edits *out);

/* sub + del + ins */
long hark_edit_count(const hark_edits *e);
/* Errors per reference unit.  An empty reference gives 0 for an empty
 * hypothesis and 1 (100%) otherwise, never a division by zero. */
double hark_error_rate(long errors, long ref);

#endif
