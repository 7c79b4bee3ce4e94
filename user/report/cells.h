/* SPDX-License-Identifier: GPL-2.0 */
/* Cells of the text tables: numbers shortened to a column, names cut in the middle. */
#ifndef IOTRACE_CELLS_H
#define IOTRACE_CELLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CELL_MAX 32
#define ELLIPSIS "…"

/*
 * Display width of text as printed: esc_text's units (an escape is as wide as it is long, a
 * character as a terminal shows it: "…" one column, an East Asian wide one two).
 */
int text_width(const char *s);
/* text, then spaces up to width columns. */
void put_padded(FILE *out, const char *text, int width);

/* Room for any name escaped whole: esc_text writes at most four bytes for one. */
#define NAME_TEXT_MAX (4 * 4096 + 64)
/*
 * name (bytes, as recorded) escaped for a text report (esc_text: one line, nothing raw for a
 * terminal) and shortened to width columns in its middle: the file name and as many of its
 * last directories as fit kept whole, then the path's start ("/usr/…/12/libgcc.a", what
 * tells files of one name apart); a file name longer than the column keeps its end. Whole when
 * width is 0. Cuts fall between escapes and characters, never inside one. Written into buf
 * (len at least 4 * width + 8; NAME_TEXT_MAX for width 0), which it returns.
 */
const char *name_cell(const char *name, int width, char *buf, size_t len);
/* name escaped, cut at its end to width columns ("…" last) when it is wider; into buf. */
const char *name_head(const char *name, int width, char *buf, size_t len);
/* 512, 12k, 1.2M: a count in at most 5 columns. */
const char *cell_count(uint64_t v, char buf[CELL_MAX]);
/* 832, 8.0K, 500K, 64M, 1.2G: bytes, binary units. */
const char *cell_bytes(uint64_t v, char buf[CELL_MAX]);
/* 850us, 1.2ms, 663ms, 1.30s: nanoseconds, to the precision a 6-column cell shows. */
const char *cell_time(uint64_t ns, char buf[CELL_MAX]);
/* 67,108,864: an integer with thousands separators (v rounded). */
const char *cell_grouped(double v, char buf[CELL_MAX]);
/* 520us, 1.2ms, 35ms: nanoseconds to two significant digits (what a log2 quantile holds). */
const char *cell_time_2sig(double ns, char buf[CELL_MAX]);
/* "exit 3", "killed by SIGKILL", or "exit unknown": a wait(2) status. */
void format_exit(char *buf, size_t len, bool known, int status);

#endif
