// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collect.h"
#include "collect_impl.h"
#include "follow.h"
#include "model/files.h"
#include "model/names.h"
#include "model/uring.h"
#include "util/cgroup.h"
#include "util/container.h"
#include "util/vec.h"

struct collector {
	struct tracer *tracer;
	struct follow follow;   /* the slot table and the ledger, followed (follow.h) */
	struct proc_record *procs;
	size_t nprocs, cap;
	struct pid_index pids;  /* pid -> its newest record */
	uint32_t *rec_of_slot;  /* slot -> index + 1 of the record of its process, 0: none yet */
	collector_retire_fn on_retire; /* a process leaves its slot (--trace, --stacks) */
	void *retire_ctx;
	struct dense_profile scratch; /* one slot's counters while they are summed */
	struct proc_record other; /* files of I/O no traced process caused (owner 0) */
	struct names *names;      /* every file name the kernel side recorded (the engine's) */
	uint64_t ticks;
	int error;              /* first allocation failure */
};

struct collector *collector_new(struct names *names)
{
	struct collector *c = calloc(1, sizeof(struct collector));

	if (c)
		c->names = names;
	return c;
}

static void take_row(uint32_t slot, const struct slot_proc *row, void *ctx);
static void give_entry(const struct ledger_entry *e, void *ctx);

int collector_start(struct collector *c, struct tracer *t)
{
	c->tracer = t;
	follow_start(&c->follow, t, take_row, give_entry, c);
	c->rec_of_slot = calloc(MAX_SLOTS, sizeof(*c->rec_of_slot));
	return !pid_index_init(&c->pids, tracer_pid_max(t)) && c->rec_of_slot ? 0 : -ENOMEM;
}

void collector_on_retire(struct collector *c, collector_retire_fn fn, void *ctx)
{
	c->on_retire = fn;
	c->retire_ctx = ctx;
}

static void free_procs(struct proc_record *procs, size_t n)
{
	struct run_result r = { .procs = procs, .nprocs = n };

	run_result_free(&r);
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	free_procs(c->procs, c->nprocs);
	files_free(&c->other);
	pid_index_free(&c->pids);
	free(c->rec_of_slot);
	free(c);
}

static struct proc_record *collector_find(struct collector *c, pid_t pid)
{
	uint32_t i = pid > 0 ? pid_index_of(&c->pids, pid) : 0;

	return i ? &c->procs[i - 1] : NULL;
}

static struct proc_record *new_record(struct collector *c, pid_t pid, pid_t ppid, uint32_t slot)
{
	struct proc_record *p = pid <= 0 ? NULL
				: pid_index_add(&c->pids, &c->procs, &c->nprocs, &c->cap,
						sizeof(*p), pid, &c->error);

	if (!p)
		return NULL;
	p->pid = pid;
	p->ppid = ppid;
	p->slot = slot;
	p->overflow = slot == OVERFLOW_SLOT;
	if (slot > OVERFLOW_SLOT && slot < MAX_SLOTS)
		c->rec_of_slot[slot] = c->nprocs;
	return p;
}

static void set_args(struct proc_record *p, const char *args, size_t len)
{
	char *s = malloc(len + 1);

	if (!s)
		return;
	memcpy(s, args, len);
	s[len] = '\0';
	/* argv arrives NUL-separated; a trailing NUL ends the last argument. */
	while (len && s[len - 1] == '\0')
		len--;
	for (size_t i = 0; i < len; i++)
		if (s[i] == '\0')
			s[i] = ' ';
	free(p->args);
	p->args = s;
}

int collector_add_root(struct collector *c, pid_t pid, pid_t ppid, uint32_t slot,
		       const char *comm, const char *args, uint64_t start_ns)
{
	struct ns_ids ns;
	/* Its cgroup now: -p's process may never exec or exit while traced. */
	struct slot_proc row = { .pid = pid, .ppid = ppid, .start_ns = start_ns,
				 .cgroup = cgroup_id_of_pid(pid) };
	struct proc_record *p = new_record(c, pid, ppid, slot);

	if (!p)
		return -ENOMEM;
	strncpy(p->comm, comm, sizeof(p->comm) - 1);
	if (args)
		set_args(p, args, strlen(args));
	p->start_ns = start_ns;
	p->cgroup = row.cgroup;
	if (row.cgroup)
		cgroup_note(row.cgroup);
	if (!proc_namespaces(pid, &ns)) {
		p->mnt_ns = row.mnt_ns = ns.mnt;
		p->pid_ns = row.pid_ns = ns.pid;
	}
	/* The kernel's row too: children forked before an exec take their command line. */
	memcpy(row.comm, p->comm, sizeof(row.comm));
	row.args_len = args ? strlen(args) : 0;
	if (row.args_len > ARGS_LEN)
		row.args_len = ARGS_LEN;
	if (args)
		memcpy(row.args, args, row.args_len);
	return tracer_start_slot(c->tracer, slot, &row) ? -EINVAL : 0;
}

