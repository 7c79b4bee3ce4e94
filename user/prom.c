// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus text exposition. Counters keep their kernel names under one iotrace_ prefix,
 * in base units (bytes, seconds) with _total on counters; the kernel's log2 histograms
 * become cumulative `le` buckets whose bounds are the buckets' inclusive upper ends
 * (0, 1, 3, 7, ... 2^b - 1), so no observation is counted under the wrong bound.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "hist.h"
#include "prom.h"
#include "residency.h"
#include "syscall_table.h"

#ifndef IOTRACE_VERSION
#define IOTRACE_VERSION "unknown"
#endif

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value with \, " and newline escaped as the format requires. */
static void put_value(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(out, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

/* '{' labels [, extra="value"]... ; pairs is a NULL-terminated name/value list. */
/* run mode's run="NAME" on every series, so files in one textfile directory never clash. */
static const char *run_label;

static void put_labels(FILE *out, const struct prom_labels *lab, const char *const *pairs)
{
	bool first = true;

	fputc('{', out);
	if (run_label) {
		fputs("run=\"", out);
		put_value(out, run_label);
		fputc('"', out);
		first = false;
	}
	if (lab && lab->cgroup) {
		fputs(first ? "cgroup=\"" : ",cgroup=\"", out);
		put_value(out, lab->cgroup);
		fputc('"', out);
		first = false;
	}
	if (lab && lab->comm) {
		fputs(first ? "comm=\"" : ",comm=\"", out);
		put_value(out, lab->comm);
		fputc('"', out);
		first = false;
	}
	for (; pairs && pairs[0]; pairs += 2) {
		fprintf(out, "%s%s=\"", first ? "" : ",", pairs[0]);
		put_value(out, pairs[1]);
		fputc('"', out);
		first = false;
	}
	fputc('}', out);
}

static void sample(FILE *out, const char *name, const struct prom_labels *lab,
		   const char *const *pairs, uint64_t v)
{
	fputs(name, out);
	put_labels(out, lab, pairs);
	fprintf(out, " %llu\n", (unsigned long long)v);
}

static void sample_f(FILE *out, const char *name, const struct prom_labels *lab,
		     const char *const *pairs, double v)
{
	fputs(name, out);
	put_labels(out, lab, pairs);
	fprintf(out, " %.9g\n", v);
}

/* Nanoseconds as exact decimal seconds: 1023 -> "0.000001023", 2^30 - 1 -> "1.073741823". */
static void ns_to_seconds(uint64_t ns, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%llu.%09llu", (unsigned long long)(ns / 1000000000ULL),
			 (unsigned long long)(ns % 1000000000ULL));

	while (n > 0 && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '.')
		buf[--n] = '\0';
}

/*
 * One histogram: buckets 0..HIST_BUCKETS-2 have the inclusive upper bound 2^b - 1 (in
 * seconds when ns: the kernel counts nanoseconds); the last bucket is open, so it is +Inf.
 */
static void histogram(FILE *out, const char *name, const struct prom_labels *lab,
		      const char *k, const char *v, const char *k2, const char *v2,
		      const uint64_t *hist, double sum, bool ns)
{
	/* The caller's one or two label pairs, then "le" in the first free pair. */
	const char *pairs[] = { k, v, k2, v2, NULL, NULL, NULL };
	int at = k2 ? 4 : 2;
	char metric[128], le[48];
	uint64_t cum = 0;

	snprintf(metric, sizeof(metric), "%s_bucket", name);
	pairs[at] = "le";
	pairs[at + 1] = le;
	for (int b = 0; b < HIST_BUCKETS - 1; b++) {
		cum += hist[b];
		if (ns)
			ns_to_seconds(hist_bucket_hi(b), le, sizeof(le));
		else
			snprintf(le, sizeof(le), "%llu", (unsigned long long)hist_bucket_hi(b));
		sample(out, metric, lab, pairs, cum);
	}
	cum += hist[HIST_BUCKETS - 1];
	pairs[at + 1] = "+Inf";
	sample(out, metric, lab, pairs, cum);
	pairs[at] = NULL;
	snprintf(metric, sizeof(metric), "%s_sum", name);
	sample_f(out, metric, lab, pairs, sum);
	snprintf(metric, sizeof(metric), "%s_count", name);
	sample(out, metric, lab, pairs, cum);
}

/* ---- syscalls ---- */

enum sc_field { SC_CALLS, SC_ERRORS };

static void syscall_counter(FILE *out, const struct prom_report *r, const char *name,
			    enum sc_field field, const char *help)
{
	family(out, name, "counter", help);
	for (size_t g = 0; g < r->ngroups; g++) {
		const struct prom_group *gr = &r->groups[g];

		for (uint32_t nr = 0; nr < MAX_SYSCALLS; nr++) {
			const struct sc_row *row = &gr->d->sc[nr];
			const char *pairs[] = { "syscall", syscall_name(nr), NULL };

			if (row->calls)
				sample(out, name, &gr->lab, pairs,
				       field == SC_CALLS ? row->calls : row->errors);
		}
	}
}

static void syscall_seconds(FILE *out, const struct prom_report *r)
{
	const char *name = "iotrace_syscall_seconds_total";

	family(out, name, "counter", "Time spent in syscalls, sys_enter to sys_exit.");
	for (size_t g = 0; g < r->ngroups; g++) {
		const struct prom_group *gr = &r->groups[g];

		for (uint32_t nr = 0; nr < MAX_SYSCALLS; nr++) {
			const char *pairs[] = { "syscall", syscall_name(nr), NULL };

			if (gr->d->sc[nr].calls)
				sample_f(out, name, &gr->lab, pairs, gr->d->sc[nr].total_ns * 1e-9);
		}
	}
}

static void io_families(FILE *out, const struct prom_report *r)
{
	const char *name;

	name = "iotrace_syscall_requested_bytes_total";
	family(out, name, "counter",
	       "Bytes asked for by read/write-family calls (count argument or iovec sum).");
	for (size_t g = 0; g < r->ngroups; g++)
		for (int k = 1; k < IO_KINDS; k++) {
			const char *pairs[] = { "syscall", io_kinds[k].name, NULL };

			if (r->groups[g].d->io_used[k])
				sample(out, name, &r->groups[g].lab, pairs,
				       r->groups[g].d->io[k].requested);
		}
	name = "iotrace_syscall_io_bytes";
	family(out, name, "histogram",
	       "Bytes transferred by each successful read/write-family call.");
	for (size_t g = 0; g < r->ngroups; g++)
		for (int k = 1; k < IO_KINDS; k++) {
			const struct io_summary *io = &r->groups[g].d->io[k];

			if (r->groups[g].d->io_used[k])
				histogram(out, name, &r->groups[g].lab, "syscall", io_kinds[k].name,
					  NULL, NULL, io->size_hist, io->transferred, false);
		}
	if (!r->timing)
		return;
	name = "iotrace_syscall_latency_seconds";
	family(out, name, "histogram", "Latency of read/write-family calls, enter to exit.");
	for (size_t g = 0; g < r->ngroups; g++)
		for (int k = 1; k < IO_KINDS; k++) {
			const struct dense_profile *d = r->groups[g].d;
			int nr = io_kind_nr(k);

			if (d->io_used[k] && nr >= 0)
				histogram(out, name, &r->groups[g].lab, "syscall", io_kinds[k].name,
					  NULL, NULL, d->io[k].lat_hist, d->sc[nr].total_ns * 1e-9,
					  true);
		}
}

/* ---- page cache ---- */

struct pc_metric {
	const char *name, *help;
	uint64_t (*get)(const struct page_cache_sum *s);
	bool direct; /* an O_DIRECT counter: absent when its hook is */
};

static uint64_t pc_requested(const struct page_cache_sum *s) { return s->st.requested_pages; }
static uint64_t pc_hits(const struct page_cache_sum *s)
{
	return s->st.requested_pages - s->st.miss_pages;
}
static uint64_t pc_misses(const struct page_cache_sum *s) { return s->st.miss_pages; }
static uint64_t pc_added(const struct page_cache_sum *s) { return s->st.added_pages; }
static uint64_t pc_ahead(const struct page_cache_sum *s)
{
	return s->st.ra_pages - s->st.ra_requested_pages;
}
static uint64_t pc_faults(const struct page_cache_sum *s) { return s->st.faults; }
static uint64_t pc_around(const struct page_cache_sum *s) { return s->st.map_pages; }

static const struct pc_metric pc_metrics[] = {
	{ "iotrace_page_cache_requested_pages_total",
	  "Pages asked for by buffered reads (page-cache lookups).", pc_requested, false },
	{ "iotrace_page_cache_hits_total", "Requested pages found in the page cache.", pc_hits,
	  false },
	{ "iotrace_page_cache_misses_total", "Requested pages the read had to add to the cache.",
	  pc_misses, false },
	{ "iotrace_page_cache_added_pages_total", "Pages added to the page cache.", pc_added,
	  false },
	{ "iotrace_readahead_ahead_pages_total",
	  "Readahead pages beyond what the read that started the window asked for.", pc_ahead,
	  false },
	{ "iotrace_page_cache_faults_total", "Page faults that reached the page cache.",
	  pc_faults, false },
	{ "iotrace_page_cache_fault_around_pages_total", "Pages offered to fault-around.",
	  pc_around, false },
};

static uint64_t ra_windows(const struct file_stat *st, int k) { return st->ra_windows[k]; }
static uint64_t ra_window_pages(const struct file_stat *st, int k)
{
	return st->ra_window_pages[k];
}
static const char *const io_ops[] = { "read", "write" };
static uint64_t direct_bytes(const struct file_stat *st, int op)
{
	return op ? st->direct_write_bytes : st->direct_read_bytes;
}
static uint64_t direct_calls(const struct file_stat *st, int op)
{
	return op ? st->direct_writes : st->direct_reads;
}

/* A counter with one series per value of one label (kind, op), for groups that read files. */
static void split_counter(FILE *out, const struct prom_report *r, const char *name,
			  const char *help, const char *key, const char *const *values, int n,
			  uint64_t (*get)(const struct file_stat *st, int i))
{
	family(out, name, "counter", help);
	for (size_t g = 0; g < r->ngroups; g++)
		for (int i = 0; i < n && r->groups[g].pc_seen; i++) {
			const char *pairs[] = { key, values[i], NULL };

			sample(out, name, &r->groups[g].lab, pairs, get(&r->groups[g].pc.st, i));
		}
}

static void page_cache_families(FILE *out, const struct prom_report *r)
{
	const char *name;

	for (size_t m = 0; m < sizeof(pc_metrics) / sizeof(pc_metrics[0]); m++) {
		family(out, pc_metrics[m].name, "counter", pc_metrics[m].help);
		for (size_t g = 0; g < r->ngroups; g++)
			if (r->groups[g].pc_seen)
				sample(out, pc_metrics[m].name, &r->groups[g].lab, NULL,
				       pc_metrics[m].get(&r->groups[g].pc));
	}
	split_counter(out, r, "iotrace_readahead_windows_total",
		      "Readahead windows opened, by how they started.", "kind", ra_kind_names,
		      RA_KINDS, ra_windows);
	split_counter(out, r, "iotrace_readahead_pages_total",
		      "Pages in the readahead windows opened, by kind.", "kind", ra_kind_names,
		      RA_KINDS, ra_window_pages);
	/* A gauge: a page read ahead and not requested yet stops counting once it is read. */
	name = "iotrace_readahead_unused_pages";
	family(out, name, "gauge",
	       "Readahead pages not requested (yet) by the process that read them ahead (absent "
	       "when page bitmaps overflowed).");
	for (size_t g = 0; g < r->ngroups; g++)
		if (r->groups[g].pc_seen && r->groups[g].pc.unused_exact)
			sample(out, name, &r->groups[g].lab, NULL, r->groups[g].pc.unused_ra_pages);
}

static void direct_io_families(FILE *out, const struct prom_report *r)
{
	split_counter(out, r, "iotrace_direct_io_bytes_total",
		      "Bytes asked for by O_DIRECT reads and writes (iomap).", "op", io_ops, 2,
		      direct_bytes);
	split_counter(out, r, "iotrace_direct_io_calls_total", "O_DIRECT reads and writes (iomap).",
		      "op", io_ops, 2, direct_calls);
}

/* ---- block ---- */

static void block_families(FILE *out, const struct prom_report *r)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} counters[] = {
		{ "iotrace_block_io_requests_total", "Block requests completed.",
		  offsetof(struct block_stat, requests) },
		{ "iotrace_block_io_bytes_total", "Bytes of the completed block requests.",
		  offsetof(struct block_stat, bytes) },
		{ "iotrace_block_io_errors_total", "Block requests completed with an error.",
		  offsetof(struct block_stat, errors) },
		{ "iotrace_block_io_writeback_requests_total",
		  "Requests charged through the pages' dirtier (writeback).",
		  offsetof(struct block_stat, writeback) },
	};
	char disk[64];

	for (size_t c = 0; c < sizeof(counters) / sizeof(counters[0]); c++) {
		family(out, counters[c].name, "counter", counters[c].help);
		for (size_t i = 0; i < r->nblocks; i++) {
			const struct prom_block *b = &r->blocks[i];
			const char *pairs[] = { "disk", disk_name(b->dev, disk, sizeof(disk)), "op",
						block_op_names[b->op % BLOCK_OPS], NULL };

			sample(out, counters[c].name, &b->lab, pairs,
			       *(const uint64_t *)((const char *)&b->st + counters[c].off));
		}
	}
	static const struct {
		const char *name, *help;
		int which;
	} hists[] = {
		{ "iotrace_block_io_latency_seconds", "Block request latency, issue to completion.",
		  0 },
		{ "iotrace_block_io_queue_latency_seconds",
		  "Block request latency, start (queued) to completion.", 1 },
		{ "iotrace_block_io_size_bytes", "Bytes per block request.", 2 },
	};
	for (size_t h = 0; h < sizeof(hists) / sizeof(hists[0]); h++) {
		family(out, hists[h].name, "histogram", hists[h].help);
		for (size_t i = 0; i < r->nblocks; i++) {
			const struct prom_block *b = &r->blocks[i];
			const char *dn = disk_name(b->dev, disk, sizeof(disk));
			const char *op = block_op_names[b->op % BLOCK_OPS];

			if (hists[h].which == 0)
				histogram(out, hists[h].name, &b->lab, "disk", dn, "op", op,
					  (const uint64_t *)b->st.lat_hist, b->st.lat_ns * 1e-9, true);
			else if (hists[h].which == 1)
				histogram(out, hists[h].name, &b->lab, "disk", dn, "op", op,
					  (const uint64_t *)b->st.qlat_hist, b->st.qlat_ns * 1e-9, true);
			else
				histogram(out, hists[h].name, &b->lab, "disk", dn, "op", op,
					  (const uint64_t *)b->st.size_hist, b->st.bytes, false);
		}
	}
}

