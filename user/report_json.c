// SPDX-License-Identifier: GPL-2.0
/* The run as one JSON document (schema: docs/json.md), built with libcjson. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cjson/cJSON.h>
#include "hist.h"
#include "report.h"
#include "syscall_table.h"

/* JSON numbers are doubles: counts stay exact up to 2^53, far beyond any run. */
static void add_u64(cJSON *obj, const char *key, uint64_t v)
{
	cJSON_AddNumberToObject(obj, key, (double)v);
}

static cJSON *exit_json(bool known, int status)
{
	cJSON *e = cJSON_CreateObject();

	if (known && WIFEXITED(status))
		cJSON_AddNumberToObject(e, "code", WEXITSTATUS(status));
	else
		cJSON_AddNullToObject(e, "code");
	if (known && WIFSIGNALED(status)) {
		cJSON_AddNumberToObject(e, "signal", WTERMSIG(status));
		cJSON_AddStringToObject(e, "signal_name", sigabbrev_np(WTERMSIG(status)) ?: "?");
	} else {
		cJSON_AddNullToObject(e, "signal");
	}
	return e;
}

static cJSON *hist_json(const uint64_t *hist, uint64_t min, uint64_t max)
{
	cJSON *h = cJSON_CreateObject(), *buckets = cJSON_CreateArray();
	uint64_t total = hist_total(hist);

	add_u64(h, "count", total);
	/* Kernel histograms without a kept min/max (block, readahead windows) pass 0..UINT64_MAX:
	 * then min and max are left out rather than printed as 0 and 2^64 - 1. */
	if (total && !(min == 0 && max == UINT64_MAX)) {
		add_u64(h, "min", min);
		add_u64(h, "max", max);
	}
	if (total) {
		add_u64(h, "p50", hist_quantile(hist, 0.5, min, max));
		add_u64(h, "p99", hist_quantile(hist, 0.99, min, max));
	}
	for (int b = 0; b < HIST_BUCKETS; b++) {
		cJSON *bucket;

		if (!hist[b])
			continue;
		bucket = cJSON_CreateObject();
		add_u64(bucket, "lo", hist_bucket_lo(b));
		add_u64(bucket, "hi", hist_bucket_hi(b));
		add_u64(bucket, "count", hist[b]);
		cJSON_AddItemToArray(buckets, bucket);
	}
	cJSON_AddItemToObject(h, "buckets", buckets);
	return h;
}

static cJSON *profile_syscalls_json(const struct profile *p, bool timing)
{
	cJSON *obj = cJSON_CreateObject();

	for (size_t i = 0; i < p->nrows; i++) {
		cJSON *row = cJSON_CreateObject();

		add_u64(row, "calls", p->rows[i].calls);
		add_u64(row, "errors", p->rows[i].errors);
		if (timing)
			add_u64(row, "total_ns", p->rows[i].total_ns);
		else
			cJSON_AddNullToObject(row, "total_ns");
		cJSON_AddItemToObject(obj, syscall_name(p->rows[i].nr), row);
	}
	return obj;
}

static cJSON *profile_io_json(const struct profile *p, bool timing)
{
	cJSON *obj = cJSON_CreateObject();

	for (int k = 1; k < IO_KINDS; k++) {
		const struct io_summary *io = p->io[k];
		cJSON *row;

		if (!io)
			continue;
		row = cJSON_CreateObject();
		add_u64(row, "calls", io->calls);
		add_u64(row, "errors", io->errors);
		add_u64(row, "requested_bytes", io->requested);
		add_u64(row, "unknown_request_calls", io->unknown_request);
		add_u64(row, "transferred_bytes", io->transferred);
		cJSON_AddItemToObject(row, "size_bytes",
				      hist_json(io->size_hist, io->size_min, io->size_max));
		if (timing)
			cJSON_AddItemToObject(row, "latency_ns",
					      hist_json(io->lat_hist, io->lat_min, io->lat_max));
		else
			cJSON_AddNullToObject(row, "latency_ns");
		cJSON_AddItemToObject(obj, io_kinds[k].name, row);
	}
	return obj;
}

static void add_null_reason(cJSON *obj, const char *key, const char *reason)
{
	char name[64];

	cJSON_AddNullToObject(obj, key);
	snprintf(name, sizeof(name), "%s_reason", key);
	cJSON_AddStringToObject(obj, name, reason);
}

