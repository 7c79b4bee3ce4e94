/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iotrace top's renderers: the lines of a view (top_lines.c), shared by the batch text (-b)
 * and the full screen (top_screen.c, ncurses); one JSON object per interval (top_json.c).
 * They format the model's view (model/top.h) and compute nothing.
 */
#ifndef IOTRACE_TOP_OUT_H
#define IOTRACE_TOP_OUT_H

#include <stdbool.h>
#include <stdio.h>
#include "model/top.h"

/* Columns of a row before the name: the pid (processes) or the process count (files). */
#define TOP_PID_WIDTH 7
#define TOP_NAME_MIN 16

/* What the header says beside the numbers. */
struct top_status {
	bool paused;
	bool files;   /* the files pane is shown */
	const char *message; /* a line for the user (a bad key), or NULL */
};

/* The header's lines (3, or 4 with losses), each cut to width columns. */
int top_header_lines(const struct top_view *v, const struct top_status *st, int width,
		     char lines[4][512]);
/* The width of the name column when the screen is width wide. */
int top_name_width(int width);
/* The column titles of the rows (files: the files pane), with the sort column marked. */
void top_title_line(const struct top_view *v, bool files, int width, char *buf, size_t len);
/* One row as a line of width columns (escaped name, cut to its column). */
void top_row_line(const struct top_view *v, const struct top_row *r, bool files, int width,
		  char *buf, size_t len);

/* -b: the view as one text block (header, processes, files), rows at most max_rows each. */
void top_print_text(FILE *out, const struct top_view *v, int width, size_t max_rows);
/* -j: the view as one JSON object on one line. */
int top_print_json(FILE *out, const struct top_view *v, uint64_t unix_ms);

/*
 * The full screen (ncurses): top_screen_open fails (one line on stderr) when stdout is not a
 * terminal. top_screen_key waits up to ms for a key and applies it: the view's sort and
 * filter change in o, the pane and pause in st; it returns TOP_KEY_QUIT, TOP_KEY_REDRAW
 * (the view changed: draw it again) or TOP_KEY_NONE.
 */
enum top_key { TOP_KEY_NONE, TOP_KEY_REDRAW, TOP_KEY_QUIT };
int top_screen_open(void);
void top_screen_draw(const struct top_view *v, const struct top_status *st);
enum top_key top_screen_key(int ms, struct top_view_opts *o, struct top_status *st,
			    char *filter, size_t filter_len);
void top_screen_close(void);

#endif
