// SPDX-License-Identifier: GPL-2.0
/*
 * Readers: the kernel's maps copied into the model's plain records. No arithmetic on what
 * they read (sums over CPUs and conversions are the model's: dense_add_counters, files.c);
 * one walker for every hash map (map_walk, tracer.c). The per-file ledger's readers are in
 * tracer_files.c.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "tracer_impl.h"

/* ---- syscall counters (per-CPU caches and totals: bpf/counters.bpf.c) ---- */

/*
 * The slot's rows in every CPU's caches added to d. take: the slot is dead (no CPU counts
 * for it any more): each row is claimed (its tag swapped to CACHE_CLAIMED, which a CPU
 * then leaves alone), read, zeroed and freed.
 */
static void cache_rows(struct tracer *t, uint32_t slot, struct dense_profile *d, bool take)
{
	for (uint32_t i = 0; i < t->ncpus * SC_CACHE_ROWS; i++) {
		struct sc_cache_row *r = &t->sc[i];
		uint32_t tag = __atomic_load_n(&r->tag, __ATOMIC_ACQUIRE);

		if (!tag || tag == CACHE_CLAIMED || TAG_SLOT_SC(tag) != slot)
			continue;
		if (take && !__atomic_compare_exchange_n(&r->tag, &tag, CACHE_CLAIMED, false,
							 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			continue;
		dense_add_syscall(d, (tag - 1) % MAX_SYSCALLS, &r->st);
		if (take) {
			memset(&r->st, 0, sizeof(r->st));
			__atomic_store_n(&r->tag, 0, __ATOMIC_RELEASE);
		}
	}
	for (uint32_t i = 0; i < t->ncpus * IO_CACHE_ROWS; i++) {
		struct io_cache_row *r = &t->io[i];
		uint32_t tag = __atomic_load_n(&r->tag, __ATOMIC_ACQUIRE);

		if (!tag || tag == CACHE_CLAIMED || TAG_SLOT_IO(tag) != slot)
			continue;
		if (take && !__atomic_compare_exchange_n(&r->tag, &tag, CACHE_CLAIMED, false,
							 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			continue;
		dense_add_io(d, (tag - 1) % 16, &r->st);
		if (take) {
			memset(&r->st, 0, sizeof(r->st));
			__atomic_store_n(&r->tag, 0, __ATOMIC_RELEASE);
		}
	}
}

/* The slot's totals (rows moved out of the caches) added to d; take: and deleted. */
static void totals(struct tracer *t, uint32_t slot, struct dense_profile *d, bool take)
{
	int sc_fd = bpf_map__fd(t->skel->maps.sc_totals), io_fd = bpf_map__fd(t->skel->maps.io_totals);
	__u64 *moved = &t->skel->bss->sc_moved[(size_t)slot * (MAX_SYSCALLS / 64)];
	uint32_t *io_moved = &t->skel->bss->io_moved[slot];
	struct syscall_stat st;

	for (uint32_t w = 0; w < MAX_SYSCALLS / 64; w++) {
		uint64_t bits = take ? __atomic_exchange_n(&moved[w], 0, __ATOMIC_SEQ_CST)
				     : __atomic_load_n(&moved[w], __ATOMIC_SEQ_CST);

		for (; bits; bits &= bits - 1) {
			uint32_t nr = w * 64 + __builtin_ctzll(bits), key = SC_TAG(slot, nr);

			if (bpf_map_lookup_elem(sc_fd, &key, &st))
				continue;
			dense_add_syscall(d, nr, &st);
			if (take)
				bpf_map_delete_elem(sc_fd, &key);
		}
	}
	uint32_t kinds = take ? __atomic_exchange_n(io_moved, 0, __ATOMIC_SEQ_CST)
			      : __atomic_load_n(io_moved, __ATOMIC_SEQ_CST);

	for (; kinds; kinds &= kinds - 1) {
		uint32_t kind = __builtin_ctz(kinds), key = IO_TAG(slot, kind);
		struct io_stat io;

		if (bpf_map_lookup_elem(io_fd, &key, &io))
			continue;
		dense_add_io(d, kind, &io);
		if (take)
			bpf_map_delete_elem(io_fd, &key);
	}
}

/* Each CPU's count of rows moved into the totals, once none is moving (all even). */
static void moves_settled(struct tracer *t, uint64_t *out)
{
	for (uint32_t cpu = 0; cpu < t->ncpus; cpu++) {
		uint64_t v;

		while ((v = __atomic_load_n(&t->moves[cpu], __ATOMIC_ACQUIRE)) & 1)
			sched_yield(); /* a CPU is moving a row: a few hundred instructions */
		if (out)
			out[cpu] = v;
	}
}

static bool moves_unchanged(struct tracer *t, const uint64_t *before)
{
	for (uint32_t cpu = 0; cpu < t->ncpus; cpu++)
		if (__atomic_load_n(&t->moves[cpu], __ATOMIC_ACQUIRE) != before[cpu])
			return false;
	return true;
}

/*
 * A live slot's counters: the rows and the totals read while no CPU moved a row between
 * them (a row moving meanwhile could be counted twice, or not at all), tried again until
 * so: a Prometheus counter must never go down.
 */
static void read_live(struct tracer *t, uint32_t slot, struct dense_profile *d)
{
	uint64_t before[t->ncpus];

	if (!t->scratch && !(t->scratch = malloc(sizeof(*t->scratch)))) {
		cache_rows(t, slot, d, false); /* out of memory: a read that may be torn */
		totals(t, slot, d, false);
		return;
	}
	for (int tries = 0;; tries++) {
		dense_reset(t->scratch);
		moves_settled(t, before);
		cache_rows(t, slot, t->scratch, false);
		totals(t, slot, t->scratch, false);
		if (moves_unchanged(t, before) || tries == 100)
			break;
	}
	dense_merge_raw(d, t->scratch);
}

void tracer_read_slot(struct tracer *t, uint32_t slot, struct dense_profile *d, bool take)
{
	if (!take) {
		read_live(t, slot, d);
		return;
	}
	/* Its rows are claimed first, so no CPU moves one of them after this. */
	cache_rows(t, slot, d, true);
	moves_settled(t, NULL); /* ... and those it was moving are in the totals */
	totals(t, slot, d, true);
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
