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

/*
 * The snap (block_snap or uring_snap) of key *k among the n of snaps, one made (zeroed, its
 * key set) when the key is new; NULL when out of memory.
 */
#define SNAP_OF(snaps, n, k)                                                                       \
	({                                                                                         \
		__typeof__(snaps) found_ = NULL;                                                   \
                                                                                                   \
		for (size_t i_ = 0; i_ < (n) && !found_; i_++)                                     \
			if (!memcmp(&(snaps)[i_].key, (k), sizeof(*(k))))                          \
				found_ = &(snaps)[i_];                                             \
		if (!found_ && (found_ = VEC_PUSH(snaps, n)))                                      \
			found_->key = *(k);                                                        \
		found_;                                                                            \
	})

/* One (owner, disk, op) record's growth since its last read: its process, disk, totals. */
static void count_block(struct top_collector *c, const struct block_record *r)
{
	struct block_snap *s = SNAP_OF(c->blocks, c->nblocks, &r->key);
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

/*
 * The snaps (block_snap or uring_snap) of records of exited processes, or of idle ones when
 * the table fills, leave it, 64 a refresh at most; forget(tracer, keys, n) takes the records
 * out of the kernel. The others stay, unseen for the next refresh.
 */
#define FORGET_SNAPS(c, snaps, n, max_keys, forget)                                                \
	do {                                                                                       \
		__typeof__((snaps)->key) gone_[64];                                                \
		size_t ngone_ = 0, out_ = 0;                                                       \
		bool crowded_ = (n) > (max_keys) / 2;                                              \
                                                                                                   \
		for (size_t i_ = 0; i_ < (n); i_++) {                                              \
			__typeof__(snaps) s_ = &(snaps)[i_];                                       \
                                                                                                   \
			if (ngone_ < 64 &&                                                         \
			    (!s_->seen || forgettable(c, s_->key.owner, s_->idle, crowded_))) {    \
				gone_[ngone_++] = s_->key;                                         \
				continue;                                                          \
			}                                                                          \
			s_->seen = false;                                                          \
			(snaps)[out_++] = *s_;                                                     \
		}                                                                                  \
		(n) = out_;                                                                        \
		forget((c)->tracer, gone_, ngone_);                                                \
	} while (0)

int top_read_blocks(struct top_collector *c)
{
	struct block_record *recs;
	size_t n;

	if (tracer_read_blocks(c->tracer, &recs, &n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		count_block(c, &recs[i]);
	free(recs);
	FORGET_SNAPS(c, c->blocks, c->nblocks, MAX_BLOCK_KEYS, tracer_forget_blocks);
	for (size_t i = 0; i < c->ndisks; i++)
		top_counts_add(&c->total, &c->disks[i].c);
	return 0;
}

int top_read_urings(struct top_collector *c)
{
	struct uring_record *recs;
	size_t n;

	if (tracer_read_urings(c->tracer, &recs, &n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct uring_snap *s = SNAP_OF(c->urings, c->nurings, &recs[i].key);
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
	FORGET_SNAPS(c, c->urings, c->nurings, MAX_URING_KEYS, tracer_forget_urings);
	return 0;
}
