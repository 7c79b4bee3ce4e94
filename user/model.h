/* SPDX-License-Identifier: GPL-2.0 */
/* What a run measured, independent of BPF and of any output format. */
#ifndef IOTRACE_MODEL_H
#define IOTRACE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "iotrace.h"
#include "residency.h"

/* One syscall's totals in a profile (only syscalls that were called are kept). */
struct sc_row {
	uint32_t nr;
	uint64_t calls;
	uint64_t errors;
	uint64_t total_ns;
};

/* The read/write-family numbers of one syscall, summed over CPUs. */
struct io_summary {
	uint64_t calls;
	uint64_t errors;
	uint64_t requested;
	uint64_t transferred;
	uint64_t unknown_request;
	uint64_t size_min, size_max; /* valid when some call succeeded */
	uint64_t lat_min, lat_max;   /* valid when some call was timed */
	uint64_t size_hist[HIST_BUCKETS];
	uint64_t lat_hist[HIST_BUCKETS];
};

struct profile {
	struct sc_row *rows;
	size_t nrows;
	struct io_summary *io[IO_KINDS]; /* NULL: that syscall was not called */
};

/* One file a process touched through the page cache (or O_DIRECT). */
struct file_record {
	struct file_stat st;       /* kernel counters (iotrace.h) */
	uint64_t unused_ra_pages;  /* readahead pages never requested by this process */
	uint64_t used_ra_pages;    /* readahead pages it did request */
	bool unused_exact;         /* false when page-bitmap chunks were dropped */
	char *path;                /* NULL when unknown */
	const char *residency_missing; /* NULL, or why residency is unknown */
	struct residency res;
};

/* Block I/O of one (process, disk, operation). */
struct block_record {
	struct block_key key;
	struct block_stat st;
};

struct proc_record {
	uint32_t pid;
	uint32_t ppid;
	char comm[COMM_LEN];
	char *args;          /* argv joined by spaces, or NULL */
	uint64_t start_ns;   /* CLOCK_MONOTONIC of fork/exec, 0 when unseen */
	uint64_t end_ns;     /* CLOCK_MONOTONIC of exit, 0 when unseen */
	bool exit_seen;
	int exit_status;     /* wait(2) status when exit_seen */
	bool overflow;       /* counted in the shared overflow slot, not here */
	uint32_t slot;       /* live kernel slot, 0 once harvested */
	struct profile prof;
	struct file_record *files;
	size_t nfiles;
	struct block_record *blocks;
	size_t nblocks;
};

struct run_result {
	char **command;
	uint64_t wall_ns;
	bool exit_known;
	int exit_status; /* wait(2) status of CMD (or of the -p process, when known) */
	bool partial;    /* iotrace was interrupted before the traced processes ended */
	int stop_signal; /* the signal (SIGINT, SIGTERM) that made iotrace stop early, or 0 */
	bool timing;
	struct proc_record *procs;
	size_t nprocs;
	struct profile overflow;  /* processes beyond the slot limit, merged */
	bool overflow_used;
	struct profile totals;
	uint64_t drops[DROP_COUNTERS];
	uint32_t nr_slots;
	const char *page_cache_missing; /* NULL, or why page-cache hooks are not attached */
	const char *direct_io_missing;  /* NULL, or why O_DIRECT hooks are not attached */
	struct block_record *other_blocks; /* I/O not charged to a traced process */
	size_t nother_blocks;
	bool synced; /* --sync flushed dirty data before the report */
};

/* Every syscall number's slot, for summing profiles before they are compacted. */
struct dense_profile {
	struct sc_row sc[MAX_SYSCALLS];
	struct io_summary io[IO_KINDS];
	bool io_used[IO_KINDS];
};

void dense_reset(struct dense_profile *d);
void dense_add_io(struct io_summary *dst, const struct io_summary *src);
void dense_add(struct dense_profile *d, const struct profile *p);
/* After summing raw kernel counters: marks the I/O kinds called, with their call counts. */
void dense_finish_io(struct dense_profile *d);
/* Compacts d into out (rows sorted by syscall number); out must be empty. */
int dense_to_profile(const struct dense_profile *d, struct profile *out);
void profile_free(struct profile *p);
/* Sum of file records' counters (key and advice stay 0); start with unused_exact = true. */
struct page_cache_sum {
	struct file_stat st;
	uint64_t unused_ra_pages;
	bool unused_exact;
};
void page_cache_add(struct page_cache_sum *sum, const struct file_record *files, size_t n);
void page_cache_merge(struct page_cache_sum *sum, const struct page_cache_sum *other);
/* Adds src (after dense_finish_io) into d. */
void dense_merge(struct dense_profile *d, const struct dense_profile *src);
/* "normal", "sequential+direct", ... for an advice bit set; NULL when none was seen. */
const char *advice_name(uint32_t advice, char *buf, size_t len);
extern const char *const ra_kind_names[RA_KINDS];
extern const char *const block_op_names[BLOCK_OPS];
/* Names of the drop counters, as in JSON's "drops" and Prometheus' reason label. */
extern const char *const drop_names[DROP_COUNTERS];
/* Adds src into dst (same key assumed by the caller). */
void block_stat_add(struct block_stat *dst, const struct block_stat *src);
uint64_t profile_calls(const struct profile *p);

#endif /* IOTRACE_MODEL_H */