static void hook_up(FILE *out, const char *hook, const char *missing)
{
	const char *pairs[] = { "hook", hook, "reason", missing ? missing : "", NULL };

	sample(out, "iotrace_hook_up", NULL, pairs, !missing);
}

int prom_write(FILE *out, const struct prom_report *r)
{
	const char *version[] = { "version", IOTRACE_VERSION, NULL };

	run_label = r->run;

	family(out, "iotrace_build_info", "gauge", "iotrace's version; always 1.");
	sample(out, "iotrace_build_info", NULL, version, 1);
	family(out, "iotrace_hook_up", "gauge",
	       "1 when a group of tracepoints is attached; 0 with the reason when it is not.");
	hook_up(out, "syscalls", NULL);
	hook_up(out, "page_cache", r->page_cache_missing);
	hook_up(out, "direct_io", r->direct_io_missing);

	syscall_counter(out, r, "iotrace_syscalls_total", SC_CALLS,
			"Syscalls that returned, counted as strace -c counts them.");
	syscall_counter(out, r, "iotrace_syscall_errors_total", SC_ERRORS,
			"Syscalls that returned an error (-4095..-1).");
	if (r->timing)
		syscall_seconds(out, r);
	io_families(out, r);
	if (!r->page_cache_missing)
		page_cache_families(out, r);
	if (!r->direct_io_missing)
		direct_io_families(out, r);
	block_families(out, r);

	family(out, "iotrace_lost_events_total", "counter",
	       "Events not counted, or counted inexactly, because a bounded table was full.");
	for (int i = 0; i < DROP_COUNTERS; i++) {
		const char *pairs[] = { "reason", drop_names[i], NULL };

		sample(out, "iotrace_lost_events_total", NULL, pairs, r->drops ? r->drops[i] : 0);
	}
	fflush(out);
	return ferror(out) ? -1 : 0;
}

