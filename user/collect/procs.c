// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "procs.h"
#include "util/vec.h"

static void take_row(uint32_t slot, const struct slot_proc *row, void *ctx);
static void entry_out(const struct ledger_entry *e, void *ctx);

struct proc_table *procs_new(const struct proc_hooks *hooks, void *ctx)
{
	struct proc_table *t = calloc(1, sizeof(*t));

	if (t) {
		t->hooks = hooks;
		t->ctx = ctx;
	}
	return t;
}

void procs_start(struct proc_table *t, struct tracer *tracer, ledger_entry_fn give_entry)
{
	t->tracer = tracer;
	t->give_entry = give_entry;
	follow_start(&t->follow, tracer, take_row, entry_out, t);
}

void procs_free(struct proc_table *t)
{
	if (!t)
		return;
	HASH_CLEAR(hh, t->by_pid);
	for (size_t i = 0; i < t->n; i++)
		free(t->procs[i]);
	free(t->procs);
	free(t->data);
	free(t);
}

struct proc *procs_find(struct proc_table *t, uint32_t pid)
{
	struct proc *p;

	HASH_FIND(hh, t->by_pid, &pid, sizeof(pid), p);
	return p;
}

void *procs_data(struct proc_table *t, const struct proc *p)
{
	return t->data + p->index * t->hooks->data_size;
}

bool procs_owns_slot(const struct proc_table *t, const struct proc *p)
{
	return p->slot > OVERFLOW_SLOT && p->slot < MAX_SLOTS && t->at_slot[p->slot] == p;
}

/* p the newest record of its pid, unless a record made before has a later start (a record
 * made late, its notices lost, for a pid a newer process has since). */
static void index_pid(struct proc_table *t, struct proc *p)
{
	struct proc *old = procs_find(t, p->pid);
	int err;

	if (old && old->start_ns > p->start_ns)
		return;
	if (old) {
		HASH_DEL(t->by_pid, old);
		old->indexed = false;
	}
	HASH_ADD_OR_FAIL(hh, t->by_pid, pid, sizeof(p->pid), p, err);
	if (err)
		t->error = -ENOMEM;
	p->indexed = !err;
}

struct proc *procs_add(struct proc_table *t, uint32_t pid, uint32_t ppid, uint32_t slot,
		       uint64_t start_ns)
{
	size_t size = t->hooks->data_size;
	struct proc *p;

	if (!pid || VEC_ROOM(t->procs, t->n, t->cap) ||
	    vec_reserve(&t->data, &t->data_cap, (t->n + 1) * size, 1) || !(p = calloc(1, sizeof(*p)))) {
		t->error = pid ? -ENOMEM : t->error;
		return NULL;
	}
	*p = (struct proc){ .pid = pid, .ppid = ppid, .slot = slot, .index = t->n,
			    .start_ns = start_ns, .overflow = slot == OVERFLOW_SLOT };
	memset(t->data + t->n * size, 0, size);
	t->procs[t->n++] = p;
	index_pid(t, p);
	if (slot == OVERFLOW_SLOT)
		t->overflow_used = true;
	else if (slot < MAX_SLOTS)
		t->at_slot[slot] = p;
	return p;
}

void procs_set_cgroup(struct proc_table *t, struct proc *p, uint64_t id, bool own)
{
	uint64_t *at = own ? &p->own_cgroup : &p->cgroup;

	if (!id || id == *at)
		return;
	*at = id;
	if (t->hooks->cgroup)
		t->hooks->cgroup(p, procs_data(t, p), own, t->ctx);
}

static void set_comm(struct proc *p, const char *comm)
{
	memcpy(p->comm, comm, sizeof(p->comm));
	p->comm[COMM_LEN - 1] = '\0';
}

void procs_retire(struct proc_table *t, struct proc *p)
{
	if (procs_owns_slot(t, p)) {
		if (t->hooks->retire)
			t->hooks->retire(p, procs_data(t, p), t->ctx);
		t->at_slot[p->slot] = NULL;
		tracer_release_slot(t->tracer, p->slot);
	}
	p->slot = 0;
}

/* p exited: its last counts taken, its slot given back, its ledger entries out (room). */
static void exited(struct proc_table *t, struct proc *p, int code, uint64_t end_ns)
{
	p->exited = true;
	p->exit_code = code;
	p->end_ns = end_ns;
	procs_retire(t, p);
	if (!follow_take_files(&t->follow, p->pid) && t->hooks->files_taken)
		t->hooks->files_taken(p, procs_data(t, p), t->ctx);
}

/* A record from slot's row: its name and groups as the kernel has them now. */
static struct proc *from_row(struct proc_table *t, uint32_t slot, const struct slot_proc *row)
{
	struct proc *p = procs_add(t, row->pid, row->ppid, slot, row->start_ns);

	if (p && t->hooks->made)
		t->hooks->made(p, procs_data(t, p), NULL, t->ctx);
	return p;
}

