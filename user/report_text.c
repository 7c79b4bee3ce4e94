// SPDX-License-Identifier: GPL-2.0
/* strace -c style tables, then the read/write family, then bcc-style histograms. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "hist.h"
#include "report.h"
#include "residency.h"
#include "syscall_table.h"

/* Above this many processes the text report lists them one line each. */
#define DETAILED_PROCS_MAX 8

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

static void print_syscall_table(FILE *out, const struct profile *p, bool timing)
{
	struct sc_row *rows = malloc((p->nrows ? p->nrows : 1) * sizeof(*rows));
	uint64_t calls = 0, errors = 0, ns = 0;

	if (!rows)
		return;
	memcpy(rows, p->rows, p->nrows * sizeof(*rows));
	qsort_r(rows, p->nrows, sizeof(*rows), cmp_rows, timing ? (void *)1 : NULL);
	for (size_t i = 0; i < p->nrows; i++) {
		calls += rows[i].calls;
		errors += rows[i].errors;
		ns += rows[i].total_ns;
	}
	if (timing)
		fputs("% time     seconds  usecs/call     calls    errors syscall\n", out);
	else
		fputs("    calls    errors syscall\n", out);
	print_rule(out, timing);
	for (size_t i = 0; i <= p->nrows; i++) {
		const struct sc_row *row = i < p->nrows ? &rows[i] : NULL;
		uint64_t c = row ? row->calls : calls, e = row ? row->errors : errors;
		uint64_t t = row ? row->total_ns : ns;
		const char *name = row ? syscall_name(row->nr) : "total";
		char errs[24] = "";

		if (!row)
			print_rule(out, timing);
		if (e)
			snprintf(errs, sizeof(errs), "%llu", (unsigned long long)e);
		if (timing)
			fprintf(out, "%6.2f %11.6f %11llu %9llu %9s %s\n",
				ns ? 100.0 * t / ns : 0.0, t / 1e9,
				(unsigned long long)(c ? t / 1000 / c : 0), (unsigned long long)c, errs,
				name);
		else
			fprintf(out, "%9llu %9s %s\n", (unsigned long long)c, errs, name);
	}
	free(rows);
}

static void print_io_table(FILE *out, const struct profile *p, bool timing)
{
	bool any = false;

	for (int k = 1; k < IO_KINDS; k++)
		any = any || p->io[k];
	if (!any)
		return;
	fprintf(out, "\n%-16s %9s %7s %13s %13s %9s %9s", "read/write", "calls", "errors",
		"req bytes", "xfer bytes", "p50 B", "p99 B");
	if (timing)
		fprintf(out, " %10s %10s", "p50 usecs", "p99 usecs");
	fputc('\n', out);
	for (int k = 1; k < IO_KINDS; k++) {
		const struct io_summary *io = p->io[k];
		char req[32];

		if (!io)
			continue;
		if (io->unknown_request)
			snprintf(req, sizeof(req), "%llu+?", (unsigned long long)io->requested);
		else
			snprintf(req, sizeof(req), "%llu", (unsigned long long)io->requested);
		fprintf(out, "%-16s %9llu %7llu %13s %13llu %9llu %9llu", io_kinds[k].name,
			(unsigned long long)io->calls, (unsigned long long)io->errors, req,
			(unsigned long long)io->transferred,
			(unsigned long long)hist_quantile(io->size_hist, 0.5, io->size_min, io->size_max),
			(unsigned long long)hist_quantile(io->size_hist, 0.99, io->size_min,
							  io->size_max));
		if (timing)
			fprintf(out, " %10.2f %10.2f",
				hist_quantile(io->lat_hist, 0.5, io->lat_min, io->lat_max) / 1e3,
				hist_quantile(io->lat_hist, 0.99, io->lat_min, io->lat_max) / 1e3);
		fputc('\n', out);
	}
}

static void print_io_hists(FILE *out, const struct profile *p, bool timing)
{
	for (int k = 1; k < IO_KINDS; k++) {
		const struct io_summary *io = p->io[k];

		if (!io)
			continue;
		if (hist_total(io->size_hist)) {
			fprintf(out, "\n%s: bytes transferred per successful call\n", io_kinds[k].name);
			hist_print(out, io->size_hist, "bytes");
		}
		if (timing && hist_total(io->lat_hist)) {
			fprintf(out, "\n%s: latency per call\n", io_kinds[k].name);
			hist_print(out, io->lat_hist, "nsecs");
		}
	}
}

static void print_profile(FILE *out, const struct profile *p, const struct options *o,
			  bool hists)
{
	print_syscall_table(out, p, o->timing);
	print_io_table(out, p, o->timing);
	if (hists && o->hist)
		print_io_hists(out, p, o->timing);
}

/* Last `width` characters of a path, so the file name stays visible. */
static const char *path_tail(const char *path, int width)
{
	size_t len = strlen(path);

	return len > (size_t)width ? path + len - width : path;
}

