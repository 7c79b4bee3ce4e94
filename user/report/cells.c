// SPDX-License-Identifier: GPL-2.0
/* Cells of the text tables (see cells.h). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "cells.h"
#include "util/escape.h"

int text_width(const char *s)
{
	int w = 0, c;
	size_t n;

	while ((n = esc_text_unit(s, &c))) {
		w += c;
		s += n;
	}
	return w;
}

void put_padded(FILE *out, const char *text, int width)
{
	int w = text_width(text);

	fprintf(out, "%s%*s", text, width > w ? width - w : 0, "");
}

/* The bytes of the units at the start of s that fit in width columns. */
static int head_bytes(const char *s, int width)
{
	size_t at = 0, n;
	int c;

	while ((n = esc_text_unit(s + at, &c)) && c <= width) {
		width -= c;
		at += n;
	}
	return at;
}

/* The longest tail of s, in whole units, that fits in width columns. */
static const char *tail_of(const char *s, int width)
{
	int total = text_width(s), c;
	size_t n;

	while (total > width && (n = esc_text_unit(s, &c))) {
		total -= c;
		s += n;
	}
	return s;
}

/*
 * name escaped into buf, whole when it fits (with "…" at its end when buf is too short);
 * else the escaped text in *big (malloc'ed, or NULL: "?" in buf) for the caller to cut.
 */
static const char *escaped(const char *name, int width, char *buf, size_t len, char **big)
{
	size_t n = esc_text(buf, len, name);

	*big = NULL;
	if (n < len && (width <= 0 || text_width(buf) <= width))
		return buf;
	if (width <= 0) {
		esc_text(buf, len - strlen(ELLIPSIS), name);
		return strcat(buf, ELLIPSIS);
	}
	*big = esc_dup(esc_text, name);
	if (!*big)
		snprintf(buf, len, "?");
	return *big ? *big : buf;
}

const char *name_cell(const char *name, int width, char *buf, size_t len)
{
	char *t;
	const char *text = escaped(name, width, buf, len, &t), *base, *tail;

	if (!t)
		return text;
	base = strrchr(t, '/');
	base = base && base[1] ? base + 1 : t;
	if (text_width(base) + 2 > width) { /* not even "…/" and the file name */
		snprintf(buf, len, ELLIPSIS "%s", tail_of(base, width - 1));
		free(t);
		return buf;
	}
	/* The file name and as many of its directories as fit whole ('/' is never in an escape). */
	tail = base > t ? base - 1 : base;
	while (tail > t) {
		const char *up = tail - 1;

		while (up > t && *up != '/')
			up--;
		if (*up != '/' || text_width(up) + 1 > width)
			break;
		tail = up;
	}
	snprintf(buf, len, "%.*s" ELLIPSIS "%s", head_bytes(t, width - 1 - text_width(tail)), t,
		 tail);
	free(t);
	return buf;
}

const char *name_head(const char *name, int width, char *buf, size_t len)
{
	char *t;
	const char *text = escaped(name, width, buf, len, &t);

	if (!t)
		return text;
	snprintf(buf, len, "%.*s" ELLIPSIS, head_bytes(t, width - 1), t);
	free(t);
	return buf;
}

const char *cell_count(uint64_t v, char buf[CELL_MAX])
{
	if (v < 100000)
		snprintf(buf, CELL_MAX, "%llu", (unsigned long long)v);
	else if (v < 10000000)
		snprintf(buf, CELL_MAX, "%lluk", (unsigned long long)(v / 1000));
	else
		snprintf(buf, CELL_MAX, "%.1fM", v / 1e6);
	return buf;
}

const char *cell_bytes(uint64_t v, char buf[CELL_MAX])
{
	static const char unit[] = "KMGTP";
	double x = v;
	int u = -1;

	while (x >= 1024 && u < 4) {
		x /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, CELL_MAX, "%llu", (unsigned long long)v);
	else
		snprintf(buf, CELL_MAX, x < 10 ? "%.1f%c" : "%.0f%c", x, unit[u]);
	return buf;
}

const char *cell_time(uint64_t ns, char buf[CELL_MAX])
{
	if (!ns)
		snprintf(buf, CELL_MAX, "0");
	else if (ns < 1000000)
		snprintf(buf, CELL_MAX, "%lluus", (unsigned long long)((ns + 500) / 1000));
	else if (ns < 10000000)
		snprintf(buf, CELL_MAX, "%.1fms", ns / 1e6);
	else if (ns < 1000000000)
		snprintf(buf, CELL_MAX, "%llums", (unsigned long long)(ns / 1000000));
	else
		snprintf(buf, CELL_MAX, "%.2fs", ns / 1e9);
	return buf;
}

const char *cell_grouped(double v, char buf[CELL_MAX])
{
	char digits[CELL_MAX];
	int n, out = 0;

	n = snprintf(digits, sizeof(digits), "%.0f", v < 0 ? 0 : v);
	for (int i = 0; i < n && out < CELL_MAX - 2; i++) {
		if (i && (n - i) % 3 == 0)
			buf[out++] = ',';
		buf[out++] = digits[i];
	}
	buf[out] = 0;
	return buf;
}

const char *cell_time_2sig(double ns, char buf[CELL_MAX])
{
	static const struct { double scale; const char *unit; } units[] = {
		{ 1, "ns" }, { 1e3, "us" }, { 1e6, "ms" }, { 1e9, "s" },
	};
	int u = 0;
	double x;

	if (ns <= 0) {
		snprintf(buf, CELL_MAX, "-");
		return buf;
	}
	while (u < 3 && ns >= 995 * units[u].scale)
		u++;
	x = ns / units[u].scale;
	/* Two significant digits: 1.2, 12, 120 (rounded first, so 9.96 reads 10). */
	x = x >= 9.95 ? round(x / pow(10, floor(log10(x)) - 1)) * pow(10, floor(log10(x)) - 1)
		      : round(x * 10) / 10;
	snprintf(buf, CELL_MAX, x < 10 ? "%.1f%s" : "%.0f%s", x, units[u].unit);
	return buf;
}

void format_exit(char *buf, size_t len, bool known, int status)
{
	if (!known)
		snprintf(buf, len, "exit unknown");
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by SIG%s%s", sigabbrev_np(WTERMSIG(status)) ?: "?",
			 WCOREDUMP(status) ? " (core dumped)" : "");
	else
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
}
