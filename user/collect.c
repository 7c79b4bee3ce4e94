// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collect.h"

struct collector {
	struct tracer *tracer;
	uint32_t pid_max;
	struct proc_record *procs;
	size_t nprocs, cap;
	uint32_t *index_of_pid; /* pid -> index + 1 of its newest record, 0 when none */
	struct dense_profile scratch; /* one slot's counters while they are summed */
	int error;              /* first allocation failure */
};

struct collector *collector_new(void)
{
	return calloc(1, sizeof(struct collector));
}

int collector_start(struct collector *c, struct tracer *t)
{
	c->tracer = t;
	c->pid_max = tracer_pid_max(t);
	/* calloc of a large array maps zero pages lazily: only pids seen cost memory. */
	c->index_of_pid = calloc(c->pid_max, sizeof(*c->index_of_pid));
	return c->index_of_pid ? 0 : -ENOMEM;
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
	free(c->index_of_pid);
	free(c);
}

static struct proc_record *collector_find(struct collector *c, pid_t pid)
{
	uint32_t i;

	if (pid <= 0 || (uint32_t)pid >= c->pid_max)
		return NULL;
	i = c->index_of_pid[pid];
	return i ? &c->procs[i - 1] : NULL;
}

static struct proc_record *new_record(struct collector *c, pid_t pid, pid_t ppid, uint32_t slot)
{
	struct proc_record *p;

	if (pid <= 0 || (uint32_t)pid >= c->pid_max)
		return NULL;
	if (c->nprocs == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct proc_record *grown = realloc(c->procs, cap * sizeof(*grown));

		if (!grown) {
			c->error = -ENOMEM;
			return NULL;
		}
		c->procs = grown;
		c->cap = cap;
	}
	p = &c->procs[c->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->ppid = ppid;
	p->slot = slot;
	p->overflow = slot == OVERFLOW_SLOT;
	c->index_of_pid[pid] = c->nprocs;
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
	struct proc_record *p = new_record(c, pid, ppid, slot);

	if (!p)
		return -ENOMEM;
	strncpy(p->comm, comm, sizeof(p->comm) - 1);
	if (args)
		set_args(p, args, strlen(args));
	p->start_ns = start_ns;
	return 0;
}

/* Moves an exited process's page-cache records out of the kernel (room for new ones). */
static void take_files(struct collector *c, struct proc_record *p)
{
	struct file_record *recs, *grown;
	size_t n;

	if (tracer_take_files(c->tracer, p->pid, &recs, &n) || !n)
		return;
	grown = realloc(p->files, (p->nfiles + n) * sizeof(*grown));
	if (!grown) {
		c->error = -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			free(recs[i].path);
			free(recs[i].bits.chunks);
		}
		free(recs);
		return;
	}
	/* The bitmaps are counted now: only the numbers stay until the end. */
	for (size_t i = 0; i < n; i++)
		model_derive_file(&recs[i]);
	memcpy(grown + p->nfiles, recs, n * sizeof(*recs));
	p->files = grown;
	p->nfiles += n;
	free(recs);
}

/* Reads the slot's counters into the record and gives the slot back to the kernel. */
/* Sums a slot's counters (and zeroes them in the kernel) into a compact profile. */
static int harvest(struct collector *c, uint32_t slot, struct profile *out)
{
	dense_reset(&c->scratch);
	tracer_read_slot(c->tracer, slot, &c->scratch, true);
	dense_finish_io(&c->scratch);
	return dense_to_profile(&c->scratch, out);
}

static void retire(struct collector *c, struct proc_record *p)
{
	if (p->slot > OVERFLOW_SLOT) {
		if (harvest(c, p->slot, &p->prof))
			c->error = -ENOMEM;
		tracer_release_slot(c->tracer, p->slot);
	}
	p->slot = 0;
}

static void on_fork(struct collector *c, const struct iot_proc_event *e)
{
	struct proc_record *parent = collector_find(c, e->ppid);
	struct proc_record *p = new_record(c, e->pid, e->ppid, e->slot);

	if (!p)
		return;
	memcpy(p->comm, e->comm, sizeof(p->comm));
	p->comm[COMM_LEN - 1] = '\0';
	p->start_ns = e->ts_ns;
	/* Until it execs, a forked child runs its parent's program. */
	if (parent && parent->args)
		set_args(p, parent->args, strlen(parent->args));
}