static void print_page_cache_row(FILE *out, const char *name, const struct file_stat *st,
				 uint64_t unused, bool unused_exact, const char *resident)
{
	char unused_s[24];

	if (unused_exact)
		snprintf(unused_s, sizeof(unused_s), "%llu", (unsigned long long)unused);
	else
		snprintf(unused_s, sizeof(unused_s), "n/a");
	fprintf(out, "%-30s %9llu %9llu %9llu %9llu %9s %9s\n", name,
		(unsigned long long)st->requested_pages,
		(unsigned long long)(st->requested_pages - st->miss_pages),
		(unsigned long long)st->miss_pages,
		(unsigned long long)(st->ra_pages - st->ra_requested_pages), unused_s,
		resident);
}

static void print_file_detail(FILE *out, const struct file_record *f)
{
	char dev[32], adv[64];

	kdev_format(f->st.key.dev, dev, sizeof(dev));
	uint64_t windows = 0;

	fprintf(out, "    %s ino %llu, advice %s, windows", dev, (unsigned long long)f->st.key.ino,
		advice_name(f->st.advice, adv, sizeof(adv)) ?: "n/a (none seen)");
	for (int k = 0; k < RA_KINDS; k++) {
		windows += f->st.ra_windows[k];
		if (f->st.ra_windows[k])
			fprintf(out, " %s %llu (%llu pages)", ra_kind_names[k],
				(unsigned long long)f->st.ra_windows[k],
				(unsigned long long)f->st.ra_window_pages[k]);
	}
	if (!windows)
		fputs(" none", out);
	if (f->st.faults)
		fprintf(out, ", faults %llu", (unsigned long long)f->st.faults);
	if (f->st.direct_reads || f->st.direct_writes)
		fprintf(out, ", O_DIRECT read %llu B write %llu B (bypass the cache)",
			(unsigned long long)f->st.direct_read_bytes,
			(unsigned long long)f->st.direct_write_bytes);
	fputc('\n', out);
}

static void print_page_cache_header(FILE *out)
{
	fprintf(out, "\n%-30s %9s %9s %9s %9s %9s %9s\n", "page cache (4 KiB pages)", "requested",
		"hits", "misses", "readahead", "unused", "resident");
}

static void print_files(FILE *out, const struct proc_record *p, const struct run_result *r)
{
	if (r->page_cache_missing) {
		fprintf(out, "\npage cache: n/a (%s)\n", r->page_cache_missing);
		return;
	}
	if (!p->nfiles)
		return;
	print_page_cache_header(out);
	if (r->direct_io_missing)
		fprintf(out, "(O_DIRECT counts n/a: %s)\n", r->direct_io_missing);
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct file_record *f = &p->files[i];
		char resident[24] = "n/a";

		if (!f->residency_missing)
			snprintf(resident, sizeof(resident), "%llu",
				 (unsigned long long)f->res.cached_pages);
		print_page_cache_row(out, f->path ? path_tail(f->path, 30) : "(path unknown)", &f->st,
				     f->unused_ra_pages, f->unused_exact, resident);
		print_file_detail(out, f);
	}
}

static void print_page_cache_total(FILE *out, const struct run_result *r)
{
	struct page_cache_sum sum = { .unused_exact = true };

	if (r->page_cache_missing) {
		fprintf(out, "\npage cache: n/a (%s)\n", r->page_cache_missing);
		return;
	}
	for (size_t i = 0; i < r->nprocs; i++)
		page_cache_add(&sum, r->procs[i].files, r->procs[i].nfiles);
	print_page_cache_header(out);
	print_page_cache_row(out, "all files", &sum.st, sum.unused_ra_pages, sum.unused_exact, "");
}

static void print_block_table(FILE *out, const char *title, const struct block_record *recs,
			      size_t n)
{
	char name[64], label[80];

	if (!n)
		return;
	fprintf(out, "\n%-14s %9s %13s %9s %5s %9s %9s %9s %9s\n", title, "requests", "bytes",
		"avg B", "seq%", "p50 us", "p99 us", "p50 q us", "p99 q us");
	for (size_t i = 0; i < n; i++) {
		const struct block_stat *st = &recs[i].st;

		snprintf(label, sizeof(label), "%s %s",
			 disk_name(recs[i].key.dev, name, sizeof(name)),
			 block_op_names[recs[i].key.op % BLOCK_OPS]);
		fprintf(out, "%-14s %9llu %13llu %9llu %4llu%% %9.1f %9.1f %9.1f %9.1f\n", label,
			(unsigned long long)st->requests, (unsigned long long)st->bytes,
			(unsigned long long)(st->requests ? st->bytes / st->requests : 0),
			(unsigned long long)(st->requests ? 100 * st->sequential / st->requests : 0),
			hist_quantile((const uint64_t *)st->lat_hist, 0.5, 0, UINT64_MAX) / 1e3,
			hist_quantile((const uint64_t *)st->lat_hist, 0.99, 0, UINT64_MAX) / 1e3,
			hist_quantile((const uint64_t *)st->qlat_hist, 0.5, 0, UINT64_MAX) / 1e3,
			hist_quantile((const uint64_t *)st->qlat_hist, 0.99, 0, UINT64_MAX) / 1e3);
		if (st->writeback || st->readahead || st->sync || st->meta)
			fprintf(out, "    sync %llu, readahead %llu, meta %llu, writeback charged by "
				     "dirtier %llu\n",
				(unsigned long long)st->sync, (unsigned long long)st->readahead,
				(unsigned long long)st->meta, (unsigned long long)st->writeback);
	}
}

