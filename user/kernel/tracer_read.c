// SPDX-License-Identifier: GPL-2.0
/*
 * Readers: the kernel's maps copied into the model's plain records. No arithmetic on what
 * they read (sums over CPUs and conversions are the model's: dense_add_counters, files.c);
 * one walker for every hash map. The per-file ledger's readers are in tracer_files.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "tracer_impl.h"

/* Elements per bpf() call of the walker; a hash bucket longer than this makes it grow. */
#define WALK_BATCH 256

/* The fallback for kernels or maps without batch lookups: one key at a time. */
static int walk_by_key(int fd, uint32_t ksize, char *key, char *value, map_visit_fn visit,
		       void *ctx)
{
	char *next = malloc(ksize);
	void *prev = NULL;

	if (!next)
		return -ENOMEM;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, ksize);
		prev = key;
		if (!bpf_map_lookup_elem(fd, key, value) && visit(key, value, ctx))
			break;
	}
	free(next);
	return 0;
}

/* Doubles the walker's buffers (a hash bucket longer than the batch). */
static int grow_batch(char **keys, char **values, uint32_t *cap, uint32_t ksize, uint32_t vsize)
{
	char *k = realloc(*keys, (size_t)*cap * 2 * ksize), *v;

	if (!k)
		return -ENOMEM;
	*keys = k;
	v = realloc(*values, (size_t)*cap * 2 * vsize);
	if (!v)
		return -ENOMEM;
	*values = v;
	*cap *= 2;
	return 0;
}

/*
 * Calls visit on every element of a hash map, read WALK_BATCH at a time with
 * BPF_MAP_LOOKUP_BATCH (one syscall per batch instead of two per element). Elements added
 * or removed meanwhile may or may not be seen, as with any walk of a live map.
 */
int map_walk(int fd, uint32_t ksize, uint32_t vsize, map_visit_fn visit, void *ctx)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t cap = WALK_BATCH;
	char *keys = malloc((size_t)cap * ksize), *values = malloc((size_t)cap * vsize);
	__u64 token_in = 0, token_out = 0; /* a hash map's batch token is a bucket number */
	bool first = true, stop = false;
	int err = keys && values ? 0 : -ENOMEM;

	while (!err && !stop) {
		__u32 count = cap;

		err = bpf_map_lookup_batch(fd, first ? NULL : &token_in, &token_out, keys, values,
					   &count, &opts);
		if (err == -ENOSPC) {
			err = grow_batch(&keys, &values, &cap, ksize, vsize);
			continue;
		}
		if (err && err != -ENOENT) {
			if (first) /* no batch lookups here */
				err = walk_by_key(fd, ksize, keys, values, visit, ctx);
			break;
		}
		for (uint32_t i = 0; i < count && !stop; i++)
			stop = visit(keys + (size_t)i * ksize, values + (size_t)i * vsize, ctx);
		if (err == -ENOENT) { /* that was the last batch */
			err = 0;
			break;
		}
		token_in = token_out;
		first = false;
	}
	free(keys);
	free(values);
	return err;
}

/* ---- syscall counters ---- */

void tracer_read_slot(struct tracer *t, uint32_t slot, struct dense_profile *d, bool take)
{
	for (uint32_t cpu = 0; cpu < t->ncpus; cpu++) {
		size_t base = (size_t)(cpu * t->nr_slots + slot);
		struct syscall_stat *sc = &t->sc[base * MAX_SYSCALLS];
		struct io_stat *io = &t->io[base * IO_KINDS];

		dense_add_counters(d, sc, io);
		if (!take)
			continue;
		memset(sc, 0, MAX_SYSCALLS * sizeof(*sc));
		memset(io, 0, IO_KINDS * sizeof(*io));
	}
}

/* ---- serve's labels ---- */

struct label_walk {
	tracer_label_fn fn;
	void *ctx;
};

static bool visit_label(const void *key, const void *value, void *ctx)
{
	struct label_walk *w = ctx;

	w->fn(key, *(const uint32_t *)value, w->ctx);
	return false;
}

int tracer_for_each_label(struct tracer *t, tracer_label_fn fn, void *ctx)
{
	struct label_walk w = { fn, ctx };

	return MAP_WALK(t, label_slots, visit_label, &w);
}

