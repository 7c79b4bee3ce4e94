/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel side, behind an opaque handle: configure, load, attach (tracer_load.c), slots
 * (tracer.c), and its maps read into the model's plain records (tracer_read.c,
 * tracer_files.c; --trace's and --stacks' in tracer_trace.c, tracer_stacks.c). Only kernel/
 * talks to libbpf.
 */
#ifndef IOTRACE_TRACER_H
#define IOTRACE_TRACER_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "model/model.h"
#include "model/kernel_report.h"

struct tracer;

/* A ring-buffer event's callback (libbpf's ring_buffer_sample_fn). */
typedef int (*tracer_event_fn)(void *ctx, void *data, size_t size);

struct tracer_config {
	bool timing;
	bool time_all; /* with timing: every call, not the sampling rule (SAMPLE_* in iotrace.h) */
	bool verbose;
	bool probe_all; /* ask the kernel's BTF even on the kernel iotrace was built on */
	uint32_t max_procs; /* concurrent per-process slots; 0 = default */
	/* Snoop mode: only the block programs, streaming struct block_event to on_event. */
	bool snoop;
	uint32_t snoop_tgid, snoop_dev;
	/* Serve mode: every process counted under a label (cgroup, + comm with label_comm). */
	bool serve;
	bool label_comm;
	/*
	 * Top mode: every process on the machine traced as run mode traces a command's (its
	 * slot, its records), in the -c cgroups only when there are some.
	 */
	bool top;
	/*
	 * Cgroup filters (serve, top, snoop; -c, --cgroup, --container): only processes in
	 * these cgroups, at any depth below them, are counted, decided in the kernel where a
	 * process gets its slot (the hooks then skip it after one look-up of its slot) or a
	 * request its charge. 0 = no filter (serve then labels by each process's own cgroup).
	 * Added with tracer_config_add_cgroup().
	 */
	uint32_t ncgroups;
	uint64_t cgroup_id[MAX_CGROUP_FILTERS];  /* cgroup v2 ids (inode numbers) */
	uint32_t cgroup_level[MAX_CGROUP_FILTERS]; /* depth below the root */
	/* Run mode: file names (struct file_name events), to the same ctx as on_event. */
	tracer_event_fn on_name;
	/*
	 * --trace: the timeline's events (bpf/trace.bpf.c, first __u32 an enum trace_kind;
	 * file names come this way too, as TE_NAME), to the same ctx; calls of the traced
	 * syscalls that took trace_min_ns or more.
	 */
	bool trace;
	uint64_t trace_min_ns;
	tracer_event_fn on_trace;
	/*
	 * --stacks: enum stacks_mode; the DWARF mode's samples and every mode's mappings
	 * (struct stack_maps, struct stack_sample: first __u32 an enum stack_event_kind).
	 * on_stack returns TRACER_EVENTS_AGAIN to read the other rings before the next record
	 * of this one (tracer_poll_events).
	 */
	int stacks;
	tracer_event_fn on_stack;
};

/*
 * Groups of hooks. Page cache, direct I/O and io_uring can be missing on a kernel (then their
 * numbers are "n/a"), and so can the timestamp tracepoints that give a renamed file its new
 * name at once (before 6.13: then at its next use, or from its inode at the end); without
 * syscalls, processes or block I/O iotrace does not start.
 */
enum tracer_hooks {
	HOOKS_CORE, HOOKS_PAGE_CACHE, HOOKS_DIRECT_IO, HOOKS_BLOCK, HOOKS_URING, HOOKS_RENAMES,
	TRACER_HOOK_GROUPS
};
extern const char *const tracer_group_names[TRACER_HOOK_GROUPS];

/* The events the programs use (named after their tracepoints; tracer_hooks.c). */
#define NR_HOOKS 31
/* Builds of the programs for the kfuncs a kernel has (bpf/maps.bpf.h). */
enum tracer_build { BUILD_FULL, BUILD_NOITER, BUILD_NOKFUNC, BUILD_COMPAT, TRACER_BUILDS };
extern const char *const tracer_build_names[TRACER_BUILDS];

