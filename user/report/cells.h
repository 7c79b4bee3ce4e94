/* SPDX-License-Identifier: GPL-2.0 */
/* Cells of the text tables: numbers shortened to a column, names cut in the middle. */
#ifndef IOTRACE_CELLS_H
#define IOTRACE_CELLS_H

#include <stddef.h>
#include <stdint.h>

#define CELL_MAX 32
#define ELLIPSIS "…"

/* Display width of UTF-8 text (each ellipsis is three bytes, one column). */
int text_width(const char *s);
/*
 * name shortened to width columns in its middle, the file name kept whole
 * ("/usr/lib/…/libc.so.6"); a file name longer than the column keeps its end.
 * Returns name itself when it fits, else buf.
 */
const char *middle_cut(const char *name, int width, char *buf, size_t len);
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

#endif