static cJSON *windows_json(const struct file_stat *st)
{
	cJSON *w = cJSON_CreateObject();

	for (int k = 0; k < RA_KINDS; k++) {
		cJSON *one = cJSON_CreateObject();

		add_u64(one, "windows", st->ra_windows[k]);
		add_u64(one, "pages", st->ra_window_pages[k]);
		cJSON_AddItemToObject(w, ra_kind_names[k], one);
	}
	return w;
}

/* Counters shared by a file entry and a page_cache summary. */
static void add_page_counters(cJSON *obj, const struct file_stat *st, uint64_t unused, bool exact)
{
	add_u64(obj, "requested_pages", st->requested_pages);
	add_u64(obj, "hit_pages", st->requested_pages - st->miss_pages);
	add_u64(obj, "miss_pages", st->miss_pages);
	add_u64(obj, "added_pages", st->added_pages);
	/* Read ahead of any request: window pages minus those the triggering read needed. */
	add_u64(obj, "readahead_pages", st->ra_pages - st->ra_requested_pages);
	add_u64(obj, "readahead_window_added_pages", st->ra_pages);
	if (exact)
		add_u64(obj, "unused_readahead_pages", unused);
	else
		add_null_reason(obj, "unused_readahead_pages",
				"page bitmap table full (drops.page_chunks)");
	cJSON_AddItemToObject(obj, "readahead_windows", windows_json(st));
	add_u64(obj, "readahead_fallbacks", st->ra_fallbacks);
	add_u64(obj, "faults", st->faults);
	add_u64(obj, "fault_around_pages", st->map_pages);
	add_u64(obj, "direct_reads", st->direct_reads);
	add_u64(obj, "direct_read_bytes", st->direct_read_bytes);
	add_u64(obj, "direct_writes", st->direct_writes);
	add_u64(obj, "direct_write_bytes", st->direct_write_bytes);
}

/* Without the O_DIRECT hook its counters are unknown, not zero. */
static void null_direct(cJSON *obj, const char *missing)
{
	static const char *const keys[] = { "direct_reads", "direct_read_bytes", "direct_writes",
					     "direct_write_bytes" };

	if (!missing)
		return;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cJSON_ReplaceItemInObject(obj, keys[i], cJSON_CreateNull());
	cJSON_AddStringToObject(obj, "direct_reason", missing);
}

static cJSON *file_json(const struct file_record *f, const char *direct_missing)
{
	cJSON *obj = cJSON_CreateObject();
	char dev[32], adv[64];
	const struct residency *r = &f->res;

	if (f->path)
		cJSON_AddStringToObject(obj, "path", f->path);
	else
		add_null_reason(obj, "path", "not recorded (deep path or path table full)");
	kdev_format(f->st.key.dev, dev, sizeof(dev));
	cJSON_AddStringToObject(obj, "dev", dev);
	add_u64(obj, "ino", f->st.key.ino);
	if (advice_name(f->st.advice, adv, sizeof(adv)))
		cJSON_AddStringToObject(obj, "advice", adv);
	else
		add_null_reason(obj, "advice", "no readahead decision or O_DIRECT call seen");
	add_page_counters(obj, &f->st, f->unused_ra_pages, f->unused_exact);
	null_direct(obj, direct_missing);
	add_u64(obj, "added_folios", f->st.added_folios);
	if (f->residency_missing) {
		add_null_reason(obj, "resident_pages", f->residency_missing);
		cJSON_AddNullToObject(obj, "dirty_pages");
		cJSON_AddNullToObject(obj, "writeback_pages");
		cJSON_AddNullToObject(obj, "evicted_pages");
		cJSON_AddNullToObject(obj, "size_bytes");
	} else {
		add_u64(obj, "resident_pages", r->cached_pages);
		add_u64(obj, "dirty_pages", r->dirty_pages);
		add_u64(obj, "writeback_pages", r->writeback_pages);
		add_u64(obj, "evicted_pages", r->evicted_pages);
		add_u64(obj, "recently_evicted_pages", r->recently_evicted_pages);
		add_u64(obj, "size_bytes", r->size_bytes);
	}
	return obj;
}

static cJSON *page_cache_json(const struct page_cache_sum *sum, size_t nfiles,
			      const struct run_result *r)
{
	cJSON *obj = cJSON_CreateObject();

	if (r->page_cache_missing) {
		cJSON_AddBoolToObject(obj, "available", false);
		cJSON_AddStringToObject(obj, "reason", r->page_cache_missing);
		return obj;
	}
	cJSON_AddBoolToObject(obj, "available", true);
	add_u64(obj, "files", nfiles);
	add_page_counters(obj, &sum->st, sum->unused_ra_pages, sum->unused_exact);
	null_direct(obj, r->direct_io_missing);
	cJSON_AddItemToObject(obj, "readahead_window_pages",
			      hist_json((const uint64_t *)sum->st.window_hist, 0, UINT64_MAX));
	return obj;
}

