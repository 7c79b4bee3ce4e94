// SPDX-License-Identifier: GPL-2.0
/*
 * Gathering the stacks (stacks.h): each process's executable mappings per exec, as the
 * kernel sends them; DWARF samples unwound as they come (while their mappings are the
 * process's current ones); frame-pointer aggregates at the end; everything summed per
 * (process, syscall, frames).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include "stacks_impl.h"
#include "kernel/tracer.h"
#include "util/hash.h"
#include "util/vec.h"

/* An aggregate's key as the hash compares it: (pid, nr), (exec_id, depth), the frames. */
#define AGG_KEY_WORDS (2 + MAX_STACK_DEPTH + 1)
struct agg_slot {
	size_t agg;
	UT_hash_handle hh;
	uint64_t key[];
};

struct stacks *stacks_new(int mode, int by, stacks_name_fn name_of, void *ctx)
{
	struct stacks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	*s = (struct stacks){ .mode = mode, .by = by, .name_of = name_of, .ctx = ctx };
	s->sym = sym_new();
	if (!s->sym) {
		free(s);
		return NULL;
	}
	return s;
}

static void free_paths(struct stack_space *sp)
{
	for (size_t i = 0; sp->paths && i < sp->nvmas; i++)
		free(sp->paths[i]);
	free(sp->paths);
	sp->paths = NULL;
}

void stacks_free(struct stacks *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nspaces; i++) {
		free_paths(&s->spaces[i]);
		free(s->spaces[i].vmas);
		sym_space_free(s->spaces[i].unwinder);
	}
	for (size_t i = 0; i < s->naggs; i++)
		free(s->aggs[i].pcs);
	free(s->spaces);
	free(s->aggs);
	HASH_FREE_ALL(hh, s->index, free);
	free(s->last);
	sym_free(s->sym);
	free(s);
}

struct stack_space *stacks_space(struct stacks *s, uint32_t pid, uint32_t exec_id)
{
	for (size_t i = 0; i < s->nspaces; i++)
		if (s->spaces[i].pid == pid && s->spaces[i].exec_id == exec_id)
			return &s->spaces[i];
	return NULL;
}

const char *stacks_vma_path(struct stacks *s, const struct stack_space *sp,
			    const struct stack_vma *v)
{
	if (sp->paths)
		return sp->paths[v - sp->vmas];
	return s->name_of(s->ctx, v->dev, v->ino, v->igen);
}

/* The space of (pid, exec_id), made if new; NULL out of memory. */
static struct stack_space *space_of(struct stacks *s, uint32_t pid, uint32_t exec_id)
{
	struct stack_space *sp = stacks_space(s, pid, exec_id);

	if (sp)
		return sp;
	sp = VEC_PUSH(s->spaces, s->nspaces);
	if (!sp)
		return NULL;
	sp->pid = pid;
	sp->exec_id = exec_id;
	return sp;
}

/* The latest mappings of a process's exec replace the ones before (paths: NULL or theirs). */
static int set_maps(struct stacks *s, uint32_t pid, uint32_t exec_id, struct stack_vma *vmas,
		    size_t n, char **paths)
{
	struct stack_space *sp = space_of(s, pid, exec_id);

	if (!sp) {
		for (size_t i = 0; paths && i < n; i++)
			free(paths[i]);
		free(paths);
		free(vmas);
		return -1;
	}
	free_paths(sp);
	free(sp->vmas);
	sym_space_free(sp->unwinder);
	sp->unwinder = NULL;
	sp->vmas = vmas;
	sp->nvmas = n;
	sp->paths = paths;
	return 0;
}

static int on_maps(struct stacks *s, const struct stack_maps *m)
{
	size_t n = m->n < MAX_STACK_VMAS ? m->n : MAX_STACK_VMAS;
	struct stack_vma *vmas = malloc((n ? n : 1) * sizeof(*vmas));

	if (!vmas)
		return -1;
	memcpy(vmas, m->vmas, n * sizeof(*vmas));
	return set_maps(s, m->tgid, m->exec_id, vmas, n, NULL);
}

/*
 * The executable file mappings of a running process, from /proc/PID/maps ("start-end perms
 * offset dev inode path"): how many, with their paths. 0 when it is gone (or no memory).
 */
