// SPDX-License-Identifier: GPL-2.0
/* The numbers compare puts side by side, and how it shows them (see compare_table.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "cells.h"
#include "compare_table.h"
#include "json_cells.h"
#include "model/syscall_table.h"
#include "util/escape.h"
#include "util/vec.h"

/* ---- numbers from one run-mode report ---- */

static double num(const cJSON *obj, const char *path)
{
	char buf[256], *save = NULL;
	const cJSON *cur = obj;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && cur; k = strtok_r(NULL, ".", &save))
		cur = cJSON_GetObjectItemCaseSensitive(cur, k);
	return cJSON_IsNumber(cur) ? cur->valuedouble : 0;
}

static double sum_children(const cJSON *obj, const char *field)
{
	const cJSON *child;
	double sum = 0;

	cJSON_ArrayForEach(child, obj)
		sum += num(child, field);
	return sum;
}

/* The read/write family's calls by JSON key: the reads with the copies, the writes alone. */
static bool counts_as_read(const struct syscall_info *s)
{
	return s->family == SF_RW && direction_reads(s->direction);
}

static bool counts_as_write(const struct syscall_info *s)
{
	return s->family == SF_RW && s->direction == SD_WRITE;
}

static double io_sum(const cJSON *io, bool (*counts)(const struct syscall_info *),
		     const char *field)
{
	size_t n;
	const struct syscall_info *rows = syscall_catalogue(&n);
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		if (counts(&rows[i]))
			sum += num(cJSON_GetObjectItem(io, rows[i].name), field);
	return sum;
}

static const cJSON *totals(const cJSON *r, const char *key)
{
	return cJSON_GetObjectItem(cJSON_GetObjectItem(r, "totals"), key);
}

