// SPDX-License-Identifier: GPL-2.0
/*
 * The process table (user/collect/procs.c) against a stand-in for the kernel's slot table:
 * records made from rows and from overflow events, found by pid and by slot, a reused pid,
 * a ghost, retiring (its hook before the slot is given back, once), cgroup notes, and the
 * records a mode keeps (procs_keep) with their data. Prints "ok" or the first failed check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collect/procs.h"

#define NSLOTS 16

/* The kernel's side, as procs.c and follow.c see it through tracer.h. */
struct tracer {
	struct slot_proc rows[NSLOTS];
	bool used[NSLOTS];
	uint32_t slot_of[1024];
	bool released[NSLOTS];
	int files_taken;
};

int tracer_read_slot_proc(struct tracer *t, uint32_t slot, struct slot_proc *out)
{
	if (slot >= NSLOTS || !t->used[slot])
		return -1;
	*out = t->rows[slot];
	return 0;
}

bool tracer_slot_in_use(struct tracer *t, uint32_t slot)
{
	return slot < NSLOTS && t->used[slot];
}

void tracer_for_each_used_slot(struct tracer *t, tracer_slot_fn fn, void *ctx)
{
	for (uint32_t s = OVERFLOW_SLOT + 1; s < NSLOTS; s++)
		if (t->used[s])
			fn(s, ctx);
}

uint32_t tracer_slot_of(const struct tracer *t, pid_t tgid)
{
	return tgid > 0 && tgid < 1024 ? t->slot_of[tgid] : 0;
}

void tracer_release_slot(struct tracer *t, uint32_t slot)
{
	t->released[slot] = true;
	t->used[slot] = false;
}

uint64_t tracer_notices_lost(struct tracer *t)
{
	(void)t;
	return 0;
}

int tracer_take_files(struct tracer *t, uint32_t owner, ledger_entry_fn fn, void *ctx)
{
	(void)owner;
	(void)fn;
	(void)ctx;
	t->files_taken++;
	return 0;
}

int tracer_evict_idle(struct tracer *t, uint32_t age, ledger_entry_fn fn, void *ctx, size_t *n)
{
	(void)t;
	(void)age;
	(void)fn;
	(void)ctx;
	*n = 0;
	return 0;
}

bool tracer_files_filling(struct tracer *t)
{
	(void)t;
	return false;
}

/* What the mode saw, through its hooks. */
struct mode {
	struct tracer *t;
	int made_from_row, made_from_event, cgroups, retired, files;
	bool slot_still_used_at_retire;
};

struct data {
	uint32_t pid; /* the mode's own copy: moves with its record */
};

static void made(struct proc *p, void *data, const struct iot_proc_event *e, void *ctx)
{
	struct mode *m = ctx;

	((struct data *)data)->pid = p->pid;
	if (e)
		m->made_from_event++;
	else
		m->made_from_row++;
}

static void cgroup(struct proc *p, void *data, bool own, void *ctx)
{
	(void)p;
	(void)data;
	(void)own;
	((struct mode *)ctx)->cgroups++;
}

static void retire(struct proc *p, void *data, void *ctx)
{
	struct mode *m = ctx;

	(void)data;
	m->retired++;
	m->slot_still_used_at_retire = m->t->used[p->slot];
}

static void files_taken(struct proc *p, void *data, void *ctx)
{
	(void)p;
	(void)data;
	((struct mode *)ctx)->files++;
}

static void no_entry(const struct ledger_entry *e, void *ctx)
{
	(void)e;
	(void)ctx;
}

static const struct proc_hooks hooks = { .data_size = sizeof(struct data), .made = made,
	.cgroup = cgroup, .retire = retire, .files_taken = files_taken };

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL line %d: %s\n", __LINE__, #cond);                             \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static void put_row(struct tracer *t, uint32_t slot, uint32_t pid, uint64_t start, uint64_t cg)
{
	t->rows[slot] = (struct slot_proc){ .state = SP_LIVE, .pid = pid, .ppid = 1,
					    .start_ns = start, .cgroup = cg };
	snprintf(t->rows[slot].comm, COMM_LEN, "p%u", pid);
	t->used[slot] = true;
	t->slot_of[pid] = slot;
}

static void notice(struct proc_table *pt, uint32_t kind, uint32_t pid, uint32_t slot,
		   uint64_t cg)
{
	struct iot_proc_event e = { .kind = kind, .pid = pid, .ppid = 1, .slot = slot,
				    .ts_ns = 1000 + pid, .cgroup = cg };

	snprintf(e.comm, COMM_LEN, "o%u", pid);
	procs_on_event(pt, &e, sizeof(e));
}

