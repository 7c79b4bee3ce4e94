// SPDX-License-Identifier: GPL-2.0
/*
 * The run's story (docs/run-mode.md, "The first screen"): each layer's totals per process
 * and for the run, the processes ranked by I/O, and the run's files: every process's rows
 * of one path (of one file with --files-by file) in one row, with the pids that used it.
 */
#include <stdlib.h>
#include <string.h>
#include "file_use.h"
#include "files.h"
#include "sums.h"
#include "story.h"
#include "syscall_table.h"
#include "util/hash.h"

/* ---- layers ---- */

/* Syscalls, the read/write family (a copy on both sides), syncs, I/O time. */
static void story_syscalls(struct io_story *s, const struct profile *p)
{
	s->calls += p->calls;
	s->errors += p->errors;
	s->syscall_ns += p->total_ns;
	for (size_t i = 0; i < p->nrows; i++) {
		const struct syscall_info *c = syscall_info_of(p->rows[i].nr);
		bool sync = c && c->sync;

		s->sync_calls += sync ? p->rows[i].calls : 0;
		s->io_ns += sync || (c && c->io_kind != IO_NONE) ? p->rows[i].total_ns : 0;
	}
	for (int k = 1; k < IO_KINDS; k++) {
		const struct io_summary *io = p->io[k];
		const struct syscall_info *c = io ? io_kind_info(k) : NULL;
		bool reads = c && direction_reads(c->direction);
		bool writes = c && direction_writes(c->direction);

		if (!io)
			continue;
		s->read_calls += reads ? io->calls : 0;
		s->read_bytes += reads ? io->transferred_bytes : 0;
		s->write_calls += writes ? io->calls : 0;
		s->write_bytes += writes ? io->transferred_bytes : 0;
	}
}

static void story_page_cache(struct io_story *s, const struct page_cache_view *v)
{
	s->requested_pages += v->requested_pages;
	s->hit_pages += v->hit_pages;
	s->readahead_pages += v->readahead_pages;
	s->unused_readahead_pages += v->unused_readahead_pages;
}

static void story_uring(struct io_story *s, const struct uring_record *u, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		s->uring_ops += u[i].v.ops;
		s->uring_bytes += u[i].v.bytes;
	}
}

/* Disk bytes by direction, requests, and the p99 of every request summed into all. */
static void story_disk(struct io_story *s, struct block_record *all)
{
	block_record_derive(all);
	s->disk_requests = all->v.requests;
	s->disk_p99_ns = all->v.requests ? all->v.lat.p99 : STORY_NONE;
}

static void add_blocks(struct io_story *s, struct block_record *all,
		       const struct block_record *recs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		s->disk_read_bytes += recs[i].key.op == BOP_READ ? recs[i].v.bytes : 0;
		s->disk_write_bytes += recs[i].key.op == BOP_WRITE ? recs[i].v.bytes : 0;
		block_record_add(all, &recs[i]);
	}
}

/* Each process's story and the run's; -1 out of memory. */
static int stories(struct run_result *r)
{
	struct block_record *run_all = calloc(1, sizeof(*run_all));
	struct block_record *one = calloc(1, sizeof(*one));
	int err = run_all && one ? 0 : -1;

	memset(&r->story, 0, sizeof(r->story));
	for (size_t i = 0; i < r->nprocs && !err; i++) {
		struct proc_record *p = &r->procs[i];

		memset(&p->story, 0, sizeof(p->story));
		memset(one, 0, sizeof(*one));
		story_syscalls(&p->story, &p->prof);
		story_page_cache(&p->story, &p->pc.v);
		story_uring(&p->story, p->urings, p->nurings);
		add_blocks(&p->story, one, p->blocks, p->nblocks);
		add_blocks(&r->story, run_all, p->blocks, p->nblocks);
		story_disk(&p->story, one);
	}
	if (!err) {
		story_syscalls(&r->story, &r->totals);
		story_page_cache(&r->story, &r->pc.v);
		story_uring(&r->story, r->uring_totals, r->nuring_totals);
		story_disk(&r->story, run_all);
	}
	free(run_all);
	free(one);
	return err;
}

const char *story_field_unknown(const struct field *f, const struct io_story *s,
				const struct page_cache_view *pc, const struct run_result *r)
{
	if ((f->flags & FIELD_NEEDS_TIMING) && !r->timing)
		return "not timed (--no-time)";
	if ((f->flags & FIELD_NEEDS_PAGE_CACHE) && r->page_cache_missing)
		return r->page_cache_missing;
	if ((f->flags & FIELD_NEEDS_EXACT_BITMAPS) && !pc->unused_exact)
		return "page bitmaps overflowed";
	if ((f->flags & FIELD_NEEDS_REQUESTS) && field_get(f, s) == STORY_NONE)
		return "no block requests";
	return NULL;
}

