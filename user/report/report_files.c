// SPDX-License-Identifier: GPL-2.0
/*
 * The text report's files table: one row per file of a process, every layer side by side
 * (syscalls, page cache, block I/O), sorted by I/O time (by bytes without timing). Its
 * columns are FILE_SUMMARY_FIELDS (fields.h); the model derived every number.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cells.h"
#include "model/files.h"
#include "model/names.h"
#include "report.h"
#include "util/disks.h"
#include "model/syscall_table.h"

/* Width of the file column; a longer name is shortened in its middle. */
#define NAME_COLUMN 22

/* ---- cells ---- */

static void put_count(FILE *out, uint64_t v, int width)
{
	char s[CELL_MAX];

	fprintf(out, " %*s", width, cell_count(v, s));
}

static void put_bytes(FILE *out, uint64_t v, int width)
{
	char s[CELL_MAX];

	fprintf(out, " %*s", width, cell_bytes(v, s));
}

static void put_time(FILE *out, uint64_t ns, int width)
{
	char s[CELL_MAX];

	fprintf(out, " %*s", width, cell_time(ns, s));
}

/* --wide: exact numbers, in wider columns. */
#define WIDE_EXTRA 6

/* Columns shown: bit k for the k-th of FILE_SUMMARY_FIELDS (a counter k in scope). */
#define ALL_COLUMNS (~0u)

#define SUMMARY_CELL(name, column, width, format, help)                                   \
	if (!(shown & (1u << k++)))                                                       \
		;                                                                         \
	else if (s->name == FILE_SUMMARY_NONE)                                            \
		fprintf(out, " %*s", width + (wide ? WIDE_EXTRA : 0), "-");               \
	else if (wide)                                                                    \
		fprintf(out, " %*llu", width + WIDE_EXTRA,                                \
			(unsigned long long)(format == 'P' ? s->name * 4096 : s->name));  \
	else if (format == 'n')                                                           \
		put_count(out, s->name, width);                                           \
	else if (format == 'b')                                                           \
		put_bytes(out, s->name, width);                                           \
	else if (format == 'P')                                                           \
		put_bytes(out, s->name * 4096, width);                                    \
	else if (format == 't')                                                           \
		put_time(out, s->name, width);                                            \
	else                                                                              \
		fprintf(out, " %*llu%%", width - 1, (unsigned long long)s->name);

static void put_summary(FILE *out, const struct file_summary *s, bool wide, unsigned shown)
{
	int k = 0;

	FILE_SUMMARY_FIELDS(SUMMARY_CELL)
}

/* ---- which files are listed ---- */

static int cmp_files(const void *a, const void *b, void *by_time)
{
	const struct file_record *x = *(const struct file_record *const *)a;
	const struct file_record *y = *(const struct file_record *const *)b;
	uint64_t kx = by_time ? x->sum.io_ns : x->sum.read_bytes + x->sum.write_bytes;
	uint64_t ky = by_time ? y->sum.io_ns : y->sum.read_bytes + y->sum.write_bytes;

	if (kx != ky)
		return kx < ky ? 1 : -1;
	if (x->sum.block_read_bytes + x->sum.block_write_bytes !=
	    y->sum.block_read_bytes + y->sum.block_write_bytes)
		return x->sum.block_read_bytes + x->sum.block_write_bytes <
		       y->sum.block_read_bytes + y->sum.block_write_bytes ? 1 : -1;
	return strcmp(x->path ? x->path : "", y->path ? y->path : "");
}

/* The name a row shows: the file's, a metadata row's, or its inode when none was recorded. */
static const char *row_name(const struct file_record *f, const struct disk_table *disks,
			    char *buf, size_t len)
{
	char disk[32];

	if (f->kind == FK_METADATA) {
		snprintf(buf, len, "(%s %s)", disk_table_name(disks, f->key.dev, disk, sizeof(disk)),
			 f->key.ino == OTHER_FILES_INO ? "others' files" : "metadata");
		return buf;
	}
	if (f->versions > 1 && f->name) { /* --files-by path: "config (6 versions)" */
		snprintf(buf, len, "%s (%u versions%s)", f->name, f->versions,
			 f->deleted ? ", deleted" : "");
		return buf;
	}
	if (f->path)
		return f->path;
	kdev_format(f->key.dev, disk, sizeof(disk));
	snprintf(buf, len, "(inode %llu on %s, no name recorded)", (unsigned long long)f->key.ino,
		 disk);
	return buf;
}

/* ---- the table ---- */

struct column_group {
	const char *label;
	int fields; /* how many FILE_SUMMARY_FIELDS it spans */
};