/* ---- block requests in flight ---- */

struct inflight_walk {
	inflight_visit_fn visit;
	void *ctx;
};

static bool visit_inflight(const void *key, const void *value, void *ctx)
{
	struct inflight_walk *w = ctx;

	return w->visit(value, w->ctx);
}

void tracer_for_each_inflight(struct tracer *t, inflight_visit_fn visit, void *ctx)
{
	struct inflight_walk w = { visit, ctx };

	MAP_WALK(t, block_inflight, visit_inflight, &w);
}

/* ---- block ---- */

struct block_walk {
	struct block_record *recs;
	size_t n;
};

static bool visit_block(const void *key, const void *value, void *ctx)
{
	struct block_walk *w = ctx;

	if (w->n == MAX_BLOCK_KEYS)
		return true;
	memset(&w->recs[w->n], 0, sizeof(w->recs[w->n]));
	w->recs[w->n].key = *(const struct block_key *)key;
	w->recs[w->n++].st = *(const struct block_stat *)value;
	return false;
}

static bool visit_charged(const struct block_rq_info *info, void *ctx)
{
	struct block_walk *w = ctx;
	struct block_record *r;

	if (info->charge == CHARGE_NONE || w->n == MAX_BLOCK_KEYS)
		return false;
	r = &w->recs[w->n++];
	memset(r, 0, sizeof(*r));
	r->key = (struct block_key){ .owner = info->tgid, .dev = info->dev, .op = info->op };
	r->st.requests = 1;
	r->st.bytes = info->bytes;
	return false;
}

int tracer_read_blocks(struct tracer *t, struct block_record **out, size_t *n)
{
	struct block_walk w = { .recs = calloc(MAX_BLOCK_KEYS, sizeof(*w.recs)) };

	*out = w.recs;
	*n = 0;
	if (!w.recs)
		return -1;
	MAP_WALK(t, block_stats, visit_block, &w);
	*n = w.n;
	return 0;
}

int tracer_read_charged_inflight(struct tracer *t, struct block_record **out, size_t *n)
{
	struct block_walk w = { .recs = calloc(MAX_BLOCK_KEYS, sizeof(*w.recs)) };

	*out = w.recs;
	*n = 0;
	if (!w.recs)
		return -1;
	tracer_for_each_inflight(t, visit_charged, &w);
	*n = w.n;
	return 0;
}

/* ---- io_uring ---- */

struct uring_walk {
	struct uring_record *recs;
	size_t n, cap;
};

static struct uring_record *uring_slot(struct uring_walk *w, uint32_t owner, uint32_t op)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->recs[i].key.owner == owner && w->recs[i].key.op == op)
			return &w->recs[i];
	if (w->n == w->cap)
		return NULL;
	memset(&w->recs[w->n], 0, sizeof(w->recs[w->n]));
	w->recs[w->n].key = (struct uring_key){ .owner = owner, .op = op };
	return &w->recs[w->n++];
}

static bool visit_uring(const void *key, const void *value, void *ctx)
{
	const struct uring_key *k = key;
	struct uring_record *r = uring_slot(ctx, k->owner, k->op);

	if (r)
		r->st = *(const struct uring_stat *)value;
	return false;
}

static bool visit_uring_inflight(const void *key, const void *value, void *ctx)
{
	const struct uring_req *e = value;
	struct uring_record *r = uring_slot(ctx, e->owner, e->op);

	(void)key;
	if (r)
		r->in_flight++;
	return false;
}

int tracer_read_urings(struct tracer *t, struct uring_record **out, size_t *n)
{
	struct uring_walk w = { .cap = MAX_URING_KEYS };

	*out = NULL;
	*n = 0;
	if (t->missing[HOOKS_URING])
		return 0;
	w.recs = calloc(w.cap, sizeof(*w.recs));
	if (!w.recs)
		return -1;
	MAP_WALK(t, uring_stats, visit_uring, &w);
	MAP_WALK(t, uring_inflight, visit_uring_inflight, &w);
	*out = w.recs;
	*n = w.n;
	return 0;
}
