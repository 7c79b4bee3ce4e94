/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sums of one kind of record (sums.c): profiles by syscall, page-cache views, block records;
 * each record's derived numbers; the names of the records' enums.
 */
#ifndef IOTRACE_SUMS_H
#define IOTRACE_SUMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "records.h"

/* Block records grouped: per operation over all disks, and everything. */
struct block_sums {
	struct block_record by_op[BLOCK_OPS];
	struct block_record all;
};

/* Every syscall number's slot, for summing profiles before they are compacted. */
struct dense_profile {
	struct sc_row sc[MAX_SYSCALLS];
	struct io_summary io[IO_KINDS];
	bool io_used[IO_KINDS];
};

void dense_reset(struct dense_profile *d);
/* Adds raw kernel counters of one syscall, or of one read/write-family kind (readers). */
void dense_add_syscall(struct dense_profile *d, uint32_t nr, const struct syscall_stat *sc);
void dense_add_io(struct dense_profile *d, uint32_t kind, const struct io_stat *io);
/* Adds src's raw counters (before dense_finish_io) into d. */
void dense_merge_raw(struct dense_profile *d, const struct dense_profile *src);
void dense_add(struct dense_profile *d, const struct profile *p);
/* After summing raw kernel counters: marks the I/O kinds called, with their call counts. */
void dense_finish_io(struct dense_profile *d);
/* Adds src (after dense_finish_io) into d. */
void dense_merge(struct dense_profile *d, const struct dense_profile *src);
/* Compacts d into out (rows sorted by syscall number); out must be empty. */
int dense_to_profile(const struct dense_profile *d, struct profile *out);
void profile_free(struct profile *p);

/* Page cache: sums of files' views. */
void page_cache_add(struct page_cache_sum *sum, const struct page_cache_view *v);
void page_cache_merge(struct page_cache_sum *sum, const struct page_cache_sum *other);
void page_cache_reset(struct page_cache_sum *s);
/*
 * Why a page-cache field has no value (unused readahead when page-bitmap chunks were lost,
 * O_DIRECT counts without their hook: direct_missing), or NULL when it has one.
 */
const char *page_cache_field_unknown(const struct field *f, const struct page_cache_view *v,
				     const char *direct_missing);
void block_record_add(struct block_record *dst, const struct block_record *src);
/* A file's syscall row added to another's (FILE_IO_FIELDS; the histogram apart). */
void file_io_add(struct file_io *dst, const struct file_io *src);
/*
 * The counters of BLOCK_COUNTS (bpf/iotrace.h) that keep their name in every block record
 * and view of the model (struct block_stat_view too): what adding one to another sums
 * alike. X(member).
 */
#define BLOCK_COUNTS_SUMMED(X)                                                                     \
	X(requests) X(bytes) X(errors) X(sync) X(readahead) X(meta) X(fua) X(preflush)         \
	X(writeback) X(sequential)
/* A block record's derived view (averages, quantiles) from its raw counters. */
void block_record_derive(struct block_record *r);
/*
 * Adds requests whose completion was never seen (one record each, no latencies) into recs,
 * merging equal keys; -1 out of memory.
 */
int block_add_unseen(struct block_record **recs, size_t *n, const struct block_record *unseen,
		     size_t nunseen);
/* Per-operation and overall sums of block records, derived. */
void block_sums_of(struct block_sums *s, const struct block_record *recs, size_t n);
/*
 * Per disk, the (disk, op) records of block_by_disk_of_run in /sys/block/DISK/stat's
 * columns (sectors: bytes / 512; ticks: the start-to-completion sums in ms, as the kernel
 * divides its nanoseconds); -1 out of memory.
 */
int disk_stats_of(const struct block_record *by_disk, size_t n, struct disk_stat_view **out,
		  size_t *nout);
/* A file's block rows as block records (one per disk and op), derived (none: *out NULL);
 * -1 out of memory. */
int file_block_records(const struct file_record *f, struct block_record **out, size_t *n);
/*
 * Every process's block records and the other I/O merged by (disk, operation), derived:
 * the run's totals per disk. Returns 0 with a malloc'ed array, or -1.
 */
int block_by_disk_of_run(const struct run_result *r, struct block_record **out, size_t *n);

/* "normal", "sequential+direct", ...: the advice bits seen; "normal" when none was. */
const char *advice_name(uint32_t advice, char *buf, size_t len);
extern const char *const ra_kind_names[RA_KINDS];
extern const char *const block_op_names[BLOCK_OPS];
/* Names of the drop counters, as in JSON's "drops" and Prometheus' reason label. */
extern const char *const drop_names[DROP_COUNTERS];
/* What each counts (bpf/iotrace.h, DROP_LIST). */
extern const char *const drop_help[DROP_COUNTERS];
/*
 * Whether drop counter i counts something the run did that its numbers lack or hold only
 * inexactly; not so the notices the slot table stood in for (ringbuf_events), completions
 * counted late, or snoop's events.
 */
bool drop_loses(int i);

#endif
