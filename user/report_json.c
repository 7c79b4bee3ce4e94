// SPDX-License-Identifier: GPL-2.0
/* The run as one JSON document (schema: docs/json.md), built with libcjson. */
#include <signal.h>
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
	if (total) {
		add_u64(h, "min", min);
		add_u64(h, "max", max);
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

static void add_profile(cJSON *obj, const struct profile *p, bool timing)
{
	cJSON_AddItemToObject(obj, "syscalls", profile_syscalls_json(p, timing));
	cJSON_AddItemToObject(obj, "io", profile_io_json(p, timing));
}

static cJSON *process_json(const struct proc_record *p, bool timing)
{
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
	return obj;
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
	for (size_t i = 0; i < r->nprocs; i++)
		cJSON_AddItemToArray(procs, process_json(&r->procs[i], r->timing));
	cJSON_AddItemToObject(root, "processes", procs);
	if (r->overflow_used) {
		cJSON *over = cJSON_CreateObject();

		add_profile(over, &r->overflow, r->timing);
		cJSON_AddItemToObject(root, "overflow", over);
	} else {
		cJSON_AddNullToObject(root, "overflow");
	}
	add_profile(totals, &r->totals, r->timing);
	cJSON_AddItemToObject(root, "totals", totals);
	add_u64(drops, "ringbuf_events", r->drops[DROP_RINGBUF]);
	add_u64(drops, "overflow_processes", r->drops[DROP_SLOTS]);
	add_u64(drops, "untimed_calls", r->drops[DROP_UNTIMED]);
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
