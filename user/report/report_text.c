// SPDX-License-Identifier: GPL-2.0
/*
 * The text report: strace -c style tables, the read/write family, page cache and block
 * tables (their columns from the field tables in fields.h), bcc-style histograms. Formats
 * what the model derived; computes nothing.
 */
#include <stdlib.h>
#include <string.h>
#include "cells.h"
#include "report.h"
#include "util/disks.h"
#include "model/syscall_table.h"
#include "model/uring.h"

/*
 * Above this many processes the details show the top DETAILED_TOP by I/O in sections and
 * the rest one line each.
 */
#define DETAILED_PROCS_MAX 8
#define DETAILED_TOP 3
/* Width of the first column of the page-cache table (the file's path). */
#define PATH_COLUMN 30

/* ---- syscalls: strace -c's table ---- */

static int cmp_rows(const void *a, const void *b, void *by_time)
{
	const struct sc_row *x = a, *y = b;

	if (by_time && x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(syscall_name(x->nr), syscall_name(y->nr));
}

static void print_rule(FILE *out, bool timing)
{
	if (timing)
		fputs("------ ----------- ----------- --------- --------- ----------------\n", out);
	else
		fputs("--------- --------- ----------------\n", out);
}

static void print_syscall_row(FILE *out, const struct sc_row *row, const char *name,
			      double share, bool timing)
{
	char errs[24] = "", secs[32];
	int n;

	if (row->errors)
		snprintf(errs, sizeof(errs), "%llu", (unsigned long long)row->errors);
	/* "≈": estimated from a sample of timed calls (one column, three bytes). */
	n = snprintf(secs, sizeof(secs), "%s%.6f", row->timed_calls < row->calls ? "≈" : "",
		     row->total_ns / 1e9);
	if (timing)
		fprintf(out, "%6.2f %*s%s %11llu %9llu %9s %s\n", 100.0 * share,
			11 - n + (row->timed_calls < row->calls ? 2 : 0), "", secs,
			(unsigned long long)(row->avg_ns / 1000), (unsigned long long)row->calls,
			errs, name);
	else
		fprintf(out, "%9llu %9s %s\n", (unsigned long long)row->calls, errs, name);
}

static void print_syscall_table(FILE *out, const struct profile *p, bool timing)
{
	struct sc_row *rows = malloc((p->nrows ? p->nrows : 1) * sizeof(*rows));
	struct sc_row total = { .calls = p->calls, .errors = p->errors, .total_ns = p->total_ns,
				.timed_calls = p->timed_calls, .avg_ns = p->avg_ns };

	if (!rows)
		return;
	memcpy(rows, p->rows, p->nrows * sizeof(*rows));
	qsort_r(rows, p->nrows, sizeof(*rows), cmp_rows, timing ? (void *)1 : NULL);
	if (timing)
		fputs("% time     seconds  usecs/call     calls    errors syscall\n", out);
	else
		fputs("    calls    errors syscall\n", out);
	print_rule(out, timing);
	for (size_t i = 0; i < p->nrows; i++)
		print_syscall_row(out, &rows[i], syscall_name(rows[i].nr), rows[i].time_share,
				  timing);
	print_rule(out, timing);
	print_syscall_row(out, &total, "total", p->total_ns ? 1.0 : 0.0, timing);
	if (timing && p->timed_calls < p->calls)
		fprintf(out, "≈ estimated: each syscall's first %d calls (per CPU) timed, then 1 in "
			     "2..%d as its calls double, weighted; --time-all times all\n",
			SAMPLE_WARMUP, SAMPLE_PERIOD);
	free(rows);
}

/* ---- columns from a field table ---- */

static void print_headers(FILE *out, const struct field_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->f[i].column)
			fprintf(out, " %*s", t->f[i].width, t->f[i].column);
}

/* Why a field of a record has no value (then "n/a"), or NULL. */
typedef const char *(*unknown_fn)(const struct field *f, const void *rec, const void *ctx);

