// SPDX-License-Identifier: GPL-2.0
/*
 * The run as one JSON document (schema: docs/json.md), built with libcjson. Keys come from
 * the field tables (fields.h); values are what the model derived.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cjson/cJSON.h>
#include "report_kernel.h"
#include "model/file_use.h"
#include "model/files.h"
#include "model/story.h"
#include "model/names.h"
#include "report.h"
#include "model/syscall_table.h"
#include "json_cells.h"
#include "json_print.h"
#include "util/escape.h"
#include "model/uring.h"

static cJSON *exit_json(bool known, int status)
{
	cJSON *e = cJSON_CreateObject();

	if (known && WIFEXITED(status))
		cJSON_AddNumberToObject(e, "code", WEXITSTATUS(status));
	else
		json_add(e, "code", cJSON_CreateNull());
	if (known && WIFSIGNALED(status)) {
		cJSON_AddNumberToObject(e, "signal", WTERMSIG(status));
		json_add(e, "signal_name",
			 cJSON_CreateString(sigabbrev_np(WTERMSIG(status)) ?: "?"));
	} else {
		json_add(e, "signal", cJSON_CreateNull());
	}
	return e;
}

/* ---- syscalls ---- */

static cJSON *profile_syscalls_json(const struct profile *p, bool timing)
{
	cJSON *obj = cJSON_CreateObject();

	for (size_t i = 0; i < p->nrows; i++) {
		cJSON *row = cJSON_CreateObject();

		add_fields(row, &syscall_fields, &p->rows[i], NULL, NULL);
		if (!timing) /* null, without a reason key: docs/json.md */
			cJSON_ReplaceItemInObject(row, "total_ns", cJSON_CreateNull());
		json_add(obj, syscall_name(p->rows[i].nr), row);
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
		add_fields(row, &io_fields, io, NULL, NULL);
		json_add(row, "size_bytes", hist_json(HIST_LOG2, io->size_hist, &io->size_bytes));
		if (timing)
			json_add(row, "latency_ns",
				 hist_json(HIST_FINE, io->lat_hist, &io->latency_ns));
		else
			json_add(row, "latency_ns", cJSON_CreateNull());
		json_add(obj, io_kind_name(k), row);
	}
	return obj;
}

static void add_profile(cJSON *obj, const struct profile *p, bool timing)
{
	json_add(obj, "syscalls", profile_syscalls_json(p, timing));
	json_add(obj, "io", profile_io_json(p, timing));
}

/* ---- page cache ---- */

static const char *page_cache_unknown(const struct field *f, const void *rec, const void *run)
{
	const struct run_result *r = run;

	return page_cache_field_unknown(f, rec, r->direct_io_missing);
}

static cJSON *windows_json(const struct page_cache_view *v)
{
	cJSON *w = cJSON_CreateObject();

	for (int k = 0; k < RA_KINDS; k++) {
		cJSON *one = cJSON_CreateObject();

		add_u64(one, "windows", v->ra_windows[k]);
		add_u64(one, "pages", v->ra_window_pages[k]);
		json_add(w, ra_kind_names[k], one);
	}
	return w;
}

/* Counters shared by a file entry and a page_cache summary. */
static void add_page_cache(cJSON *obj, const struct page_cache_view *v,
			   const struct run_result *r)
{
	add_fields(obj, &page_cache_fields, v, page_cache_unknown, r);
	json_add(obj, "readahead_windows", windows_json(v));
}

/* What is cached of the file at the end; unknown: null, and one reason for them all. */
static void add_residency(cJSON *obj, const struct file_record *f)
{
	if (!f->residency_missing && !f->residency_partial) {
		add_fields(obj, &residency_fields, &f->res, NULL, NULL);
		return;
	}
	/* mincore (no cachestat): the pages and size known, the rest null with the reason. */
	for (size_t i = 0; f->residency_partial && !f->residency_missing && i < residency_fields.n;
	     i++) {
		const char *key = residency_fields.f[i].name;

		if (!strcmp(key, "resident_pages"))
			add_u64(obj, key, f->res.resident_pages);
		else if (!strcmp(key, "size_bytes"))
			add_u64(obj, key, f->res.size_bytes);
		else
			add_null_reason(obj, key, f->residency_partial);
	}
	if (!f->residency_missing)
		return;
	for (size_t i = 0; i < residency_fields.n; i++)
		if (i == 0)
			add_null_reason(obj, residency_fields.f[i].name, f->residency_missing);
		else
			json_add(obj, residency_fields.f[i].name, cJSON_CreateNull());
}

