// SPDX-License-Identifier: GPL-2.0
/*
 * top's collection: processes from the kernel's events, their syscall counters read in place
 * each refresh (a live slot's counters only grow: the difference is the interval's);
 * exited processes' last counts taken as run mode takes them. Block and io_uring records:
 * top_blocks.c; the per-file side: top_files.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "top_impl.h"
#include "model/syscall_table.h"

/* Exited processes' records are kept this many quiet refreshes (their late writeback). */
#define EXITED_KEEP 30
/* ... and at most this many of them. */
#define EXITED_MAX 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void note_io_call(int nr, int rw, void *ctx)
{
	struct top_collector *c = ctx;

	c->io_call[nr] = true;
	c->rw_of_nr[nr] = rw;
}

struct top_collector *top_collector_new(void)
{
	struct top_collector *c = calloc(1, sizeof(*c));

	if (c && !(c->names = names_new())) {
		free(c);
		return NULL;
	}
	return c;
}

static void take_row(uint32_t slot, const struct slot_proc *row, void *ctx);

int top_collector_start(struct top_collector *c, struct tracer *t,
			const struct cgroup_ref *cgroups, uint32_t ncgroups)
{
	c->tracer = t;
	c->cgroups = cgroups;
	c->ncgroups = ncgroups;
	follow_start(&c->follow, t, take_row, top_give_entry, c);
	if (pid_index_init(&c->pids, tracer_pid_max(t)))
		return -1;
	for_each_io_call(note_io_call, c);
	tracer_read_drops(t, c->drops);
	c->last_ns = now_ns();
	return 0;
}

/* Groups no process was shown in since refresh 'before' leave (all of them: before ~0). */
static void who_forget(struct top_collector *c, uint64_t before)
{
	struct group_who *w, *tmp;

	HASH_ITER(hh, c->who, w, tmp) {
		if (w->refresh >= before)
			continue;
		HASH_DEL(c->who, w);
		free(w);
	}
}

static void who_free(struct top_collector *c)
{
	who_forget(c, UINT64_MAX);
}

void top_collector_free(struct top_collector *c)
{
	if (!c)
		return;
	free(c->procs);
	pid_index_free(&c->pids);
	top_files_free(c);
	free(c->blocks);
	free(c->urings);
	free(c->disks);
	names_free(c->names);
	who_free(c);
	free(c);
}

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
	if (tracer_take_files(c->tracer, p->pid, top_give_entry, c))
		c->error = -ENOMEM;
}

/*
 * The process in slot as the kernel's slot table has it now (bpf/proc.bpf.c; read by
 * follow_slot, and every slot when notices were lost while top fell behind): a process the
 * collector never heard of gets its record, a known one its name and group, and one whose
 * row says it exited is retired (its last counts, its slot given back).
 */
static void take_row(uint32_t slot, const struct slot_proc *row, void *ctx)
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
	if (e->kind == EV_LEDGER_FULL) {
		c->room_wanted = true;
		return 0;
	}
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

bool top_wants_tick(const struct top_collector *c)
{
	return c->room_wanted;
}


int top_tick(struct top_collector *c)
{
	c->room_wanted = false;
	tracer_tick(c->tracer);
	tracer_poll_events(c->tracer); /* names first: what is taken below needs them */
	return follow_tick(&c->follow);
}

/* ---- counters read in place ---- */

/* Whether p's slot is its own and live (its counters are read in place). */
static bool reads_slot(const struct top_collector *c, const struct tproc *p)
{
	return !p->exited && p->slot > OVERFLOW_SLOT && p->slot < MAX_SLOTS &&
	       c->slot_pid[p->slot] == p->pid;
}

/* Every live process's syscall counters since the last read, all slots in one read. */
static int read_slots(struct top_collector *c)
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

/* ---- the sample ---- */

static const char *group_path(struct top_collector *c, uint64_t id)
{
	for (uint32_t i = 0; i < c->ncgroups; i++)
		if (c->cgroups[i].id == id)
			return c->cgroups[i].path;
	return id ? cgroup_path_of(id) : NULL;
}

/* The container and pod of a group (path: its cgroup's), asked once a refresh; NULL when
 * out of memory. */
static const struct group_who *group_who(struct top_collector *c, uint64_t id, const char *path)
{
	struct container_info info;
	struct group_who *w;
	int err;

	HASH_FIND(hh, c->who, &id, sizeof(id), w);
	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w)
			return NULL;
		w->cgroup = id;
		HASH_ADD_OR_FAIL(hh, c->who, cgroup, sizeof(w->cgroup), w, err);
		if (err) {
			free(w);
			return NULL;
		}
	}
	if (w->known && w->refresh == c->refreshes)
		return w;
	w->known = true;
	w->refresh = c->refreshes;
	container_of_path(path, &info);
	container_label(&info, w->container, sizeof(w->container));
	snprintf(w->id, sizeof(w->id), "%s", info.path.id);
	w->in_pod = true;
	if (info.meta.pod_name[0])
		snprintf(w->pod, sizeof(w->pod), "%s/%s", info.meta.pod_namespace,
			 info.meta.pod_name);
	else if (info.path.pod_uid[0])
		snprintf(w->pod, sizeof(w->pod), "pod:%.8s", info.path.pod_uid);
	else
		w->in_pod = false;
	return w;
}

