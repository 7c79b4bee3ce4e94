/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel side, behind an opaque handle: configure, load, attach (tracer.c) and read its
 * maps into the model's plain records (tracer_read.c). Only these two files talk to libbpf.
 */
#ifndef IOTRACE_TRACER_H
#define IOTRACE_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "model.h"

struct tracer;

struct tracer_config {
	bool timing;
	bool verbose;
	uint32_t max_procs; /* concurrent per-process slots; 0 = default */
	/* Snoop mode: only the block programs, streaming struct block_event to on_event. */
	bool snoop;
	uint32_t snoop_tgid, snoop_dev;
	uint64_t snoop_cgroup;
	/* Serve mode: every process counted under a label (cgroup, + comm with label_comm). */
	bool serve;
	bool label_comm;
	uint32_t ncgroups;                       /* -c filters; 0 = label by own cgroup */
	uint64_t cgroup_id[MAX_CGROUP_FILTERS];  /* cgroup v2 ids (inode numbers) */
	uint32_t cgroup_level[MAX_CGROUP_FILTERS]; /* depth below the root */
};

/* Hook groups that can be missing on a kernel (then their numbers are "n/a"). */
enum tracer_hooks { HOOKS_PAGE_CACHE, HOOKS_DIRECT_IO, TRACER_HOOK_GROUPS };

typedef int (*tracer_event_fn)(void *ctx, void *data, size_t size);
typedef void (*tracer_label_fn)(const struct label_key *key, uint32_t slot, void *ctx);

/* Loads and attaches everything; prints one line and returns NULL on failure. */
struct tracer *tracer_open(const struct tracer_config *cfg, tracer_event_fn on_event, void *ctx);
/* Stops counting; maps stay readable until tracer_close(). */
void tracer_detach(struct tracer *t);
void tracer_close(struct tracer *t);

uint32_t tracer_pid_max(const struct tracer *t);
uint32_t tracer_nr_slots(const struct tracer *t);
/* NULL when the group of hooks is attached, else why not. */
const char *tracer_hooks_missing(const struct tracer *t, enum tracer_hooks group);

/* A free slot for a process iotrace itself starts tracing, or 0 if none is left. */
uint32_t tracer_claim_slot(struct tracer *t);
/* Marks tgid as traced with slot; pending: count nothing before its execve. */
int tracer_watch(struct tracer *t, pid_t tgid, uint32_t slot, bool pending);
void tracer_release_slot(struct tracer *t, uint32_t slot);
/* Slots the kernel still holds (besides 0 and the overflow slot). */
bool tracer_slot_in_use(struct tracer *t, uint32_t slot);
/* serve: never count tgid (iotrace itself; tracer_open does it for serve). */
void tracer_exclude(struct tracer *t, pid_t tgid);

int tracer_events_fd(struct tracer *t);
int tracer_poll_events(struct tracer *t);
void tracer_read_drops(struct tracer *t, uint64_t drops[DROP_COUNTERS]);
/* Requests started before now_ns - age_ns and still in flight: their completion was skipped. */
uint64_t tracer_count_stale_block(struct tracer *t, uint64_t now_ns, uint64_t age_ns);
/* Waits up to max_ms until no block request charged to a traced process is in flight. */
void tracer_wait_block_idle(struct tracer *t, int max_ms);

/* ---- readers (tracer_read.c): raw records, no arithmetic on them ---- */

/* Adds slot's counters of every CPU into d; take: zero them in the kernel too. */
void tracer_read_slot(struct tracer *t, uint32_t slot, struct dense_profile *d, bool take);
/*
 * Every (owner, file) page-cache record with its page bitmaps and its path inside its
 * filesystem ("dir/file", or NULL). Returns 0, or -1 out of memory.
 */
int tracer_read_files(struct tracer *t, struct file_record **out, size_t *n);
/* The same for one owner that exited, removed from the kernel's tables for reuse. */
int tracer_take_files(struct tracer *t, uint32_t owner, struct file_record **out, size_t *n);
/* Every (owner, disk, op) block record; owner 0 is I/O not charged to a traced process. */
int tracer_read_blocks(struct tracer *t, struct block_record **out, size_t *n);
/*
 * The requests charged to a traced process still in the in-flight table, one record of
 * one request each (no latencies): at the end of a run, once the block layer is idle, their
 * completion was skipped by the kernel (a tp_btf program does not nest in itself).
 */
int tracer_read_charged_inflight(struct tracer *t, struct block_record **out, size_t *n);
/* serve: calls fn for every label (cgroup id, comm or "") and its slot. */
int tracer_for_each_label(struct tracer *t, tracer_label_fn fn, void *ctx);

#endif