/* Labels above the columns: reads (calls, bytes), writes (calls, bytes), ... */
static const struct column_group groups[] = {
	{ "reads", 2 }, { "writes", 2 }, { "", 1 }, { "", 1 }, { "", 1 }, { "readahead", 2 },
	{ "block", 3 },
};

#define SUMMARY_WIDTH(name, column, width, ...) width,
static const int widths[] = { FILE_SUMMARY_FIELDS(SUMMARY_WIDTH) };
#define SUMMARY_COLUMN(name, column, width, ...)                                           \
	if (shown & (1u << k++))                                                           \
		fprintf(out, " %*s", width + (wide ? WIDE_EXTRA : 0), column);

static void print_group_line(FILE *out, bool wide, int name_column, unsigned shown)
{
	int f = 0;

	fprintf(out, "%*s", name_column, "");
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		int span = -1, len = strlen(groups[g].label), left;

		for (int k = 0; k < groups[g].fields; k++, f++)
			span += shown & (1u << f) ? widths[f] + 1 + (wide ? WIDE_EXTRA : 0) : 0;
		if (span < 0)
			continue; /* none of its columns shown */
		len = len > span ? 0 : len;
		left = (span - len) / 2;
		fputc(' ', out);
		for (int i = 0; i < span; i++)
			fputc(i >= left && i < left + len ? groups[g].label[i - left]
			      : len && span > len + 2 ? '-' : ' ', out);
	}
	fputc('\n', out);
}

static void print_header(FILE *out, const char *title, size_t shown_rows, size_t total,
			 bool by_time, bool wide)
{
	unsigned shown = ALL_COLUMNS;
	int k = 0;

	fprintf(out, "\n%s", title);
	if (total)
		fprintf(out, ": %zu of %zu, by %s", shown_rows, total, by_time ? "I/O time" : "bytes");
	fputc('\n', out);
	print_group_line(out, wide, NAME_COLUMN, shown);
	put_padded(out, "file", NAME_COLUMN);
	FILE_SUMMARY_FIELDS(SUMMARY_COLUMN)
	fputc('\n', out);
}

/* --wide: the file's other numbers under its row. */
static void print_detail(FILE *out, const struct file_record *f)
{
	char dev[32], adv[64];

	kdev_format(f->key.dev, dev, sizeof(dev));
	uint64_t windows = 0;

	fprintf(out, "    %s ino %llu, %s, advice %s, windows", dev,
		(unsigned long long)f->key.ino, file_kind_name(f->kind),
		advice_name(f->advice, adv, sizeof(adv)) ?: "normal");
	for (int k = 0; k < RA_KINDS; k++) {
		windows += f->pc.ra_windows[k];
		if (f->pc.ra_windows[k])
			fprintf(out, " %s %llu (%llu pages)", ra_kind_names[k],
				(unsigned long long)f->pc.ra_windows[k],
				(unsigned long long)f->pc.ra_window_pages[k]);
	}
	if (!windows)
		fputs(" none", out);
	fprintf(out, "; opens %llu, closes %llu, mmaps %llu, requested %llu, misses %llu pages",
		(unsigned long long)f->sum.opens, (unsigned long long)f->sum.closes,
		(unsigned long long)f->sum.maps, (unsigned long long)f->pc.requested_pages,
		(unsigned long long)f->pc.miss_pages);
	fprintf(out, ", faults %llu, dirtied %llu", (unsigned long long)f->pc.faults,
		(unsigned long long)f->pc.dirtied_pages);
	if (!f->residency_missing)
		fprintf(out, ", resident %llu", (unsigned long long)f->res.resident_pages);
	if (f->pc.direct_reads || f->pc.direct_writes)
		fprintf(out, ", O_DIRECT read %llu B write %llu B",
			(unsigned long long)f->pc.direct_read_bytes,
			(unsigned long long)f->pc.direct_write_bytes);
	fputc('\n', out);
}

static void print_row(FILE *out, const struct file_record *f, bool wide,
		      const struct disk_table *disks)
{
	char name[512], shown[NAME_TEXT_MAX];
	const char *text = name_cell(row_name(f, disks, name, sizeof(name)),
				     wide ? 0 : NAME_COLUMN, shown, sizeof(shown));

	put_padded(out, text, NAME_COLUMN);
	if (wide && text_width(text) > NAME_COLUMN)
		fprintf(out, "\n%*s", NAME_COLUMN, "");
	put_summary(out, &f->sum, wide, ALL_COLUMNS);
	fputc('\n', out);
	if (wide)
		print_detail(out, f);
}

