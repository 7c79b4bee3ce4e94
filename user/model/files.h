/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Each process's ledger of files in user space. The kernel's entries arrive while the run
 * goes on (at a process's exit, or when the loader recycles entries of files no longer in
 * use) and at the end; one file may arrive several times, so they are merged by (dev, ino).
 */
#ifndef IOTRACE_FILES_H
#define IOTRACE_FILES_H

#include "records.h"
#include "file_names.h"

void ledger_entry_free(struct ledger_entry *e);
/* Readahead pages in the bitmaps that their process never requested. */
uint64_t page_bits_unused(const struct page_bits *bits);

/* A file view's derived page-cache numbers from a ledger entry's raw counters, added. */
void page_cache_add_raw(struct page_cache_view *v, const struct file_stat *st);
/* p's record of a file, created (kind FK_FILE, no name yet) when new; NULL out of memory. */
struct file_record *files_get(struct proc_record *p, const struct path_key *k);
/* Adds an entry's counters into p's record of its file; -1 out of memory. */
int files_add_entry(struct proc_record *p, const struct ledger_entry *e);
/*
 * Adds a request count of the per-file block table into p's record of the file, or of the
 * disk's "(filesystem metadata)" row when ino is 0; -1 out of memory.
 */
int files_add_block(struct proc_record *p, const struct file_block_key *k,
		    const struct file_block_stat *st);
/*
 * Unused readahead from each file's bitmaps, added, and the bitmaps freed: when p exited
 * (its bitmaps are final, later records of it carry none) and at the end.
 */
void files_count_readahead(struct proc_record *p);
/*
 * At the end: the last bitmaps counted, the per-file summaries, and the rows they are
 * reported in (files_rows).
 */
void files_finish(struct proc_record *p, bool by_path);
void file_record_free(struct file_record *f);
void files_free(struct proc_record *p);

/* A row's latency histogram into dense (HIST_BUCKETS) and its quantiles (kept sparse). */
struct hist_summary file_io_latency(const struct file_io *io, __u64 *dense);
/* Shared libraries and the like: mapped, at most their header read, never written. */
bool file_mapped_only(const struct file_record *f);

/* What files not listed one by one hold together (the text table's last line). */
struct files_fold {
	size_t files, mapped; /* mapped: how many are mapped only (file_mapped_only) */
	uint64_t read_calls, read_bytes, write_calls, write_bytes, resident_pages, faults;
};
void files_fold(struct file_record *const *f, size_t n, struct files_fold *out);

#endif