/* ---- ranks ---- */

uint64_t story_rank_key(const struct io_story *s, bool timing)
{
	return timing ? s->io_ns : s->read_bytes + s->write_bytes;
}

static int cmp_procs(const void *a, const void *b, void *ctx)
{
	const struct run_result *r = ctx;
	const struct proc_record *x = &r->procs[*(const size_t *)a];
	const struct proc_record *y = &r->procs[*(const size_t *)b];
	uint64_t kx = story_rank_key(&x->story, r->timing), ky = story_rank_key(&y->story, r->timing);
	uint64_t dx = x->story.disk_read_bytes + x->story.disk_write_bytes;
	uint64_t dy = y->story.disk_read_bytes + y->story.disk_write_bytes;

	if (kx != ky)
		return kx < ky ? 1 : -1;
	if (dx != dy)
		return dx < dy ? 1 : -1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int rank_procs(struct run_result *r)
{
	r->ranked = malloc((r->nprocs + 1) * sizeof(*r->ranked));
	if (!r->ranked)
		return -1;
	for (size_t i = 0; i < r->nprocs; i++)
		r->ranked[i] = i;
	qsort_r(r->ranked, r->nprocs, sizeof(*r->ranked), cmp_procs, r);
	return 0;
}

/* ---- the run's files ---- */

/* A process's record of a file, with what it is sorted by (the refs alone, no record read). */
struct file_ref {
	const struct file_record *f;
	const struct proc_record *p;
	const char *name;
	uint64_t ino;
	uint32_t dev, igen, pid, kind;
	bool by_name; /* grouped by its name, else by its (kind, dev, ino, generation) */
};

static int cmp_refs(const void *a, const void *b)
{
	const struct file_ref *x = a, *y = b;
	int c;

	if (x->by_name != y->by_name)
		return x->by_name ? -1 : 1;
	/* One file's records share the name the table gave it: no need to compare it. */
	if (x->by_name && x->name != y->name && (c = strcmp(x->name, y->name)))
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (x->igen != y->igen)
		return x->igen < y->igen ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static bool same_group(const struct file_ref *x, const struct file_ref *y)
{
	if (x->by_name || y->by_name)
		return x->by_name && y->by_name &&
		       (x->name == y->name || !strcmp(x->name, y->name));
	return x->kind == y->kind && x->dev == y->dev && x->ino == y->ino && x->igen == y->igen;
}

/* Every process's files (not its rows: the files of a path are counted once each). */
static struct file_ref *collect_refs(const struct run_result *r, size_t *n)
{
	size_t total = 0;
	struct file_ref *refs;

	for (size_t i = 0; i < r->nprocs; i++)
		total += r->procs[i].nfiles;
	refs = malloc((total + 1) * sizeof(*refs));
	*n = 0;
	for (size_t i = 0; refs && i < r->nprocs; i++)
		for (size_t j = 0; j < r->procs[i].nfiles; j++) {
			const struct file_record *f = &r->procs[i].files[j];

			refs[(*n)++] = (struct file_ref){
				.f = f, .p = &r->procs[i], .pid = r->procs[i].pid, .name = f->name,
				.kind = f->kind, .dev = f->key.dev, .ino = f->key.ino,
				.igen = f->key.igen,
				.by_name = r->files_by_path && f->name && f->kind != FK_METADATA };
		}
	return refs;
}

/* A pid's place among a group's users (add_users). */
struct user_slot {
	uint32_t pid;
	size_t idx;
	UT_hash_handle hh;
};

/* The user of refs' pid, made when it is new (in the order pids first come); NULL: no room. */
static struct file_user *user_of(struct run_file *rf, struct user_slot **seen,
				 struct user_slot *slots, uint32_t pid)
{
	struct user_slot *s;
	int err;

	HASH_FIND(hh, *seen, &pid, sizeof(pid), s);
	if (s)
		return &rf->users[s->idx];
	s = &slots[rf->nusers];
	s->pid = pid;
	s->idx = rf->nusers;
	HASH_ADD_OR_FAIL(hh, *seen, pid, sizeof(s->pid), s, err);
	if (err)
		return NULL;
	rf->users[rf->nusers].pid = pid;
	return &rf->users[rf->nusers++];
}

/*
 * The pids of a group and their shares of its bytes (of its calls when it moved none). A
 * path's versions come one after another, each with its pids in order: a pid may come
 * again in each version, and the run's libc has every process of the run. When the pids
 * come in order all through (one version: nearly always), a pid's records are next to each
 * other and no table is needed.
 */
static int add_users(struct run_file *rf, const struct file_ref *refs, size_t n)
{
	struct user_slot *slots = NULL, *seen = NULL;
	uint64_t bytes = 0, calls = 0;
	bool in_order = true;
	int err = 0;

	for (size_t i = 1; i < n && in_order; i++)
		in_order = refs[i].pid >= refs[i - 1].pid;
	rf->users = calloc(n, sizeof(*rf->users));
	if (!in_order)
		slots = calloc(n, sizeof(*slots));
	for (size_t i = 0; i < n && rf->users && (in_order || slots) && !err; i++) {
		const struct file_summary *s = &refs[i].f->sum;
		struct file_user *u;

		if (in_order) { /* a new pid, or the one before */
			if (!rf->nusers || rf->users[rf->nusers - 1].pid != refs[i].pid)
				rf->users[rf->nusers++].pid = refs[i].pid;
			u = &rf->users[rf->nusers - 1];
		} else if (!(u = user_of(rf, &seen, slots, refs[i].pid))) {
			err = -1;
			break;
		}
		u->bytes += s->read_bytes + s->write_bytes;
		u->share += s->read_calls + s->write_calls + s->opens + s->maps + s->closes;
	}
	HASH_CLEAR(hh, seen);
	free(slots);
	if (err || !rf->users || (!in_order && !slots))
		return -1;
	for (size_t i = 0; i < rf->nusers; i++)
		bytes += rf->users[i].bytes, calls += (uint64_t)rf->users[i].share;
	for (size_t i = 0; i < rf->nusers; i++)
		rf->users[i].share = bytes ? (double)rf->users[i].bytes / bytes
				     : calls ? rf->users[i].share / calls : 1.0 / rf->nusers;
	return 0;
}

/* How many records ahead a loop over a group's asks for them (file_record_prefetch). */
#define PREFETCH 8

/* The group's files in one row; versions: how many distinct files (0: one). */
static int merge_group(struct run_file *rf, const struct file_ref *refs, size_t n,
		       const char *cwd)
{
	const struct file_record **m = malloc(n * sizeof(*m));
	enum file_use use = FU_INHERITED;
	uint32_t files = 1;
	int err;

	if (!m)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (i + PREFETCH < n)
			file_record_prefetch(refs[i + PREFETCH].f);
		if (use != FU_DATA) /* data stays data (file_use_add) */
			use = file_use_add(use, file_use_by(refs[i].f, refs[i].p, cwd));
		m[i] = refs[i].f;
		if (i && refs[i].by_name && (m[i]->key.dev != m[i - 1]->key.dev ||
					     m[i]->key.ino != m[i - 1]->key.ino ||
					     m[i]->key.igen != m[i - 1]->key.igen))
			files++;
	}
	if (n == 1 && !m[0]->versions) {
		rf->f = m[0]; /* one process's row of one file: the run's row as it is */
		err = 0;
	} else {
		rf->f = rf->merged = calloc(1, sizeof(*rf->merged));
		err = !rf->merged || files_merge(rf->merged, (struct file_record *const *)m, n);
		if (rf->merged) /* story_free frees its names list */
			rf->merged->versions = files > 1 ? files : 0;
	}
	/* Faults on mappings no traced process was seen making: shown, not folded. */
	rf->use = use == FU_INHERITED ? FU_DATA : use;
	free(m);
	return err || add_users(rf, refs, n) ? -1 : 0;
}

/*
 * The run's files by bytes moved through syscalls, then to and from the disk, then time:
 * not by time first as a process's table is, because a pipe's reader blocked waiting for
 * its writer counts that wait as the call's time, and a run of many processes is made of
 * such waits (a pool's workers, a shell's pipelines) that then hid the files they moved.
 */
static int cmp_files(const void *a, const void *b)
{
	const struct file_summary *x = &((const struct run_file *)a)->f->sum;
	const struct file_summary *y = &((const struct run_file *)b)->f->sum;
	uint64_t kx = x->read_bytes + x->write_bytes, ky = y->read_bytes + y->write_bytes;
	uint64_t dx = x->block_read_bytes + x->block_write_bytes;
	uint64_t dy = y->block_read_bytes + y->block_write_bytes;

	if (kx != ky)
		return kx < ky ? 1 : -1;
	if (dx != dy)
		return dx < dy ? 1 : -1;
	return x->io_ns < y->io_ns ? 1 : x->io_ns > y->io_ns ? -1 : 0;
}

static int run_files(struct run_result *r)
{
	size_t n, groups = 0;
	struct file_ref *refs = collect_refs(r, &n);
	int err = 0;

	if (!refs)
		return -1;
	qsort(refs, n, sizeof(*refs), cmp_refs);
	for (size_t i = 0; i < n; i++)
		groups += !i || !same_group(&refs[i - 1], &refs[i]);
	r->files = calloc(groups + 1, sizeof(*r->files));
	for (size_t i = 0, j; r->files && i < n && !err; i = j) {
		for (j = i + 1; j < n && same_group(&refs[i], &refs[j]); j++)
			;
		err = merge_group(&r->files[r->nfiles++], refs + i, j - i, r->cwd);
	}
	free(refs);
	if (!r->files)
		return -1;
	qsort(r->files, r->nfiles, sizeof(*r->files), cmp_files);
	return err;
}

static int cmp_pids(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* What the run loaded to run, in one: its files, what they read and faulted, by how many. */
static int sum_loaded(struct run_result *r)
{
	struct run_loaded *l = &r->loaded;
	size_t users = 0, n = 0;
	uint32_t *pids;

	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < r->nfiles; i++)
		users += r->files[i].use != FU_DATA ? r->files[i].nusers : 0;
	pids = malloc((users + 1) * sizeof(*pids));
	if (!pids)
		return -1;
	for (size_t i = 0; i < r->nfiles; i++) {
		const struct run_file *rf = &r->files[i];

		if (rf->use == FU_DATA)
			continue;
		l->files++;
		l->read_calls += rf->f->sum.read_calls;
		l->read_bytes += rf->f->sum.read_bytes;
		l->faults += rf->f->pc.faults;
		l->block_read_bytes += rf->f->sum.block_read_bytes;
		for (size_t k = 0; k < rf->nusers; k++)
			pids[n++] = rf->users[k].pid;
	}
	qsort(pids, n, sizeof(*pids), cmp_pids);
	for (size_t i = 0; i < n; i++)
		l->procs += !i || pids[i] != pids[i - 1];
	free(pids);
	return 0;
}

/*
 * The first screen's files: what the run worked on, its own first and then the system's
 * files it only read (files[].system: the headers a compiler read, the libraries a linker
 * took as input), each part by bytes as files[] is; what it loaded summed apart.
 */
static int first_screen_files(struct run_result *r)
{
	char **prefixes = calloc(r->nfiles + 1, sizeof(*prefixes));
	size_t n = 0;

	r->worked = malloc((r->nfiles + 1) * sizeof(*r->worked));
	r->nworked = 0;
	if (!r->worked || !prefixes) {
		free(prefixes);
		return -1;
	}
	for (size_t i = 0; i < r->nfiles; i++)
		if (r->files[i].use == FU_CODE)
			n += !!(prefixes[n] = file_install_prefix(r->files[i].f));
	for (size_t i = 0; i < r->nfiles; i++)
		r->files[i].system = r->files[i].use == FU_DATA &&
				     file_of_system(r->files[i].f, r->cwd, prefixes, n);
	while (n--)
		free(prefixes[n]);
	free(prefixes);
	for (int system = 0; system < 2; system++)
		for (size_t i = 0; i < r->nfiles; i++)
			if (r->files[i].f->kind != FK_METADATA && r->files[i].use == FU_DATA &&
			    r->files[i].system == system)
				r->worked[r->nworked++] = i;
	return sum_loaded(r);
}

int story_derive(struct run_result *r)
{
	int err = stories(r);
	err |= rank_procs(r);
	err |= run_files(r);
	err |= first_screen_files(r);
	return err ? -1 : 0;
}

void story_free(struct run_result *r)
{
	for (size_t i = 0; i < r->nfiles; i++) {
		struct file_record *m = r->files[i].merged;

		if (m && !m->versions)
			m->versions = 1; /* file_record_free: its name list is its own */
		if (m)
			file_record_free(m);
		free(m);
		free(r->files[i].users);
	}
	free(r->files);
	free(r->ranked);
	free(r->worked);
	r->worked = NULL;
	r->nworked = 0;
	r->files = NULL;
	r->ranked = NULL;
	r->nfiles = 0;
}