static size_t proc_exec_maps(uint32_t pid, struct stack_vma **vmas, char ***paths)
{
	char file[64], line[4200], perms[8], path[4096];
	unsigned long long start, end, off, ino;
	size_t n = 0, vmas_cap = 0, paths_cap = 0;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%u/maps", pid);
	f = fopen(file, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %7s %llx %*s %llu %4095[^\n]", &start, &end, perms,
			   &off, &ino, path) != 6 || perms[2] != 'x' || path[0] != '/')
			continue;
		if (vec_reserve(vmas, &vmas_cap, n + 1, sizeof(**vmas)) ||
		    vec_reserve(paths, &paths_cap, n + 1, sizeof(**paths)))
			break;
		(*paths)[n] = strdup(path);
		if (!(*paths)[n])
			break;
		(*vmas)[n++] = (struct stack_vma){ .start = start, .end = end,
						   .pgoff = off / 4096, .ino = ino };
	}
	if (f)
		fclose(f);
	return n;
}

/*
 * A kernel without the task VMA iterator (6.1) asks user space to read the mappings: the
 * process is running (the request comes from its own syscall), so /proc/PID/maps has them.
 */
static int on_maps_proc(struct stacks *s, const struct stack_maps *m)
{
	struct stack_vma *vmas = NULL;
	char **paths = NULL;
	size_t n = proc_exec_maps(m->tgid, &vmas, &paths);

	/* Gone by now (its last change was at exit): what was read before stays. */
	if (!n && stacks_space(s, m->tgid, m->exec_id)) {
		free(vmas);
		free(paths);
		return 0;
	}
	return set_maps(s, m->tgid, m->exec_id, vmas, n, paths);
}

static size_t agg_key(uint64_t *key, uint32_t pid, uint32_t nr, uint32_t exec_id,
		      const uint64_t *pcs, uint32_t depth)
{
	key[0] = (uint64_t)pid << 32 | nr;
	key[1] = (uint64_t)exec_id << 32 | depth;
	if (depth)
		memcpy(key + 2, pcs, depth * sizeof(*pcs));
	return 2 + depth;
}

/* A new aggregate of these frames and its slot in the index; -1 out of memory. */
static ssize_t new_agg(struct stacks *s, const uint64_t *key, size_t nwords)
{
	struct agg_slot *slot = malloc(sizeof(*slot) + nwords * sizeof(*key));
	struct stack_agg *a = slot ? vec_append(&s->aggs, s->naggs, sizeof(*a)) : NULL;
	uint32_t depth = nwords - 2;
	int err = -1;

	if (a && (a->pcs = malloc((depth ? depth : 1) * sizeof(*a->pcs)))) {
		memcpy(slot->key, key, nwords * sizeof(*key));
		slot->agg = s->naggs;
		HASH_ADD_OR_FAIL(hh, s->index, key, nwords * sizeof(*key), slot, err);
		if (err)
			free(a->pcs);
	}
	if (err) {
		free(slot);
		return -1;
	}
	if (depth)
		memcpy(a->pcs, key + 2, depth * sizeof(*a->pcs));
	*a = (struct stack_agg){ .pid = key[0] >> 32, .nr = (uint32_t)key[0],
				 .exec_id = key[1] >> 32, .depth = depth, .pcs = a->pcs };
	return s->naggs++;
}

/* The aggregate of these frames (made if new): its index, or -1 out of memory. */
static ssize_t agg_of(struct stacks *s, uint32_t pid, uint32_t nr, uint32_t exec_id,
		      const uint64_t *pcs, uint32_t depth)
{
	uint64_t key[AGG_KEY_WORDS];
	struct agg_slot *slot;
	size_t n;

	if (depth > MAX_STACK_DEPTH + 1)
		return -1;
	n = agg_key(key, pid, nr, exec_id, pcs, depth);
	HASH_FIND(hh, s->index, key, n * sizeof(*key), slot);
	return slot ? (ssize_t)slot->agg : new_agg(s, key, n);
}

static void remember_last(struct stacks *s, uint32_t pid, uint32_t nr, size_t agg)
{
	struct stack_last *last;

	for (size_t i = 0; i < s->nlast; i++)
		if (s->last[i].pid == pid && s->last[i].nr == nr) {
			s->last[i].agg = agg;
			return;
		}
	last = VEC_PUSH(s->last, s->nlast);
	if (last)
		*last = (struct stack_last){ pid, nr, agg };
}

/* The unwinder of a process's current mappings (built when first needed). */
static struct sym_space *unwinder_of(struct stacks *s, struct stack_space *sp)
{
	struct sym_map *maps;