/* The files not listed, in one line: how many, and what they hold. */
/*
 * "+ 38 more files, mostly shared libraries: 3 reads 2.3K, no writes, 640 pages cached,
 * 4 faults", in 100 columns (the label goes first when the numbers are long).
 */
static void print_rest(FILE *out, const struct file_record *const *rest, size_t n)
{
	char line[256], rd[64] = "no reads", wr[64] = "no writes", a[CELL_MAX], b[CELL_MAX];
	struct files_fold fold;
	int len;

	if (!n)
		return;
	files_fold((struct file_record *const *)rest, n, &fold);
	if (fold.read_calls)
		snprintf(rd, sizeof(rd), "%s reads %s", cell_count(fold.read_calls, a),
			 cell_bytes(fold.read_bytes, b));
	if (fold.write_calls)
		snprintf(wr, sizeof(wr), "%s writes %s", cell_count(fold.write_calls, a),
			 cell_bytes(fold.write_bytes, b));
	for (int shortest = 0; shortest < 2; shortest++) {
		len = snprintf(line, sizeof(line), "+ %s more file%s%s: %s, %s, %s pages cached, ",
			       cell_grouped(fold.files, a), n == 1 ? "" : "s",
			       fold.mapped * 2 > n && !shortest ? ", mostly shared libraries" : "",
			       rd, wr, cell_count(fold.resident_pages, b));
		len += snprintf(line + len, sizeof(line) - len, "%s faults",
				cell_count(fold.faults, a));
		if (len <= 100)
			break;
	}
	fprintf(out, "%s\n", line);
}

/*
 * Splits the process's files (metadata rows aside) into those listed, sorted, and the
 * rest: beyond the limit, and with a limit the mapped-only ones. Returns how many are listed.
 */
static size_t choose(const struct proc_record *p, bool timing, uint32_t files,
		     struct file_record **order, size_t *nall)
{
	size_t n = 0, listed = 0, limit = files ? files : p->nrows;
	struct file_record **rest = order + p->nrows;

	for (size_t i = 0; i < p->nrows; i++)
		if (p->rows[i]->kind != FK_METADATA)
			order[n++] = p->rows[i];
	qsort_r(order, n, sizeof(*order), cmp_files, timing ? (void *)1 : NULL);
	for (size_t i = 0; i < n; i++) {
		if (listed < limit && !(files && file_mapped_only(order[i])))
			order[listed++] = order[i];
		else
			*rest++ = order[i];
	}
	/* The rest, after the listed ones. */
	memmove(order + listed, order + p->nrows, (n - listed) * sizeof(*order));
	*nall = n;
	return listed;
}

void report_files(FILE *out, const char *title, const struct proc_record *p,
		  const struct run_result *r, const struct text_choices *c)
{
	struct file_record **order = malloc((2 * p->nrows + 1) * sizeof(*order));
	size_t n, listed;

	if (!order || !p->nrows) {
		free(order);
		return;
	}
	listed = choose(p, r->timing, c->files, order, &n);
	print_header(out, title, listed, n, r->timing, c->wide);
	for (size_t i = 0; i < listed; i++)
		print_row(out, order[i], c->wide, &r->disks);
	print_rest(out, (const struct file_record *const *)order + listed, n - listed);
	for (size_t i = 0; i < p->nrows; i++)
		if (p->rows[i]->kind == FK_METADATA)
			print_row(out, p->rows[i], c->wide, &r->disks);
	free(order);
}

/* ---- the run's files (the first screen) ---- */

/* The run table's name column at its narrowest (run_columns widens it). */
#define RUN_NAME_COLUMN 16

#define SUMMARY_OFFSET(name, ...) offsetof(struct file_summary, name),
static const size_t offsets[] = { FILE_SUMMARY_FIELDS(SUMMARY_OFFSET) };
#define SUMMARY_BIT(name, ...) COLUMN_##name,
enum { FILE_SUMMARY_FIELDS(SUMMARY_BIT) COLUMNS };

/*
 * Columns the first screen's table may leave out, each with those of its group that mean
 * nothing alone, the first first: the details and the JSON keep them all.
 */
static const unsigned optional_columns[] = {
	1u << COLUMN_block_p99_ns,
	1u << COLUMN_readahead_pages | 1u << COLUMN_unused_readahead_pages,
	1u << COLUMN_sync_calls,
	1u << COLUMN_hit_pct,
};

