/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iotrace top's model: one interval's counts of every process, file and disk as collected
 * (struct top_sample, collect/top_collect.c), and the view the renderers show (struct
 * top_view): rows grouped, filtered and sorted, with every rate and share derived here,
 * once (top.c). The view owns copies of its names, so it outlives the sample.
 */
#ifndef IOTRACE_TOP_H
#define IOTRACE_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "iotrace.h"
#include "fields.h"
#include "util/disks.h"

#define TOP_NONE (-1.0) /* a rate or share without a value: "-", JSON null */

#define TOP_COUNT_MEMBER(name, ...) uint64_t name;
#define TOP_RATE_MEMBER(name, ...) double name;

/* One interval's counts (TOP_COUNT_FIELDS): every member adds up. */
struct top_counts {
	TOP_COUNT_FIELDS(TOP_COUNT_MEMBER)
};

struct top_rates {
	TOP_RATE_FIELDS(TOP_RATE_MEMBER)
};

struct top_disk_rates {
	TOP_DISK_FIELDS(TOP_RATE_MEMBER)
};

/* A process in one interval (collect/top_collect.c fills it). */
struct top_proc {
	uint32_t pid, ppid;
	char comm[COMM_LEN];
	const char *cgroup; /* its group's cgroup path (the -c cgroup it is in); NULL: unknown */
	/*
	 * Its group's container (container_label: a name, a short ID, a unit, "host") and pod
	 * ("namespace/name", "pod:UID8"; NULL: in none); NULL: unknown. Valid with the sample.
	 */
	const char *container, *container_id, *pod;
	bool exited;        /* it exited: these are its last counts (late writeback may follow) */
	bool overflow;      /* the processes over --max-procs, together */
	struct top_counts c;
};

/* A file in one interval, over every process that used it. */
struct top_file {
	struct path_key key; /* ino 0: block I/O of no file on disk key.dev (metadata, journal) */
	const char *name;    /* as /proc/PID/fd shows it; NULL: unknown (valid with the sample) */
	uint32_t procs;      /* processes that used it in the interval */
	struct top_counts c;
};

/* A disk in one interval: all its requests, charged or not. */
struct top_disk {
	uint32_t dev; /* kernel dev_t */
	char name[32];
	struct top_counts c;
	__u64 lat[2][FINE_BUCKETS]; /* read, write requests by latency, issue to completion */
};

/* What one interval counted (collect/top_collect.c). */
struct top_sample {
	double seconds; /* the interval's length */
	uint64_t end_ns; /* CLOCK_MONOTONIC at its end */
	/*
	 * CLOCK_MONOTONIC as its collection began: every block request completed before it is
	 * in this interval or an earlier one (the sweep runs after it).
	 */
	uint64_t block_until_ns;
	struct top_proc *procs;
	size_t nprocs;
	struct top_file *files;
	size_t nfiles;
	struct top_disk *disks;
	size_t ndisks;
	struct disk_table disk_names; /* the names of files[]' disks (those of ino 0) */
	struct top_counts total; /* every process's syscalls and page cache; every disk's I/O */
	uint64_t drops[DROP_COUNTERS]; /* lost in the interval (drop_names) */
	uint32_t live; /* processes traced at its end */
	bool timing;   /* syscalls timed (else io_ns is unknown) */
	const char *page_cache_missing, *uring_missing; /* why a column is n/a, or NULL */
};

void top_sample_free(struct top_sample *s);
/* a += b, member by member. */
void top_counts_add(struct top_counts *a, const struct top_counts *b);
/* Whether any member is non-zero. */
bool top_counts_any(const struct top_counts *c);

/* ---- the view ---- */

enum top_group { TOP_BY_PROCESS, TOP_BY_CGROUP, TOP_BY_CONTAINER, TOP_BY_POD };
/* The grouping named by text ("container"), or -1. */
int top_group_of(const char *text);
/* Its name: "process", "cgroup", "container", "pod". */
const char *top_group_name(enum top_group g);

/* The columns a view may be sorted by: "pid", "name", then TOP_RATE_FIELDS' in order. */
#define TOP_SORT_KEYS(X)                                                                           \
	X(PID, "pid") X(NAME, "name") X(READ, "read") X(WRITE, "write") X(HIT, "hit")              \
	X(DREAD, "dread") X(DWRITE, "dwrite") X(IO, "io") X(URING, "uring")
#define TOP_SORT_ENUM(name, key) TOP_SORT_##name,
enum top_sort { TOP_SORT_KEYS(TOP_SORT_ENUM) TOP_SORTS };
/* The sort key named by text ("io"), or -1. */
int top_sort_of(const char *text);
const char *top_sort_name(enum top_sort s);
/* Every key, comma-separated, for an error line. */
const char *top_sort_list(void);

struct top_view_opts {
	enum top_group group;
	bool by_comm;       /* rows by process name (and cgroup, by cgroup) */
	enum top_sort sort;
	bool ascending;     /* default: largest first (names: a to z) */
	const char *filter; /* rows whose name holds this text (bytes), or NULL */
};

/* A row of the view: a process, a group of them, or a file. */
struct top_row {
	uint32_t pid;   /* processes: its pid; groups: 0 */
	char *name;     /* comm, "cgroup" or "cgroup comm" with --comm, a file's path (owned) */
	char *cgroup;   /* the process's group's cgroup path, or NULL (owned) */
	char *container, *container_id, *pod; /* processes: as top_proc's, or NULL (owned) */
	uint32_t procs; /* groups: processes in it; files: processes that used it */
	bool exited;
	struct top_counts c;
	struct top_rates r; /* derived */
};

struct top_header {
	struct top_counts c;  /* the machine's */
	struct top_rates r;   /* derived, as a row's */
	struct top_disk_rates d;
	uint32_t live; /* processes traced at the end of the interval */
};

struct top_view_disk {
	char name[32];
	struct top_counts c;
	struct top_disk_rates d;
	struct top_rates r;
};

struct top_view {
	double seconds;
	uint64_t block_until_ns; /* top_sample's */
	struct top_header h;
	struct top_row *rows; /* every process or group of the interval */
	size_t nrows;
	struct top_row *files; /* every file of the interval */
	size_t nfiles;
	struct top_row **shown, **shown_files; /* those that pass the filter, sorted */
	size_t nshown, nshown_files;
	struct top_view_disk *disks;
	size_t ndisks;
	uint64_t drops[DROP_COUNTERS];
	struct top_view_opts o;
	/* Why a column is n/a on this kernel (its hooks could not attach), or NULL. */
	const char *na[TOP_SORTS];
};

/* The view of a sample; -1 out of memory. */
int top_view_build(const struct top_sample *s, const struct top_view_opts *o,
		   struct top_view *v);
/* The same rows sorted and filtered again (a key pressed): the counts stay; o->group and
 * o->by_comm are the build's. */
void top_view_resort(struct top_view *v, const struct top_view_opts *o);
void top_view_free(struct top_view *v);

#endif