static void rows_and_retiring(struct proc_table *pt, struct tracer *t, struct mode *m)
{
	struct proc *p;

	put_row(t, 5, 100, 10, 7);
	notice(pt, EV_FORK, 100, 5, 0);
	notice(pt, EV_COMM, 100, 5, 0); /* the same row again: nothing new */
	p = procs_find(pt, 100);
	CHECK(p && procs_count(pt) == 1 && m->made_from_row == 1 && m->cgroups == 1);
	CHECK(p->slot == 5 && procs_owns_slot(pt, p) && !strcmp(p->comm, "p100"));
	CHECK(((struct data *)procs_data(pt, p))->pid == 100);
	t->rows[5].state = SP_EXITED;
	t->rows[5].exit_code = 256;
	notice(pt, EV_EXIT, 100, 5, 0);
	CHECK(p->exited && p->slot == 0 && p->exit_code == 256 && !procs_owns_slot(pt, p));
	CHECK(m->retired == 1 && m->slot_still_used_at_retire && t->released[5]);
	CHECK(m->files == 1 && t->files_taken == 1);
	notice(pt, EV_EXIT, 100, 5, 0); /* a late notice of a freed slot: nothing */
	CHECK(m->retired == 1 && procs_count(pt) == 1);
}

static void reused_pid(struct proc_table *pt, struct tracer *t)
{
	struct proc *newer, *older;

	put_row(t, 6, 100, 50, 0); /* pid 100 again, a newer process */
	procs_sync_all(pt);
	newer = procs_find(pt, 100);
	CHECK(newer && newer->start_ns == 50 && !newer->exited && procs_count(pt) == 2);
	/* A row read late (its notices lost) of a process older than the newest pid 100. */
	put_row(t, 7, 100, 30, 0);
	procs_sync_all(pt);
	older = procs_at(pt, 2);
	CHECK(procs_count(pt) == 3 && older->start_ns == 30 && procs_find(pt, 100) == newer);
	t->used[7] = false;
}

static void overflow_and_ghosts(struct proc_table *pt, struct tracer *t, struct mode *m)
{
	struct proc *p;
	int retired = m->retired;

	notice(pt, EV_FORK, 200, OVERFLOW_SLOT, 9);
	p = procs_find(pt, 200);
	CHECK(p && p->overflow && pt->overflow_used && p->cgroup == 9 && m->made_from_event == 1);
	notice(pt, EV_EXEC, 200, OVERFLOW_SLOT, 11);
	CHECK(p->cgroup == 11 && !strcmp(p->comm, "o200"));
	notice(pt, EV_EXIT, 200, OVERFLOW_SLOT, 11);
	CHECK(p->exited && m->retired == retired); /* no slot of its own: no last counts */
	/* A live process whose notice was not read: its record from its row, not retired. */
	put_row(t, 8, 300, 70, 0);
	p = procs_find_or_ghost(pt, 300);
	CHECK(p && !p->exited && p->slot == 8 && procs_owns_slot(pt, p));
	/* One the table never knew and the kernel no longer has: an exited ghost. */
	p = procs_find_or_ghost(pt, 400);
	CHECK(p && p->exited && !strcmp(p->comm, "?") && procs_find(pt, 400) == p);
	CHECK(!procs_find_or_ghost(pt, 0));
}

static bool live_only(struct proc *p, void *data, void *ctx)
{
	(void)ctx;
	CHECK(((struct data *)data)->pid == p->pid || p->pid == 400);
	return !p->exited;
}

static void keeping(struct proc_table *pt)
{
	size_t n;
	struct data *d;

	procs_keep(pt, live_only, NULL);
	CHECK(procs_count(pt) == 3); /* pid 100 (slot 6), the late 100 (slot 7), 300 */
	CHECK(procs_find(pt, 100)->start_ns == 50 && procs_find(pt, 300)->slot == 8);
	CHECK(!procs_find(pt, 200) && !procs_find(pt, 400));
	for (size_t i = 0; i < procs_count(pt); i++)
		CHECK(((struct data *)procs_data(pt, procs_at(pt, i)))->pid == procs_at(pt, i)->pid);
	d = procs_take_data(pt, &n);
	CHECK(n == 3 && d[2].pid == 300);
	free(d);
}

int main(void)
{
	struct tracer *t = calloc(1, sizeof(*t));
	struct mode m = { .t = t };
	struct proc_table *pt = procs_new(&hooks, &m);

	CHECK(t && pt);
	procs_start(pt, t, no_entry);
	rows_and_retiring(pt, t, &m);
	reused_pid(pt, t);
	overflow_and_ghosts(pt, t, &m);
	keeping(pt);
	CHECK(!procs_error(pt));
	procs_free(pt);
	free(t);
	printf("ok\n");
	return 0;
}
