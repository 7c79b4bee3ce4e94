// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collect.h"
#include "collect_impl.h"
#include "procs.h"
#include "model/files.h"
#include "model/names.h"
#include "model/uring.h"
#include "util/cgroup.h"
#include "util/container.h"
#include "util/vec.h"

struct collector {
	struct tracer *tracer;
	struct proc_table *procs; /* every process seen, and its proc_record (procs.h) */
	collector_retire_fn on_retire; /* a process leaves its slot (--trace, --stacks) */
	void *retire_ctx;
	struct dense_profile scratch; /* one slot's counters while they are summed */
	struct proc_record other; /* files of I/O no traced process caused (owner 0) */
	struct names *names;      /* every file name the kernel side recorded (the engine's) */
	uint64_t ticks;
	int error;              /* first allocation failure */
};

static const struct proc_hooks run_hooks;
static void give_entry(const struct ledger_entry *e, void *ctx);

struct collector *collector_new(struct names *names)
{
	struct collector *c = calloc(1, sizeof(struct collector));

	if (c && !(c->procs = procs_new(&run_hooks, c))) {
		free(c);
		return NULL;
	}
	if (c)
		c->names = names;
	return c;
}

int collector_start(struct collector *c, struct tracer *t)
{
	c->tracer = t;
	procs_start(c->procs, t, give_entry);
	return 0;
}

void collector_on_retire(struct collector *c, collector_retire_fn fn, void *ctx)
{
	c->on_retire = fn;
	c->retire_ctx = ctx;
}

void collector_free(struct collector *c)
{
	size_t n;
	struct run_result r = { 0 };

	if (!c)
		return;
	r.procs = procs_take_data(c->procs, &n);
	r.nprocs = r.procs ? n : 0;
	run_result_free(&r);
	procs_free(c->procs);
	files_free(&c->other);
	free(c);
}

/* The run's record of pid (its newest process's), or NULL. */
static struct proc_record *collector_find(struct collector *c, pid_t pid)
{
	struct proc *p = pid > 0 ? procs_find(c->procs, pid) : NULL;

	return p ? procs_data(c->procs, p) : NULL;
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
	struct proc *h = pid > 0 ? procs_add(c->procs, pid, ppid, slot, start_ns) : NULL;
	struct proc_record *p = h ? procs_data(c->procs, h) : NULL;

	if (!p)
		return -ENOMEM;
	p->pid = pid;
	strncpy(h->comm, comm, sizeof(h->comm) - 1);
	if (args)
		set_args(p, args, strlen(args));
	h->cgroup = row.cgroup;
	if (row.cgroup)
		cgroup_note(row.cgroup);
	if (!proc_namespaces(pid, &ns)) {
		p->mnt_ns = row.mnt_ns = ns.mnt;
		p->pid_ns = row.pid_ns = ns.pid;
	}
	/* The kernel's row too: children forked before an exec take their command line. */
	memcpy(row.comm, h->comm, sizeof(row.comm));
	row.args_len = args ? strlen(args) : 0;
	if (row.args_len > ARGS_LEN)
		row.args_len = ARGS_LEN;
	if (args)
		memcpy(row.args, args, row.args_len);
	return tracer_start_slot(c->tracer, slot, &row) ? -EINVAL : 0;
}

/* A ledger entry's counters into its process's record of the file (tracer_*_files' fn). */
static void give_entry(const struct ledger_entry *e, void *ctx)
{
	struct collector *c = ctx;
	struct proc_record *p = collector_find(c, e->st.key.owner);

	/* Owner 0: an entry recycled, or made by a CPU that then found the key taken. */
	if (p && files_add_entry(p, e))
		c->error = -ENOMEM;
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
	int ms = procs_tick(c->procs);

	if ((++c->ticks % FILE_BLOCK_TICKS == 0 || tracer_file_blocks_filling(c->tracer)) &&
	    tracer_take_file_blocks(c->tracer, false, give_file_block, c))
		c->error = -ENOMEM;
	return ms;
}

void collector_for_each_live(struct collector *c, collector_live_fn fn, void *ctx)
{
	for (size_t i = 0; i < procs_count(c->procs); i++) {
		struct proc *p = procs_at(c->procs, i);

		if (p->slot > OVERFLOW_SLOT && !p->exited)
			fn(p->pid, p->slot, ctx);
	}
}

/* Sums a slot's counters (and zeroes them in the kernel) into a compact profile. */
static int harvest(struct collector *c, uint32_t slot, struct profile *out)
{
	dense_reset(&c->scratch);
	tracer_read_slot(c->tracer, slot, &c->scratch, true);
	dense_finish_io(&c->scratch);
	return dense_to_profile(&c->scratch, out);
}

/* The process leaves its slot (procs.c gives the slot back): its last counts taken. */
static void run_retire(struct proc *h, void *data, void *ctx)
{
	struct collector *c = ctx;
	struct proc_record *p = data;

	if (harvest(c, h->slot, &p->prof))
		c->error = -ENOMEM;
	if (c->on_retire)
		c->on_retire(h->pid, h->slot, c->retire_ctx);
}