int prom_write_file(const char *path, const struct prom_report *r)
{
	char *dir_copy = strdup(path), *base_copy = strdup(path), *tmp = NULL;
	int fd = -1, err = -1;
	FILE *f = NULL;

	if (!dir_copy || !base_copy ||
	    asprintf(&tmp, "%s/.%s.XXXXXX", dirname(dir_copy), basename(base_copy)) < 0) {
		tmp = NULL;
		errno = ENOMEM;
		goto out;
	}
	/* A hidden temporary name: node_exporter's textfile collector reads *.prom only. */
	fd = mkstemp(tmp);
	if (fd < 0)
		goto out;
	f = fdopen(fd, "w");
	if (!f)
		goto out;
	fd = -1;
	if (prom_write(f, r) || fchmod(fileno(f), 0644) || fsync(fileno(f)))
		goto out;
	if (fclose(f)) {
		f = NULL;
		goto out;
	}
	f = NULL;
	if (rename(tmp, path))
		goto out;
	free(tmp);
	tmp = NULL;
	err = 0;
out:
	if (err) {
		int saved = errno;

		if (f)
			fclose(f);
		if (fd >= 0)
			close(fd);
		if (tmp)
			unlink(tmp);
		errno = saved;
	}
	free(tmp);
	free(dir_copy);
	free(base_copy);
	return err;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

int prom_add_block(struct prom_block **blocks, size_t *n, struct prom_labels lab, uint32_t dev,
		   uint32_t op, const struct block_stat *st)
{
	struct prom_block *b;

	for (size_t i = 0; i < *n; i++) {
		b = &(*blocks)[i];
		if (b->dev == dev && b->op == op && same_str(b->lab.cgroup, lab.cgroup) &&
		    same_str(b->lab.comm, lab.comm)) {
			block_stat_add(&b->st, st);
			return 0;
		}
	}
	b = realloc(*blocks, (*n + 1) * sizeof(*b));
	if (!b)
		return -1;
	*blocks = b;
	b = &b[(*n)++];
	memset(b, 0, sizeof(*b));
	b->lab = lab;
	b->dev = dev;
	b->op = op;
	block_stat_add(&b->st, st);
	return 0;
}
