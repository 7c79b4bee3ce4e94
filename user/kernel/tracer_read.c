// SPDX-License-Identifier: GPL-2.0
/*
 * Readers: the kernel's maps copied into the model's plain records. No arithmetic on what
 * they read (sums over CPUs and conversions are the model's: dense_add_counters, files.c);
 * one walker for every hash map (map_walk, tracer.c). The per-file ledger's readers are in
 * tracer_files.c.
 */
#include <stdlib.h>
#include <string.h>
#include "tracer_impl.h"

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
	/* Made when a request started (block.bpf.c, prepare_keys), none completed yet. */
	if (!((const struct block_stat *)value)->requests)
		return false;
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