/* An exited process's ledger entries are in: its bitmaps are final, only numbers kept. */
static void run_files_taken(struct proc *h, void *data, void *ctx)
{
	(void)h;
	(void)ctx;
	files_count_readahead(data);
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
 * A new record; one from an overflow slot's event (e), until the process execs, runs its
 * parent's program.
 */
static void run_made(struct proc *h, void *data, const struct iot_proc_event *e, void *ctx)
{
	struct collector *c = ctx;
	struct proc_record *p = data, *parent;

	p->pid = h->pid;
	p->ppid = h->ppid;
	parent = e ? collector_find(c, e->ppid) : NULL;
	if (parent && parent->args)
		set_args(p, parent->args, strlen(parent->args));
}

/* The process's row (bpf/proc.bpf.c): its command line and namespaces. */
static void run_row(struct proc *h, void *data, const struct slot_proc *row, void *ctx)
{
	struct proc_record *p = data;

	(void)h;
	(void)ctx;
	update_args(p, row->args, row->args_len);
	if (row->mnt_ns) {
		p->mnt_ns = row->mnt_ns;
		p->pid_ns = row->pid_ns;
	}
}

/* An overflow slot's process's event: an exec's command line. */
static void run_event(struct proc *h, void *data, const struct iot_proc_event *e, size_t size,
		      void *ctx)
{
	(void)h;
	(void)ctx;
	if (e->kind == EV_EXEC && size >= sizeof(struct iot_exec_event) && e->args_len)
		update_args(data, ((const struct iot_exec_event *)e)->args,
			    e->args_len < ARGS_LEN ? e->args_len : ARGS_LEN);
}

/* A process's new cgroup: its path noted, and its container asked, while they exist. */
static void run_cgroup(struct proc *h, void *data, bool own, void *ctx)
{
	struct container_info info;

	(void)data;
	(void)ctx;
	if (own)
		return;
	cgroup_note(h->cgroup); /* its path, while the cgroup exists */
	/*
	 * Its runtime asked now, in the background, while the container exists: one run with
	 * --rm is gone by the report, and its runtime no longer knows it.
	 */
	container_of_path(cgroup_path_of(h->cgroup), &info);
}

static const struct proc_hooks run_hooks = { .data_size = sizeof(struct proc_record),
	.made = run_made, .row = run_row, .event = run_event, .cgroup = run_cgroup,
	.retire = run_retire, .files_taken = run_files_taken };

/*
 * At the end, once the programs are detached: every row is final, but one a program was
 * writing as it was detached may still be odd for a moment (a stopped vCPU): tried again
 * for up to a second.
 */
static void sync_all_slots_final(struct collector *c)
{
	for (int ms = 0; ms < 1000; ms++) {
		procs_sync_all(c->procs);
		if (!procs_rescan_due(c->procs))
			return;
		usleep(1000);
	}
}

int collector_on_event(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	const struct iot_proc_event *e = data;

	if (size < sizeof(*e))
		return 0;
	if (e->kind == EV_LEDGER_FULL)
		return 0; /* the engine's to act on */
	procs_on_event(c->procs, e, size);
	return 0;
}

/*
 * Each record given what the table knows of its process (its name, slot, group, exit), once
 * every process has left its slot.
 */
static void fill_records(struct collector *c)
{
	for (size_t i = 0; i < procs_count(c->procs); i++) {
		struct proc *h = procs_at(c->procs, i);
		struct proc_record *p = procs_data(c->procs, h);

		p->pid = h->pid;
		p->ppid = h->ppid;
		memcpy(p->comm, h->comm, sizeof(p->comm));
		p->start_ns = h->start_ns;
		p->end_ns = h->end_ns;
		p->exit_seen = h->exited;
		p->exit_status = h->exit_code;
		p->overflow = h->overflow;
		p->slot = h->slot;
		p->cgroup = h->cgroup;
	}
}

/*
 * Gives each process the entries still in the kernel (those of exited processes and idle
 * files were taken on the way), the last names and per-file block records. Their names and
 * residency come later (collect_resolve_files), once the programs' maps are gone.
 */
static int attach_files(struct collector *c)
{
	if (tracer_read_files(c->tracer, give_entry, c))
		return -ENOMEM;
	if (tracer_take_file_blocks(c->tracer, true, give_file_block, c))
		return -ENOMEM;
	tracer_unseen_file_blocks(c->tracer, give_file_block, c);
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
	for (size_t i = 0; i < procs_count(c->procs); i++)
		dense_add(sum, &((struct proc_record *)procs_data(c->procs,
								  procs_at(c->procs, i)))->prof);
	dense_add(sum, &r->overflow);
	return dense_to_profile(sum, &r->totals) ? -ENOMEM : 0;
}

int collector_finish(struct collector *c, struct run_result *r)
{
	struct tracer *t = c->tracer;
	int err = 0;

	/* Every slot against the table, then the processes still running at the end. */
	sync_all_slots_final(c);
	for (size_t i = 0; i < procs_count(c->procs); i++)
		procs_retire(c->procs, procs_at(c->procs, i));
	fill_records(c);
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
	r->procs = procs_take_data(c->procs, &r->nprocs);
	r->other_files = c->other;
	memset(&c->other, 0, sizeof(c->other));
	if (collect_containers(r) || disk_table_read(&r->disks))
		err = -ENOMEM;
	return err ? err : c->error ? c->error : procs_error(c->procs);
}