/* A row's name: the path relative to the command's working directory when under it. */
static const char *run_row_name(const struct run_file *rf, const struct run_result *r,
				char *buf, size_t len)
{
	const char *name = row_name(rf->f, &r->disks, buf, len);
	size_t n = r->cwd ? strlen(r->cwd) : 0;

	if (n < 2 || strncmp(name, r->cwd, n) || (name[n] && name[n] != '/'))
		return name;
	return name[n] && name[n + 1] ? name + n + 1 : "."; /* the directory itself: "." */
}

/* Whether every listed row shows 0 or "-" in the columns. */
static bool columns_empty(const struct run_result *r, size_t listed, unsigned columns)
{
	for (size_t i = 0; i < listed; i++)
		for (int k = 0; k < COLUMNS; k++) {
			uint64_t v = *(const uint64_t *)((const char *)&r->files[r->worked[i]].f->sum +
							 offsets[k]);

			if ((columns & (1u << k)) && v && v != FILE_SUMMARY_NONE)
				return false;
		}
	return true;
}

/*
 * The columns the first screen's table shows, and its name column's width (*name_width):
 * every column and 16 when the listed names fit whole; else optional columns left out
 * (those empty in every row first) until the widest fits, or none is left, the room they
 * free going to the names. So a line stays within 100 columns.
 */
static unsigned run_columns(const struct run_result *r, size_t listed, int *name_width)
{
	size_t n = sizeof(optional_columns) / sizeof(optional_columns[0]);
	char buf[512], text[NAME_TEXT_MAX];
	unsigned shown = ALL_COLUMNS;
	int want = RUN_NAME_COLUMN;

	*name_width = RUN_NAME_COLUMN;
	for (size_t i = 0; i < listed; i++) {
		const char *name = run_row_name(&r->files[r->worked[i]], r, buf, sizeof(buf));
		int w = text_width(name_cell(name, 0, text, sizeof(text)));

		want = w > want ? w : want;
	}
	for (int pass = 0; pass < 2 && *name_width < want; pass++)
		for (size_t g = 0; g < n && *name_width < want; g++) {
			if (!(shown & optional_columns[g]) ||
			    (!pass && !columns_empty(r, listed, optional_columns[g])))
				continue;
			shown &= ~optional_columns[g];
			for (int k = 0; k < COLUMNS; k++)
				*name_width += optional_columns[g] & (1u << k) ? widths[k] + 1 : 0;
		}
	return shown;
}

static void print_run_row(FILE *out, const struct run_file *rf, const struct run_result *r,
			  int width, unsigned shown)
{
	char name[512], text[NAME_TEXT_MAX];

	put_padded(out, name_cell(run_row_name(rf, r, name, sizeof(name)), width, text,
				  sizeof(text)), width);
	put_summary(out, &rf->f->sum, false, shown);
	fprintf(out, " %5zu\n", rf->nusers);
}

/*
 * "+ 41 libraries and system files loaded by 25 processes: 239K read, 1,103 faults", and
 * what their faults read from the disk when they did.
 */
static void print_loaded(FILE *out, const struct run_loaded *l)
{
	char a[CELL_MAX], b[CELL_MAX], c[CELL_MAX], d[CELL_MAX];

	if (!l->files)
		return;
	fprintf(out, "+ %s %s loaded by %s process%s: %s read, %s faults",
		cell_grouped(l->files, a),
		l->files == 1 ? "library or system file" : "libraries and system files",
		cell_grouped(l->procs, b), l->procs == 1 ? "" : "es", cell_bytes(l->read_bytes, c),
		cell_grouped(l->faults, d));
	if (l->block_read_bytes)
		fprintf(out, ", disk read %s", cell_bytes(l->block_read_bytes, a));
	fputc('\n', out);
}

void report_run_files(FILE *out, const struct run_result *r, size_t limit)
{
	size_t listed = r->nworked < limit ? r->nworked : limit;
	const struct file_record **rest = malloc((r->nworked + 1) * sizeof(*rest));
	bool wide = false;
	int width, k = 0;
	unsigned shown;

	if (!rest)
		return;
	shown = run_columns(r, listed, &width);
	fprintf(out, "\nfiles: %zu of %zu worked on, by bytes, system files last; all processes\n",
		listed, r->nworked);
	print_group_line(out, wide, width, shown);
	put_padded(out, "file", width);
	FILE_SUMMARY_FIELDS(SUMMARY_COLUMN)
	fprintf(out, " %5s\n", "procs");
	for (size_t i = 0; i < r->nworked; i++) {
		if (i < listed)
			print_run_row(out, &r->files[r->worked[i]], r, width, shown);
		else
			rest[i - listed] = r->files[r->worked[i]].f;
	}
	print_rest(out, rest, r->nworked - listed);
	print_loaded(out, &r->loaded);
	free(rest);
}