static void print_process_header(FILE *out, const struct proc_record *p)
{
	char exit[64];

	format_exit(exit, sizeof(exit), p->exit_seen, p->exit_status);
	fprintf(out, "\n== pid %u (ppid %u) %s: %s — %s", p->pid, p->ppid, p->comm,
		p->args ? p->args : p->comm, exit);
	if (p->start_ns && p->end_ns)
		fprintf(out, ", %.3f s", (p->end_ns - p->start_ns) / 1e9);
	fputs(p->overflow ? " (counted with other processes beyond --max-procs)\n" : "\n", out);
}

static void print_process_list(FILE *out, const struct run_result *r)
{
	fprintf(out, "\n%8s %8s %-16s %10s %8s %-14s %s\n", "pid", "ppid", "comm", "calls",
		"errors", "exit", "command");
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct proc_record *p = &r->procs[i];
		uint64_t errors = 0;
		char exit[64];

		for (size_t j = 0; j < p->prof.nrows; j++)
			errors += p->prof.rows[j].errors;
		format_exit(exit, sizeof(exit), p->exit_seen, p->exit_status);
		fprintf(out, "%8u %8u %-16s %10llu %8llu %-14s %.60s%s\n", p->pid, p->ppid, p->comm,
			(unsigned long long)profile_calls(&p->prof), (unsigned long long)errors,
			exit, p->args ? p->args : "", p->overflow ? " (+overflow)" : "");
	}
}

static void print_drops(FILE *out, const struct run_result *r)
{
	fprintf(out, "\nlost: %llu events (ring buffer full); %llu processes merged (over %u live)",
		(unsigned long long)r->drops[DROP_RINGBUF], (unsigned long long)r->drops[DROP_SLOTS],
		r->nr_slots - 2);
	if (r->timing)
		fprintf(out, "; %llu calls untimed", (unsigned long long)r->drops[DROP_UNTIMED]);
	fputc('\n', out);
	if (r->drops[DROP_BLOCK_INFLIGHT] || r->drops[DROP_BLOCK_KEYS] || r->drops[DROP_BLOCK_UNSEEN])
		fprintf(out, "block I/O: %llu requests untracked (in-flight table full), %llu "
			     "uncounted (stats table full), %llu completions counted late (no "
			     "latency)\n",
			(unsigned long long)r->drops[DROP_BLOCK_INFLIGHT],
			(unsigned long long)r->drops[DROP_BLOCK_KEYS],
			(unsigned long long)r->drops[DROP_BLOCK_UNSEEN]);
	if (r->drops[DROP_FILES] || r->drops[DROP_CHUNKS] || r->drops[DROP_PATHS])
		fprintf(out, "lost page-cache detail: %llu events of untracked files, %llu bitmap "
			     "chunks, %llu paths\n",
			(unsigned long long)r->drops[DROP_FILES],
			(unsigned long long)r->drops[DROP_CHUNKS],
			(unsigned long long)r->drops[DROP_PATHS]);
}

void report_text(FILE *out, const struct run_result *r, const struct options *o)
{
	char exit[64];

	format_exit(exit, sizeof(exit), r->exit_known, r->exit_status);
	fprintf(out, "iotrace: %zu process%s, %.3f s wall, %s%s\n", r->nprocs,
		r->nprocs == 1 ? "" : "es", r->wall_ns / 1e9, exit,
		r->partial ? " — PARTIAL: interrupted before the command ended" : "");
	if (r->nprocs == 1 && !r->overflow_used) {
		print_process_header(out, &r->procs[0]);
		print_profile(out, &r->procs[0].prof, o, true);
		print_files(out, &r->procs[0], r);
		print_block_table(out, "block I/O", r->procs[0].blocks, r->procs[0].nblocks);
	} else {
		if (!o->summary_only && r->nprocs <= DETAILED_PROCS_MAX) {
			for (size_t i = 0; i < r->nprocs; i++) {
				print_process_header(out, &r->procs[i]);
				print_profile(out, &r->procs[i].prof, o, false);
				print_files(out, &r->procs[i], r);
				print_block_table(out, "block I/O", r->procs[i].blocks,
						  r->procs[i].nblocks);
			}
		} else if (!o->summary_only) {
			print_process_list(out, r);
		}
		if (r->overflow_used) {
			fputs("\n== processes beyond --max-procs, counted together\n", out);
			print_profile(out, &r->overflow, o, false);
		}
		fprintf(out, "\n== total: %zu processes\n", r->nprocs);
		print_profile(out, &r->totals, o, true);
		print_page_cache_total(out, r);
	}
	print_block_table(out, "other I/O", r->other_blocks, r->nother_blocks);
	if (r->nother_blocks)
		fputs("    (not charged to a traced process: journal, metadata, others' writeback, "
		      "other processes)\n", out);
	print_drops(out, r);
}