/*
 * The syscalls on the file by name (a copy's destination side under the syscall's name too),
 * or with uring, its io_uring opcodes: one call per CQE, their latency always measured
 * (submission to first CQE), no requested size.
 */
static cJSON *file_io_json(const struct file_record *f, bool timing, bool uring)
{
	cJSON *obj = cJSON_CreateObject();
	__u64 lat[HIST_BUCKETS];
	char key[64];

	for (size_t i = 0; i < f->nio; i++) {
		const struct file_io *io = &f->io[i];
		struct file_op_info op = file_op_info(io->op);
		const char *name = op.name;
		bool timed = timing || uring;
		cJSON *row;

		if (io->op >= FILE_OPS_END || op.uring != uring)
			continue;
		row = cJSON_CreateObject();
		/* Both sides of one copy on one file (copy_file_range within it): two entries. */
		snprintf(key, sizeof(key), cJSON_HasObjectItem(obj, name) ? "%s (destination)" : "%s",
			 name);
		add_fields(row, &file_io_fields, io, NULL, NULL);
		if (uring)
			cJSON_DeleteItemFromObject(row, "requested_bytes");
		if (!timed)
			cJSON_ReplaceItemInObject(row, "total_ns", cJSON_CreateNull());
		struct hist_summary s = file_io_latency(io, lat);

		if (timed)
			json_add(row, "latency_ns", hist_json(HIST_LOG2, lat, &s));
		else
			json_add(row, "latency_ns", cJSON_CreateNull());
		cJSON_AddItemToObject(obj, key, row);
	}
	return obj;
}


/*
 * A renamed file's syscalls by the name they were made under (strace -yy's name for them),
 * each name's in the shape of "io" without time: only where a name differs from the path.
 */
static cJSON *file_io_by_name_json(const struct file_record *f)
{
	cJSON *obj = cJSON_CreateObject();
	char key[64];

	for (size_t i = 0; i < f->nby_name; i++) {
		const struct file_name_io *g = &f->by_name[i];
		/* A key is a name too: escaped as json_name escapes values (NULL: no memory). */
		char *esc = g->name ? esc_dup(esc_json, g->name) : NULL;
		cJSON *calls = cJSON_AddObjectToObject(obj, esc ? esc : "?");

		free(esc);
		for (size_t k = 0; calls && k < g->nrows; k++) {
			const struct name_calls *c = &g->rows[k];
			const char *name = file_op_info(c->op).name;
			cJSON *row = cJSON_CreateObject();

			snprintf(key, sizeof(key),
				 cJSON_HasObjectItem(calls, name) ? "%s (destination)" : "%s", name);
			add_u64(row, "calls", c->calls);
			add_u64(row, "errors", c->errors);
			add_u64(row, "requested_bytes", c->requested_bytes);
			add_u64(row, "transferred_bytes", c->transferred_bytes);
			cJSON_AddItemToObject(calls, key, row);
		}
	}
	return obj;
}

/* A file's block I/O: the process-level shape, with only the operations it had. */
static cJSON *file_block_json(const struct file_record *f, const struct disk_table *names)
{
	struct block_record *recs;
	size_t n;
	cJSON *obj;

	if (file_block_records(f, &recs, &n))
		return cJSON_CreateNull();
	obj = blocks_json(recs, n, true, names);
	free(recs);
	return obj;
}

/* path, kind, dev, ino: a metadata row names its disk. */
static void add_file_name(cJSON *obj, const struct file_record *f, const struct disk_table *disks)
{
	char dev[32];

	if (f->kind == FK_METADATA)
		json_add(obj, "path", cJSON_CreateString(f->key.ino == OTHER_FILES_INO
								 ? "(other processes' files)"
								 : "(filesystem metadata)"));
	else if (f->path)
		add_name(obj, "path", f->path);
	else
		add_null_reason(obj, "path", "no name recorded (name table full)");
	if (f->other_names) { /* a renamed file: the names it had before */
		cJSON *names = cJSON_AddArrayToObject(obj, "other_names");

		for (const char *n = f->other_names; *n; n += strlen(n) + 1)
			cJSON_AddItemToArray(names, json_name(n));
	}
	json_add(obj, "kind", cJSON_CreateString(file_kind_name(f->kind)));
	/* A metadata row's disk by name, a file's device by its numbers (no table: "MAJ:MIN"). */
	json_add(obj, "dev",
		 cJSON_CreateString(disk_table_name(f->kind == FK_METADATA ? disks : NULL,
						    f->key.dev, dev, sizeof(dev))));
	add_u64(obj, "ino", f->kind == FK_METADATA ? 0 : f->key.ino);
	if (f->versions) /* --files-by path: this path's files in one */
		add_u64(obj, "versions", f->versions);
}