static void print_values(FILE *out, const struct field_table *t, const void *rec,
			 unknown_fn unknown, const void *ctx)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct field *f = &t->f[i];

		if (!f->column)
			continue;
		if (unknown && unknown(f, rec, ctx))
			fprintf(out, " %*s", f->width, "n/a");
		else
			fprintf(out, " %*llu", f->width, (unsigned long long)field_get(f, rec));
	}
}

/* ---- the read/write family ---- */

static void print_io_table(FILE *out, const struct profile *p, bool timing)
{
	bool any = false;

	for (int k = 1; k < IO_KINDS; k++)
		any = any || p->io[k];
	if (!any)
		return;
	fprintf(out, "\n%-16s", "read/write");
	for (size_t i = 0; i < io_fields.n; i++) /* req bytes carries "+?": a string column */
		if (io_fields.f[i].column)
			fprintf(out, " %*s", io_fields.f[i].width, io_fields.f[i].column);
	fprintf(out, " %9s %9s", "p50 B", "p99 B");
	if (timing)
		fprintf(out, " %9s %9s", "p50 usecs", "p99 usecs");
	fputc('\n', out);
	for (int k = 1; k < IO_KINDS; k++) {
		const struct io_summary *io = p->io[k];
		char req[32];

		if (!io)
			continue;
		snprintf(req, sizeof(req), "%llu%s", (unsigned long long)io->requested_bytes,
			 io->unknown_request_calls ? "+?" : "");
		fprintf(out, "%-16s %9llu %7llu %12s %12llu %9llu %9llu", io_kind_name(k),
			(unsigned long long)io->calls, (unsigned long long)io->errors, req,
			(unsigned long long)io->transferred_bytes,
			(unsigned long long)io->size_bytes.p50,
			(unsigned long long)io->size_bytes.p99);
		if (timing)
			fprintf(out, " %9.2f %9.2f", io->latency_ns.p50 / 1e3,
				io->latency_ns.p99 / 1e3);
		fputc('\n', out);
	}
}

static void print_io_hists(FILE *out, const struct profile *p, bool timing)
{
	for (int k = 1; k < IO_KINDS; k++) {
		const struct io_summary *io = p->io[k];

		if (!io)
			continue;
		if (io->size_bytes.count) {
			fprintf(out, "\n%s: bytes transferred per successful call\n",
				io_kind_name(k));
			hist_print(out, HIST_LOG2, io->size_hist, "bytes");
		}
		if (timing && io->latency_ns.count) {
			fprintf(out, "\n%s: latency per call\n", io_kind_name(k));
			hist_print(out, HIST_FINE, io->lat_hist, "nsecs");
		}
	}
}

static void print_profile(FILE *out, const struct profile *p, bool timing, bool hists)
{
	print_syscall_table(out, p, timing);
	print_io_table(out, p, timing);
	if (hists)
		print_io_hists(out, p, timing);
}

/* ---- page cache ---- */

static const char *page_cache_unknown(const struct field *f, const void *rec, const void *run)
{
	const struct run_result *r = run;

	return page_cache_field_unknown(f, rec, r->direct_io_missing);
}

static void print_page_cache_header(FILE *out)
{
	fprintf(out, "\n%-*s", PATH_COLUMN, "page cache (4 KiB pages)");
	print_headers(out, &page_cache_fields);
	fputc('\n', out);
}

/* The files table, and why its page-cache or O_DIRECT columns are missing if they are. */
static void print_files(FILE *out, const struct proc_record *p, const struct run_result *r,
			const struct text_choices *c)
{
	if (r->page_cache_missing)
		fprintf(out, "\npage cache: n/a (%s)\n", r->page_cache_missing);
	else if (r->direct_io_missing)
		fprintf(out, "\n(O_DIRECT counts n/a: %s)\n", r->direct_io_missing);
	report_files(out, "files", p, r, c);
}

static void print_page_cache_total(FILE *out, const struct run_result *r)
{
	if (r->page_cache_missing) {
		fprintf(out, "\npage cache: n/a (%s)\n", r->page_cache_missing);
		return;
	}
	print_page_cache_header(out);
	fprintf(out, "%-*s", PATH_COLUMN, "all files");
	print_values(out, &page_cache_fields, &r->pc.v, page_cache_unknown, r);
	fputc('\n', out);
}

