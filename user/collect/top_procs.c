// SPDX-License-Identifier: GPL-2.0
/*
 * top's processes: a record for each from its events and its slot's row (followed as run
 * mode follows them: follow.c), its syscall counters read in place each refresh (a live
 * slot's counters only grow: the difference is the interval's), an exited one's last counts
 * taken as run mode takes them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "top_impl.h"
#include "model/syscall_table.h"

/* ---- processes (procs.c's table; what top keeps of each: struct tproc) ---- */

struct tproc *top_data(struct top_collector *c, const struct proc *p)
{
	return procs_data(c->procs, p);
}

struct top_counts *top_acc_of(struct top_collector *c, uint32_t pid)
{
	struct proc *p = procs_find_or_ghost(c->procs, pid);

	return p ? &top_data(c, p)->acc : NULL;
}

/* A process's group, or with filters its own cgroup (its container's): its path noted. */
static void top_cgroup(struct proc *p, void *data, bool own, void *ctx)
{
	struct top_collector *c = ctx;

	(void)data;
	if (own == (c->ncgroups != 0))
		cgroup_note(own ? p->own_cgroup : p->cgroup);
}

/* The slot's syscall counters as sums (tracer_read_live_slots' callbacks). */
static void add_sc(uint32_t slot, uint32_t nr, const struct syscall_stat *st, void *ctx)
{
	struct top_collector *c = ctx;

	if (slot >= MAX_SLOTS || nr >= MAX_SYSCALLS || !c->io_call[nr])
		return;
	c->slot_now[slot].io_ns += st->total_ns;
	if (c->rw_of_nr[nr] & 1)
		c->slot_now[slot].read_calls += st->calls;
	if (c->rw_of_nr[nr] & 2)
		c->slot_now[slot].write_calls += st->calls;
}

static void add_io(uint32_t slot, uint32_t kind, const struct io_stat *st, void *ctx)
{
	struct top_collector *c = ctx;
	int nr = io_kind_nr(kind);
	int rw = nr >= 0 && nr < MAX_SYSCALLS && slot < MAX_SLOTS ? c->rw_of_nr[nr] : 0;

	if (rw & 1)
		c->slot_now[slot].read_bytes += st->transferred;
	if (rw & 2)
		c->slot_now[slot].write_bytes += st->transferred;
}

static uint64_t highest(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * What the slot counted since its last read (slot_now) into p and the totals. The counters
 * only grow; a read may miss a row that moved meanwhile (tracer_read_live_slots), so the
 * highest value seen is kept and the next read counts what this one missed.
 */
static void count_slot(struct top_collector *c, uint32_t slot, struct tproc *p)
{
	struct slot_sums *prev = &c->slot_prev[slot], *now = &c->slot_now[slot];
	struct top_counts d = {
		.read_bytes = top_grew(now->read_bytes, prev->read_bytes),
		.write_bytes = top_grew(now->write_bytes, prev->write_bytes),
		.read_calls = top_grew(now->read_calls, prev->read_calls),
		.write_calls = top_grew(now->write_calls, prev->write_calls),
		.io_ns = top_grew(now->io_ns, prev->io_ns),
	};

	prev->read_bytes = highest(prev->read_bytes, now->read_bytes);
	prev->write_bytes = highest(prev->write_bytes, now->write_bytes);
	prev->read_calls = highest(prev->read_calls, now->read_calls);
	prev->write_calls = highest(prev->write_calls, now->write_calls);
	prev->io_ns = highest(prev->io_ns, now->io_ns);
	if (p)
		top_counts_add(&p->acc, &d);
	top_counts_add(&c->total, &d);
}

/* The process's last counts: its slot's rows taken (procs.c gives the slot back). */
static void top_retire(struct proc *p, void *data, void *ctx)
{
	struct top_collector *c = ctx;

	memset(&c->slot_now[p->slot], 0, sizeof(c->slot_now[p->slot]));
	tracer_take_slot_rows(c->tracer, p->slot, add_sc, add_io, c);
	count_slot(c, p->slot, data);
	memset(&c->slot_prev[p->slot], 0, sizeof(c->slot_prev[p->slot]));
}

const struct proc_hooks top_proc_hooks = { .data_size = sizeof(struct tproc),
	.cgroup = top_cgroup, .retire = top_retire };

int top_on_event(void *ctx, void *data, size_t size)
{
	struct top_collector *c = ctx;

	if (size >= sizeof(struct iot_proc_event))
		procs_on_event(c->procs, data, size);
	return 0;
}

/* ---- counters read in place ---- */

/* Every live process's syscall counters since the last read, all slots in one read. */
int top_read_slots(struct top_collector *c)
{
	size_t n = 0, nprocs = procs_count(c->procs);
	int err;

	for (size_t i = 0; i < nprocs; i++)
		if (procs_owns_slot(c->procs, procs_at(c->procs, i)))
			c->live_slots[n++] = procs_at(c->procs, i)->slot;
	if (c->procs->overflow_used && n < MAX_SLOTS)
		c->live_slots[n++] = OVERFLOW_SLOT;
	for (size_t i = 0; i < n; i++)
		memset(&c->slot_now[c->live_slots[i]], 0, sizeof(c->slot_now[0]));
	err = tracer_read_live_slots(c->tracer, c->live_slots, n, add_sc, add_io, c);
	for (size_t i = 0; i < nprocs; i++) {
		struct proc *p = procs_at(c->procs, i);

		if (procs_owns_slot(c->procs, p))
			count_slot(c, p->slot, top_data(c, p));
	}
	if (c->procs->overflow_used)
		count_slot(c, OVERFLOW_SLOT, &c->overflow);
	return err ? -ENOMEM : 0;
}