static cJSON *file_json(const struct file_record *f, const struct run_result *r)
{
	cJSON *obj = cJSON_CreateObject();
	char adv[64];

	add_file_name(obj, f, &r->disks);
	if (f->kind != FK_METADATA) {
		/* With no fadvise call seen, the advice is the default. */
		json_add(obj, "advice",
			 cJSON_CreateString(advice_name(f->advice, adv, sizeof(adv)) ?: "normal"));
		if (r->page_cache_missing)
			json_add(obj, "page_cache_reason",
				 cJSON_CreateString(r->page_cache_missing));
		else
			add_page_cache(obj, &f->pc, r);
		add_u64(obj, "added_folios", f->added_folios);
		add_residency(obj, f);
		add_fields(obj, &file_load_fields, &f->load, NULL, NULL);
		json_add(obj, "io", file_io_json(f, r->timing, false));
		if (f->nby_name)
			json_add(obj, "io_by_name", file_io_by_name_json(f));
		json_add(obj, "io_uring", file_io_json(f, r->timing, true));
	}
	json_add(obj, "block", file_block_json(f, &r->disks));
	return obj;
}

/* ---- streaming: a run touches tens of thousands of files, so no tree holds them all ---- */

/*
 * A process object, then its files, one tree at a time through the printer's pipeline
 * (json_print.h): the object is written open, its files after its other members.
 */
static int put_process(const char *before, cJSON *(*make)(const struct proc_record *,
							   const struct run_result *),
		       const struct proc_record *p, const struct run_result *r)
{
	int err = json_pipe_build();

	if (!err)
		err = json_pipe_put(before, make(p, r), true);
	for (size_t i = 0; i < p->nrows && !err; i++) {
		err = json_pipe_build();
		if (!err)
			err = json_pipe_put(i ? ",\n" : ",\n\t\"files\": [\n",
					    file_json(p->rows[i], r), false);
	}
	return err ? err : json_pipe_put(p->nrows ? "]\n}" : ",\n\t\"files\": []\n}", NULL, false);
}

static cJSON *page_cache_json(const struct page_cache_sum *sum, const struct run_result *r)
{
	cJSON *obj = cJSON_CreateObject();
	struct hist_summary windows = hist_summary_of(HIST_LOG2, sum->window_hist, false, 0, 0);
	const struct page_cache_view *v = &sum->v;

	if (r->page_cache_missing) {
		json_add(obj, "available", cJSON_CreateBool(false));
		json_add(obj, "reason", cJSON_CreateString(r->page_cache_missing));
		return obj;
	}
	json_add(obj, "available", cJSON_CreateBool(true));
	add_u64(obj, "files", sum->files);
	add_page_cache(obj, v, r);
	json_add(obj, "readahead_window_pages", hist_json(HIST_LOG2, sum->window_hist, &windows));
	return obj;
}

/* ---- the story (docs/run-mode.md, "The first screen") ---- */

struct story_ctx {
	const struct page_cache_view *pc;
	const struct run_result *r;
};

static const char *story_unknown(const struct field *f, const void *rec, const void *ctx)
{
	const struct story_ctx *c = ctx;

	return story_field_unknown(f, rec, c->pc, c->r);
}

static cJSON *story_json(const struct io_story *s, const struct page_cache_view *pc,
			 const struct run_result *r)
{
	cJSON *obj = cJSON_CreateObject();
	struct story_ctx ctx = { pc, r };

	add_fields(obj, &story_fields, s, story_unknown, &ctx);
	return obj;
}

