// SPDX-License-Identifier: GPL-2.0
/*
 * iotrace top's lines: the header and the rows of a view as text, for the batch output (-b)
 * and the full screen alike. Columns come from TOP_RATE_FIELDS (model/fields.h).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "top_out.h"
#include "cells.h"
#include "model/model.h"

/* Room taken by the rate columns: each its width and one space before it. */
#define TOP_RATE_WIDTH(name, col, w, ...) + (w) + 1
#define RATES_WIDTH (0 TOP_RATE_FIELDS(TOP_RATE_WIDTH))

int top_name_width(int width)
{
	int w = width - TOP_PID_WIDTH - 1 - RATES_WIDTH;

	return w < TOP_NAME_MIN ? TOP_NAME_MIN : w;
}

/* A rate as a cell: bytes (K, M, G per second), percent, ops; "-" without a value. */
static const char *rate_cell(double v, char fmt, const char *na, char buf[CELL_MAX])
{
	if (na)
		return "n/a";
	if (v == TOP_NONE)
		return "-";
	if (fmt == 'r')
		return cell_bytes((uint64_t)(v + 0.5), buf);
	snprintf(buf, CELL_MAX, fmt == 'p' ? "%.1f" : "%.0f", v);
	return buf;
}

#define TOP_CELL(name, col, w, fmt, ...)                                                           \
	n += snprintf(buf + n, len - n, " %*s", w,                                                 \
		      rate_cell(r->r.name, fmt, v->na[TOP_SORT_READ + i], cell));                  \
	i++;                                                                                       \
	if (n >= len)                                                                              \
		return;

void top_row_line(const struct top_view *v, const struct top_row *r, bool files, int width,
		  char *buf, size_t len)
{
	char name[NAME_TEXT_MAX], cell[CELL_MAX];
	int namew = top_name_width(width), i = 0;
	size_t n;

	name_cell(r->name, namew, name, sizeof(name));
	if (files || !r->pid)
		snprintf(cell, sizeof(cell), files ? "%u" : "(%u)", r->procs);
	else
		snprintf(cell, sizeof(cell), "%u", r->pid);
	n = snprintf(buf, len, "%*s ", TOP_PID_WIDTH, cell);
	if (n >= len)
		return;
	n += snprintf(buf + n, len - n, "%s", name);
	for (int pad = namew - text_width(name); pad > 0 && n + 1 < len; pad--)
		buf[n++] = ' ', buf[n] = '\0';
	TOP_RATE_FIELDS(TOP_CELL)
}

/* The sort column's title is marked by a '*', in the space before it when it is full. */
#define TOP_TITLE(name, col, w, ...)                                                               \
	snprintf(head, sizeof(head), "%s%s", (int)v->o.sort == TOP_SORT_READ + i ? "*" : "", col); \
	n += snprintf(buf + n, len - n, "%*s", (w) + 1, head);                                     \
	i++;                                                                                       \
	if (n >= len)                                                                              \
		return;

void top_title_line(const struct top_view *v, bool files, int width, char *buf, size_t len)
{
	int namew = top_name_width(width), i = 0;
	static const char *const group_titles[] = { "COMM", "CGROUP", "CONTAINER", "POD" };
	const char *first = files || v->o.group != TOP_BY_PROCESS ? "PROCS" : "PID";
	const char *name = files ? "FILE" : group_titles[v->o.group];
	char head[32];
	size_t n;

	snprintf(head, sizeof(head), "%s%s", v->o.sort == TOP_SORT_PID ? "*" : "", first);
	n = snprintf(buf, len, "%*s ", TOP_PID_WIDTH, head); /* "*PROCS" fits 7 */
	if (n >= len)
		return;
	snprintf(head, sizeof(head), "%s%s", v->o.sort == TOP_SORT_NAME ? "*" : "", name);
	n += snprintf(buf + n, len - n, "%-*s", namew, head);
	if (n >= len)
		return;
	TOP_RATE_FIELDS(TOP_TITLE)
}

static const char *na_or(const char *na, const char *text)
{
	return na ? "n/a" : text;
}

static const char *ns_cell(double ns, char buf[CELL_MAX])
{
	return ns == TOP_NONE ? "-" : cell_time((uint64_t)ns, buf);
}

