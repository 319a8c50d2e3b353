/* The library's face below hark.h: the writers (output.c) and what the context
 * (context.c) lends them. */
#ifndef HARK_FACE_H
#define HARK_FACE_H

#include "decode/decode.h"

const hark_result *hark_context_result(const hark_context *c);
const hark_model *hark_context_model(const hark_context *c);

/* The result in one of the writers' formats (txt srt vtt tsv json csv lrc), or NULL
 * (unknown format, out of memory); the caller frees it. */
char *hark_format_result(const hark_result *r, const hark_output_params *layout, const char *format);
/* whisper.cpp's --print-colors: segment s's text with each character coloured by
 * the probability of the token that chose it (p^3 on a 10-step red-to-green
 * scale; a character split over tokens takes the least likely), for a terminal
 * (malloc'd; NULL when out of memory). */
struct hark_segment;
char *hark_colored_text(const hark_vocab *v, const struct hark_segment *s);

#endif
