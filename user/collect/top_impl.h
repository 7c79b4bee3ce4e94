/* SPDX-License-Identifier: GPL-2.0 */
/*
 * top's refresh policy inside (the engine's, engine.c), shared by top_collect.c (each
 * refresh's sample), top_procs.c (processes, their syscall counters), top_blocks.c (block and
 * io_uring records, disks) and top_files.c (the per-file ledger's entries, per-file block
 * records).
 */
#ifndef IOTRACE_TOP_IMPL_H
#define IOTRACE_TOP_IMPL_H

#include <stddef.h>
#include "procs.h"
#include "kernel/tracer.h"
#include "model/top.h"
#include "util/cgroup.h"
#include "model/names.h"
#include "util/container.h"
#include "util/hash.h"

/*
 * What top keeps of a process beside the table's record (procs.h): live, or exited lately
 * (its last counts, its late writeback).
 */
struct tproc {
	uint32_t quiet;   /* refreshes since its exit with nothing counted */
	struct top_counts acc; /* counted since the last refresh */
};

/* A group's container and pod as the last refresh showed them (top_proc's). */
struct group_who {
	uint64_t cgroup;
	uint64_t refresh; /* the refresh that asked last: each asks again (answers come late) */
	bool known;
	char container[CONTAINER_TEXT_MAX];
	char id[CONTAINER_ID_LEN + 1];
	char pod[2 * CONTAINER_TEXT_MAX];
	bool in_pod;
	UT_hash_handle hh;
};

/* What a slot's syscall counters added up to at the last read (counters only grow). */
struct slot_sums {
	uint64_t read_bytes, write_bytes, read_calls, write_calls, io_ns;
};

/* A ledger entry's sums at the last read, by its index in the kernel's table. */
struct entry_snap {
	struct file_key key; /* owner 0: none */
	struct top_counts c;
};

/* A file's counts in the current interval (a hash by path key). */
struct file_acc {
	struct path_key key;
	uint32_t procs;
	struct top_counts c;
	UT_hash_handle hh;
};

/* A block or io_uring record's counts at the last read, and refreshes without a change. */
struct block_snap {
	struct block_key key;
	struct block_stat st;
	uint32_t idle;
	bool seen; /* read in this refresh */
};

struct uring_snap {
	struct uring_key key;
	uint64_t ops;
	uint32_t idle;
	bool seen;
};

struct top_collector {
	struct tracer *tracer;
	const struct cgroup_ref *cgroups;
	uint32_t ncgroups;
	struct proc_table *procs; /* its processes, followed as run mode follows them */
	struct tproc overflow;   /* the syscalls of the processes past --max-procs, together */
	struct slot_sums slot_prev[MAX_SLOTS];
	uint8_t rw_of_nr[MAX_SYSCALLS]; /* 1 read, 2 write, 3 both (copies); 0 other I/O calls */
	bool io_call[MAX_SYSCALLS];     /* counted in io_ns */
	struct slot_sums slot_now[MAX_SLOTS]; /* the slots being read */
	uint32_t live_slots[MAX_SLOTS];       /* ... which */
	struct entry_snap snap[MAX_FILES];
	struct file_acc *files; /* this interval's */
	struct block_snap *blocks;
	size_t nblocks;
	struct uring_snap *urings;
	size_t nurings;
	struct top_disk *disks; /* this interval's */
	size_t ndisks;
	struct top_counts total; /* this interval's: processes' syscalls and page cache */
	struct group_who *who; /* by group cgroup id */
	uint64_t refreshes;
	uint64_t drops[DROP_COUNTERS]; /* at the last refresh */
	uint64_t last_ns;
	int error;
};

/* ---- top_procs.c ---- */

/* The table's hooks for top (procs_new). */
extern const struct proc_hooks top_proc_hooks;
/* What top keeps of p. */
struct tproc *top_data(struct top_collector *c, const struct proc *p);
/* The interval's counts of pid's process, a ghost's when the table never saw it; NULL: OOM. */
struct top_counts *top_acc_of(struct top_collector *c, uint32_t pid);
/* Every live process's syscall counters since the last read, all slots in one read. */
int top_read_slots(struct top_collector *c);

/* Growth of a counter since its last read (0 if it went down: a recycled record). */
static inline uint64_t top_grew(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

/* ---- top_blocks.c ---- */

/* Every block record's growth since the last read, to its process, disk and the totals. */
int top_read_blocks(struct top_collector *c);
/* Every io_uring record's growth since the last read, to its process and the totals. */
int top_read_urings(struct top_collector *c);

/* ---- top_files.c ---- */

/* Every ledger entry's counts since the last read, to its process and its file. */
int top_read_files(struct top_collector *c);
/* A taken entry (its process exited, or it was idle): its last counts, then forgotten. */
void top_give_entry(const struct ledger_entry *e, void *ctx);
/* The per-file block records completed since the last take, to their files. */
int top_read_file_blocks(struct top_collector *c);
/* This interval's files into the sample (named from names); the table emptied. */
int top_files_out(struct top_collector *c, struct names *names, struct top_sample *out);
/* The interval's files freed. */
void top_files_free(struct top_collector *c);

#endif