/* How this kernel gives event i: its tracepoint's name, the way taken, or why none. */
struct tracer_hook_info {
	const char *event;
	enum tracer_hooks group;
	bool wanted;        /* used in this mode */
	int way;            /* index of the way taken (0: the first), -1: none */
	const char *kind;   /* tp_btf, fentry, fexit, kprobe, kretprobe; NULL: none */
	const char *target; /* the tracepoint or function */
	const char *why;    /* why better ways were not taken ("" when the first was) */
};
void tracer_hook_info(const struct tracer *t, int i, struct tracer_hook_info *out);
/* The build loaded and why. */
enum tracer_build tracer_build(const struct tracer *t, const char **why);
/* Why --stacks cannot work with the build this kernel took, or NULL. */
const char *tracer_stacks_na(const struct tracer *t);
/* Kernel memory of the tracer's BPF maps (their fdinfo memlock), and how many (nmaps). */
uint64_t tracer_map_bytes(const struct tracer *t, uint32_t *nmaps);
/* How this kernel is traced: the kernel, its BTF, the build, every hook (tracer_info.c). */
void tracer_describe(const struct tracer *t, struct kernel_report *out);

/* Adds a cgroup filter (cgroup_resolve's or container_cgroup's id and level); -1: full. */
int tracer_config_add_cgroup(struct tracer_config *cfg, uint64_t id, uint32_t level);

typedef void (*tracer_label_fn)(const struct label_key *key, uint32_t slot, void *ctx);

/*
 * Loads and attaches everything; events (process events, or block events in snoop mode)
 * go to on_event(ctx). Prints one line and returns NULL on failure.
 */
struct tracer *tracer_open(const struct tracer_config *cfg, tracer_event_fn on_event, void *ctx);
/* Stops counting; maps stay readable until tracer_close(). */
void tracer_detach(struct tracer *t);
void tracer_close(struct tracer *t);

uint32_t tracer_nr_slots(const struct tracer *t);
/* Whether calls are timed at all (tracer_config.timing). */
bool tracer_timing(const struct tracer *t);
/* Whether calls are timed by the sampling rule (timing on, not --time-all, not --trace). */
bool tracer_sampled(const struct tracer *t);
/* NULL when the group of hooks is attached, else why not. */
const char *tracer_hooks_missing(const struct tracer *t, enum tracer_hooks group);

/* A free slot for a process iotrace itself starts tracing, or 0 if none is left. */
uint32_t tracer_claim_slot(struct tracer *t);
/* Marks tgid as traced with slot; pending: count nothing before its execve. */
int tracer_watch(struct tracer *t, pid_t tgid, uint32_t slot, bool pending);
/* Gives the slot back (its row in the slot table marked free first). */
void tracer_release_slot(struct tracer *t, uint32_t slot);
/*
 * Run mode's slot table (bpf/proc.bpf.c: what the kernel keeps of each slot's process until
 * the loader frees the slot). tracer_start_slot writes the row of a process iotrace starts
 * tracing itself, before tracer_watch; tracer_read_slot_proc copies a row (0), or returns
 * -1 when the slot holds no process (free, or its fork has not written the row yet), or
 * -EAGAIN when a program is writing it right now (read it again later).
 */
int tracer_start_slot(struct tracer *t, uint32_t slot, const struct slot_proc *row);
int tracer_read_slot_proc(struct tracer *t, uint32_t slot, struct slot_proc *out);
/* Calls fn for every slot the kernel holds (besides 0 and the overflow slot). */
typedef void (*tracer_slot_fn)(uint32_t slot, void *ctx);
void tracer_for_each_used_slot(struct tracer *t, tracer_slot_fn fn, void *ctx);
/* Slots the kernel still holds (besides 0 and the overflow slot). */
bool tracer_slot_in_use(struct tracer *t, uint32_t slot);
/*
 * The kernel's entry for tgid (bpf/proc.bpf.c, proc_slot): its slot, OVERFLOW_SLOT, 0 when
 * it has none yet, SLOT_NONE when it is not traced; SLOT_PENDING set until its execve.
 */
uint32_t tracer_slot_of(const struct tracer *t, pid_t tgid);
/* serve: never count tgid (iotrace itself; tracer_open does it for serve). */
void tracer_exclude(struct tracer *t, pid_t tgid);

int tracer_events_fd(struct tracer *t);
/*
 * A callback's return that stops reading its ring: the rings are read again from the
 * first (the processes', then the names'), so that what was sent before the next record of
 * its ring is read before it (libbpf reads a ring to its end, however long that takes).
 */
