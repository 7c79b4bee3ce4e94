// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include "disks.h"

void kdev_format(uint32_t kdev, char *buf, size_t len)
{
	snprintf(buf, len, "%u:%u", kdev >> 20, kdev & 0xfffff);
}

const struct disk_entry *disk_table_find(const struct disk_table *t, uint32_t dev)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (t->v[i].dev == dev)
			return &t->v[i];
	return NULL;
}

const char *disk_table_name(const struct disk_table *t, uint32_t dev, char *buf, size_t len)
{
	const struct disk_entry *e = disk_table_find(t, dev);

	if (e)
		snprintf(buf, len, "%s", e->name);
	else
		kdev_format(dev, buf, len);
	return buf;
}

void disk_table_free(struct disk_table *t)
{
	free(t->v);
	t->v = NULL;
	t->n = 0;
}