static cJSON *block_op_json(const struct block_stat *st)
{
	cJSON *o = cJSON_CreateObject();

	add_u64(o, "requests", st->requests);
	add_u64(o, "bytes", st->bytes);
	add_u64(o, "errors", st->errors);
	add_u64(o, "sync", st->sync);
	add_u64(o, "readahead", st->readahead);
	add_u64(o, "meta", st->meta);
	add_u64(o, "fua", st->fua);
	add_u64(o, "preflush", st->preflush);
	add_u64(o, "writeback", st->writeback);
	add_u64(o, "sequential", st->sequential);
	add_u64(o, "latency_sum_ns", st->lat_ns);
	add_u64(o, "queue_latency_sum_ns", st->qlat_ns);
	cJSON_AddItemToObject(o, "size_bytes", hist_json((const uint64_t *)st->size_hist, 0,
							    UINT64_MAX));
	cJSON_AddItemToObject(o, "latency_ns", hist_json((const uint64_t *)st->lat_hist, 0,
							    UINT64_MAX));
	cJSON_AddItemToObject(o, "queue_latency_ns",
			      hist_json((const uint64_t *)st->qlat_hist, 0, UINT64_MAX));
	return o;
}

/* {"read": {...}, ..., "latency_ns": hist, "size_bytes": hist, "disks": {"vda": {...}}} */
static cJSON *block_json(const struct block_record *recs, size_t n)
{
	struct block_stat by_op[BLOCK_OPS] = {}, all = {};
	cJSON *obj = cJSON_CreateObject(), *disks = cJSON_CreateObject();
	char name[64];

	for (size_t i = 0; i < n; i++) {
		cJSON *disk;

		block_stat_add(&by_op[recs[i].key.op % BLOCK_OPS], &recs[i].st);
		block_stat_add(&all, &recs[i].st);
		disk_name(recs[i].key.dev, name, sizeof(name));
		disk = cJSON_GetObjectItem(disks, name);
		if (!disk) {
			disk = cJSON_CreateObject();
			cJSON_AddItemToObject(disks, name, disk);
		}
		cJSON_AddItemToObject(disk, block_op_names[recs[i].key.op % BLOCK_OPS],
				      block_op_json(&recs[i].st));
	}
	for (int op = 0; op < BLOCK_OPS; op++)
		cJSON_AddItemToObject(obj, block_op_names[op], block_op_json(&by_op[op]));
	cJSON_AddItemToObject(obj, "latency_ns", hist_json((const uint64_t *)all.lat_hist, 0,
							      UINT64_MAX));
	cJSON_AddItemToObject(obj, "queue_latency_ns",
			      hist_json((const uint64_t *)all.qlat_hist, 0, UINT64_MAX));
	cJSON_AddItemToObject(obj, "size_bytes", hist_json((const uint64_t *)all.size_hist, 0,
							      UINT64_MAX));
	cJSON_AddItemToObject(obj, "disks", disks);
	return obj;
}

static void add_profile(cJSON *obj, const struct profile *p, bool timing)
{
	cJSON_AddItemToObject(obj, "syscalls", profile_syscalls_json(p, timing));
	cJSON_AddItemToObject(obj, "io", profile_io_json(p, timing));
}

static cJSON *process_json(const struct proc_record *p, const struct run_result *r)
{
	struct page_cache_sum sum = { .unused_exact = true };
	bool timing = r->timing;
	cJSON *files = cJSON_CreateArray();

	cJSON *obj = cJSON_CreateObject();

	add_u64(obj, "pid", p->pid);
	add_u64(obj, "ppid", p->ppid);
	cJSON_AddStringToObject(obj, "comm", p->comm);
	if (p->args)
		cJSON_AddStringToObject(obj, "args", p->args);
	else
		cJSON_AddNullToObject(obj, "args");
	if (p->start_ns && p->end_ns)
		add_u64(obj, "duration_ns", p->end_ns - p->start_ns);
	else
		cJSON_AddNullToObject(obj, "duration_ns");
	cJSON_AddItemToObject(obj, "exit", exit_json(p->exit_seen, p->exit_status));
	cJSON_AddBoolToObject(obj, "in_overflow", p->overflow);
	add_profile(obj, &p->prof, timing);
	for (size_t i = 0; i < p->nfiles; i++)
		cJSON_AddItemToArray(files, file_json(&p->files[i], r->direct_io_missing));
	if (r->page_cache_missing) {
		cJSON_Delete(files);
		add_null_reason(obj, "files", r->page_cache_missing);
	} else {
		cJSON_AddItemToObject(obj, "files", files);
	}
	page_cache_add(&sum, p->files, p->nfiles);
	cJSON_AddItemToObject(obj, "page_cache", page_cache_json(&sum, p->nfiles, r));
	cJSON_AddItemToObject(obj, "block", block_json(p->blocks, p->nblocks));
	return obj;
}

