// SPDX-License-Identifier: GPL-2.0
/*
 * Readers: the kernel's maps copied into the model's plain records. No arithmetic on what
 * they read (sums over CPUs and conversions are the model's: dense_add_counters, files.c);
 * one walker for every hash map (map_walk, tracer.c). The per-file ledger's readers are in
 * tracer_files.c.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "tracer_impl.h"
#include "util/vec.h"

/* ---- syscall counters (per-CPU caches and totals: bpf/counters.bpf.c) ---- */

/* Where the rows and totals of a slot go as they are read: a profile, or callbacks. */
struct sink {
	tracer_sc_fn sc;
	tracer_io_fn io;
	void *ctx;
};

static void dense_sc(uint32_t slot, uint32_t nr, const struct syscall_stat *st, void *d)
{
	dense_add_syscall(d, nr, st);
}

static void dense_io(uint32_t slot, uint32_t kind, const struct io_stat *st, void *d)
{
	dense_add_io(d, kind, st);
}

static struct sink dense_sink(struct dense_profile *d)
{
	return (struct sink){ dense_sc, dense_io, d };
}

/*
 * Whether the cache row whose tag is at tagp holds key (a tag) and, with take, is now
 * claimed for this reader.
 */
static bool row_holds(uint32_t *tagp, uint32_t key, bool take)
{
	uint32_t tag = __atomic_load_n(tagp, __ATOMIC_ACQUIRE);

	if (tag != key)
		return false;
	return !take || __atomic_compare_exchange_n(tagp, &tag, CACHE_CLAIMED, false,
						    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* A row read with take: zeroed (size bytes of its counters st), then freed. */
static void row_free(uint32_t *tagp, void *st, size_t size)
{
	memset(st, 0, size);
	__atomic_store_n(tagp, 0, __ATOMIC_RELEASE);
}

/* The marks of one word (cleared as read when take: its keys are being taken). */
static uint64_t marks_of(__u64 *word, bool take)
{
	return take ? __atomic_exchange_n(word, 0, __ATOMIC_SEQ_CST)
		    : __atomic_load_n(word, __ATOMIC_SEQ_CST);
}

static uint32_t kind_marks_of(uint32_t *word, bool take)
{
	return take ? __atomic_exchange_n(word, 0, __ATOMIC_SEQ_CST)
		    : __atomic_load_n(word, __ATOMIC_SEQ_CST);
}

/* What to do with a marked key of a slot: a syscall (io false) or an I/O kind. */
typedef void (*marked_key_fn)(struct tracer *t, uint32_t slot, uint32_t id, bool io,
			      const struct sink *out, bool take);

/* Each key marked in a slot's syscall words and I/O kind mask, to fn. */
static void for_each_marked(struct tracer *t, uint32_t slot, __u64 *sc_words,
			    uint32_t *io_kinds, marked_key_fn fn, const struct sink *out, bool take)
{
	for (uint32_t w = 0; w < MAX_SYSCALLS / 64; w++)
		for (uint64_t bits = marks_of(&sc_words[w], take); bits; bits &= bits - 1)
			fn(t, slot, w * 64 + __builtin_ctzll(bits), false, out, take);
	for (uint32_t kinds = kind_marks_of(io_kinds, take); kinds; kinds &= kinds - 1)
		fn(t, slot, __builtin_ctz(kinds), true, out, take);
}

/* A key's row on each CPU, to the sink (cache_rows). */
static void cache_key_rows(struct tracer *t, uint32_t slot, uint32_t id, bool io,
			   const struct sink *out, bool take)
{
	for (uint32_t cpu = 0; cpu < t->ncpus; cpu++) {
		if (!io) {
			uint32_t key = SC_TAG(slot, id);
			struct sc_cache_row *r = &t->sc[CACHE_ROW(cpu, key, SC_CACHE_ROWS)];

			if (!row_holds(&r->tag, key, take))
				continue;
			out->sc(slot, id, &r->st, out->ctx);
			if (take)
				row_free(&r->tag, &r->st, sizeof(r->st));
		} else {
			uint32_t key = IO_TAG(slot, id);
			struct io_cache_row *r = &t->io[IO_CACHE_ROW(cpu, key)];

			if (!row_holds(&r->tag, key, take))
				continue;
			out->io(slot, id, &r->st, out->ctx);
			if (take) {
				r->used = 0; /* before the tag frees the row (row_free) */
				row_free(&r->tag, &r->st, sizeof(r->st));
			}
		}
	}
}

/*
 * The slot's rows in every CPU's caches, to the sink: for each key that ever took a row
 * (the slot's marks, seen: the programs mark a key before its row), the row the key
 * hashes to on each CPU (ncpus x the slot's syscalls, not every row of every CPU). take:
 * the slot is dead (no CPU counts for it any more): its keys' marks are cleared, each row
 * is claimed (its tag swapped to CACHE_CLAIMED, which a CPU then leaves alone), read,
 * zeroed and freed.
 */
static void cache_rows(struct tracer *t, uint32_t slot, const struct sink *out, bool take)
{
	for_each_marked(t, slot, t->marks[slot].sc_seen, &t->marks[slot].io_seen, cache_key_rows,
			out, take);
}

/* A key's totals (rows moved out of the caches) to the sink; take: and deleted (totals). */
static void total_of_key(struct tracer *t, uint32_t slot, uint32_t id, bool io,
			 const struct sink *out, bool take)
{
	int fd = io ? bpf_map__fd(t->skel->maps.io_totals) : bpf_map__fd(t->skel->maps.sc_totals);
	uint32_t key = io ? IO_TAG(slot, id) : SC_TAG(slot, id);
	struct syscall_stat st;
	struct io_stat ios;
	void *value = io ? (void *)&ios : (void *)&st;

	/* take: one syscall where the kernel has lookup-and-delete for hash maps */
	if (take ? map_take(fd, &key, value) : bpf_map_lookup_elem(fd, &key, value))
		return;
	if (io)
		out->io(slot, id, &ios, out->ctx);
	else
		out->sc(slot, id, &st, out->ctx);
}

/* The slot's totals (rows moved out of the caches) to the sink; take: and deleted. */
static void totals(struct tracer *t, uint32_t slot, const struct sink *out, bool take)
{
	for_each_marked(t, slot, t->marks[slot].sc_moved, &t->marks[slot].io_moved, total_of_key,
			out, take);
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
	struct sink into = dense_sink(d);
	uint64_t before[t->ncpus];

	if (!t->scratch && !(t->scratch = malloc(sizeof(*t->scratch)))) {
		cache_rows(t, slot, &into, false); /* out of memory: a read that may be torn */
		totals(t, slot, &into, false);
		return;
	}
	into = dense_sink(t->scratch);
	for (int tries = 0;; tries++) {
		dense_reset(t->scratch);
		moves_settled(t, before);
		cache_rows(t, slot, &into, false);
		totals(t, slot, &into, false);
		if (moves_unchanged(t, before) || tries == 100)
			break;
	}
	dense_merge_raw(d, t->scratch);
}

/* A dead slot's rows and totals, to the sink, and zeroed in the kernel. */
static void take_slot(struct tracer *t, uint32_t slot, const struct sink *out)
{
	/* Its rows are claimed first, so no CPU moves one of them after this. */
	cache_rows(t, slot, out, true);
	moves_settled(t, NULL); /* ... and those it was moving are in the totals */
	totals(t, slot, out, true);
}

void tracer_read_slot(struct tracer *t, uint32_t slot, struct dense_profile *d, bool take)
{
	struct sink into = dense_sink(d);

	if (take)
		take_slot(t, slot, &into);
	else
		read_live(t, slot, d);
}

void tracer_take_slot_rows(struct tracer *t, uint32_t slot, tracer_sc_fn sc, tracer_io_fn io,
			   void *ctx)
{
	struct sink into = { sc, io, ctx };

	take_slot(t, slot, &into);
}

/* ---- live slots' rows, one by one (top) ---- */

/* What one consistent read of a slot found, kept until it is handed on. */
struct live_rows {
	struct live_sc {
		uint32_t slot, nr;
		struct syscall_stat st;
	} *sc;
	struct live_io {
		uint32_t slot, kind;
		struct io_stat st;
	} *io;
	size_t nsc, nio, capsc, capio;
	bool failed;
};

static void keep_sc(uint32_t slot, uint32_t nr, const struct syscall_stat *st, void *ctx)
{
	struct live_rows *r = ctx;

	if (VEC_ROOM(r->sc, r->nsc, r->capsc)) {
		r->failed = true;
		return;
	}
	r->sc[r->nsc++] = (struct live_sc){ slot, nr, *st };
}

static void keep_io(uint32_t slot, uint32_t kind, const struct io_stat *st, void *ctx)
{
	struct live_rows *r = ctx;

	if (VEC_ROOM(r->io, r->nio, r->capio)) {
		r->failed = true;
		return;
	}
	r->io[r->nio].slot = slot;
	r->io[r->nio].kind = kind;
	r->io[r->nio++].st = *st;
}

static bool wanted(const uint64_t *want, uint32_t tag, uint32_t slot)
{
	return tag && tag != CACHE_CLAIMED && slot < MAX_SLOTS && (want[slot / 64] >> (slot % 64) & 1);
}

/* Every CPU's cache rows of the slots marked in want, in one pass, to the sink. */
static void cache_rows_of(struct tracer *t, const uint64_t *want, const struct sink *out)
{
	for (uint32_t i = 0; i < t->ncpus * SC_CACHE_ROWS; i++) {
		struct sc_cache_row *r = &t->sc[i];
		uint32_t tag = __atomic_load_n(&r->tag, __ATOMIC_ACQUIRE), slot = TAG_SLOT_SC(tag);

		if (wanted(want, tag, slot))
			out->sc(slot, (tag - 1) % MAX_SYSCALLS, &r->st, out->ctx);
	}
	for (uint32_t i = 0; i < t->ncpus * IO_CACHE_ROWS; i++) {
		struct io_cache_row *r = &t->io[i];
		uint32_t tag = __atomic_load_n(&r->tag, __ATOMIC_ACQUIRE), slot = TAG_SLOT_IO(tag);

		if (wanted(want, tag, slot))
			out->io(slot, (tag - 1) % 16, &r->st, out->ctx);
	}
}

/*
 * Live slots read together: their totals first, then one pass over every CPU's caches for
 * all of them, so that a refresh costs the caches' size plus each slot's totals, not the
 * caches' size per slot. In that order a row a CPU moves from its cache into the totals
 * between the two reads is missed (the next read finds it in the totals: the caller keeps
 * each counter's highest value, so counts only shift to the next refresh), and none is read
 * twice as long as no move runs during the pass over the caches, which is quick and tried
 * again if one did.
 */
#define LIVE_TRIES 100

int tracer_read_live_slots(struct tracer *t, const uint32_t *slots, size_t n, tracer_sc_fn sc,
			   tracer_io_fn io, void *ctx)
{
	static uint64_t want[MAX_SLOTS / 64];
	struct live_rows *r = t->live;
	struct sink keep = { keep_sc, keep_io, NULL };
	uint64_t before[t->ncpus];
	size_t nsc, nio;

	if (!r && !(r = t->live = calloc(1, sizeof(*r))))
		return -ENOMEM;
	keep.ctx = r;
	r->nsc = r->nio = 0;
	r->failed = false;
	memset(want, 0, sizeof(want));
	for (size_t i = 0; i < n; i++) {
		if (slots[i] < MAX_SLOTS)
			want[slots[i] / 64] |= 1ULL << (slots[i] % 64);
		totals(t, slots[i], &keep, false);
	}
	nsc = r->nsc;
	nio = r->nio;
	for (int tries = 0;; tries++) {
		r->nsc = nsc;
		r->nio = nio;
		moves_settled(t, before);
		cache_rows_of(t, want, &keep);
		if (moves_unchanged(t, before) || tries == LIVE_TRIES)
			break;
	}
	for (size_t i = 0; i < r->nsc; i++)
		sc(r->sc[i].slot, r->sc[i].nr, &r->sc[i].st, ctx);
	for (size_t i = 0; i < r->nio; i++)
		io(r->io[i].slot, r->io[i].kind, &r->io[i].st, ctx);
	return r->failed ? -ENOMEM : 0;
}

void tracer_free_live_rows(struct tracer *t)
{
	if (!t->live)
		return;
	free(t->live->sc);
	free(t->live->io);
	free(t->live);
	t->live = NULL;
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

/* The records read, grown as found (a run has a few: not MAX_BLOCK_KEYS of 5.7 KB each). */
struct block_walk {
	struct block_record *recs;
	size_t n, cap;
	bool failed;
};

/* The next record of w, zeroed; NULL (and w->failed) when out of memory, or at the limit. */
static struct block_record *next_block(struct block_walk *w)
{
	if (w->n == MAX_BLOCK_KEYS)
		return NULL;
	if (VEC_ROOM(w->recs, w->n, w->cap)) {
		w->failed = true;
		return NULL;
	}
	return memset(&w->recs[w->n++], 0, sizeof(*w->recs));
}

static bool visit_block(const void *key, const void *value, void *ctx)
{
	struct block_walk *w = ctx;
	struct block_record *r;

	/* Made when a request started (block.bpf.c, prepare_keys), none completed yet. */
	if (!((const struct block_stat *)value)->requests)
		return false;
	if (!(r = next_block(w)))
		return true;
	r->key = *(const struct block_key *)key;
	r->st = *(const struct block_stat *)value;
	return false;
}

static bool visit_charged(const struct block_rq_info *info, void *ctx)
{
	struct block_walk *w = ctx;
	struct block_record *r;

	if (info->charge == CHARGE_NONE || !(r = next_block(w)))
		return false;
	r->key = (struct block_key){ .owner = info->tgid, .dev = info->dev, .op = info->op };
	r->st.requests = 1;
	r->st.bytes = info->bytes;
	return false;
}

/* The walk's records to *out (the caller frees them), or -1 out of memory. */
static int blocks_out(struct block_walk *w, struct block_record **out, size_t *n)
{
	*out = w->recs;
	*n = w->n;
	if (!w->failed)
		return 0;
	free(w->recs);
	*out = NULL;
	*n = 0;
	return -1;
}

int tracer_read_blocks(struct tracer *t, struct block_record **out, size_t *n)
{
	struct block_walk w = {};

	MAP_WALK(t, block_stats, visit_block, &w);
	return blocks_out(&w, out, n);
}

void tracer_forget_blocks(struct tracer *t, const struct block_key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(bpf_map__fd(t->skel->maps.block_stats), &keys[i]);
}

int tracer_read_charged_inflight(struct tracer *t, struct block_record **out, size_t *n)
{
	struct block_walk w = {};

	tracer_for_each_inflight(t, visit_charged, &w);
	return blocks_out(&w, out, n);
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

void tracer_forget_urings(struct tracer *t, const struct uring_key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(bpf_map__fd(t->skel->maps.uring_stats), &keys[i]);
}
