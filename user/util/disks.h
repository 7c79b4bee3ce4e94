/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Block devices' names by device number, read from /sys by the stage that collects
 * (residency.h: disk_table_add, disk_table_read) and handed down with its records, so that
 * the model and the renderers name a disk without reading the machine.
 */
#ifndef IOTRACE_DISKS_H
#define IOTRACE_DISKS_H

#include <stddef.h>
#include <stdint.h>

#define DISK_NAME_LEN 32

struct disk_entry {
	uint32_t dev; /* kernel dev_t: MAJOR << 20 | MINOR */
	char name[DISK_NAME_LEN];
};

struct disk_table {
	struct disk_entry *v;
	size_t n;
};

/* Kernel dev_t (MAJOR << 20 | MINOR) as "MAJ:MIN". */
void kdev_format(uint32_t kdev, char *buf, size_t len);
/* The entry of dev, or NULL. */
const struct disk_entry *disk_table_find(const struct disk_table *t, uint32_t dev);
/* dev's name in t ("vda"); "MAJ:MIN" in buf when t does not know it (t may be NULL). */
const char *disk_table_name(const struct disk_table *t, uint32_t dev, char *buf, size_t len);
void disk_table_free(struct disk_table *t);

#endif