static void update_from_row(struct proc_table *t, struct proc *p, const struct slot_proc *row)
{
	set_comm(p, row->comm);
	if (t->hooks->row)
		t->hooks->row(p, procs_data(t, p), row, t->ctx);
	procs_set_cgroup(t, p, row->own_cgroup, true);
	procs_set_cgroup(t, p, row->cgroup, false);
}

/*
 * The process in slot as the kernel's slot table has it now (bpf/proc.bpf.c; read by
 * follow_slot): its record made when this is the first the table hears of it, its name,
 * groups (and the mode's part), and when it has exited, retired.
 */
static void take_row(uint32_t slot, const struct slot_proc *row, void *ctx)
{
	struct proc_table *t = ctx;
	struct proc *p = slot < MAX_SLOTS ? t->at_slot[slot] : NULL;

	if ((!p || p->pid != row->pid) && !(p = from_row(t, slot, row)))
		return;
	if (p->exited)
		return;
	update_from_row(t, p, row);
	if (row->state == SP_EXITED)
		exited(t, p, row->exit_code, row->end_ns);
}

static void entry_out(const struct ledger_entry *e, void *ctx)
{
	struct proc_table *t = ctx;

	t->give_entry(e, t->ctx);
}

struct proc *procs_find_or_ghost(struct proc_table *t, uint32_t pid)
{
	struct proc *p = procs_find(t, pid);
	struct slot_proc row;
	uint32_t slot;

	if (p)
		return p;
	/*
	 * A live process whose notice the table has not taken in yet (fio's first reads of a
	 * refresh went to a nameless row now and then, under load): the slot table names it.
	 * Only its record is made here; its notice, or the rescan, retires it (not from inside
	 * a reader's callback).
	 */
	slot = tracer_slot_of(t->tracer, pid);
	if (slot > OVERFLOW_SLOT && slot < MAX_SLOTS &&
	    !tracer_read_slot_proc(t->tracer, slot, &row) && row.pid == pid &&
	    (p = from_row(t, slot, &row))) {
		update_from_row(t, p, &row);
		return p;
	}
	/* Its records outlived what the table keeps of it: exited, name unknown. */
	if ((p = procs_add(t, pid, 0, 0, 0))) {
		strcpy(p->comm, "?");
		p->exited = true;
	}
	return p;
}

/*
 * A process in the overflow slot has no row in the table: its events are all the table
 * learns of it (its counts are the overflow slot's, which nothing loses). A fork, a process
 * found running, or an event of a pid the table has no live record of starts a record.
 */
static void on_overflow_event(struct proc_table *t, const struct iot_proc_event *e, size_t size)
{
	struct proc *p = e->kind == EV_FORK || e->kind == EV_FOUND ? NULL : procs_find(t, e->pid);

	if (!p || p->exited) {
		p = procs_add(t, e->pid, e->ppid, e->slot, e->ts_ns);
		if (!p)
			return;
		if (t->hooks->made)
			t->hooks->made(p, procs_data(t, p), e, t->ctx);
		procs_set_cgroup(t, p, e->cgroup, false);
	}
	set_comm(p, e->comm);
	if (e->kind == EV_EXEC)
		procs_set_cgroup(t, p, e->cgroup, false);
	if (t->hooks->event)
		t->hooks->event(p, procs_data(t, p), e, size, t->ctx);
	if (e->kind == EV_EXIT)
		exited(t, p, e->exit_code, e->ts_ns);
}

void procs_on_event(struct proc_table *t, const struct iot_proc_event *e, size_t size)
{
	if (e->slot > OVERFLOW_SLOT && e->slot < MAX_SLOTS)
		follow_slot(&t->follow, e->slot);
	else
		on_overflow_event(t, e, size);
}

void procs_sync_all(struct proc_table *t)
{
	follow_sync_all(&t->follow);
}

int procs_tick(struct proc_table *t)
{
	return follow_tick(&t->follow);
}

bool procs_rescan_due(const struct proc_table *t)
{
	return t->follow.rescan;
}

int procs_error(const struct proc_table *t)
{
	return t->error ? t->error : t->follow.error;
}

void procs_keep(struct proc_table *t, procs_keep_fn keep, void *ctx)
{
	size_t size = t->hooks->data_size, out = 0;

	HASH_CLEAR(hh, t->by_pid);
	for (size_t i = 0; i < t->n; i++) {
		struct proc *p = t->procs[i];

		p->indexed = false;
		if (!keep(p, procs_data(t, p), ctx)) {
			if (p->slot < MAX_SLOTS && t->at_slot[p->slot] == p)
				t->at_slot[p->slot] = NULL;
			free(p);
			continue;
		}
		if (out != i)
			memmove(t->data + out * size, t->data + i * size, size);
		p->index = out;
		t->procs[out++] = p;
	}
	t->n = out;
	/* The newest record of a pid is the one found (a pid may have been reused). */
	for (size_t i = 0; i < t->n; i++)
		index_pid(t, t->procs[i]);
}

void *procs_take_data(struct proc_table *t, size_t *n)
{
	void *data = t->data;

	*n = t->n;
	t->data = NULL;
	t->data_cap = 0;
	return data;
}
