// SPDX-License-Identifier: GPL-2.0
/* The field tables the renderers walk, made from the lists in fields.h. */
#include <stddef.h>
#include "fields.h"
#include "records.h"

/* The list's column argument arrives expanded to two: header, width (COL in fields.h). */
#define FIELD_ENTRY(type, name, column, width, metric, label, value, unit, flags, help)            \
	{ #name, column, width, metric, label, value, unit, help, offsetof(type, name), flags },
#define TABLE(var, group_name, type, LIST)                                                         \
	static const struct field var##_list[] = { LIST(SC_##type) };                              \
	const struct field_table var = { group_name, var##_list,                                   \
					 sizeof(var##_list) / sizeof(var##_list[0]) }

#define SC_sc_row(...) FIELD_ENTRY(struct sc_row, __VA_ARGS__)
#define SC_io_summary(...) FIELD_ENTRY(struct io_summary, __VA_ARGS__)
#define SC_file_io(...) FIELD_ENTRY(struct file_io, __VA_ARGS__)
#define SC_page_cache_view(...) FIELD_ENTRY(struct page_cache_view, __VA_ARGS__)
#define SC_residency_view(...) FIELD_ENTRY(struct residency_view, __VA_ARGS__)
#define SC_load_view(...) FIELD_ENTRY(struct load_view, __VA_ARGS__)
#define SC_block_view(...) FIELD_ENTRY(struct block_view, __VA_ARGS__)
#define SC_disk_stat_view(...) FIELD_ENTRY(struct disk_stat_view, __VA_ARGS__)
#define SC_uring_view(...) FIELD_ENTRY(struct uring_view, __VA_ARGS__)
#define SC_trace_stats(...) FIELD_ENTRY(struct trace_stats, __VA_ARGS__)
#define SC_stack_site(...) FIELD_ENTRY(struct stack_site, __VA_ARGS__)
#define SC_stacks_summary(...) FIELD_ENTRY(struct stacks_summary, __VA_ARGS__)
#define SC_io_story(...) FIELD_ENTRY(struct io_story, __VA_ARGS__)

TABLE(syscall_fields, "syscalls", sc_row, SYSCALL_FIELDS);
TABLE(io_fields, "io", io_summary, IO_FIELDS);
TABLE(file_io_fields, "files.io", file_io, FILE_IO_FIELDS);
TABLE(page_cache_fields, "page_cache", page_cache_view, PAGE_CACHE_FIELDS);
TABLE(residency_fields, "files", residency_view, RESIDENCY_FIELDS);
TABLE(file_load_fields, "files", load_view, FILE_LOAD_FIELDS);
TABLE(block_fields, "block", block_view, BLOCK_FIELDS);
TABLE(disk_stat_fields, "disk_stat", disk_stat_view, DISK_STAT_FIELDS);
TABLE(uring_fields, "io_uring", uring_view, URING_FIELDS);
TABLE(trace_fields, "trace", trace_stats, TRACE_FIELDS);
TABLE(stack_site_fields, "stacks.sites", stack_site, STACK_SITE_FIELDS);
TABLE(stacks_fields, "stacks", stacks_summary, STACKS_FIELDS);
TABLE(story_fields, "story", io_story, STORY_FIELDS);

static void print_table(FILE *out, const struct field_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct field *f = &t->f[i];
		char metric[160] = "-";

		if (f->metric && f->label)
			snprintf(metric, sizeof(metric), "%s{%s=\"%s\"}", f->metric, f->label,
				 f->value);
		else if (f->metric)
			snprintf(metric, sizeof(metric), "%s", f->metric);
		fprintf(out, "%s\t%s\t%s\t%s\t%s\t%s\n", t->group, f->name,
			f->column ? f->column : "-", metric, f->unit, f->help);
	}
}

#define HIST_LINE(group, name, column, metric, unit, help)                                         \
	fprintf(out, "%s\t%s\t%s\t%s\t%s\t%s\n", group, #name, "p50/p99 " column, metric, unit,    \
		help);
#define IO_HIST_LINE(...) HIST_LINE("io", __VA_ARGS__)
#define BLOCK_HIST_LINE(...) HIST_LINE("block", __VA_ARGS__)
#define URING_HIST_LINE(...) HIST_LINE("io_uring", __VA_ARGS__)
#define URING_TEXT_LINE(name, column, unit, help)                                                  \
	fprintf(out, "io_uring\t%s\t%s\t-\t%s\t%s (text only)\n", #name, column, unit, help);
#define BLOCK_TEXT_LINE(name, column, unit, help)                                                  \
	fprintf(out, "block\t%s\t%s\t-\t%s\t%s (text only)\n", #name, column, unit, help);
#define FILE_SUMMARY_LINE(name, column, width, format, help)                                  \
	fprintf(out, "files\t%s\t%s\t-\t%s\t%s (text only)\n", #name, column,              \
		format == 'b' || format == 'P' ? "bytes" : format == 't' ? "ns"              \
		: format == 'p' ? "%" : "calls", help);
#define RA_KIND_LINE(kind, help)                                                                   \
	fprintf(out, "page_cache\treadahead_windows.%s\t-\t"                                       \
		     "iotrace_readahead_windows_total{kind=\"%s\"}, "                              \
		     "iotrace_readahead_pages_total{kind=\"%s\"}\twindows, pages\t%s\n",           \
		#kind, #kind, #kind, help);

#define TOP_COUNT_LINE(name, unit, meaning) fputs("top\t" #name "\t-\t-\t" unit "\t" meaning "\n", out);
#define TOP_RATE_LINE(name, col, w, fmt, unit, meaning)                                            \
	fputs("top\t" #name "\t" col "\t-\t" unit "\t" meaning "\n", out);
#define TOP_DISK_LINE(name, unit, meaning)                                                         \
	fputs("top.machine\t" #name "\t-\t-\t" unit "\t" meaning "\n", out);

/* iotrace top's fields (docs/top.md). */
static void top_fields_print(FILE *out)
{
	TOP_COUNT_FIELDS(TOP_COUNT_LINE)
	TOP_RATE_FIELDS(TOP_RATE_LINE)
	TOP_DISK_FIELDS(TOP_DISK_LINE)
}

void fields_print(FILE *out)
{
	fputs("group\tfield (JSON key)\ttext column\tPrometheus metric\tunit\tmeaning\n", out);
	print_table(out, &syscall_fields);
	print_table(out, &io_fields);
	IO_HISTS(IO_HIST_LINE)
	print_table(out, &file_io_fields);
	fputs("files.io\tlatency_ns\t-\t-\tns\tLatency per timed call on the file\n", out);
	FILE_SUMMARY_FIELDS(FILE_SUMMARY_LINE)
	print_table(out, &page_cache_fields);
	RA_KIND_FIELDS(RA_KIND_LINE)
	print_table(out, &residency_fields);
	print_table(out, &file_load_fields);
	fputs("files\tuse\t-\t-\tdata, code, startup\ttotals.files: what the run did with the "
	      "file: data (worked on), code (executables and libraries its processes loaded), "
	      "startup (the loader's cache, locale and NSS files the C library read)\n", out);
	print_table(out, &block_fields);
	BLOCK_TEXT_FIELDS(BLOCK_TEXT_LINE)
	BLOCK_HISTS(BLOCK_HIST_LINE)
	print_table(out, &disk_stat_fields);
	print_table(out, &uring_fields);
	print_table(out, &trace_fields);
	print_table(out, &stacks_fields);
	print_table(out, &stack_site_fields);
	print_table(out, &story_fields);
	fputs("trace\ttruncated\t-\t-\tboolean\tMore events than --trace-max-events: some left "
	      "out\n", out);
	URING_TEXT_FIELDS(URING_TEXT_LINE)
	URING_HISTS(URING_HIST_LINE)
	fputs("files\tio_uring\t-\t-\tCQEs, bytes\tThe file's io_uring requests by opcode, as "
	      "files.io's rows (calls: one per CQE; transferred_bytes; latency_ns)\n", out);
	top_fields_print(out);
}