/* Ledger entries read from the kernel, each added to its process's record of the file. */
/* A ledger entry's counters into its process's record of the file (tracer_*_files' fn). */
static void give_entry(const struct ledger_entry *e, void *ctx)
{
	struct collector *c = ctx;
	struct proc_record *p = collector_find(c, e->st.key.owner);

	/* Owner 0: an entry recycled, or made by a CPU that then found the key taken. */
	if (p && files_add_entry(p, e))
		c->error = -ENOMEM;
}

/* An exited process's ledger entries leave the kernel (room for new ones). */
static void take_files(struct collector *c, struct proc_record *p)
{
	if (follow_take_files(&c->follow, p->pid))
		return;
	/* Its bitmaps are final: count them now and keep only the numbers. */
	files_count_readahead(p);
}

/* A per-file block record goes to its process's file; owner 0's to the other I/O's rows. */
static void give_file_block(const struct file_block_key *key, const struct file_block_stat *st,
			    void *ctx)
{
	struct collector *c = ctx;
	struct proc_record *p = key->owner ? collector_find(c, key->owner) : NULL;
	struct file_block_key k = *key;

	struct file_record *f;

	if (!p) {
		/* Untraced processes' files stay together, apart from the metadata. */
		p = &c->other;
		k.fdev = k.ino ? k.disk : 0;
		k.ino = k.ino ? OTHER_FILES_INO : 0;
		k.igen = 0;
	}
	if (files_add_block(p, &k, st))
		c->error = -ENOMEM;
	if (p == &c->other && k.ino &&
	    (f = files_get(p, &(struct path_key){ .dev = k.fdev, .ino = k.ino })))
		f->kind = FK_METADATA;
}

/* Every this many ticks, the per-file block table changes generation and is read. */
#define FILE_BLOCK_TICKS 20

int collector_tick(struct collector *c)
{
	int ms = follow_tick(&c->follow);

	if ((++c->ticks % FILE_BLOCK_TICKS == 0 || tracer_file_blocks_filling(c->tracer)) &&
	    tracer_take_file_blocks(c->tracer, false, give_file_block, c))
		c->error = -ENOMEM;
	return ms;
}

void collector_for_each_live(struct collector *c, collector_live_fn fn, void *ctx)
{
	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].slot > OVERFLOW_SLOT && !c->procs[i].exit_seen)
			fn(c->procs[i].pid, c->procs[i].slot, ctx);
}

/* Sums a slot's counters (and zeroes them in the kernel) into a compact profile. */
static int harvest(struct collector *c, uint32_t slot, struct profile *out)
{
	dense_reset(&c->scratch);
	tracer_read_slot(c->tracer, slot, &c->scratch, true);
	dense_finish_io(&c->scratch);
	return dense_to_profile(&c->scratch, out);
}

/* The process leaves its slot: its last counts taken, the slot given back. */
static void retire(struct collector *c, struct proc_record *p)
{
	if (p->slot > OVERFLOW_SLOT) {
		if (harvest(c, p->slot, &p->prof))
			c->error = -ENOMEM;
		if (c->on_retire)
			c->on_retire(p->pid, p->slot, c->retire_ctx);
		if (p->slot < MAX_SLOTS)
			c->rec_of_slot[p->slot] = 0;
		tracer_release_slot(c->tracer, p->slot);
	}
	p->slot = 0;
}

static void exited(struct collector *c, struct proc_record *p, int status, uint64_t end_ns)
{
	p->exit_seen = true;
	p->exit_status = status;
	p->end_ns = end_ns;
	retire(c, p);
	take_files(c, p);
}

/* A command line from the kernel, unless the record has it already (no copy per look). */
static void update_args(struct proc_record *p, const char *args, size_t len)
{
	struct proc_record now = { 0 };

	if (!len)
		return;
	set_args(&now, args, len);
	if (now.args && (!p->args || strcmp(now.args, p->args))) {
		free(p->args);
		p->args = now.args;
	} else {
		free(now.args);
	}
}

