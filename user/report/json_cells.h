/* SPDX-License-Identifier: GPL-2.0 */
/* Cells of the JSON report: numbers, null with a reason, histograms, field tables. */
#ifndef IOTRACE_JSON_CELLS_H
#define IOTRACE_JSON_CELLS_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "model/model.h"

/*
 * item as obj's member under key, which is not copied: a literal or a name from a table
 * that lives as long as the tree (a copy of each key was a tenth of the time building a
 * large report). item is freed when it cannot be added.
 */
void json_add(cJSON *obj, const char *key, cJSON *item);
/* JSON numbers are doubles: counts stay exact up to 2^53, far beyond any run. */
void add_u64(cJSON *obj, const char *key, uint64_t v);
/* A fraction (a share): the number libcjson would print, from a raw item. */
void add_double(cJSON *obj, const char *key, double v);
/*
 * A name (file path, comm, command line, symbol: bytes as recorded) as a JSON string, its
 * value escaped by esc_json (util/escape.h): valid UTF-8 whatever the bytes, reversible.
 * Every string that can carry such bytes goes through one of these two.
 */
cJSON *json_name(const char *name);
void add_name(cJSON *obj, const char *key, const char *name);
/*
 * A container's fields (docs/containers.md, iotrace containers -j): runtime, container_id,
 * name, image, pod_uid, pod_name, pod_namespace, qos, monitor, source, answered.
 */
void add_container(cJSON *obj, const struct container_info *c);
/* "key": null, "key_reason": reason. */
void add_null_reason(cJSON *obj, const char *key, const char *reason);
/* {"count", "min", "max" (when kept), "p50", "p90", "p99", "buckets": [{"lo", "hi", "count"}]}. */
cJSON *hist_json(enum hist_layout l, const __u64 *hist, const struct hist_summary *s);
/* Why a field has no value in this record (it is then null), or NULL. */
typedef const char *(*unknown_fn)(const struct field *f, const void *rec, const void *ctx);
/* Every field of a table, from rec: a number, or null with its reason. */
void add_fields(cJSON *obj, const struct field_table *t, const void *rec, unknown_fn unknown,
		const void *ctx);
/* A process's (or a file's, compact: only the operations it had) block I/O object. */
cJSON *blocks_json(const struct block_record *recs, size_t n, bool compact,
		   const struct disk_table *names);
/* What blocks_json kept for the report: freed once no object made since refers to it. */
void blocks_json_done(void);
/* The (disk, op) sums of a run (block_by_disk_of_run) in /sys/block/DISK/stat's columns. */
cJSON *disk_stats_json(const struct block_record *by_disk, size_t n,
			const struct disk_table *names);
/* "io_uring": {"READ": {...}, ...}, or null with io_uring_reason when the hooks are off. */
void add_urings(cJSON *obj, const struct uring_record *recs, size_t n,
		const struct run_result *r);
/* --trace, --stacks: the file and what it holds; null without it (report_json_io.c). */
cJSON *trace_json(const struct run_result *r);
cJSON *stacks_json(const struct run_result *r);
/* A process's "container" (its name, or short ID) and "container_id", null in none. */
void add_process_container(cJSON *obj, const struct proc_record *p, const struct run_result *r);
/* The run's containers, each with its processes' count (report_json_io.c). */
cJSON *containers_json(const struct run_result *r);

#endif
