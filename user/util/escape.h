/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names as they are printed. File paths, process names (comm), command lines, cgroup paths
 * and symbols are bytes: anything but NUL, UTF-8 or not, control characters included. Each
 * output kind has one rule, here, and every renderer of that kind goes through it
 * (docs/json.md, "Names of files, processes and functions"; fuzzed against independent
 * decoders: tests/fuzz/fuzz_escape.c).
 *
 * The value rule (JSON, Prometheus, folded stacks) keeps the text valid UTF-8: a byte that is
 * not part of a valid UTF-8 character (RFC 3629: shortest form, no surrogates) is written as
 * the four characters \xHH (lower-case hex), and so is a backslash followed by 'x' (\x5c).
 * Every "\x" with two hex digits then stands for one byte and nothing else is changed, so a
 * name that is valid UTF-8 without "\x" in it reads as it is; decoding turns each \xHH back
 * into its byte.
 *
 * The characters a terminal or a viewer acts on, "controls" below: C0 controls, DEL, C1
 * controls, U+2028 and U+2029 (line breaks to JavaScript) and the bidirectional controls
 * (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), which reorder what a line shows.
 *
 * Each esc_* function writes at most cap - 1 bytes and a NUL (none when cap is 0); an escape
 * or a character is never cut: the output stops before the first one that does not fit. It
 * returns the length of the whole escaped name, so the output is complete when that is
 * below cap.
 */
#ifndef IOTRACE_ESCAPE_H
#define IOTRACE_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

typedef size_t esc_fn(char *out, size_t cap, const char *s);

/*
 * Text reports, as strace escapes: \\, \t \n \v \f \r, the other control bytes in octal (\33,
 * \177; three digits when an octal digit follows), the bytes of invalid UTF-8 and of the
 * other controls in hex (\xff, \xc2\x9b), everything else as it is. So nothing reaches a
 * terminal raw, a name is one line, and C's (or Python's codecs.escape_decode) string
 * escapes read it back.
 */
esc_fn esc_text;
/*
 * A JSON string's value: the value rule; controls stay characters, for the JSON serializer
 * to write as JSON escapes (cJSON writes \n, \t, \u001b).
 */
esc_fn esc_json;
/*
 * esc_json's value as a JSON string, quotes included, written as cJSON writes one: '"', '\'
 * and the C0 controls escaped (\b \f \n \r \t, the others \u00XX). For JSON written without
 * cJSON (--trace), so that both read back the same.
 */
esc_fn esc_json_quoted;
/*
 * A Prometheus label value, between its quotes: the value rule with the controls also written
 * \xHH (a newline too: none is left), then the text format's escapes, \\ and \".
 */
esc_fn esc_prom;
/*
 * A frame of a folded stack ("frame;frame;... count"): the value rule with the controls and
 * ';' also written \xHH, so a line holds one stack and its frames split at ';'. Spaces stay:
 * the readers take the count after the last space, and C++ names hold spaces.
 */
esc_fn esc_folded;

/* The whole escaped name in a malloc'ed string; NULL when out of memory. */
char *esc_dup(esc_fn *esc, const char *s);
/* Writes the escaped name to f; EOF on a write error (or out of memory), as fputs. */
int esc_fputs(esc_fn *esc, const char *s, FILE *f);

/*
 * esc_text's output, unit by unit, for cutting it without splitting an escape or a character:
 * the length in bytes of the unit at s (an escape, a character, or a stray byte) and its
 * width in columns (an escape's own length; a character's as a terminal shows it: 2 for
 * East Asian wide ones, 0 for combining marks); 0 at the end.
 */
size_t esc_text_unit(const char *s, int *columns);

#endif