/* A file of the run: a process's file row's members, and the pids that used it. */
static cJSON *run_file_json(const struct run_file *rf, const struct run_result *r)
{
	cJSON *obj = file_json(rf->f, r), *users;

	json_add(obj, "use", cJSON_CreateString(file_use_name(rf->use)));
	users = cJSON_AddArrayToObject(obj, "processes");

	for (size_t i = 0; users && i < rf->nusers; i++) {
		cJSON *u = cJSON_CreateObject();

		add_u64(u, "pid", rf->users[i].pid);
		add_u64(u, "bytes", rf->users[i].bytes);
		add_double(u, "share", rf->users[i].share);
		cJSON_AddItemToArray(users, u);
	}
	return obj;
}

/*
 * "files": [ ... ] of the run, streamed as a process's are, through the printer's pipeline
 * (a run of 10,000 processes that each wrote a file of its own has 10,000 of them).
 */
static int put_run_files(FILE *out, const struct run_result *r)
{
	int err = 0;

	fputs(",\n\t\"files\": [", out);
	for (size_t i = 0; i < r->nfiles && !err; i++) {
		err = json_pipe_build();
		if (!err)
			err = json_pipe_put(i ? ",\n" : "\n", run_file_json(&r->files[i], r),
					    false);
	}
	if (json_pipe_drain())
		err = -1;
	fputs("]", out);
	return err;
}

/* ---- processes ---- */

/* --stacks: the process's top call sites, by the folded file's weight. */
static cJSON *sites_json(const struct proc_record *p)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < p->nsites; i++) {
		cJSON *site = cJSON_CreateObject();

		json_add(site, "syscall", cJSON_CreateString(p->sites[i].syscall));
		add_name(site, "where", p->sites[i].where);
		add_fields(site, &stack_site_fields, &p->sites[i], NULL, NULL);
		cJSON_AddItemToArray(arr, site);
	}
	return arr;
}

static cJSON *process_json(const struct proc_record *p, const struct run_result *r)
{
	cJSON *obj = cJSON_CreateObject();

	add_u64(obj, "pid", p->pid);
	add_u64(obj, "ppid", p->ppid);
	add_name(obj, "comm", p->comm);
	if (p->args)
		add_name(obj, "args", p->args);
	else
		json_add(obj, "args", cJSON_CreateNull());
	if (p->start_ns && p->end_ns)
		add_u64(obj, "duration_ns", p->end_ns - p->start_ns);
	else
		json_add(obj, "duration_ns", cJSON_CreateNull());
	json_add(obj, "exit", exit_json(p->exit_seen, p->exit_status));
	json_add(obj, "in_overflow", cJSON_CreateBool(p->overflow));
	add_process_container(obj, p, r);
	json_add(obj, "story", story_json(&p->story, &p->pc.v, r));
	add_profile(obj, &p->prof, r->timing);
	add_urings(obj, p->urings, p->nurings, r);
	json_add(obj, "page_cache", page_cache_json(&p->pc, r));
	json_add(obj, "block", blocks_json(p->blocks, p->nblocks, false, &r->disks));
	if (r->stacks_path)
		json_add(obj, "stack_sites", sites_json(p));
	return obj; /* "files" follows: put_process */
}

/* Block I/O no traced process caused: a pseudo-process with "pid": null. */
static cJSON *other_io_json(const struct proc_record *p, const struct run_result *r)
{
	cJSON *obj = cJSON_CreateObject();

	(void)p; /* its files are the run's other I/O (put_process) */
	json_add(obj, "pid", cJSON_CreateNull());
	json_add(obj, "ppid", cJSON_CreateNull());
	json_add(obj, "comm", cJSON_CreateString("(other I/O)"));
	cJSON_AddStringToObject(obj, "description",
				"block I/O not charged to a traced process: journal, metadata, "
				"writeback of others' pages, other processes");
	json_add(obj, "block", blocks_json(r->other_blocks, r->nother_blocks, false, &r->disks));
	return obj; /* "files" follows: put_process */
}

static cJSON *totals_json(const struct run_result *r)
{
	cJSON *totals = cJSON_CreateObject();
	struct block_record *by_disk = NULL;
	size_t n = 0;

	json_add(totals, "story", story_json(&r->story, &r->pc.v, r));
	add_profile(totals, &r->totals, r->timing);
	add_urings(totals, r->uring_totals, r->nuring_totals, r);
	json_add(totals, "page_cache", page_cache_json(&r->pc, r));
	if (!block_by_disk_of_run(r, &by_disk, &n)) {
		json_add(totals, "block", blocks_json(by_disk, n, false, &r->disks));
		json_add(totals, "disk_stat", disk_stats_json(by_disk, n, &r->disks));
	}
	free(by_disk);
	return totals;
}