/* ---- block ---- */

static void print_block_header(FILE *out, const char *title)
{
	fprintf(out, "\n%-14s", title);
	print_headers(out, &block_fields);
	fprintf(out, " %9s %5s", "avg B", "seq%");
#define BLOCK_HIST_HEADER(name, column, ...) \
	if (strcmp(#name, "size_bytes"))     \
		fprintf(out, " %9s %9s", "p50 " column, "p99 " column);
	BLOCK_HISTS(BLOCK_HIST_HEADER)
	fputc('\n', out);
}

static void print_block_table(FILE *out, const char *title, const struct block_record *recs,
			      size_t n, const struct disk_table *disks)
{
	char name[64], label[80];

	if (!n)
		return;
	print_block_header(out, title);
	for (size_t i = 0; i < n; i++) {
		const struct block_view *v = &recs[i].v;

		snprintf(label, sizeof(label), "%s %s",
			 disk_table_name(disks, recs[i].key.dev, name, sizeof(name)),
			 block_op_names[recs[i].key.op % BLOCK_OPS]);
		fprintf(out, "%-14s", label);
		print_values(out, &block_fields, v, NULL, NULL);
		fprintf(out, " %9llu %4llu%% %9.1f %9.1f %9.1f %9.1f\n",
			(unsigned long long)v->avg_bytes, (unsigned long long)v->sequential_pct,
			v->lat.p50 / 1e3, v->lat.p99 / 1e3, v->qlat.p50 / 1e3, v->qlat.p99 / 1e3);
		if (v->writeback || v->readahead || v->sync || v->meta)
			fprintf(out, "    sync %llu, readahead %llu, meta %llu, writeback "
				     "charged by dirtier %llu\n",
				(unsigned long long)v->sync, (unsigned long long)v->readahead,
				(unsigned long long)v->meta, (unsigned long long)v->writeback);
	}
}

/*
 * Every disk of the run in /sys/block/DISK/stat's columns (all processes and the other I/O
 * together), to hold beside the disk's own counters.
 */
static void print_disk_stats(FILE *out, const struct run_result *r)
{
	struct block_record *by_disk = NULL;
	struct disk_stat_view *d = NULL;
	size_t n = 0, nd = 0;
	char name[64];

	if (!block_by_disk_of_run(r, &by_disk, &n) && !disk_stats_of(by_disk, n, &d, &nd) && nd) {
		fputs("\ndisks, as /sys/block/DISK/stat counts them (fields 1 3 4, 5 7 8, 12 14 15, "
		      "16 17)\n", out);
		fprintf(out, "%-8s", "disk");
		print_headers(out, &disk_stat_fields);
		fputc('\n', out);
		for (size_t i = 0; i < nd; i++) {
			fprintf(out, "%-8s", disk_table_name(&r->disks, d[i].dev, name, sizeof(name)));
			print_values(out, &disk_stat_fields, &d[i], NULL, NULL);
			fputc('\n', out);
		}
	}
	free(d);
	free(by_disk);
}

/* ---- io_uring ---- */

static const char *uring_unknown(const struct field *f, const void *view, const void *rec)
{
	(void)view;
	return uring_field_unknown(f, rec) ? "no bytes" : NULL;
}

/* One row per opcode: requests, errors, bytes, latency, how they ran, what is left. */
static void print_uring_table(FILE *out, const struct uring_record *recs, size_t n)
{
	char name[16];

	if (!n)
		return;
	fprintf(out, "\n%-16s", "io_uring");
	print_headers(out, &uring_fields);
	fprintf(out, " %9s %9s %6s %7s %9s\n", "p50 usecs", "p99 usecs", "async%", "sqpoll%",
		"in flight");
	for (size_t i = 0; i < n; i++) {
		const struct uring_view *v = &recs[i].v;

		fprintf(out, "%-16s", uring_op_name(recs[i].key.op, name, sizeof(name)));
		print_values(out, &uring_fields, v, uring_unknown, &recs[i]);
		fprintf(out, " %9.2f %9.2f %5llu%% %6llu%% %9llu\n", v->lat.p50 / 1e3,
			v->lat.p99 / 1e3, (unsigned long long)v->async_pct,
			(unsigned long long)v->sqpoll_pct, (unsigned long long)v->in_flight);
	}
}

/* ---- processes ---- */

static void print_process_header(FILE *out, const struct proc_record *p)
{
	char exit[64], comm[NAME_TEXT_MAX], head[NAME_TEXT_MAX + 64], tail[128], args[512];
	int room;

	format_exit(exit, sizeof(exit), p->exit_seen, p->exit_status);
	snprintf(head, sizeof(head), "== pid %u (ppid %u) %s: ", p->pid, p->ppid,
		 name_cell(p->comm, 0, comm, sizeof(comm)));
	snprintf(tail, sizeof(tail), " — %s", exit);
	if (p->start_ns && p->end_ns)
		snprintf(tail + strlen(tail), sizeof(tail) - strlen(tail), ", %.3f s",
			 (p->end_ns - p->start_ns) / 1e9);
	/* The command line is cut to keep the line within 100 columns (JSON has it whole). */
	room = 100 - text_width(head) - text_width(tail);
	fprintf(out, "\n%s%s%s", head,
		name_head(p->args ? p->args : p->comm, room > 10 ? room : 10, args, sizeof(args)),
		tail);
	fputs(p->overflow ? " (counted with other processes beyond --max-procs)\n" : "\n", out);
}

/* --stacks: the process's top call sites, one line each. */
static void print_sites(FILE *out, const struct proc_record *p, const struct run_result *r)
{
	char t[CELL_MAX], c[CELL_MAX], b[CELL_MAX], where[NAME_TEXT_MAX];

	if (!r->stacks_path || !p->nsites)
		return;
	fprintf(out, "\ncall sites, by %s (unwound with %s; every stack: %s)\n",
		!strcmp(r->stacks.by, "time") ? "I/O time" : r->stacks.by, r->stacks.mode,
		name_cell(r->stacks_path, 0, where, sizeof(where)));
	fputs("    time   calls   bytes syscall          where\n", out);
	for (size_t i = 0; i < p->nsites; i++) {
		const struct stack_site *s = &p->sites[i];

		fprintf(out, "%8s %7s %7s %-16s %s\n", r->timing ? cell_time(s->time_ns, t) : "-",
			cell_count(s->calls, c), cell_bytes(s->bytes, b), s->syscall,
			name_cell(s->where, 0, where, sizeof(where)));
	}
}

static void print_process(FILE *out, const struct proc_record *p, const struct run_result *r,
			  const struct text_choices *c, bool hists)
{
	print_process_header(out, p);
	print_files(out, p, r, c);
	fputc('\n', out);
	print_profile(out, &p->prof, r->timing, hists && c->hist);
	print_uring_table(out, p->urings, p->nurings);
	print_block_table(out, "block I/O", p->blocks, p->nblocks, &r->disks);
	print_sites(out, p, r);
}

static void print_drops(FILE *out, const struct run_result *r)
{
	const uint64_t *d = r->drops;
	char path[NAME_TEXT_MAX];

	fprintf(out, "\nlost: %llu notices (slot table read); %llu processes merged (over %u live)",
		(unsigned long long)d[DROP_RINGBUF], (unsigned long long)d[DROP_SLOTS],
		r->nr_slots - 2);
	if (r->timing)
		fprintf(out, "; %llu calls untimed", (unsigned long long)d[DROP_UNTIMED]);
	fputc('\n', out);
	if (d[DROP_BLOCK_INFLIGHT] || d[DROP_BLOCK_KEYS] || d[DROP_BLOCK_UNSEEN])
		fprintf(out, "block I/O: %llu requests untracked (in-flight table full), %llu "
			     "uncounted (stats table full),\n    %llu completions counted late (no "
			     "latency)\n",
			(unsigned long long)d[DROP_BLOCK_INFLIGHT],
			(unsigned long long)d[DROP_BLOCK_KEYS],
			(unsigned long long)d[DROP_BLOCK_UNSEEN]);
	if (d[DROP_NESTED])
		fprintf(out, "hooks: %llu runs skipped by the kernel (a program nested in itself on "
			     "one CPU;\n    per program: bpftool prog show, recursion_misses)\n",
			(unsigned long long)d[DROP_NESTED]);
	if (r->trace_path)
		fprintf(out, "trace: %s: %llu events (%llu calls, %llu block requests, %llu io_uring, "
			     "%llu flows); %llu lost (ring buffer full), %llu not written%s\n",
			name_cell(r->trace_path, 0, path, sizeof(path)),
			(unsigned long long)r->trace.events,
			(unsigned long long)r->trace.syscalls,
			(unsigned long long)r->trace.block_requests,
			(unsigned long long)r->trace.io_uring_requests,
			(unsigned long long)r->trace.flows, (unsigned long long)r->trace.lost_events,
			(unsigned long long)r->trace.not_written,
			r->trace.not_written ? " (--trace-max-events: truncated)" : "");
	if (r->stacks_path)
		fprintf(out, "stacks: %s: %llu stacks (%s, by %s) of %llu calls; %llu calls lost, "
			     "deepest %llu frames, %llu frames unknown\n",
			name_cell(r->stacks_path, 0, path, sizeof(path)),
			(unsigned long long)r->stacks.stacks, r->stacks.mode,
			r->stacks.by, (unsigned long long)r->stacks.stack_calls,
			(unsigned long long)r->stacks.lost_calls,
			(unsigned long long)r->stacks.max_depth,
			(unsigned long long)r->stacks.unknown_frames);
	if (d[DROP_FILES] || d[DROP_CHUNKS] || d[DROP_PATHS])
		fprintf(out, "lost page-cache detail: %llu events of untracked files, %llu bitmap "
			     "chunks, %llu paths\n",
			(unsigned long long)d[DROP_FILES], (unsigned long long)d[DROP_CHUNKS],
			(unsigned long long)d[DROP_PATHS]);
}

static void print_many(FILE *out, const struct run_result *r, const struct text_choices *c)
{
	if (r->nprocs <= DETAILED_PROCS_MAX) {
		for (size_t i = 0; i < r->nprocs; i++)
			print_process(out, &r->procs[i], r, c, false);
	} else {
		fprintf(out, "\n== the %d processes with the most I/O, then the other %zu\n",
			DETAILED_TOP, r->nprocs - DETAILED_TOP);
		for (size_t i = 0; i < DETAILED_TOP; i++)
			print_process(out, &r->procs[r->ranked[i]], r, c, false);
		report_process_list(out, r, DETAILED_TOP);
	}
	if (r->overflow_used) {
		fputs("\n== processes beyond --max-procs, counted together\n", out);
		print_profile(out, &r->overflow, r->timing, false);
	}
	fprintf(out, "\n== total: %zu processes\n", r->nprocs);
	print_profile(out, &r->totals, r->timing, c->hist);
	print_uring_table(out, r->uring_totals, r->nuring_totals);
	print_page_cache_total(out, r);
}

void report_text(FILE *out, const struct run_result *r, const struct text_choices *c)
{
	report_story(out, r);
	if (c->summary_only)
		return;
	if (r->nprocs == 1 && !r->overflow_used)
		print_process(out, &r->procs[0], r, c, true);
	else
		print_many(out, r, c);
	print_block_table(out, "other I/O", r->other_blocks, r->nother_blocks, &r->disks);
	if (r->nother_blocks)
		fputs("    (not charged to a traced process: journal, metadata, others' writeback, "
		      "other processes)\n", out);
	report_files(out, "other I/O by file", &r->other_files, r, c);
	print_disk_stats(out, r);
	if (r->uring_missing)
		fprintf(out, "\nio_uring: n/a (%s)\n", r->uring_missing);
	print_drops(out, r);
}
