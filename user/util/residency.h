/* SPDX-License-Identifier: GPL-2.0 */
/* Where a (dev, ino) lives in the file tree, and what of it is in the page cache now. */
#ifndef IOTRACE_RESIDENCY_H
#define IOTRACE_RESIDENCY_H

#include <stdbool.h>
#include <stdint.h>
#include "disks.h"

struct residency {
	uint64_t size_bytes;
	uint64_t cached_pages;
	uint64_t dirty_pages;
	uint64_t writeback_pages;
	uint64_t evicted_pages;
	uint64_t recently_evicted_pages;
	/*
	 * NULL: read with cachestat(2). Else why only size_bytes and cached_pages are known:
	 * a kernel without cachestat (before 6.5), where they come from mmap and mincore(2),
	 * as fincore reads them.
	 */
	const char *partial;
};

/* Kernel name of the disk kdev ("vda"), from /sys/dev/block; "MAJ:MIN" if unknown. */
const char *disk_name(uint32_t kdev, char *buf, size_t len);
/* dev and its disk_name() in t, unless t has it; -1 out of memory. */
int disk_table_add(struct disk_table *t, uint32_t dev);
/* Every block device the machine has now (/sys/dev/block) in t; -1 out of memory. */
int disk_table_read(struct disk_table *t);
/*
 * Mount point of the filesystem on kdev whose root is mounted (from
 * /proc/self/mountinfo), or NULL. The string lives until a call for another kdev.
 */
const char *mount_point_of(uint32_t kdev);
/*
 * The path of a regular file from its inode: open_by_handle_at with (inode number,
 * generation) on its filesystem's mount, read back from /proc/self/fd; malloc'ed, NULL
 * when the filesystem or the file does not allow it (or it is deleted).
 */
char *path_by_inode(uint32_t kdev, uint64_t ino, uint32_t igen);
/* residency_read's reason when the path no longer leads to the file. */
extern const char residency_gone[];
/*
 * cachestat(2) (or mmap + mincore(2): r->partial) of the whole file at path, after checking that it still is (kdev, ino) and,
 * where the filesystem tells it, of generation igen (0: not checked).
 * Returns NULL, or a short reason (residency_gone, "cachestat: ...") for null fields.
 */
const char *residency_read(const char *path, uint32_t kdev, uint64_t ino, uint32_t igen,
			   struct residency *r);

#endif
