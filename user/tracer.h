/* SPDX-License-Identifier: GPL-2.0 */
/* Life of the kernel side: configure, load, attach, read counters, detach. */
#ifndef IOTRACE_TRACER_H
#define IOTRACE_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "model.h"

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

struct tracer {
	struct iotrace_bpf *skel;
	struct ring_buffer *events;
	uint16_t *proc_slot;          /* mmap of proc_slot: u16 per tgid */
	struct syscall_stat *sc;      /* mmap of syscall_stats */
	struct io_stat *io;           /* mmap of io_stats */
	size_t proc_slot_len, sc_len, io_len;
	uint32_t pid_max, ncpus, nr_slots;
	struct file_stat *files;      /* mmap of file_stats */
	size_t files_len;
	const char *page_cache_missing; /* why the page-cache hooks are off, or NULL */
	const char *direct_io_missing;  /* why the O_DIRECT hook is off, or NULL */
	uint64_t unseen_swept;          /* block completions counted from the in-flight table */
	struct dense_profile scratch;
};

typedef int (*tracer_event_fn)(void *ctx, void *data, size_t size);

/* Loads and attaches everything; prints one line and returns -1 on failure. */
int tracer_open(struct tracer *t, const struct tracer_config *cfg, tracer_event_fn on_event,
		void *ctx);
/* Requests started before now_ns - age_ns and still in flight: their completion was skipped. */
uint64_t tracer_count_stale_block(struct tracer *t, uint64_t now_ns, uint64_t age_ns);
/* Waits up to max_ms until no block request charged to a traced process is in flight. */
void tracer_wait_block_idle(struct tracer *t, int max_ms);
/* Stops counting; maps stay readable until tracer_close(). */
void tracer_detach(struct tracer *t);
void tracer_close(struct tracer *t);
/* A free slot for a process iotrace itself starts tracing, or 0 if none is left. */
uint32_t tracer_claim_slot(struct tracer *t);
/* Marks tgid as traced with slot; pending: count nothing before its execve. */
int tracer_watch(struct tracer *t, pid_t tgid, uint32_t slot, bool pending);
/* Sums slot's counters over CPUs into out (reset first) and zeroes them in the kernel. */
int tracer_harvest(struct tracer *t, uint32_t slot, struct profile *out);
/* Adds slot's counters, summed over CPUs, into d; take: zero them in the kernel too. */
void tracer_add_slot(struct tracer *t, uint32_t slot, struct dense_profile *d, bool take);
void tracer_release_slot(struct tracer *t, uint32_t slot);
/* Slots the kernel still holds (besides 0 and the overflow slot). */
bool tracer_slot_in_use(struct tracer *t, uint32_t slot);
void tracer_read_drops(struct tracer *t, uint64_t *drops);
/*
 * Every (process, file) page-cache record, with unused readahead computed from the page
 * bitmaps and path set to the file's path inside its filesystem ("dir/file"), or NULL.
 */
int tracer_collect_files(struct tracer *t, struct file_record **out, size_t *n);
/* serve: calls fn for every label (cgroup id, comm or "") and its slot. */
int tracer_for_each_label(struct tracer *t,
			  void (*fn)(const struct label_key *key, uint32_t slot, void *ctx), void *ctx);
/*
 * The page-cache records of tgid, an exited process (unused readahead computed, path
 * relative to its filesystem), removed from the kernel's tables so their room is used
 * again. Returns 0 and sets *out (malloc'ed, maybe NULL) and *n.
 */
int tracer_take_files(struct tracer *t, uint32_t tgid, struct file_record **out, size_t *n);
/*
 * Every (process, disk, op) block record; tgid 0 is I/O not charged to a traced process.
 * end_of_run: also count, without latencies, the traced requests still in flight, whose
 * completion the kernel skipped (serve, which never ends, leaves them in flight).
 */
int tracer_collect_blocks(struct tracer *t, struct block_record **out, size_t *n,
			  bool end_of_run);
int tracer_events_fd(struct tracer *t);
int tracer_poll_events(struct tracer *t);
/* serve: never count tgid (iotrace itself; tracer_open does it for serve). */
void tracer_exclude(struct tracer *t, pid_t tgid);

#endif