/*
 * The process in slot as the kernel's slot table has it now (bpf/proc.bpf.c; read by
 * follow_slot): its record made when this is the first the loader hears of it, its name and
 * command line, and when it has exited, its last counts taken and the slot given back.
 */
static void take_row(uint32_t slot, const struct slot_proc *row, void *ctx)
{
	struct collector *c = ctx;
	struct proc_record *p;

	if (c->rec_of_slot[slot]) {
		p = &c->procs[c->rec_of_slot[slot] - 1];
	} else {
		uint32_t newest = pid_index_of(&c->pids, row->pid);

		p = new_record(c, row->pid, row->ppid, slot);
		if (!p)
			return;
		p->start_ns = row->start_ns;
		/* Made late (its notices were lost) for a pid a newer process has since: the
		 * pid's files stay that one's. */
		if (newest && c->procs[newest - 1].start_ns > row->start_ns)
			pid_index_set(&c->pids, row->pid, newest);
	}
	memcpy(p->comm, row->comm, sizeof(p->comm));
	update_args(p, row->args, row->args_len);
	if (row->mnt_ns) {
		p->mnt_ns = row->mnt_ns;
		p->pid_ns = row->pid_ns;
	}
	if (row->cgroup && row->cgroup != p->cgroup) {
		struct container_info info;

		p->cgroup = row->cgroup;
		cgroup_note(row->cgroup); /* its path, while the cgroup exists */
		/*
		 * Its runtime asked now, in the background, while the container exists: one
		 * run with --rm is gone by the report, and its runtime no longer knows it.
		 */
		container_of_path(cgroup_path_of(row->cgroup), &info);
	}
	if (row->state == SP_EXITED)
		exited(c, p, row->exit_code, row->end_ns);
}

/*
 * At the end, once the programs are detached: every row is final, but one a program was
 * writing as it was detached may still be odd for a moment (a stopped vCPU): tried again
 * for up to a second.
 */
static void sync_all_slots_final(struct collector *c)
{
	for (int ms = 0; ms < 1000; ms++) {
		follow_sync_all(&c->follow);
		if (!c->follow.rescan)
			return;
		usleep(1000);
	}
}

/*
 * A process in the overflow slot has no row in the table: its events are all the loader
 * learns of it (its counts are the overflow slot's, which nothing loses).
 */
static void on_overflow_event(struct collector *c, const struct iot_proc_event *e, size_t size)
{
	struct proc_record *p = e->kind == EV_FORK ? NULL : collector_find(c, e->pid);
	struct proc_record *parent;

	if (!p) {
		p = new_record(c, e->pid, e->ppid, e->slot);
		if (!p)
			return;
		p->start_ns = e->ts_ns;
		/* Found after new_record, which may move every record (realloc). */
		parent = collector_find(c, e->ppid);
		/* Until it execs, a forked child runs its parent's program. */
		if (parent && parent->args)
			set_args(p, parent->args, strlen(parent->args));
	}
	memcpy(p->comm, e->comm, sizeof(p->comm));
	p->comm[COMM_LEN - 1] = '\0';
	if (e->kind == EV_EXEC && size >= sizeof(struct iot_exec_event) && e->args_len)
		update_args(p, ((const struct iot_exec_event *)e)->args,
			    e->args_len < ARGS_LEN ? e->args_len : ARGS_LEN);
	if (e->kind == EV_EXIT)
		exited(c, p, e->exit_code, e->ts_ns);
}

int collector_on_event(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	const struct iot_proc_event *e = data;

	if (size < sizeof(*e))
		return 0;
	if (e->kind == EV_LEDGER_FULL)
		return 0; /* the engine's to act on */
	if (e->slot > OVERFLOW_SLOT && e->slot < MAX_SLOTS)
		follow_slot(&c->follow, e->slot);
	else
		on_overflow_event(c, e, size);
	return 0;
}

/*
 * Gives each process the entries still in the kernel (those of exited processes and idle
 * files were taken on the way), the last names and per-file block records, then resolves
 * every file's name and its residency now, at the end.
 */
