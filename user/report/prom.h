/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus text exposition (format 0.0.4) of iotrace's counters, shared by run mode's
 * --prom-file and `iotrace serve`. Every metric is documented in docs/prometheus.md.
 */
#ifndef IOTRACE_PROM_H
#define IOTRACE_PROM_H

#include <stdbool.h>
#include <stdio.h>
#include "model/model.h"
#include "util/disks.h"

/* The labels of one group of series; NULL leaves that label out. */
struct prom_labels {
	const char *cgroup;
	/* serve: the cgroup's container, pod and pod's namespace (docs/containers.md); NULL:
	 * none. Functions of cgroup: labels equal in cgroup are equal in these. */
	const char *container, *pod, *namespace;
	const char *comm;
};

/* Syscall and page-cache counters of one label set. */
struct prom_group {
	struct prom_labels lab;
	const struct dense_profile *d; /* io[].calls/errors filled in (dense_finish_io) */
	struct page_cache_sum pc;
	bool pc_seen; /* some file was touched: page-cache series are written */
};

/* Block counters of one (label set, disk, operation), derived (block_record_derive). */
struct prom_block {
	struct prom_labels lab;
	struct block_record rec; /* key.dev and key.op; key.owner unused */
};

/* io_uring counters of one (label set, opcode), derived (uring_record_derive). */
struct prom_uring {
	struct prom_labels lab;
	struct uring_record rec; /* key.op; key.owner unused */
};

struct prom_report {
	const struct prom_group *groups;
	size_t ngroups;
	const struct prom_block *blocks;
	size_t nblocks;
	const struct prom_uring *urings;
	size_t nurings;
	const uint64_t *drops; /* DROP_COUNTERS entries */
	bool timing;
	bool sampled; /* calls timed by the sampling rule: seconds and latencies estimated */
	const char *page_cache_missing; /* why the page-cache hooks are off, or NULL */
	const char *direct_io_missing;
	const char *uring_missing;
	const char *run; /* run mode: a run="..." label on every series, or NULL */
	const struct disk_table *disks; /* the block devices' names (from the collector) */
};

/* Writes every metric family of r; returns -1 on a write error. */
int prom_write(FILE *out, const struct prom_report *r);
/* Writes to path atomically: a temporary file in the same directory, then rename(2). */
int prom_write_file(const char *path, const struct prom_report *r);
/*
 * Adds a block record into blocks[] (merging equal label/disk/op keys) and derives the sum;
 * -1 on ENOMEM.
 */
int prom_add_block(struct prom_block **blocks, size_t *n, struct prom_labels lab,
		   const struct block_record *rec);
/* Adds an io_uring record into urings[] (merging equal label/opcode keys); -1 on ENOMEM. */
int prom_add_uring(struct prom_uring **urings, size_t *n, struct prom_labels lab,
		   const struct uring_record *rec);

#endif
