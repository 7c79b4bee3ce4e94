// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON report's block I/O and io_uring objects (docs/block.md, docs/io_uring.md), its
 * --trace and --stacks objects, and its containers (docs/containers.md).
 */
#include <stdlib.h>
#include "json_cells.h"
#include "json_print.h"
#include "report.h"
#include "model/syscall_table.h"
#include "model/uring.h"

/* ---- block ---- */

static cJSON *block_op_json(const struct block_record *rec)
{
	cJSON *o = cJSON_CreateObject();
	const struct block_stat *st = &rec->st;

	add_fields(o, &block_fields, &rec->v, NULL, NULL);
	json_add(o, "size_bytes", hist_json(HIST_LOG2, st->size_hist, &rec->v.size));
	json_add(o, "latency_ns", hist_json(rec->lat_layout, st->lat_hist, &rec->v.lat));
	json_add(o, "queue_latency_ns", hist_json(rec->lat_layout, st->qlat_hist, &rec->v.qlat));
	return o;
}

/*
 * {"read": {...}, ..., "latency_ns": hist, "size_bytes": hist, "disks": {"vda": {...}}}.
 * compact (a file's): only the operations that had requests, and nothing when none had.
 */
static cJSON *block_json(const struct block_sums *sums, const struct block_record *recs, size_t n,
			 bool compact, const struct disk_table *names)
{
	cJSON *obj = cJSON_CreateObject(), *disks;
	const struct block_record *all = &sums->all;
	char name[64];

	if (compact && !all->st.requests)
		return obj;
	disks = cJSON_CreateObject();
	for (size_t i = 0; i < n; i++) {
		cJSON *disk;

		disk_table_name(names, recs[i].key.dev, name, sizeof(name));
		disk = cJSON_GetObjectItem(disks, name);
		if (!disk) {
			disk = cJSON_CreateObject();
			cJSON_AddItemToObject(disks, name, disk);
		}
		json_add(disk, block_op_names[recs[i].key.op % BLOCK_OPS], block_op_json(&recs[i]));
	}
	for (int op = 0; op < BLOCK_OPS; op++)
		if (!compact || sums->by_op[op].st.requests)
			json_add(obj, block_op_names[op], block_op_json(&sums->by_op[op]));
	json_add(obj, "latency_ns", hist_json(all->lat_layout, all->st.lat_hist, &all->v.lat));
	json_add(obj, "queue_latency_ns",
		 hist_json(all->lat_layout, all->st.qlat_hist, &all->v.qlat));
	json_add(obj, "size_bytes", hist_json(HIST_LOG2, all->st.size_hist, &all->v.size));
	json_add(obj, "disks", disks);
	return obj;
}

/* {"vda": {"read_ios": N, ...}}: each disk in /sys/block/DISK/stat's columns. */
cJSON *disk_stats_json(const struct block_record *by_disk, size_t n,
			const struct disk_table *names)
{
	cJSON *obj = cJSON_CreateObject(), *one;
	struct disk_stat_view *d;
	size_t nd;
	char name[64];

	if (disk_stats_of(by_disk, n, &d, &nd))
		return obj;
	for (size_t i = 0; i < nd; i++) {
		one = cJSON_CreateObject();
		add_fields(one, &disk_stat_fields, &d[i], NULL, NULL);
		cJSON_AddItemToObject(obj, disk_table_name(names, d[i].dev, name, sizeof(name)), one);
	}
	free(d);
	return obj;
}

/*
 * Kept for the report (blocks_json_done frees them): the sums, a large struct (its
 * histograms) that made glibc's malloc merge its small free chunks at every free; and the
 * object of no requests at all, which most processes of a large run have (some 350 nodes,
 * built once; each process's "block" is a reference to it, printed the same).
 */
static struct block_sums *kept_sums;
static cJSON *no_requests;

cJSON *blocks_json(const struct block_record *recs, size_t n, bool compact,
		   const struct disk_table *names)
{
	if (!n && compact) /* a file without requests: the sums would all be 0 */
		return cJSON_CreateObject();
	if (!kept_sums && !(kept_sums = malloc(sizeof(*kept_sums))))
		return cJSON_CreateNull();
	if (!n) {
		if (!no_requests) {
			block_sums_of(kept_sums, recs, 0);
			json_arena_pause(true); /* kept for the whole report */
			no_requests = block_json(kept_sums, recs, 0, false, names);
			json_arena_pause(false);
			if (!no_requests)
				return cJSON_CreateNull();
		}
		return cJSON_CreateObjectReference(no_requests->child);
	}
	block_sums_of(kept_sums, recs, n);
	return block_json(kept_sums, recs, n, compact, names);
}