static cJSON *drops_json(const struct run_result *r)
{
	cJSON *drops = cJSON_CreateObject();

	/* Snoop's own counter (block_events) has no place in a run's report. */
	for (int i = 0; i < DROP_COUNTERS; i++)
		if (i != DROP_BLOCK_EVENTS)
			add_u64(drops, drop_names[i], r->drops[i]);
	add_u64(drops, "max_live_processes", r->nr_slots - 2);
	return drops;
}

/* How calls were timed: all, a sample (the rule), or none; and how many were. */
static cJSON *timing_json(const struct run_result *r)
{
	cJSON *t = cJSON_CreateObject();

	json_add(t, "mode",
		 cJSON_CreateString(!r->timing ? "off" : r->sampled ? "sampled" : "all"));
	if (r->sampled) {
		add_u64(t, "warmup_calls", SAMPLE_WARMUP);
		add_u64(t, "sample_period", SAMPLE_PERIOD);
	} else {
		json_add(t, "warmup_calls", cJSON_CreateNull());
		json_add(t, "sample_period", cJSON_CreateNull());
	}
	add_u64(t, "calls", r->totals.calls);
	add_u64(t, "timed_calls", r->totals.timed_calls);
	return t;
}

/* The run's own members: command, exit, wall time, flags. */
static cJSON *run_json(const struct run_result *r)
{
	cJSON *root = cJSON_CreateObject(), *cmd = cJSON_CreateArray();

	for (char **a = r->command; a && *a; a++)
		cJSON_AddItemToArray(cmd, json_name(*a));
	json_add(root, "command", cmd);
	json_add(root, "exit", exit_json(r->exit_known, r->exit_status));
	add_u64(root, "wall_ns", r->wall_ns);
	json_add(root, "partial", cJSON_CreateBool(r->partial));
	json_add(root, "timing", timing_json(r));
	json_add(root, "synced", cJSON_CreateBool(r->synced));
	json_add(root, "containers", containers_json(r));
	add_u64(root, "host_processes", r->host_procs);
	add_u64(root, "unknown_container_processes", r->unknown_procs);
	return root;
}

/* What follows the processes: overflow, totals, drops, as "key": value members. */
static int put_tail(FILE *out, const struct run_result *r)
{
	cJSON *tail = cJSON_CreateObject(), *item;
	int err = 0;

	if (r->overflow_used) {
		cJSON *over = cJSON_CreateObject();

		add_profile(over, &r->overflow, r->timing);
		json_add(tail, "overflow", over);
	} else {
		json_add(tail, "overflow", cJSON_CreateNull());
	}
	json_add(tail, "drops", drops_json(r));
	json_add(tail, "trace", trace_json(r));
	json_add(tail, "stacks", stacks_json(r));
	if (r->kernel)
		json_add(tail, "kernel", kernel_report_json(r->kernel));
	else
		json_add(tail, "kernel", cJSON_CreateNull());
	cJSON_ArrayForEach(item, tail) {
		fprintf(out, ",\n\t\"%s\": ", item->string);
		err |= json_put(out, item);
		if (strcmp(item->string, "overflow"))
			continue;
		/* totals, its files streamed after its other members */
		fputs(",\n\t\"totals\": ", out);
		err |= json_put_open(out, totals_json(r)) || put_run_files(out, r);
		fputs("\n}", out);
	}
	json_free(tail);
	return err;
}

int report_json(FILE *out, const struct run_result *r)
{
	int err;

	json_arena_begin(out);
	err = json_put_open(out, run_json(r));

	fputs(",\n\t\"processes\": [\n", out);
	for (size_t i = 0; i < r->nprocs && !err; i++)
		err = put_process(i ? ",\n" : "", process_json, &r->procs[i], r);
	if (!err)
		err = put_process(r->nprocs ? ",\n" : "", other_io_json, &r->other_files, r);
	if (json_pipe_drain())
		err = -1;
	fputs("]", out);
	if (!err)
		err = put_tail(out, r);
	fputs("\n}\n", out);
	json_arena_end();
	blocks_json_done();
	return err;
}
