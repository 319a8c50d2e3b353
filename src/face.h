/* The library's face below hark.h: the writers (output.c) and what the context
 * (context.c) lends them. */
#ifndef HARK_FACE_H
#define HARK_FACE_H

#include "decode/decode.h"

const hark_result *hark_context_result(const hark_context *c);
const hark_params *hark_context_params(const hark_context *c);
const hark_model *hark_context_model(const hark_context *c);

/* The result in one of the writers' formats (txt srt vtt tsv json csv lrc), or NULL
 * (unknown format, out of memory); the caller frees it. */
char *hark_format_result(const hark_result *r, const hark_params *p, const char *format);
/* A segment's text as the txt writer prints it: stripped, on a line of its own,
 * after "(speaker N) " for a diarized segment's label N (0: none; malloc'd; NULL
 * when out of memory). */
char *hark_txt_line(const char *text, char speaker);
/* whisper.cpp's --print-colors: segment s's text with each character coloured by
 * the probability of the token that chose it (p^3 on a 10-step red-to-green
 * scale; a character split over tokens takes the least likely), for a terminal
 * (malloc'd; NULL when out of memory). */
struct hark_segment;
char *hark_colored_text(const hark_vocab *v, const struct hark_segment *s);
/* The same for segment i of a context's result (NULL: no such segment, or out of memory). */
char *hark_segment_colored(const hark_context *c, int i);
/* Whether hark_format_result writes format name (txt srt vtt tsv json csv lrc). */
int hark_is_format(const char *name);
/* Segment i's speaker label ('0', '1', '?'; 0 for none), as the writers print it. */
char hark_segment_label(const hark_context *c, int i);
/* openai's --verbose line for a segment: "[00:01.000 --> 00:03.400] text\n",
 * hours only past the first, the speaker as whisper.cpp prints it:
 * "[...]  (speaker 1) text" (malloc'd; NULL when out of memory). */
char *hark_verbose_line(double start, double end, const char *text, char speaker);

#endif