static void proc_out(struct top_collector *c, const struct tproc *p, struct top_proc *out)
{
	const struct group_who *w;

	out->pid = p->pid;
	out->ppid = p->ppid;
	memcpy(out->comm, p->comm, sizeof(out->comm));
	out->cgroup = group_path(c, p->cgroup);
	/* With filters its group is the filter's cgroup: its container is its own cgroup's. */
	if (c->ncgroups && p->own_cgroup)
		w = group_who(c, p->own_cgroup, cgroup_path_of(p->own_cgroup));
	else
		w = out->cgroup && p->cgroup ? group_who(c, p->cgroup, out->cgroup) : NULL;
	if (w) {
		out->container = w->container;
		out->container_id = w->id[0] ? w->id : NULL;
		out->pod = w->in_pod ? w->pod : NULL;
	}
	out->exited = p->exited;
	out->overflow = p->overflow;
	out->c = p->acc;
}

/* Live processes and those with counts in the interval (exited ones' last counts). */
static int procs_out(struct top_collector *c, struct top_sample *out)
{
	out->procs = calloc(c->nprocs + 1, sizeof(*out->procs));
	if (!out->procs)
		return -ENOMEM;
	for (size_t i = 0; i < c->nprocs; i++) {
		const struct tproc *p = &c->procs[i];

		if (!p->exited)
			out->live++;
		if (!p->exited || top_counts_any(&p->acc))
			proc_out(c, p, &out->procs[out->nprocs++]);
	}
	if (top_counts_any(&c->overflow.acc))
		proc_out(c, &c->overflow, &out->procs[out->nprocs++]);
	return 0;
}

/*
 * The records of processes that exited and were quiet for EXITED_KEEP refreshes leave
 * (fewer when there are many); the counts of the others start again.
 */
static void expire(struct top_collector *c)
{
	size_t out = 0, exited = 0;

	for (size_t i = c->nprocs; i-- > 0;)
		exited += c->procs[i].exited;
	for (size_t i = 0; i < c->nprocs; i++) {
		struct tproc *p = &c->procs[i];

		if (p->exited && top_counts_any(&p->acc))
			p->quiet = 0;
		else if (p->exited)
			p->quiet++;
		pid_index_set(&c->pids, p->pid, 0);
		if (p->exited && (p->quiet > EXITED_KEEP || exited > EXITED_MAX)) {
			exited--;
			continue;
		}
		memset(&p->acc, 0, sizeof(p->acc));
		c->procs[out++] = *p;
	}
	c->nprocs = out;
	/* The newest record of a pid is the one found (a pid may have been reused). */
	for (size_t i = 0; i < c->nprocs; i++)
		pid_index_set(&c->pids, c->procs[i].pid, i + 1);
	memset(&c->overflow.acc, 0, sizeof(c->overflow.acc));
}

static void drops_out(struct top_collector *c, struct top_sample *out)
{
	uint64_t now[DROP_COUNTERS];

	tracer_read_drops(c->tracer, now);
	for (int i = 0; i < DROP_COUNTERS; i++)
		out->drops[i] = top_grew(now[i], c->drops[i]);
	memcpy(c->drops, now, sizeof(now));
}

int top_collect(struct top_collector *c, struct top_sample *out)
{
	uint64_t now;
	int err = 0;

	memset(out, 0, sizeof(*out));
	/*
	 * The groups the last sample did not show leave (the caller is done with it): a cgroup
	 * made and removed for each job or container would otherwise keep ~1 KiB for good.
	 */
	who_forget(c, c->refreshes);
	c->refreshes++;
	/*
	 * The bound of this sample's block counts (docs/json.md), read before anything is: a
	 * request whose completion was stamped before it added to the generation of per-file
	 * records that top_read_file_blocks switches away from (a completion reads the
	 * generation before the clock, bpf/block.bpf.c), and that switch waits until every CPU
	 * has left any program; the per-process and per-disk records are read in place after
	 * it (top_read_blocks), so they hold it too.
	 */
	out->block_until_ns = now_ns();
	tracer_poll_events(c->tracer); /* exits first: their last counts are this interval's */
	/* Requests over whose completion the kernel skipped: this interval's, not a later one's. */
	tracer_sweep_blocks(c->tracer);
	/* In this order: top_read_blocks after top_read_file_blocks' wait (above). */
	if (read_slots(c) || top_read_files(c) || top_read_file_blocks(c) || top_read_blocks(c) ||
	    top_read_urings(c) || procs_out(c, out) || top_files_out(c, out))
		err = -ENOMEM;
	now = now_ns();
	out->seconds = (now - c->last_ns) / 1e9;
	out->end_ns = now;
	c->last_ns = now;
	out->total = c->total;
	out->disks = c->disks;
	out->ndisks = c->ndisks;
	c->disks = NULL;
	c->ndisks = 0;
	memset(&c->total, 0, sizeof(c->total));
	drops_out(c, out);
	out->timing = tracer_timing(c->tracer);
	out->page_cache_missing = tracer_hooks_missing(c->tracer, HOOKS_PAGE_CACHE);
	out->uring_missing = tracer_hooks_missing(c->tracer, HOOKS_URING);
	expire(c);
	top_prune_names(c);
	if (err || c->error || c->follow.error) {
		top_sample_free(out);
		return -1;
	}
	return 0;
}