static int attach_files(struct collector *c)
{
	struct residency_memo *memo = NULL;

	if (tracer_read_files(c->tracer, give_entry, c))
		return -ENOMEM;
	if (tracer_take_file_blocks(c->tracer, true, give_file_block, c))
		return -ENOMEM;
	tracer_unseen_file_blocks(c->tracer, give_file_block, c);
	for (size_t i = 0; i < c->nprocs; i++)
		for (size_t j = 0; j < c->procs[i].nfiles; j++)
			if (collect_resolve_file(c->names, &memo, &c->procs[i].files[j]))
				c->error = -ENOMEM;
	collect_residency_free(&memo);
	return 0;
}

/* Block records go to their process; owner 0 (and unknown owners) to "other I/O". */
static int attach_blocks(struct collector *c, struct run_result *r)
{
	struct block_record *recs, *unseen, *rec;
	size_t n, nunseen;
	int err = 0;

	if (tracer_read_blocks(c->tracer, &recs, &n))
		return -ENOMEM;
	/* Traced requests still in flight now completed unseen: count them, and say so. */
	if (tracer_read_charged_inflight(c->tracer, &unseen, &nunseen) ||
	    block_add_unseen(&recs, &n, unseen, nunseen))
		err = -ENOMEM;
	r->drops[DROP_BLOCK_UNSEEN] += nunseen;
	free(unseen);
	for (size_t i = 0; i < n; i++) {
		struct proc_record *p = recs[i].key.owner ? collector_find(c, recs[i].key.owner)
							  : NULL;

		rec = p ? VEC_PUSH(p->blocks, p->nblocks) : VEC_PUSH(r->other_blocks, r->nother_blocks);
		if (rec)
			*rec = recs[i];
		else
			err = -ENOMEM;
	}
	free(recs);
	return err;
}

/* io_uring records go to their process (the ring owner's); the run's totals by opcode. */
static int attach_urings(struct collector *c, struct run_result *r)
{
	struct uring_record *recs, *rec;
	size_t n;
	int err = 0;

	if (tracer_read_urings(c->tracer, &recs, &n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct proc_record *p = collector_find(c, recs[i].key.owner);

		if (uring_add_by_op(&r->uring_totals, &r->nuring_totals, &recs[i]))
			err = -ENOMEM;
		if (p && (rec = VEC_PUSH(p->urings, p->nurings)))
			*rec = recs[i];
		else if (p)
			err = -ENOMEM;
	}
	free(recs);
	return err;
}

/* The totals of every process and of the overflow slot. */
static int sum_totals(struct collector *c, struct run_result *r)
{
	struct dense_profile *sum = &c->scratch;

	if (harvest(c, OVERFLOW_SLOT, &r->overflow))
		return -ENOMEM;
	r->overflow_used = r->overflow.nrows > 0;
	dense_reset(sum);
	for (size_t i = 0; i < c->nprocs; i++)
		dense_add(sum, &c->procs[i].prof);
	dense_add(sum, &r->overflow);
	return dense_to_profile(sum, &r->totals) ? -ENOMEM : 0;
}

int collector_finish(struct collector *c, struct run_result *r)
{
	struct tracer *t = c->tracer;
	int err = 0;

	/* Every slot against the table, then the processes still running at the end. */
	sync_all_slots_final(c);
	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].slot > OVERFLOW_SLOT)
			retire(c, &c->procs[i]);
	if (sum_totals(c, r))
		err = -ENOMEM;
	tracer_read_drops(t, r->drops);
	if (attach_files(c) || attach_blocks(c, r) || attach_urings(c, r))
		err = -ENOMEM;
	r->nr_slots = tracer_nr_slots(t);
	r->sampled = tracer_sampled(t);
	r->page_cache_missing = tracer_hooks_missing(t, HOOKS_PAGE_CACHE);
	r->direct_io_missing = tracer_hooks_missing(t, HOOKS_DIRECT_IO);
	r->uring_missing = tracer_hooks_missing(t, HOOKS_URING);
	r->kernel = malloc(sizeof(*r->kernel));
	if (r->kernel)
		tracer_describe(t, r->kernel);
	else
		err = -ENOMEM;
	r->procs = c->procs;
	r->nprocs = c->nprocs;
	r->other_files = c->other;
	memset(&c->other, 0, sizeof(c->other));
	c->procs = NULL;
	c->nprocs = c->cap = 0;
	if (collect_containers(r) || disk_table_read(&r->disks))
		err = -ENOMEM;
	return err ? err : c->error ? c->error : c->follow.error;
}
