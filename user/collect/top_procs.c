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

/* ---- processes ---- */

struct tproc *top_find(struct top_collector *c, uint32_t pid)
{
	uint32_t i = pid_index_of(&c->pids, pid);

	return i ? &c->procs[i - 1] : NULL;
}

static struct tproc *new_proc(struct top_collector *c, uint32_t pid)
{
	struct tproc *p = pid_index_add(&c->pids, &c->procs, &c->nprocs, &c->cap, sizeof(*p),
					pid, &c->error);

	if (p)
		p->pid = pid;
	return p;
}

static void note_new(struct top_collector *c, uint32_t pid, uint32_t ppid, uint32_t slot,
		     uint64_t cgroup, const char *comm);

/* With filters, the process's own cgroup (its container's), its path noted while it exists. */
static void note_own_cgroup(struct top_collector *c, struct tproc *p, uint64_t own)
{
	if (!own || own == p->own_cgroup)
		return;
	p->own_cgroup = own;
	if (c->ncgroups)
		cgroup_note(own);
}

struct tproc *top_find_or_ghost(struct top_collector *c, uint32_t pid)
{
	struct tproc *p = top_find(c, pid);
	struct slot_proc row;
	uint32_t slot;

	if (p)
		return p;
	/*
	 * Records of a live process whose notice top has not taken in yet (fio's first reads
	 * of a refresh went to a nameless row now and then, under load): the slot table
	 * names it. Only its record is made here; its notice, or the rescan, retires it (not
	 * from inside a reader's callback).
	 */
	slot = tracer_slot_of(c->tracer, pid);
	if (slot > OVERFLOW_SLOT && slot < MAX_SLOTS &&
	    !tracer_read_slot_proc(c->tracer, slot, &row) && row.pid == pid) {
		note_new(c, row.pid, row.ppid, slot, row.cgroup, row.comm);
		if ((p = top_find(c, pid))) {
			note_own_cgroup(c, p, row.own_cgroup);
			return p;
		}
	}
	if (!(p = new_proc(c, pid)))
		return p;
	/* Its records outlived what the collector keeps of it: exited, name unknown. */
	strcpy(p->comm, "?");
	p->exited = true;
	return p;
}

/* A process that came to be traced (forked, or found running). */
static void note_new(struct top_collector *c, uint32_t pid, uint32_t ppid, uint32_t slot,
		     uint64_t cgroup, const char *comm)
{
	struct tproc *p = new_proc(c, pid);

	if (!p)
		return;
	p->ppid = ppid;
	p->slot = slot;
	p->cgroup = cgroup;
	memcpy(p->comm, comm, sizeof(p->comm));
	p->comm[COMM_LEN - 1] = '\0';
	/* Past --max-procs its syscalls count in the overflow slot, with others'. */
	if (slot == OVERFLOW_SLOT)
		c->overflow_used = true;
	else if (slot < MAX_SLOTS)
		c->slot_pid[slot] = pid;
	if (cgroup && !c->ncgroups)
		cgroup_note(cgroup);
}

