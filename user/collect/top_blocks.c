// SPDX-License-Identifier: GPL-2.0
/*
 * top's block and io_uring side: each (owner, disk, op) block record and (owner, opcode)
 * io_uring record read in place each refresh, its growth since the last read going to its
 * process (owner: the tgid) and its disk; records of processes gone, or idle ones when a
 * table fills, removed from the kernel's tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "top_impl.h"
#include "util/residency.h"
#include "util/vec.h"

/* Block and io_uring records unchanged this many refreshes may leave the kernel's tables. */
#define IDLE_FORGET 2

static struct top_disk *disk_of(struct top_collector *c, uint32_t dev)
{
	struct top_disk *grown;

	for (size_t i = 0; i < c->ndisks; i++)
		if (c->disks[i].dev == dev)
			return &c->disks[i];
	grown = VEC_PUSH(c->disks, c->ndisks);
	if (!grown)
		return NULL;
	grown->dev = dev;
	disk_name(dev, grown->name, sizeof(grown->name));
	return grown;
}

static struct block_snap *block_snap_of(struct top_collector *c, const struct block_key *k)
{
	struct block_snap *grown;

	for (size_t i = 0; i < c->nblocks; i++)
		if (!memcmp(&c->blocks[i].key, k, sizeof(*k)))
			return &c->blocks[i];
	grown = VEC_PUSH(c->blocks, c->nblocks);
	if (!grown)
		return NULL;
	grown->key = *k;
	return grown;
}

/* One (owner, disk, op) record's growth since its last read: its process, disk, totals. */
static void count_block(struct top_collector *c, const struct block_record *r)
{
	struct block_snap *s = block_snap_of(c, &r->key);
	struct top_counts d = { 0 };
	struct top_disk *disk;
	bool read = r->key.op == BOP_READ;

	if (!s) {
		c->error = -ENOMEM;
		return;
	}
	s->seen = true;
	if (r->key.op == BOP_READ || r->key.op == BOP_WRITE) {
		*(read ? &d.disk_reads : &d.disk_writes) = top_grew(r->st.requests, s->st.requests);
		*(read ? &d.disk_read_bytes : &d.disk_write_bytes) = top_grew(r->st.bytes, s->st.bytes);
		d.disk_writeback_bytes = top_grew(r->st.writeback_bytes, s->st.writeback_bytes);
	}
	s->idle = r->st.requests == s->st.requests ? s->idle + 1 : 0;
	disk = disk_of(c, r->key.dev);
	if (disk && (r->key.op == BOP_READ || r->key.op == BOP_WRITE))
		for (int b = 0; b < FINE_BUCKETS; b++)
			disk->lat[!read][b] += top_grew(r->st.lat_hist[b], s->st.lat_hist[b]);
	s->st = r->st;
	if (!top_counts_any(&d))
		return;
	if (disk)
		top_counts_add(&disk->c, &d);
	if (r->key.owner) {
		struct top_counts *acc = top_acc_of(c, r->key.owner);

		if (acc)
			top_counts_add(acc, &d);
	}
}

/* Whether a record's owner is gone for good (or the table fills): it may leave the kernel. */
static bool forgettable(struct top_collector *c, uint32_t owner, uint32_t idle, bool crowded)
{
	struct proc *p = owner ? procs_find(c->procs, owner) : NULL;

	if (!owner || idle < IDLE_FORGET)
		return false;
	return crowded || !p || p->exited;
}

/* Records of exited processes (or idle ones, when the table fills) leave the kernel. */
static void forget_blocks(struct top_collector *c)
{
	struct block_key gone[64];
	size_t n = 0, out = 0;
	bool crowded = c->nblocks > MAX_BLOCK_KEYS / 2;

	for (size_t i = 0; i < c->nblocks; i++) {
		struct block_snap *s = &c->blocks[i];

		if (n < 64 && (!s->seen || forgettable(c, s->key.owner, s->idle, crowded))) {
			gone[n++] = s->key;
			continue;
		}
		s->seen = false;
		c->blocks[out++] = *s;
	}
	c->nblocks = out;
	tracer_forget_blocks(c->tracer, gone, n);
}

int top_read_blocks(struct top_collector *c)
{
	struct block_record *recs;
	size_t n;

	if (tracer_read_blocks(c->tracer, &recs, &n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		count_block(c, &recs[i]);
	free(recs);
	forget_blocks(c);
	for (size_t i = 0; i < c->ndisks; i++)
		top_counts_add(&c->total, &c->disks[i].c);
	return 0;
}

static struct uring_snap *uring_snap_of(struct top_collector *c, const struct uring_key *k)
{
	struct uring_snap *grown;

	for (size_t i = 0; i < c->nurings; i++)
		if (!memcmp(&c->urings[i].key, k, sizeof(*k)))
			return &c->urings[i];
	grown = VEC_PUSH(c->urings, c->nurings);
	if (!grown)
		return NULL;
	grown->key = *k;
	return grown;
}

static void forget_urings(struct top_collector *c)
{
	struct uring_key gone[64];
	size_t n = 0, out = 0;
	bool crowded = c->nurings > MAX_URING_KEYS / 2;

	for (size_t i = 0; i < c->nurings; i++) {
		struct uring_snap *s = &c->urings[i];

		if (n < 64 && (!s->seen || forgettable(c, s->key.owner, s->idle, crowded))) {
			gone[n++] = s->key;
			continue;
		}
		s->seen = false;
		c->urings[out++] = *s;
	}
	c->nurings = out;
	tracer_forget_urings(c->tracer, gone, n);
}

int top_read_urings(struct top_collector *c)
{
	struct uring_record *recs;
	size_t n;

	if (tracer_read_urings(c->tracer, &recs, &n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct uring_snap *s = uring_snap_of(c, &recs[i].key);
		uint64_t ops;
		struct top_counts *acc;

		if (!s) {
			free(recs);
			return -ENOMEM;
		}
		ops = top_grew(recs[i].st.ops, s->ops);
		s->idle = ops ? 0 : s->idle + 1;
		s->ops = recs[i].st.ops;
		s->seen = true;
		c->total.io_uring_ops += ops;
		if (ops && (acc = top_acc_of(c, recs[i].key.owner)))
			acc->io_uring_ops += ops;
	}
	free(recs);
	forget_urings(c);
	return 0;
}