void blocks_json_done(void)
{
	cJSON_Delete(no_requests);
	no_requests = NULL;
	free(kept_sums);
	kept_sums = NULL;
}

/* ---- io_uring ---- */

static const char *uring_unknown(const struct field *f, const void *view, const void *rec)
{
	(void)view;
	return uring_field_unknown(f, rec) ? "not a data opcode" : NULL;
}

/* {"READ": {...}, ...} by opcode; null when the io_uring hooks are off (the reason beside). */
void add_urings(cJSON *obj, const struct uring_record *recs, size_t n,
		       const struct run_result *r)
{
	cJSON *ops;
	char name[16];

	if (r->uring_missing) {
		add_null_reason(obj, "io_uring", r->uring_missing);
		return;
	}
	ops = cJSON_AddObjectToObject(obj, "io_uring");
	for (size_t i = 0; ops && i < n; i++) {
		cJSON *row = cJSON_CreateObject();

		add_fields(row, &uring_fields, &recs[i].v, uring_unknown, &recs[i]);
		json_add(row, "latency_ns", hist_json(HIST_FINE, recs[i].st.lat_hist, &recs[i].v.lat));
		cJSON_AddItemToObject(ops, uring_op_name(recs[i].key.op, name, sizeof(name)), row);
	}
}

/* ---- --trace, --stacks ---- */

/* --stacks: the file and what it holds; null without it. */
cJSON *stacks_json(const struct run_result *r)
{
	cJSON *t;

	if (!r->stacks_path)
		return cJSON_CreateNull();
	t = cJSON_CreateObject();
	add_name(t, "path", r->stacks_path);
	json_add(t, "unwind", cJSON_CreateString(r->stacks.mode));
	json_add(t, "by", cJSON_CreateString(r->stacks.by));
	add_fields(t, &stacks_fields, &r->stacks, NULL, NULL);
	json_add(t, "written", cJSON_CreateBool(!r->stacks_failed));
	return t;
}

/* --trace: the file and what it holds; null without it. */
cJSON *trace_json(const struct run_result *r)
{
	cJSON *t;

	if (!r->trace_path)
		return cJSON_CreateNull();
	t = cJSON_CreateObject();
	add_name(t, "path", r->trace_path);
	add_fields(t, &trace_fields, &r->trace, NULL, NULL);
	json_add(t, "truncated", cJSON_CreateBool(r->trace.not_written != 0));
	json_add(t, "written", cJSON_CreateBool(!r->trace_failed));
	return t;
}

/* ---- containers ---- */

/*
 * "container" (its name, or short ID) and "container_id": null in none (the host);
 * "mnt_ns", "pid_ns": its namespaces (null when not seen: the overflow's processes).
 */
void add_process_container(cJSON *obj, const struct proc_record *p, const struct run_result *r)
{
	const struct container_info *c = p->container ? &r->containers[p->container - 1].info
						       : NULL;
	char label[CONTAINER_TEXT_MAX];

	if (c)
		add_name(obj, "container", container_label(c, label, sizeof(label)));
	else
		json_add(obj, "container", cJSON_CreateNull());
	if (c && c->path.id[0])
		add_name(obj, "container_id", c->path.id);
	else
		json_add(obj, "container_id", cJSON_CreateNull());
	if (p->mnt_ns) {
		add_u64(obj, "mnt_ns", p->mnt_ns);
		add_u64(obj, "pid_ns", p->pid_ns);
	} else {
		json_add(obj, "mnt_ns", cJSON_CreateNull());
		json_add(obj, "pid_ns", cJSON_CreateNull());
	}
}

/* The containers the processes were in, each with its processes' count. */
cJSON *containers_json(const struct run_result *r)
{
	cJSON *arr = cJSON_CreateArray();
	char label[CONTAINER_TEXT_MAX];

	for (size_t i = 0; arr && i < r->ncontainers; i++) {
		const struct run_container *c = &r->containers[i];
		cJSON *obj = cJSON_CreateObject();

		add_name(obj, "container", container_label(&c->info, label, sizeof(label)));
		add_container(obj, &c->info);
		add_name(obj, "cgroup", c->cgroup);
		add_u64(obj, "processes", c->procs);
		cJSON_AddItemToArray(arr, obj);
	}
	return arr;
}