static void on_new(struct top_collector *c, const struct iot_proc_event *e)
{
	note_new(c, e->pid, e->ppid, e->slot, e->cgroup, e->comm);
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

/* The process's last counts: its slot's rows taken, the slot given back. */
static void retire(struct top_collector *c, struct tproc *p)
{
	if (p->slot > OVERFLOW_SLOT && p->slot < MAX_SLOTS && c->slot_pid[p->slot] == p->pid) {
		memset(&c->slot_now[p->slot], 0, sizeof(c->slot_now[p->slot]));
		tracer_take_slot_rows(c->tracer, p->slot, add_sc, add_io, c);
		count_slot(c, p->slot, p);
		memset(&c->slot_prev[p->slot], 0, sizeof(c->slot_prev[p->slot]));
		c->slot_pid[p->slot] = 0;
		tracer_release_slot(c->tracer, p->slot);
	}
	p->slot = 0;
	p->exited = true;
	/* Its ledger entries leave the kernel with their last counts (room for others). */
	follow_take_files(&c->follow, p->pid);
}

/*
 * The process in slot as the kernel's slot table has it now (bpf/proc.bpf.c; read by
 * follow_slot, and every slot when notices were lost while top fell behind): a process the
 * collector never heard of gets its record, a known one its name and group, and one whose
 * row says it exited is retired (its last counts, its slot given back).
 */
void top_take_row(uint32_t slot, const struct slot_proc *row, void *ctx)
{
	struct top_collector *c = ctx;
	struct tproc *p;

	if (c->slot_pid[slot] != row->pid)
		note_new(c, row->pid, row->ppid, slot, row->cgroup, row->comm);
	p = top_find(c, row->pid);
	if (!p || p->exited || p->slot != slot)
		return;
	memcpy(p->comm, row->comm, sizeof(p->comm));
	note_own_cgroup(c, p, row->own_cgroup);
	if (row->cgroup && row->cgroup != p->cgroup) {
		p->cgroup = row->cgroup;
		if (!c->ncgroups)
			cgroup_note(row->cgroup);
	}
	if (row->state == SP_EXITED)
		retire(c, p);
}

int top_on_event(void *ctx, void *data, size_t size)
{
	struct top_collector *c = ctx;
	const struct iot_proc_event *e = data;
	struct tproc *p;

	if (size < sizeof(*e))
		return 0;
	if (e->slot > OVERFLOW_SLOT && e->slot < MAX_SLOTS) {
		follow_slot(&c->follow, e->slot);
		return 0;
	}
	/* The overflow slot has no rows: its processes' events are all top learns of them. */
	if (e->kind == EV_FORK || e->kind == EV_FOUND) {
		on_new(c, e);
		return 0;
	}
	p = top_find(c, e->pid);
	if (!p || p->exited) {
		/* Its first event was lost: start the record from what this one says. */
		on_new(c, e);
		if (!(p = top_find(c, e->pid)))
			return 0;
	}
	switch (e->kind) {
	case EV_EXEC:
		if (e->cgroup)
			p->cgroup = e->cgroup;
		if (e->cgroup && !c->ncgroups)
			cgroup_note(e->cgroup);
		/* fallthrough */
	case EV_COMM:
		memcpy(p->comm, e->comm, sizeof(p->comm));
		p->comm[COMM_LEN - 1] = '\0';
		break;
	case EV_EXIT:
		retire(c, p);
		break;
	}
	return 0;
}

/* ---- counters read in place ---- */

/* Whether p's slot is its own and live (its counters are read in place). */
static bool reads_slot(const struct top_collector *c, const struct tproc *p)
{
	return !p->exited && p->slot > OVERFLOW_SLOT && p->slot < MAX_SLOTS &&
	       c->slot_pid[p->slot] == p->pid;
}

/* Every live process's syscall counters since the last read, all slots in one read. */
int top_read_slots(struct top_collector *c)
{
	size_t n = 0;
	int err;

	for (size_t i = 0; i < c->nprocs; i++)
		if (reads_slot(c, &c->procs[i]))
			c->live_slots[n++] = c->procs[i].slot;
	if (c->overflow_used && n < MAX_SLOTS)
		c->live_slots[n++] = OVERFLOW_SLOT;
	for (size_t i = 0; i < n; i++)
		memset(&c->slot_now[c->live_slots[i]], 0, sizeof(c->slot_now[0]));
	err = tracer_read_live_slots(c->tracer, c->live_slots, n, add_sc, add_io, c);
	for (size_t i = 0; i < c->nprocs; i++)
		if (reads_slot(c, &c->procs[i]))
			count_slot(c, c->procs[i].slot, &c->procs[i]);
	if (c->overflow_used)
		count_slot(c, OVERFLOW_SLOT, &c->overflow);
	return err ? -ENOMEM : 0;
}
