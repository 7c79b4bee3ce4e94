/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The process table of run mode (collect.c) and top (top_procs.c): one record per process
 * seen, made from its slot's row (followed through follow.c) or, in the overflow slot, from
 * its events; found by pid (the newest record of a pid, uthash) or by slot; a "ghost" record
 * for a live process whose notice has not been read yet; each process's retirement (its last
 * counts taken through a hook while its slot is still its own, its ledger entries taken, the
 * slot given back); and the changes of its cgroup. What a mode keeps of a process beyond
 * that (run mode's proc_record, top's counts) is its data, one array beside the records.
 */
#ifndef IOTRACE_PROCS_H
#define IOTRACE_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "follow.h"
#include "kernel/tracer.h"
#include "util/hash.h"

/* A process as the table knows it, whichever mode keeps it. */
struct proc {
	uint32_t pid, ppid;
	uint32_t slot;     /* its own (> OVERFLOW_SLOT), OVERFLOW_SLOT, or 0 once retired */
	uint32_t index;    /* its place in the table (procs_at), and its data's */
	char comm[COMM_LEN];
	uint64_t start_ns; /* CLOCK_MONOTONIC of its fork, exec or first sight; 0 unknown */
	uint64_t end_ns;   /* of its exit, when exited */
	uint64_t cgroup;   /* its group's cgroup id (its own, or top's -c group); 0 unknown */
	uint64_t own_cgroup; /* its own cgroup, when the kernel keeps it apart (top's filters) */
	int exit_code;
	bool exited;
	bool overflow;     /* counted in the shared overflow slot */
	bool indexed;      /* the newest record of its pid (in the pid hash) */
	UT_hash_handle hh;
};

/* What each mode does at the table's moments; ctx is the mode's (procs_start). */
struct proc_hooks {
	size_t data_size; /* bytes of the mode's data per record (zeroed when made) */
	/* A record made from an event of the overflow slot (e), or from a row (e NULL). */
	void (*made)(struct proc *p, void *data, const struct iot_proc_event *e, void *ctx);
	/* Its slot's row read (after the table took its name and groups). */
	void (*row)(struct proc *p, void *data, const struct slot_proc *row, void *ctx);
	/* An event of the overflow slot, after the table took its name (before its exit). */
	void (*event)(struct proc *p, void *data, const struct iot_proc_event *e, size_t size,
		      void *ctx);
	/* Its cgroup (own: its own_cgroup) changed to p's: the path noted while it exists. */
	void (*cgroup)(struct proc *p, void *data, bool own, void *ctx);
	/* It leaves its own slot: its last counts, while what the kernel keeps there is its. */
	void (*retire)(struct proc *p, void *data, void *ctx);
	/* An exited process's ledger entries were taken (its files' last counts are in). */
	void (*files_taken)(struct proc *p, void *data, void *ctx);
};

struct proc_table {
	struct tracer *tracer;
	const struct proc_hooks *hooks;
	void *ctx;
	ledger_entry_fn give_entry; /* a ledger entry that left the kernel, to the mode */
	struct follow follow;      /* the slot table and the ledger, followed */
	struct proc **procs;       /* in the order they were made */
	size_t n, cap;
	char *data;                /* n records' data, hooks->data_size each */
	size_t data_cap;           /* in bytes */
	struct proc *by_pid;       /* pid -> its newest record */
	struct proc *at_slot[MAX_SLOTS]; /* a live slot's process */
	bool overflow_used;        /* some process was counted in the overflow slot */
	int error;                 /* -ENOMEM: a record could not be made */
};

/* A table allocated (calloc: it is large), NULL when out of memory. */
struct proc_table *procs_new(const struct proc_hooks *hooks, void *ctx);
/* Binds the tracer, before any event is polled; the entries taken go to give_entry(ctx). */
void procs_start(struct proc_table *t, struct tracer *tracer, ledger_entry_fn give_entry);
void procs_free(struct proc_table *t);

/* The record of pid (its newest), or NULL. */
struct proc *procs_find(struct proc_table *t, uint32_t pid);
/*
 * A record for pid even when the table never heard of it: made from its slot's row when it
 * is alive (its notice not read yet: its exit is left to that notice), else an exited one
 * named "?". NULL when out of memory.
 */
struct proc *procs_find_or_ghost(struct proc_table *t, uint32_t pid);
/* The mode's data of p. */
void *procs_data(struct proc_table *t, const struct proc *p);
static inline size_t procs_count(const struct proc_table *t)
{
	return t->n;
}
static inline struct proc *procs_at(const struct proc_table *t, size_t i)
{
	return t->procs[i];
}
/* Whether p still has its own slot (its counters can be read in place). */
bool procs_owns_slot(const struct proc_table *t, const struct proc *p);

/*
 * A record for a process iotrace started or attached to itself (collector_add_root), in slot;
 * its made hook is not called. NULL when out of memory.
 */
struct proc *procs_add(struct proc_table *t, uint32_t pid, uint32_t ppid, uint32_t slot,
		       uint64_t start_ns);
/* p's cgroup (own: its own cgroup) is id now: noted through the hook when it changed. */
void procs_set_cgroup(struct proc_table *t, struct proc *p, uint64_t id, bool own);
/* One struct iot_proc_event: a slot's notice followed, or an overflow slot's event taken. */
void procs_on_event(struct proc_table *t, const struct iot_proc_event *e, size_t size);
/* p leaves its slot (the end of the run: not exited); its last counts through the hook. */
void procs_retire(struct proc_table *t, struct proc *p);

/* Every slot in use, against the table (follow_sync_all). */
void procs_sync_all(struct proc_table *t);
/* follow_tick: the ms until the next tick. */
int procs_tick(struct proc_table *t);
/* Whether a row was caught mid-write at the last look (read the table again). */
bool procs_rescan_due(const struct proc_table *t);
/* The first error of the table or of following the kernel, or 0. */
int procs_error(const struct proc_table *t);

/*
 * Only the records keep(p, data) says to keep stay, in their order (their data with them);
 * each pid indexed to its newest record again.
 */
typedef bool (*procs_keep_fn)(struct proc *p, void *data, void *ctx);
void procs_keep(struct proc_table *t, procs_keep_fn keep, void *ctx);
/*
 * The data array handed over (*n records; the caller frees it); the table keeps its records
 * but no data (only procs_free after this).
 */
void *procs_take_data(struct proc_table *t, size_t *n);

#endif