static double m_wall_s(const cJSON *r) { return num(r, "wall_ns") / 1e9; }
static double m_syscalls(const cJSON *r) { return sum_children(totals(r, "syscalls"), "calls"); }
static double m_read_bytes(const cJSON *r)
{
	return io_sum(totals(r, "io"), counts_as_read, "transferred_bytes");
}
static double m_write_bytes(const cJSON *r)
{
	return io_sum(totals(r, "io"), counts_as_write, "transferred_bytes");
}
#define PC(field) static double m_pc_##field(const cJSON *r) \
	{ return num(r, "totals.page_cache." #field); }
PC(hit_pages)
PC(miss_pages)
PC(readahead_pages)
PC(unused_readahead_pages)
static double m_ra_windows(const cJSON *r)
{
	return sum_children(cJSON_GetObjectItem(totals(r, "page_cache"), "readahead_windows"),
			    "windows");
}
#define BLK(op, field) static double m_blk_##op##_##field(const cJSON *r) \
	{ return num(r, "totals.block." #op "." #field); }
BLK(read, requests)
BLK(read, bytes)
BLK(write, requests)
BLK(write, bytes)
static double m_blk_avg(const cJSON *r)
{
	double req = m_blk_read_requests(r) + m_blk_write_requests(r);

	return req ? (m_blk_read_bytes(r) + m_blk_write_bytes(r)) / req : 0;
}
static double m_blk_p50_us(const cJSON *r) { return num(r, "totals.block.latency_ns.p50") / 1e3; }
static double m_blk_p99_us(const cJSON *r) { return num(r, "totals.block.latency_ns.p99") / 1e3; }

#define STORY(field, scale) static double m_story_##field(const cJSON *r) \
	{ return num(r, "totals.story." #field) / scale; }
STORY(io_ns, 1) STORY(sync_calls, 1) STORY(disk_p99_ns, 1e3)

struct file_pages {
	char id[48];
	double pages;
};

static int cmp_file_pages(const void *a, const void *b)
{
	return strcmp(((const struct file_pages *)a)->id, ((const struct file_pages *)b)->id);
}

/* Pages of every file the run touched still cached at its end (each file once). */
static double m_resident(const cJSON *r)
{
	const cJSON *proc, *file;
	struct file_pages *all = NULL;
	size_t n = 0, cap = 0;
	double sum = 0;

	cJSON_ArrayForEach(proc, cJSON_GetObjectItem(r, "processes")) {
		cJSON_ArrayForEach(file, cJSON_GetObjectItem(proc, "files")) {
			if (VEC_ROOM(all, n, cap))
				goto out;
			snprintf(all[n].id, sizeof(all[n].id), "%s/%.0f",
				 cJSON_GetStringValue(cJSON_GetObjectItem(file, "dev")) ?: "?",
				 num(file, "ino"));
			all[n++].pages = num(file, "resident_pages");
		}
	}
	if (n)
		qsort(all, n, sizeof(*all), cmp_file_pages);
	for (size_t i = 0; i < n; i++)
		if (!i || strcmp(all[i].id, all[i - 1].id))
			sum += all[i].pages;
out:
	free(all);
	return sum;
}

enum shown { AS_COUNT, AS_WALL, AS_LATENCY_US, AS_TIME_NS };

struct metric {
	const char *name; /* JSON summary key and table row */
	double (*get)(const cJSON *run);
	enum shown shown;
};

static const struct metric metrics[] = {
	{ "wall_s", m_wall_s, AS_WALL },
	{ "syscalls", m_syscalls, AS_COUNT },
	{ "read_bytes", m_read_bytes, AS_COUNT },
	{ "write_bytes", m_write_bytes, AS_COUNT },
	{ "io_time", m_story_io_ns, AS_TIME_NS },
	{ "sync_calls", m_story_sync_calls, AS_COUNT },
	{ "page_cache_hit_pages", m_pc_hit_pages, AS_COUNT },
	{ "page_cache_miss_pages", m_pc_miss_pages, AS_COUNT },
	{ "readahead_windows", m_ra_windows, AS_COUNT },
	{ "readahead_pages", m_pc_readahead_pages, AS_COUNT },
	{ "unused_readahead_pages", m_pc_unused_readahead_pages, AS_COUNT },
	{ "block_read_requests", m_blk_read_requests, AS_COUNT },
	{ "block_read_bytes", m_blk_read_bytes, AS_COUNT },
	{ "block_write_requests", m_blk_write_requests, AS_COUNT },
	{ "block_write_bytes", m_blk_write_bytes, AS_COUNT },
	{ "block_avg_request_bytes", m_blk_avg, AS_COUNT },
	{ "block_p50_latency_us", m_blk_p50_us, AS_LATENCY_US },
	{ "block_p99_latency_us", m_blk_p99_us, AS_LATENCY_US },
	{ "disk_p99_latency_us", m_story_disk_p99_ns, AS_LATENCY_US }, /* traced processes' */
	{ "resident_pages_at_end", m_resident, AS_COUNT },
};
#define NMETRICS (sizeof(metrics) / sizeof(metrics[0]))

/* ---- numbers of one file from one report: its entries summed over the processes ---- */

static double f_calls(const cJSON *f) { return sum_children(cJSON_GetObjectItem(f, "io"), "calls"); }
static double f_read_bytes(const cJSON *f)
{
	return io_sum(cJSON_GetObjectItem(f, "io"), counts_as_read, "transferred_bytes");
}
static double f_write_bytes(const cJSON *f)
{
	return io_sum(cJSON_GetObjectItem(f, "io"), counts_as_write, "transferred_bytes");
}
static double f_io_ns(const cJSON *f) { return sum_children(cJSON_GetObjectItem(f, "io"), "total_ns"); }
#define FILE_NUM(name, path) static double f_##name(const cJSON *f) { return num(f, path); }
FILE_NUM(hit_pages, "hit_pages")
FILE_NUM(miss_pages, "miss_pages")
FILE_NUM(readahead_pages, "readahead_pages")
FILE_NUM(unused_readahead_pages, "unused_readahead_pages")
FILE_NUM(dirtied_pages, "dirtied_pages")
FILE_NUM(blk_read_requests, "block.read.requests")
FILE_NUM(blk_read_bytes, "block.read.bytes")
FILE_NUM(blk_write_requests, "block.write.requests")
FILE_NUM(blk_write_bytes, "block.write.bytes")
FILE_NUM(resident_pages, "resident_pages")
static double f_ra_windows(const cJSON *f)
{
	return sum_children(cJSON_GetObjectItem(f, "readahead_windows"), "windows");
}

struct file_metric {
	const char *name;
	double (*get)(const cJSON *file);
	enum shown shown;
	bool state; /* the file's state at the end, the same in every entry: not summed */
};

static const struct file_metric file_metrics[] = {
	{ "calls", f_calls, AS_COUNT, false },
	{ "io_time", f_io_ns, AS_TIME_NS, false },
	{ "read_bytes", f_read_bytes, AS_COUNT, false },
	{ "write_bytes", f_write_bytes, AS_COUNT, false },
	{ "page_cache_hit_pages", f_hit_pages, AS_COUNT, false },
	{ "page_cache_miss_pages", f_miss_pages, AS_COUNT, false },
	{ "readahead_windows", f_ra_windows, AS_COUNT, false },
	{ "readahead_pages", f_readahead_pages, AS_COUNT, false },
	{ "unused_readahead_pages", f_unused_readahead_pages, AS_COUNT, false },
	{ "dirtied_pages", f_dirtied_pages, AS_COUNT, false },
	{ "block_read_requests", f_blk_read_requests, AS_COUNT, false },
	{ "block_read_bytes", f_blk_read_bytes, AS_COUNT, false },
	{ "block_write_requests", f_blk_write_requests, AS_COUNT, false },
	{ "block_write_bytes", f_blk_write_bytes, AS_COUNT, false },
	{ "resident_pages_at_end", f_resident_pages, AS_COUNT, true },
};
#define NFILE_METRICS (sizeof(file_metrics) / sizeof(file_metrics[0]))

/*
 * The metric over the file's entries in one run; -1 when no process touched it. The reports
 * hold paths escaped (esc_json): path is compared escaped the same way.
 */
static double file_value(const cJSON *run, const char *path, const struct file_metric *m)
{
	const cJSON *proc, *file;
	char *want = esc_dup(esc_json, path);
	double v = -1;

	if (!want)
		return v;
	cJSON_ArrayForEach(proc, cJSON_GetObjectItem(run, "processes")) {
		cJSON_ArrayForEach(file, cJSON_GetObjectItem(proc, "files")) {
			const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(file, "path"));
			double x;

			if (!p || strcmp(p, want))
				continue;
			x = m->get(file);
			v = v < 0 ? x : m->state ? (x > v ? x : v) : v + x;
		}
	}
	free(want);
	return v;
}

/*
 * What one run did with the file (totals.files[].use: data, code, startup), or NULL when no
 * process of it touched the file.
 */
static const char *file_use(const cJSON *run, const char *path)
{
	char *want = esc_dup(esc_json, path);
	const char *use = NULL;
	const cJSON *file;

	cJSON_ArrayForEach(file, totals(run, "files")) {
		const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(file, "path"));

		if (want && p && !strcmp(p, want)) {
			use = cJSON_GetStringValue(cJSON_GetObjectItem(file, "use"));
			break;
		}
	}
	free(want);
	return use;
}

/*
 * The variant's: data when any run's is, then code, then startup (as a run joins its
 * processes'); NULL when no run touched the file.
 */
static const char *variant_use(const struct compare_variant *v, int repeat, const char *path)
{
	static const char *const order[] = { "data", "code", "startup" };
	int best = -1;

	for (int i = 0; i < repeat; i++) {
		const char *u = file_use(v->runs[i], path);

		for (int k = 0; u && k < (int)(sizeof(order) / sizeof(order[0])); k++)
			if (!strcmp(u, order[k]) && (best < 0 || k < best))
				best = k;
	}
	return best < 0 ? NULL : order[best];
}

/* ---- medians ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct spread {
	double median, min, max;
};

/* Median, min and max of values[0..n) (sorted in place); values < 0 (absent) are left out. */
static struct spread spread_of(double *values, int n)
{
	struct spread s = { -1, -1, -1 };
	int first = 0;

	qsort(values, n, sizeof(*values), cmp_double);
	while (first < n && values[first] < 0)
		first++;
	values += first;
	n -= first;
	if (n) {
		s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
		s.min = values[0];
		s.max = values[n - 1];
	}
	return s;
}

static struct spread run_metric(const struct compare_variant *v, int repeat, size_t m)
{
	double values[repeat];

	for (int i = 0; i < repeat; i++)
		values[i] = metrics[m].get(v->runs[i]);
	return spread_of(values, repeat);
}

static struct spread file_metric(const struct compare_variant *v, int repeat, const char *path,
				 size_t m)
{
	double values[repeat];

	for (int i = 0; i < repeat; i++)
		values[i] = file_value(v->runs[i], path, &file_metrics[m]);
	return spread_of(values, repeat);
}

/* ---- the table ---- */

#define ROW_NAME 26

static const char *cell(struct spread s, enum shown shown, char buf[CELL_MAX])
{
	int decimals = s.median < 10 ? 3 : s.median < 100 ? 2 : 1;

	if (s.median < 0)
		return "-";
	switch (shown) {
	case AS_WALL:
		if (s.min == s.max)
			snprintf(buf, CELL_MAX, "%.*f", decimals, s.median);
		else
			snprintf(buf, CELL_MAX, "%.*f (%.*f-%.*f)", decimals, s.median, decimals,
				 s.min, decimals, s.max);
		return buf;
	case AS_LATENCY_US:
		return cell_time_2sig(s.median * 1e3, buf);
	case AS_TIME_NS:
		return cell_time(s.median, buf);
	default:
		return cell_grouped(s.median, buf);
	}
}

static void print_row_name(FILE *out, const char *indent, const char *name, enum shown shown)
{
	char row[64];

	/* Latencies are shown with their unit, so the row drops the JSON key's "_us". */
	snprintf(row, sizeof(row), "%s%.*s", indent,
		 shown == AS_LATENCY_US ? (int)strlen(name) - 3 : (int)strlen(name), name);
	fprintf(out, "%-*s", ROW_NAME, row);
}

static void print_file_rows(FILE *out, const struct comparison *c, const char *path, int width)
{
	char cut[PATH_MAX], buf[CELL_MAX];

	fprintf(out, "file %s\n", name_cell(path, 95, cut, sizeof(cut)));
	/* What each variant did with it: worked on it, or loaded it to run (run-mode.md). */
	print_row_name(out, "  ", "use", AS_COUNT);
	for (int v = 0; v < c->n; v++)
		fprintf(out, " %*s", width, variant_use(&c->v[v], c->repeat, path) ?: "-");
	fputc('\n', out);
	for (size_t m = 0; m < NFILE_METRICS; m++) {
		print_row_name(out, "  ", file_metrics[m].name, file_metrics[m].shown);
		for (int v = 0; v < c->n; v++)
			fprintf(out, " %*s", width,
				cell(file_metric(&c->v[v], c->repeat, path, m), file_metrics[m].shown,
				     buf));
		fputc('\n', out);
	}
}

void compare_print_table(FILE *out, const struct comparison *c)
{
	int width = c->repeat > 1 ? 20 : 14, pad;
	char buf[CELL_MAX], label[4 * sizeof(c->v[0].label)], *command;

	fprintf(out, "%-*s", ROW_NAME, "variant");
	for (int v = 0; v < c->n; v++) {
		pad = width - text_width(name_cell(c->v[v].label, 0, label, sizeof(label)));
		fprintf(out, " %*s%s", pad > 0 ? pad : 0, "", label);
	}
	fputc('\n', out);
	/* How the runs ended, when one did not exit 0: its numbers are a failed run's. */
	for (int v = 0; v < c->n; v++)
		if (strcmp(c->v[v].exits, "0")) {
			fprintf(out, "%-*s", ROW_NAME, "exit");
			for (int k = 0; k < c->n; k++)
				fprintf(out, " %*s", width, c->v[k].exits);
			fputc('\n', out);
			break;
		}
	for (size_t m = 0; m < NMETRICS; m++) {
		print_row_name(out, "", metrics[m].name, metrics[m].shown);
		for (int v = 0; v < c->n; v++)
			fprintf(out, " %*s", width,
				cell(run_metric(&c->v[v], c->repeat, m), metrics[m].shown, buf));
		fputc('\n', out);
	}
	for (int f = 0; f < c->nfiles; f++)
		print_file_rows(out, c, c->files[f], width);
	fprintf(out, "(medians of %d run%s per variant, interleaved%s%s)\n", c->repeat,
		c->repeat == 1 ? "" : "s", c->repeat > 1 ? "; wall: median (min-max)" : "",
		c->drop_caches ? "; page cache dropped before each" : "");
	for (int v = 0; v < c->n; v++) {
		command = esc_dup(esc_text, c->v[v].command);
		fprintf(out, "%s: %s\n", name_cell(c->v[v].label, 0, label, sizeof(label)),
			command ? command : "?");
		free(command);
	}
}

/* ---- JSON ---- */

static cJSON *file_summaries(const struct comparison *c, const struct compare_variant *v)
{
	cJSON *files = cJSON_CreateObject();

	for (int f = 0; f < c->nfiles; f++) {
		char *key = esc_dup(esc_json, c->files[f]);
		cJSON *sum = key ? cJSON_AddObjectToObject(files, key) : NULL;

		free(key);
		if (sum && variant_use(v, c->repeat, c->files[f]))
			cJSON_AddStringToObject(sum, "use", variant_use(v, c->repeat, c->files[f]));
		else if (sum)
			cJSON_AddNullToObject(sum, "use");
		for (size_t m = 0; sum && m < NFILE_METRICS; m++) {
			struct spread s = file_metric(v, c->repeat, c->files[f], m);

			if (s.median < 0)
				cJSON_AddNullToObject(sum, file_metrics[m].name);
			else
				cJSON_AddNumberToObject(sum, file_metrics[m].name, s.median);
		}
	}
	return files;
}

void compare_print_json(FILE *out, struct comparison *c)
{
	cJSON *root = cJSON_CreateObject(), *vars = cJSON_AddArrayToObject(root, "variants");
	char *text;

	for (int v = 0; v < c->n; v++) {
		cJSON *var = cJSON_CreateObject(), *list = cJSON_CreateArray();
		cJSON *sum = cJSON_CreateObject();

		add_name(var, "label", c->v[v].label);
		add_name(var, "command", c->v[v].command);
		for (size_t m = 0; m < NMETRICS; m++)
			cJSON_AddNumberToObject(sum, metrics[m].name,
						run_metric(&c->v[v], c->repeat, m).median);
		cJSON_AddItemToObject(sum, "files", file_summaries(c, &c->v[v]));
		for (int i = 0; i < c->repeat; i++) {
			cJSON_AddItemToArray(list, c->v[v].runs[i]);
			c->v[v].runs[i] = NULL; /* the document owns it now */
		}
		cJSON_AddItemToObject(var, "runs", list);
		cJSON_AddItemToObject(var, "summary", sum);
		cJSON_AddItemToArray(vars, var);
	}
	cJSON_AddBoolToObject(root, "drop_caches", c->drop_caches);
	cJSON_AddNumberToObject(root, "repeat", c->repeat);
	text = cJSON_Print(root);
	if (text)
		fprintf(out, "%s\n", text);
	cJSON_free(text);
	cJSON_Delete(root);
}