#define TRACER_EVENTS_AGAIN (-EAGAIN)
/* Reads every ring buffer's records; negative on error. */
int tracer_poll_events(struct tracer *t);
void tracer_read_drops(struct tracer *t, uint64_t drops[DROP_COUNTERS]);
/* Process events the ring buffer had no room for, so far (cheap: read in place). */
uint64_t tracer_notices_lost(struct tracer *t);
/*
 * Counts now the block requests that are over but whose completion no program saw (the
 * kernel skipped it): the sweep of bpf/block.bpf.c. Run before reading the block counters
 * (each refresh, scrape, and at the end) so that they hold every request the disk has
 * counted. Returns how many it counted, or 0 on a kernel without the sweep (no map element
 * iterators).
 */
uint64_t tracer_sweep_blocks(struct tracer *t);
/*
 * Requests started before now_ns - age_ns and still in flight (snoop: of the disk and process
 * it filters on): their completion was skipped.
 */
uint64_t tracer_count_stale_block(struct tracer *t, uint64_t now_ns, uint64_t age_ns);
/* Waits up to max_ms until no block request charged to a traced process is in flight. */
void tracer_wait_block_idle(struct tracer *t, int max_ms);

/* ---- readers (tracer_read.c): raw records, no arithmetic on them ---- */

/* Adds slot's counters of every CPU into d; take: zero them in the kernel too. */
void tracer_read_slot(struct tracer *t, uint32_t slot, struct dense_profile *d, bool take);
/*
 * Live slots' counters without a profile (top reads every process's each second): each
 * slot's rows of every CPU's caches and its totals, read between two moves of rows, handed
 * to sc and io one by one (several per key: the caller adds them up); one pass over the
 * caches for all the slots, so a refresh costs the caches' size plus the slots, not their
 * product. -ENOMEM when some could not be kept.
 */
typedef void (*tracer_sc_fn)(uint32_t slot, uint32_t nr, const struct syscall_stat *st,
			     void *ctx);
typedef void (*tracer_io_fn)(uint32_t slot, uint32_t kind, const struct io_stat *st, void *ctx);
int tracer_read_live_slots(struct tracer *t, const uint32_t *slots, size_t n, tracer_sc_fn sc,
			   tracer_io_fn io, void *ctx);
/* A dead slot's counters handed to sc and io the same way, and zeroed in the kernel. */
void tracer_take_slot_rows(struct tracer *t, uint32_t slot, tracer_sc_fn sc, tracer_io_fn io,
			   void *ctx);
/* ---- the per-file ledger (tracer_files.c) ---- */

struct ledger_entry;
/*
 * The readers below hand entries to fn one at a time and free each when fn returns (fn may
 * sort its page chunks in place); they return 0 or -ENOMEM (some entry's rows or chunks
 * missing).
 */
typedef void (*ledger_entry_fn)(const struct ledger_entry *e, void *ctx);
/*
 * Every ledger entry still in the kernel with an owner (its counters, syscall rows and page
 * bitmaps), left in place: for the end of a run or a serve scrape.
 */
int tracer_read_files(struct tracer *t, ledger_entry_fn fn, void *ctx);
/* The same without the page bitmaps (top, each refresh: no unused readahead to count). */
int tracer_peek_files(struct tracer *t, ledger_entry_fn fn, void *ctx);
/*
 * Names the loader no longer keeps (top's memory stays bounded): the kernel forgets it sent
 * them, and sends a file's name again when it next makes an entry for it.
 */
void tracer_forget_names(struct tracer *t, const struct path_key *keys, size_t n);
/* The entries of an owner that exited, removed from the kernel's tables for reuse. */
int tracer_take_files(struct tracer *t, uint32_t owner, ledger_entry_fn fn, void *ctx);
/*
 * When the table is over half full, the entries not used longest (and not in the last `age`
 * epochs of tracer_tick) until it is a quarter full: read and removed while the run goes
 * on, after a grace period that lets every program still using them finish (membarrier).
 * n: how many were taken.
 */
int tracer_evict_idle(struct tracer *t, uint32_t age, ledger_entry_fn fn, void *ctx, size_t *n);
/* Starts a new ledger epoch (the loader's clock for "not used lately"). */
void tracer_tick(struct tracer *t);
/*
 * Per-file block records, handed to fn and removed: the generation the kernel filled until
 * now (it switches to the other first, then a grace period), or with all, every record
 * (once the programs are detached).
 */
