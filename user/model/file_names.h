/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A file's calls by the names they were made under, its rows (--files-by path: a path's
 * files in one) and its summary (file_names.c); files.h adds its entries to a process's.
 */
#ifndef IOTRACE_FILE_NAMES_H
#define IOTRACE_FILE_NAMES_H

#include "records.h"

/* A file's per-file table numbers (FILE_SUMMARY_FIELDS) from its rows, blocks and pages. */
void file_summarize(struct file_record *f);
/*
 * An entry's syscall rows by the name they were made under (its name_id), before they are
 * added to the file's: the file's calls by name start when a second name comes; -1 out of
 * memory.
 */
int files_add_named(struct file_record *f, const struct ledger_entry *e);
/*
 * At the end, once the file has its name: the path of each name its calls were made under;
 * by_name is left only when some differs from the file's name. name_of(ctx, id) is the
 * path of a name id, or NULL.
 */
typedef const char *(*file_name_of_fn)(void *ctx, uint64_t id);
int files_name_calls(struct file_record *f, file_name_of_fn name_of, void *ctx);
/*
 * p->rows: its files, or (by_path) with the files of one path merged into one row each
 * (versions: how many); -1 out of memory.
 */
int files_rows(struct proc_record *p, bool by_path);
/*
 * Files (or rows) as one row in dst: the newest one's identity, name and residency, every
 * count summed, versions = n; -1 out of memory (file_record_free frees dst's parts).
 */
int files_merge(struct file_record *dst, struct file_record *const *m, size_t n);

#endif
