// SPDX-License-Identifier: GPL-2.0
/*
 * top's refresh policy (the engine's): each refresh's sample made of the parts (the
 * processes and their syscall counters: top_procs.c; block and io_uring records:
 * top_blocks.c; the per-file side: top_files.c), with each group's container; exited
 * processes' records kept a while.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "top_collect.h"
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
	struct top_collector *c = calloc(1, sizeof(struct top_collector));

	if (c && !(c->procs = procs_new(&top_proc_hooks, c))) {
		free(c);
		return NULL;
	}
	return c;
}

int top_collector_start(struct top_collector *c, struct tracer *t,
			const struct cgroup_ref *cgroups, uint32_t ncgroups)
{
	c->tracer = t;
	c->cgroups = cgroups;
	c->ncgroups = ncgroups;
	procs_start(c->procs, t, top_give_entry);
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
	procs_free(c->procs);
	top_files_free(c);
	free(c->blocks);
	free(c->urings);
	free(c->disks);
	who_free(c);
	free(c);
}

int top_tick(struct top_collector *c)
{
	return procs_tick(c->procs);
}

/* ---- the sample ---- */

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

static void proc_out(struct top_collector *c, const struct proc *p, const struct tproc *d,
		     struct top_proc *out)
{
	const struct group_who *w;

	out->pid = p->pid;
	out->ppid = p->ppid;
	memcpy(out->comm, p->comm, sizeof(out->comm));
	out->cgroup = p->cgroup ? cgroup_group_path(c->cgroups, c->ncgroups, p->cgroup)
			      : NULL;
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
	out->c = d->acc;
}

/* Live processes and those with counts in the interval (exited ones' last counts). */
static int procs_out(struct top_collector *c, struct top_sample *out)
{
	/* The overflow slot's processes together, in one row. */
	static const struct proc overflow = { .overflow = true };
	size_t n = procs_count(c->procs);

	out->procs = calloc(n + 1, sizeof(*out->procs));
	if (!out->procs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct proc *p = procs_at(c->procs, i);
		const struct tproc *d = top_data(c, p);

		if (!p->exited)
			out->live++;
		if (!p->exited || top_counts_any(&d->acc))
			proc_out(c, p, d, &out->procs[out->nprocs++]);
	}
	if (top_counts_any(&c->overflow.acc))
		proc_out(c, &overflow, &c->overflow, &out->procs[out->nprocs++]);
	return 0;
}

/* Whether a record stays past this refresh (expire's keep), its counts started again. */
static bool keep_proc(struct proc *p, void *data, void *ctx)
{
	size_t *exited = ctx;
	struct tproc *d = data;

	if (p->exited && top_counts_any(&d->acc))
		d->quiet = 0;
	else if (p->exited)
		d->quiet++;
	if (p->exited && (d->quiet > EXITED_KEEP || *exited > EXITED_MAX)) {
		--*exited;
		return false;
	}
	memset(&d->acc, 0, sizeof(d->acc));
	return true;
}

/*
 * The records of processes that exited and were quiet for EXITED_KEEP refreshes leave
 * (fewer when there are many); the counts of the others start again.
 */
static void expire(struct top_collector *c)
{
	size_t exited = 0;

	for (size_t i = 0; i < procs_count(c->procs); i++)
		exited += procs_at(c->procs, i)->exited;
	procs_keep(c->procs, keep_proc, &exited);
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

int top_collect(struct top_collector *c, struct names *names, struct top_sample *out)
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
	if (top_read_slots(c) || top_read_files(c) || top_read_file_blocks(c) || top_read_blocks(c) ||
	    top_read_urings(c) || procs_out(c, out) || top_files_out(c, names, out))
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
	if (err || c->error || procs_error(c->procs)) {
		top_sample_free(out);
		return -1;
	}
	return 0;
}
