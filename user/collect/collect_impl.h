/* SPDX-License-Identifier: GPL-2.0 */
/* Run mode's collection, inside: the files' names at the end (collect_files.c). */
#ifndef IOTRACE_COLLECT_IMPL_H
#define IOTRACE_COLLECT_IMPL_H

#include "model/names.h"
#include "model/records.h"

struct residency_memo;
/*
 * A file's name from the names the kernel recorded (or its inode), whether it was
 * deleted, and its residency now (read once per file: *memo, NULL at first, keeps what was
 * read); -ENOMEM when a name could not be kept.
 */
int collect_resolve_file(struct names *names, struct residency_memo **memo,
			 struct file_record *f);
/* What collect_resolve_file kept, freed (*memo NULL again). */
void collect_residency_free(struct residency_memo **memo);
/*
 * The containers of r's processes (from each one's cgroup id, whose path was noted while it
 * existed): r->containers and each process's index; -1 when out of memory.
 */
int collect_containers(struct run_result *r);

#endif
