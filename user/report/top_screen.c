// SPDX-License-Identifier: GPL-2.0
/*
 * iotrace top's full screen, through ncurses (terminfo: works over ssh, in tmux and screen):
 * the header, the processes (or groups) and, with f, the files pane below them, each line
 * from top_lines.c. ncurses redraws only what changed, follows resizes (KEY_RESIZE) and
 * gives the terminal back as it found it at endwin().
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <curses.h>
#include "top_out.h"
#include "cells.h"

#define MIN_COLS 80
#define MIN_LINES 10

static bool open_;
static bool filtering; /* '/' pressed: keys go to the filter until Enter */

int top_screen_open(void)
{
	setlocale(LC_CTYPE, "");
	if (!newterm(NULL, stdout, stdin)) {
		fprintf(stderr, "iotrace: top: cannot use this terminal (TERM=%s); use -b or -j\n",
			getenv("TERM") ? getenv("TERM") : "");
		return -1;
	}
	open_ = true;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	erase();
	mvaddstr(0, 0, "iotrace top: starting (the first refresh comes after -d seconds)");
	refresh();
	return 0;
}

void top_screen_close(void)
{
	if (!open_)
		return;
	endwin();
	open_ = false;
}

/* A line at row y, cut to the screen; reverse video for titles. */
static void put_line(int y, const char *text, bool title)
{
	if (title)
		attron(A_REVERSE);
	mvaddnstr(y, 0, text, COLS);
	clrtoeol();
	if (title) {
		for (int x = text_width(text); x < COLS; x++)
			addch(' ');
		attroff(A_REVERSE);
	}
}

/* Rows from first down to the line before end; returns the next free line. */
static int put_rows(const struct top_view *v, struct top_row *const *rows, size_t n, bool files,
		    int y, int end)
{
	char line[NAME_TEXT_MAX];

	top_title_line(v, files, COLS, line, sizeof(line));
	put_line(y++, line, true);
	for (size_t i = 0; i < n && y < end; i++) {
		top_row_line(v, rows[i], files, COLS, line, sizeof(line));
		put_line(y++, line, false);
	}
	return y;
}

void top_screen_draw(const struct top_view *v, const struct top_status *st)
{
	char head[4][512];
	int n, y = 0, split;

	erase();
	if (COLS < MIN_COLS || LINES < MIN_LINES) {
		mvprintw(0, 0, "iotrace top: terminal too small (%dx%d)", COLS, LINES);
		mvprintw(1, 0, "need %dx%d; q quits", MIN_COLS, MIN_LINES);
		refresh();
		return;
	}
	n = top_header_lines(v, st, COLS, head);
	for (int i = 0; i < n; i++)
		put_line(y++, head[i], false);
	if (filtering)
		mvprintw(y - 1 + (n < 4), 0, "filter: %s_", v->o.filter ? v->o.filter : "");
	y++;
	split = st->files ? y + (LINES - y) / 2 : LINES;
	y = put_rows(v, v->shown, v->nshown, false, y, split);
	if (st->files)
		put_rows(v, v->shown_files, v->nshown_files, true, split, LINES);
	refresh();
}

/* A key typed into the filter: text grows, Backspace shrinks it, Enter ends. */
static void filter_key(int ch, char *filter, size_t len)
{
	size_t n = strlen(filter);

	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER || ch == 27)
		filtering = false;
	else if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n)
		filter[n - 1] = '\0';
	else if (ch >= 32 && ch < 127 && n + 1 < len)
		filter[n] = ch, filter[n + 1] = '\0';
}

enum top_key top_screen_key(int ms, struct top_view_opts *o, struct top_status *st,
			    char *filter, size_t filter_len)
{
	int ch;

	timeout(ms < 0 ? 0 : ms);
	ch = getch();
	if (ch == ERR)
		return TOP_KEY_NONE;
	st->message = NULL;
	if (filtering) {
		filter_key(ch, filter, filter_len);
		o->filter = filter;
		return TOP_KEY_REDRAW;
	}
	switch (ch) {
	case 'q': case 'Q':
		return TOP_KEY_QUIT;
	case '<': case KEY_LEFT:
		o->sort = (o->sort + TOP_SORTS - 1) % TOP_SORTS;
		break;
	case '>': case KEY_RIGHT:
		o->sort = (o->sort + 1) % TOP_SORTS;
		break;
	case 'r':
		o->ascending = !o->ascending;
		break;
	case 'f':
		st->files = !st->files;
		break;
	case 'p': case ' ':
		st->paused = !st->paused;
		break;
	case '/':
		filtering = true;
		filter[0] = '\0';
		o->filter = filter;
		break;
	case KEY_RESIZE:
		break;
	default:
		st->message = "keys: < > sort, r reverse, f files, p pause, / filter, q quit";
	}
	return TOP_KEY_REDRAW;
}
