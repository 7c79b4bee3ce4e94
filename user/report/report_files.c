// SPDX-License-Identifier: GPL-2.0
/*
 * The text report's files table: one row per file of a process, every layer side by side
 * (syscalls, page cache, block I/O), sorted by I/O time (by bytes without timing). Its
 * columns are FILE_SUMMARY_FIELDS (fields.h); the model derived every number.
 */
#include <stdlib.h>
#include <string.h>
#include "cells.h"
#include "model/files.h"
#include "model/names.h"
#include "report.h"
#include "util/residency.h"
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

#define SUMMARY_CELL(name, column, width, format, help)                                   \
	if (s->name == FILE_SUMMARY_NONE)                                                 \
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

static void put_summary(FILE *out, const struct file_summary *s, bool wide)
{
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
static const char *row_name(const struct file_record *f, char *buf, size_t len)
{
	char disk[32];

	if (f->kind == FK_METADATA) {
		snprintf(buf, len, "(%s %s)", disk_name(f->key.dev, disk, sizeof(disk)),
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
	fprintf(out, " %*s", width + (wide ? WIDE_EXTRA : 0), column);

static void print_group_line(FILE *out, bool wide, int name_column)
{
	int f = 0;

	fprintf(out, "%*s", name_column, "");
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		int span = -1, len = strlen(groups[g].label), left;

		for (int k = 0; k < groups[g].fields; k++)
			span += widths[f++] + 1 + (wide ? WIDE_EXTRA : 0);
		left = (span - len) / 2;
		fputc(' ', out);
		for (int i = 0; i < span; i++)
			fputc(i >= left && i < left + len ? groups[g].label[i - left]
			      : len && span > len + 2 ? '-' : ' ', out);
	}
	fputc('\n', out);
}

static void print_header(FILE *out, const char *title, size_t shown, size_t total,
			 bool by_time, bool wide)
{
	fprintf(out, "\n%s", title);
	if (total)
		fprintf(out, ": %zu of %zu, by %s", shown, total, by_time ? "I/O time" : "bytes");
	fputc('\n', out);
	print_group_line(out, wide, NAME_COLUMN);
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

static void print_row(FILE *out, const struct file_record *f, bool wide)
{
	char name[512], shown[NAME_TEXT_MAX];
	const char *text = name_cell(row_name(f, name, sizeof(name)), wide ? 0 : NAME_COLUMN,
				     shown, sizeof(shown));

	put_padded(out, text, NAME_COLUMN);
	if (wide && text_width(text) > NAME_COLUMN)
		fprintf(out, "\n%*s", NAME_COLUMN, "");
	put_summary(out, &f->sum, wide);
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
static size_t choose(const struct proc_record *p, const struct options *o,
		     struct file_record **order, size_t *nall)
{
	size_t n = 0, listed = 0, limit = o->files ? o->files : p->nrows;
	struct file_record **rest = order + p->nrows;

	for (size_t i = 0; i < p->nrows; i++)
		if (p->rows[i]->kind != FK_METADATA)
			order[n++] = p->rows[i];
	qsort_r(order, n, sizeof(*order), cmp_files, o->timing ? (void *)1 : NULL);
	for (size_t i = 0; i < n; i++) {
		if (listed < limit && !(o->files && file_mapped_only(order[i])))
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
		  const struct options *o)
{
	struct file_record **order = malloc((2 * p->nrows + 1) * sizeof(*order));
	size_t n, listed;

	if (!order || !p->nrows) {
		free(order);
		return;
	}
	listed = choose(p, o, order, &n);
	print_header(out, title, listed, n, o->timing, o->wide);
	for (size_t i = 0; i < listed; i++)
		print_row(out, order[i], o->wide);
	print_rest(out, (const struct file_record *const *)order + listed, n - listed);
	for (size_t i = 0; i < p->nrows; i++)
		if (p->rows[i]->kind == FK_METADATA)
			print_row(out, p->rows[i], o->wide);
	free(order);
}

/* ---- the run's files (the first screen) ---- */

/* The run's table: a narrower name, and how many processes used each file. */
#define RUN_NAME_COLUMN 16

static void print_run_row(FILE *out, const struct run_file *rf)
{
	char name[512], shown[NAME_TEXT_MAX];

	put_padded(out, name_cell(row_name(&rf->f, name, sizeof(name)), RUN_NAME_COLUMN, shown,
				  sizeof(shown)), RUN_NAME_COLUMN);
	put_summary(out, &rf->f.sum, false);
	fprintf(out, " %5zu\n", rf->nusers);
}

void report_run_files(FILE *out, const struct run_result *r, size_t limit)
{
	const struct file_record **rest = malloc((r->nfiles + 1) * sizeof(*rest));
	size_t listed = 0, nrest = 0, files = 0;
	bool wide = false;

	if (!rest)
		return;
	for (size_t i = 0; i < r->nfiles; i++)
		files += r->files[i].f.kind != FK_METADATA;
	fprintf(out, "\nfiles: %zu of %zu, by bytes, all processes\n", files < limit ? files : limit,
		files);
	print_group_line(out, wide, RUN_NAME_COLUMN);
	put_padded(out, "file", RUN_NAME_COLUMN);
	FILE_SUMMARY_FIELDS(SUMMARY_COLUMN)
	fprintf(out, " %5s\n", "procs");
	for (size_t i = 0; i < r->nfiles; i++) {
		if (r->files[i].f.kind == FK_METADATA)
			continue;
		if (listed < limit) {
			print_run_row(out, &r->files[i]);
			listed++;
		} else {
			rest[nrest++] = &r->files[i].f;
		}
	}
	print_rest(out, rest, nrest);
	free(rest);
}