/* Block I/O no traced process caused: a pseudo-process with "pid": null. */
static cJSON *other_io_json(const struct run_result *r)
{
	cJSON *obj = cJSON_CreateObject();

	cJSON_AddNullToObject(obj, "pid");
	cJSON_AddNullToObject(obj, "ppid");
	cJSON_AddStringToObject(obj, "comm", "(other I/O)");
	cJSON_AddStringToObject(obj, "description",
				"block I/O not charged to a traced process: journal, metadata, "
				"writeback of others' pages, other processes");
	cJSON_AddItemToObject(obj, "block", block_json(r->other_blocks, r->nother_blocks));
	return obj;
}

static cJSON *totals_block(const struct run_result *r)
{
	struct block_record *all;
	size_t n = r->nother_blocks, k = 0;
	cJSON *obj;

	for (size_t i = 0; i < r->nprocs; i++)
		n += r->procs[i].nblocks;
	all = calloc(n ? n : 1, sizeof(*all));
	for (size_t i = 0; all && i < r->nprocs; i++)
		for (size_t j = 0; j < r->procs[i].nblocks; j++)
			all[k++] = r->procs[i].blocks[j];
	for (size_t j = 0; all && j < r->nother_blocks; j++)
		all[k++] = r->other_blocks[j];
	obj = block_json(all, k);
	free(all);
	return obj;
}

static cJSON *totals_page_cache(const struct run_result *r)
{
	struct page_cache_sum sum = { .unused_exact = true };
	size_t nfiles = 0;

	for (size_t i = 0; i < r->nprocs; i++) {
		page_cache_add(&sum, r->procs[i].files, r->procs[i].nfiles);
		nfiles += r->procs[i].nfiles;
	}
	return page_cache_json(&sum, nfiles, r);
}

int report_json(FILE *out, const struct run_result *r)
{
	cJSON *root = cJSON_CreateObject(), *cmd = cJSON_CreateArray();
	cJSON *procs = cJSON_CreateArray(), *totals = cJSON_CreateObject();
	cJSON *drops = cJSON_CreateObject();
	char *text;

	for (char **a = r->command; a && *a; a++)
		cJSON_AddItemToArray(cmd, cJSON_CreateString(*a));
	cJSON_AddItemToObject(root, "command", cmd);
	cJSON_AddItemToObject(root, "exit", exit_json(r->exit_known, r->exit_status));
	add_u64(root, "wall_ns", r->wall_ns);
	cJSON_AddBoolToObject(root, "partial", r->partial);
	cJSON_AddBoolToObject(root, "timing", r->timing);
	cJSON_AddBoolToObject(root, "synced", r->synced);
	for (size_t i = 0; i < r->nprocs; i++)
		cJSON_AddItemToArray(procs, process_json(&r->procs[i], r));
	cJSON_AddItemToArray(procs, other_io_json(r));
	cJSON_AddItemToObject(root, "processes", procs);
	if (r->overflow_used) {
		cJSON *over = cJSON_CreateObject();

		add_profile(over, &r->overflow, r->timing);
		cJSON_AddItemToObject(root, "overflow", over);
	} else {
		cJSON_AddNullToObject(root, "overflow");
	}
	add_profile(totals, &r->totals, r->timing);
	cJSON_AddItemToObject(totals, "page_cache", totals_page_cache(r));
	cJSON_AddItemToObject(totals, "block", totals_block(r));
	cJSON_AddItemToObject(root, "totals", totals);
	/* Snoop's own counter (block_events) has no place in a run's report. */
	for (int i = 0; i < DROP_COUNTERS; i++)
		if (i != DROP_BLOCK_EVENTS)
			add_u64(drops, drop_names[i], r->drops[i]);
	add_u64(drops, "max_live_processes", r->nr_slots - 2);
	cJSON_AddItemToObject(root, "drops", drops);
	text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		return -1;
	fputs(text, out);
	fputc('\n', out);
	cJSON_free(text);
	return 0;
}