typedef void (*tracer_file_block_fn)(const struct file_block_key *key,
				     const struct file_block_stat *st, void *ctx);
int tracer_take_file_blocks(struct tracer *t, bool all, tracer_file_block_fn fn, void *ctx);
/* The per-file block table gained a quarter of its room since it was last taken. */
bool tracer_file_blocks_filling(struct tracer *t);
/* Whether the ledger's table is over half full (what tracer_evict_idle could not take). */
bool tracer_files_filling(struct tracer *t);
/*
 * At the end, once the block layer is idle: the charged requests whose completion the
 * kernel skipped (block.md), one request each with its bytes and no latency, handed to fn
 * as per-file records (the per-process side: tracer_read_charged_inflight).
 */
void tracer_unseen_file_blocks(struct tracer *t, tracer_file_block_fn fn, void *ctx);
/* Every (owner, disk, op) block record; owner 0 is I/O not charged to a traced process. */
int tracer_read_blocks(struct tracer *t, struct block_record **out, size_t *n);
/*
 * top: block and io_uring records removed (their owner exited, or their table fills up):
 * whatever the kernel adds to one between its last read and this goes with it.
 */
void tracer_forget_blocks(struct tracer *t, const struct block_key *keys, size_t n);
void tracer_forget_urings(struct tracer *t, const struct uring_key *keys, size_t n);
/*
 * Every (owner, opcode) io_uring record, with the requests still in flight counted in;
 * none (0) when the io_uring hooks are off; -1 out of memory.
 */
int tracer_read_urings(struct tracer *t, struct uring_record **out, size_t *n);
/*
 * The requests charged to a traced process still in the in-flight table, one record of
 * one request each (no latencies): at the end of a run, once the block layer is idle, their
 * completion was skipped by the kernel (a tp_btf program does not nest in itself).
 */
int tracer_read_charged_inflight(struct tracer *t, struct block_record **out, size_t *n);
/* --trace: the slot's counter-track values (enum trace_counter); take: zero them too. */
void tracer_trace_counters(struct tracer *t, uint32_t slot, uint64_t out[TRACE_COUNTERS],
			   bool take);
/* --trace, at the end: every request still in the kernel's in-flight table. */
typedef void (*tracer_request_fn)(const struct block_rq_info *info, void *ctx);
void tracer_unseen_requests(struct tracer *t, tracer_request_fn fn, void *ctx);
/*
 * --stacks, when a process leaves its slot (exit, or the end): what its syscalls' DWARF
 * samples did not carry yet (stacks.bpf.c), taken; and its mappings to be sent anew by the
 * slot's next process.
 */
typedef void (*tracer_pending_fn)(uint32_t nr, const struct stack_pending *p, void *ctx);
void tracer_stack_slot(struct tracer *t, uint32_t slot, tracer_pending_fn fn, void *ctx);
/* --stacks (frame pointers), at the end: each (process, syscall, stack) with its frames. */
typedef void (*tracer_stack_fn)(const struct stack_key *k, const struct stack_val *v,
				const __u64 *ips, int depth, void *ctx);
int tracer_read_stacks(struct tracer *t, tracer_stack_fn fn, void *ctx);
/* serve: calls fn for every label (cgroup id, comm or "") and its slot. */
int tracer_for_each_label(struct tracer *t, tracer_label_fn fn, void *ctx);

/*
 * File names (tracer_names.c): what the ring's file_name events say, completed from the
 * machine here, so that the name table (model/names.h) reads nothing itself.
 */
struct names;
/*
 * A file_name event of the ring (data, size: the kernel sends only the bytes of the path
 * used) added to n with its filesystem's mount point (/proc/self/mountinfo, read now); its
 * key in *key. 1 when too short to be one, -1 out of memory.
 */
int names_add_event(struct names *n, const void *data, size_t size, struct path_key *key);
/*
 * The path of a regular file no name was recorded for (met only through the page cache),
 * found from its inode now (open_by_handle_at) and kept in n; NULL when it cannot be.
 */
const char *names_resolve(struct names *n, const struct path_key *key);
/* The name recorded for a file, or else the one names_resolve finds. */
const char *names_lookup(struct names *n, const struct path_key *key);

#endif