int collector_on_event(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	const struct iot_proc_event *e = data;
	struct proc_record *p;

	if (size < sizeof(*e))
		return 0;
	if (e->kind == EV_FORK) {
		on_fork(c, e);
		return 0;
	}
	p = collector_find(c, e->pid);
	if (!p) {
		/* Its fork event was lost: start the record from what this event says. */
		p = new_record(c, e->pid, e->ppid, e->slot);
		if (!p)
			return 0;
	}
	switch (e->kind) {
	case EV_EXEC:
		if (e->args_len)
			set_args(p, e->args, e->args_len < ARGS_LEN ? e->args_len : ARGS_LEN);
		/* fallthrough */
	case EV_COMM:
		memcpy(p->comm, e->comm, sizeof(p->comm));
		p->comm[COMM_LEN - 1] = '\0';
		break;
	case EV_EXIT:
		p->exit_seen = true;
		p->exit_status = e->exit_code;
		p->end_ns = e->ts_ns;
		retire(c, p);
		take_files(c, p);
		break;
	}
	return 0;
}

static char *full_path(uint32_t kdev, const char *rel)
{
	const char *mnt = mount_point_of(kdev);
	char *path;

	if (!mnt || !rel)
		return NULL;
	if (asprintf(&path, "%s/%s", strcmp(mnt, "/") ? mnt : "", rel) < 0)
		return NULL;
	return path;
}

/* Moves one file record to its process (by owner); false when it has none. */
static bool give_file(struct collector *c, struct file_record *f)
{
	struct proc_record *p = collector_find(c, f->st.key.owner);
	struct file_record *grown;

	/* Empty (owner 0): recycled, or allocated by a CPU that then found it taken. */
	if (!f->st.key.owner || !p)
		return false;
	grown = realloc(p->files, (p->nfiles + 1) * sizeof(*grown));
	if (!grown) {
		c->error = -ENOMEM;
		return false;
	}
	model_derive_file(f);
	p->files = grown;
	p->files[p->nfiles++] = *f;
	return true;
}

/* Full path (mount point + path below it) and residency of every file, read now. */
static void resolve_files(struct collector *c)
{
	for (size_t i = 0; i < c->nprocs; i++)
		for (size_t j = 0; j < c->procs[i].nfiles; j++) {
			struct file_record *f = &c->procs[i].files[j];
			char *path = full_path(f->st.key.dev, f->path);
			struct residency res;

			free(f->path);
			f->path = path;
			f->residency_missing = residency_read(f->path, f->st.key.dev, f->st.key.ino,
							      &res);
			f->res = (struct residency_view){
				.resident_pages = res.cached_pages,
				.dirty_pages = res.dirty_pages,
				.writeback_pages = res.writeback_pages,
				.evicted_pages = res.evicted_pages,
				.recently_evicted_pages = res.recently_evicted_pages,
				.size_bytes = res.size_bytes,
			};
		}
}

/*
 * Gives each process the files it touched that are still in the kernel (those of exited
 * processes were taken at their exit), then resolves every file's path and its residency
 * now, at the end.
 */
static int attach_files(struct collector *c)
{
	struct file_record *recs;
	size_t n;

	if (tracer_read_files(c->tracer, &recs, &n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!give_file(c, &recs[i])) {
			free(recs[i].path);
			free(recs[i].bits.chunks);
		}
	free(recs);
	resolve_files(c);
	return 0;
}

/* Block records go to their process; owner 0 (and unknown owners) to "other I/O". */
static int attach_blocks(struct collector *c, struct run_result *r)
{
	struct block_record *recs, *unseen, **list, *grown;
	size_t n, nunseen, *count;
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

		list = p ? &p->blocks : &r->other_blocks;
		count = p ? &p->nblocks : &r->nother_blocks;
		grown = realloc(*list, (*count + 1) * sizeof(*grown));
		if (!grown)
			continue;
		grown[(*count)++] = recs[i];
		*list = grown;
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

	/* Processes whose exit event is missing or still running at the end. */
	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].slot > OVERFLOW_SLOT && tracer_slot_in_use(t, c->procs[i].slot))
			retire(c, &c->procs[i]);
	if (sum_totals(c, r))
		err = -ENOMEM;
	tracer_read_drops(t, r->drops);
	if (attach_files(c) || attach_blocks(c, r))
		err = -ENOMEM;
	r->nr_slots = tracer_nr_slots(t);
	r->page_cache_missing = tracer_hooks_missing(t, HOOKS_PAGE_CACHE);
	r->direct_io_missing = tracer_hooks_missing(t, HOOKS_DIRECT_IO);
	r->procs = c->procs;
	r->nprocs = c->nprocs;
	c->procs = NULL;
	c->nprocs = c->cap = 0;
	if (model_derive(r))
		err = -ENOMEM;
	return err ? err : c->error;
}