	if (sp->unwinder || !sp->nvmas)
		return sp->unwinder;
	maps = calloc(sp->nvmas, sizeof(*maps));
	if (!maps)
		return NULL;
	for (size_t i = 0; i < sp->nvmas; i++)
		maps[i] = (struct sym_map){ .start = sp->vmas[i].start, .end = sp->vmas[i].end,
					    .offset = sp->vmas[i].pgoff * 4096,
					    .path = stacks_vma_path(s, sp, &sp->vmas[i]) };
	sp->unwinder = sym_space_new(maps, sp->nvmas);
	free(maps);
	return sp->unwinder;
}

/* The current exec of a process: the mappings sent last for it. */
static struct stack_space *current_space(struct stacks *s, uint32_t pid)
{
	for (size_t i = s->nspaces; i-- > 0;)
		if (s->spaces[i].pid == pid)
			return &s->spaces[i];
	return NULL;
}

static int on_sample(struct stacks *s, const struct stack_sample *e)
{
	struct stack_space *sp = current_space(s, e->tgid);
	struct sym_space *u = sp ? unwinder_of(s, sp) : NULL;
	uint64_t pcs[MAX_STACK_DEPTH] = { e->regs[DW_PC] };
	int depth = u ? sym_space_unwind(u, e, pcs, MAX_STACK_DEPTH) : 1;
	ssize_t i = agg_of(s, e->tgid, e->nr, sp ? sp->exec_id : 0, pcs, depth);

	s->samples++;
	if (i < 0)
		return -1;
	s->aggs[i].calls += e->calls;
	s->aggs[i].bytes += e->bytes;
	s->aggs[i].time_ns += e->time_ns;
	remember_last(s, e->tgid, e->nr, i);
	return 0;
}

int stacks_on_event(struct stacks *s, const void *data, size_t size)
{
	uint32_t kind;

	if (size < sizeof(kind))
		return 0;
	memcpy(&kind, data, sizeof(kind));
	if (kind == SE_MAPS && size >= offsetof(struct stack_maps, vmas)) {
		on_maps(s, data);
		/*
		 * The samples after these mappings are unwound with their files, named by the
		 * loader's opens, whose names the kernel sent before the mappings, to another
		 * ring: read them first. (A library on a filesystem that cannot be opened by
		 * handle, as an initramfs's, has no other name; read after the samples, it left
		 * the unwinder without the library's call-frame information.)
		 */
		return s->mode == STACKS_DWARF ? TRACER_EVENTS_AGAIN : 0;
	} else if (kind == SE_MAPS_PROC && size >= offsetof(struct stack_maps, vmas))
		on_maps_proc(s, data);
	else if (kind == SE_SAMPLE && size >= sizeof(struct stack_sample))
		on_sample(s, data);
	return 0;
}

void stacks_add_fp(struct stacks *s, const struct stack_key *k, const struct stack_val *v,
		   const __u64 *ips, int depth)
{
	uint64_t pcs[MAX_STACK_DEPTH + 1];
	int n = 0;
	ssize_t i;

	/* The frameless wrapper's caller, second: where the walk skipped it. */
	for (int d = 0; d < depth && n < MAX_STACK_DEPTH + 1; d++) {
		pcs[n++] = ips[d];
		if (d == 0 && k->leaf && (depth < 2 || ips[1] != k->leaf))
			pcs[n++] = k->leaf;
	}
	i = agg_of(s, k->tgid, k->nr, k->exec_id, pcs, n);
	if (i < 0)
		return;
	s->aggs[i].calls += v->calls;
	s->aggs[i].bytes += v->bytes;
	s->aggs[i].time_ns += v->time_ns;
}

void stacks_add_pending(struct stacks *s, uint32_t pid, uint32_t nr,
			const struct stack_pending *p)
{
	ssize_t agg = -1;

	for (size_t i = 0; i < s->nlast && agg < 0; i++)
		if (s->last[i].pid == pid && s->last[i].nr == nr)
			agg = s->last[i].agg;
	/* No sample of it at all (its ring buffer was full): a stack of no frame. */
	if (agg < 0)
		agg = agg_of(s, pid, nr, 0, NULL, 0);
	if (agg < 0)
		return;
	s->aggs[agg].calls += p->calls;
	s->aggs[agg].bytes += p->bytes;
	s->aggs[agg].time_ns += p->time_ns;
}