/* Counts lost (not those only untimed, or counted late): said in the header. */
static bool lost(int drop)
{
	return drop != DROP_UNTIMED && drop != DROP_BLOCK_UNSEEN;
}

static uint64_t drops_total(const struct top_view *v)
{
	uint64_t n = 0;

	for (int i = 0; i < DROP_COUNTERS; i++)
		n += lost(i) ? v->drops[i] : 0;
	return n;
}

/* "lost in this interval: NAME N ..." (the report's drop counters, docs/json.md). */
static void drops_line(const struct top_view *v, char *buf, size_t len)
{
	size_t n = snprintf(buf, len, "lost in this interval:");

	for (int i = 0; i < DROP_COUNTERS && n < len; i++)
		if (v->drops[i] && lost(i))
			n += snprintf(buf + n, len - n, " %s %llu", drop_names[i],
				      (unsigned long long)v->drops[i]);
}

int top_header_lines(const struct top_view *v, const struct top_status *st, int width,
		     char lines[4][512])
{
	const struct top_rates *r = &v->h.r;
	const struct top_disk_rates *d = &v->h.d;
	char a[CELL_MAX], b[CELL_MAX], c[CELL_MAX], e[CELL_MAX], f[CELL_MAX], clock[16];
	time_t now = time(NULL);
	int n = 3;

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
	snprintf(lines[0], 512, "iotrace top %s  %.2fs  %u processes  sort %s%s%s%s%s", clock,
		 v->seconds, v->h.live, top_sort_name(v->o.sort), v->o.ascending ? " (asc)" : "",
		 st && st->paused ? "  PAUSED" : "", v->o.filter && *v->o.filter ? "  filter: " : "",
		 v->o.filter && *v->o.filter ? v->o.filter : "");
	if (r->hit_pct != TOP_NONE)
		snprintf(c, sizeof(c), "%.1f%%", r->hit_pct);
	snprintf(lines[1], 512, "syscalls  read %s/s  write %s/s  hit %s  io_uring %s ops/s",
		 cell_bytes((uint64_t)r->read_bytes_per_sec, a),
		 cell_bytes((uint64_t)r->write_bytes_per_sec, b),
		 na_or(v->na[TOP_SORT_HIT], r->hit_pct == TOP_NONE ? "-" : c),
		 na_or(v->na[TOP_SORT_URING], rate_cell(r->io_uring_ops_per_sec, 'o', NULL, e)));
	snprintf(lines[2], 512,
		 "disks     read %s/s %.0f IOPS p99 %s  write %s/s %.0f IOPS p99 %s  writeback %s/s",
		 cell_bytes((uint64_t)r->disk_read_bytes_per_sec, a), d->read_iops,
		 ns_cell(d->read_p99_ns, b), cell_bytes((uint64_t)r->disk_write_bytes_per_sec, c),
		 d->write_iops, ns_cell(d->write_p99_ns, e),
		 cell_bytes((uint64_t)d->writeback_bytes_per_sec, f));
	if (drops_total(v) || (st && st->message)) {
		if (st && st->message)
			snprintf(lines[3], 512, "%s", st->message);
		else
			drops_line(v, lines[3], 512);
		n = 4;
	}
	for (int i = 0; i < n; i++)
		if (width > 0 && width < 512)
			lines[i][width] = '\0';
	return n;
}

/* One table of the text block (files: the files'), its title, its first max_rows rows. */
static void print_table(FILE *out, const struct top_view *v, bool files, int width,
			size_t max_rows)
{
	struct top_row *const *rows = files ? v->shown_files : v->shown;
	size_t n = files ? v->nshown_files : v->nshown;
	char line[NAME_TEXT_MAX];

	top_title_line(v, files, width, line, sizeof(line));
	fprintf(out, "%s\n", line);
	for (size_t i = 0; i < n && i < max_rows; i++) {
		top_row_line(v, rows[i], files, width, line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
	fputc('\n', out);
}

void top_print_text(FILE *out, const struct top_view *v, int width, size_t max_rows)
{
	char lines[4][512];
	int n = top_header_lines(v, NULL, 0, lines);

	for (int i = 0; i < n; i++)
		fprintf(out, "%s\n", lines[i]);
	fputc('\n', out);
	print_table(out, v, false, width, max_rows);
	print_table(out, v, true, width, max_rows);
	fflush(out);
}
