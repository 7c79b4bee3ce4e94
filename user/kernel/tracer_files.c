// SPDX-License-Identifier: GPL-2.0
/*
 * The per-file ledger's readers: entries with their syscall rows and page bitmaps, and
 * per-file block records (names arrive as events: tracer_config.on_name). Entries leave the kernel while the run goes on (their process
 * exited, or their file has not been used lately), so its tables hold what is in use.
 *
 * Taking an entry that programs may still be using: its key leaves file_index and its gen
 * changes (so no new event finds it: the per-thread caches check gen), then a grace period
 * (membarrier(MEMBARRIER_CMD_GLOBAL) is synchronize_rcu(); every tracepoint program runs
 * inside an RCU read-side section) lets every program that found it before finish; then
 * nothing writes it, and it is read and recycled. The same for the per-file block table,
 * whose keys carry an epoch the kernel reads from block_epoch.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include "model/files.h"
#include "tracer_impl.h"
#include "util/vec.h"

/*
 * Waits until every BPF program that started before this call has finished. Tracepoint
 * programs run with preemption off (the kernel's __bpf_trace_run asserts cant_sleep(); the
 * faultable syscall tracepoints disable it around their BPF probes), so once this thread
 * has run on every online CPU, each of them has scheduled since the call and has left any
 * program it was in. A migration per CPU takes well under a millisecond, where an RCU grace
 * period (membarrier(MEMBARRIER_CMD_GLOBAL) is synchronize_rcu()) took 5 to 50 ms under
 * tar, long enough for tar to fill the ledger's table twice in a row (docs/files.md). The
 * grace period stays the fallback: a CPU this thread may not run on, an affinity call
 * refused, a PREEMPT_RT kernel, a kernel other than 6.x. nohz_full kernels refuse
 * membarrier too; programs run for microseconds, so a pause will do there.
 */
static bool visit_every_cpu(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN), visited = 0;
	cpu_set_t old, one;
	struct utsname u;
	bool ok;

	/*
	 * PREEMPT_RT runs programs with migration, not preemption, off: there only RCU will do.
	 * The preemption rule was read in 6.x's bpf_trace.c and bpf_probe.h: later kernels get
	 * the grace period until someone reads theirs.
	 */
	if (online < 1 || !access("/sys/kernel/realtime", F_OK) || uname(&u) ||
	    atoi(u.release) != 6 || sched_getaffinity(0, sizeof(old), &old))
		return false;
	for (int cpu = 0; cpu < CPU_SETSIZE && visited < online; cpu++) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		visited += !sched_setaffinity(0, sizeof(one), &one); /* offline: EINVAL */
	}
	ok = visited == online;
	return !sched_setaffinity(0, sizeof(old), &old) && ok;
}

static void grace_period(void)
{
	if (!visit_every_cpu() && syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(20000);
}

static uint32_t nr_entries(struct tracer *t)
{
	uint32_t n = t->skel->bss->nr_files;

	return n < MAX_FILES ? n : MAX_FILES;
}

/* Entry i's counters and rows, raw. */
static int read_entry(struct tracer *t, uint32_t i, struct ledger_entry *e)
{
	const struct file_stat *st = &t->files[i];

	memset(e, 0, sizeof(*e));
	e->idx = i;
	e->st = *st;
	e->chunks_lost = t->skel->bss->drops[DROP_CHUNKS] != 0;
	for (uint32_t op = 1; op < FILE_OP_SLOTS; op++) {
		uint32_t row = e->st.row[op];
		struct ledger_row *r;

		if (!row || row > MAX_FILE_ROWS || !t->rows[row - 1].calls)
			continue; /* none, or kept from the slot's previous file and unused */
		r = VEC_PUSH(e->rows, e->nrows);
		if (!r)
			return -ENOMEM;
		*r = (struct ledger_row){ .op = op, .row = t->rows[row - 1] };
	}
	return 0;
}

static int add_chunk(struct page_bits *bits, uint64_t chunk, const struct chunk_bits *b)
{
	struct page_chunk *c = VEC_PUSH(bits->chunks, bits->n);

	if (!c)
		return -ENOMEM;
	*c = (struct page_chunk){ .chunk = chunk, .bits = *b };
	return 0;
}

/* The entry's first chunk, which the kernel keeps in the entry itself (file_stat.chunk0). */
static int add_first_chunk(struct ledger_entry *e)
{
	static const struct chunk_bits none;

	if (!memcmp(&e->st.chunk0, &none, sizeof(none)))
		return 0;
	return add_chunk(&e->bits, 0, &e->st.chunk0);
}

/* Deletes the keys (size each) from a hash map, in batches, going past missing ones. */
static void delete_keys(int fd, const void *keys, uint32_t n, size_t size)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t done = 0;

	while (done < n) {
		__u32 count = n - done;

		if (!bpf_map_delete_batch(fd, (const char *)keys + done * size, &count, &opts))
			return;
		/* count: deleted before the failing key, which is missing (or the call failed). */
		if (count == 0 && bpf_map_delete_elem(fd, (const char *)keys + done * size) &&
		    errno != ENOENT)
			return;
		done += count + 1;
	}
}

/*
 * Entry i's page-bitmap chunks, read into e and removed from the kernel: the first from the
 * entry (recycling zeroes it), the others from page_bits. An entry that read nothing ahead
 * has no unused readahead to count: its chunks are only deleted (the caller's batch in
 * gone[]).
 */
static void take_chunks(struct tracer *t, uint32_t i, struct ledger_entry *e,
			struct chunk_key *gone, uint32_t *ngone, uint32_t room)
{
	int fd = bpf_map__fd(t->skel->maps.page_bits);

	if (e->st.ra_pages && add_first_chunk(e))
		e->chunks_lost = true;
	/* The compat build keeps the first chunk in page_bits too (pagecache.bpf.c). */
	for (__u64 c = t->build == BUILD_COMPAT ? 0 : 1; c < e->st.chunk_end; c++) {
		struct chunk_key ck = { .file = i, .chunk = c };
		struct chunk_bits bits;

		if (!e->st.ra_pages && *ngone < room) {
			gone[(*ngone)++] = ck;
			continue;
		}
		if (map_take(fd, &ck, &bits)) /* the entry is retired: no program writes it */
			continue;
		if (add_chunk(&e->bits, c, &bits))
			e->chunks_lost = true;
	}
}

/*
 * No new event can find the entries in idx[] (their keys leave file_index, their gen
 * changes); a grace period must follow before they are read.
 */
static void retire_entries(struct tracer *t, const uint32_t *idx, size_t n)
{
	struct file_key *keys = malloc((n + 1) * sizeof(*keys));

	for (size_t k = 0; k < n; k++) {
		if (keys)
			keys[k] = t->files[idx[k]].key;
		else
			bpf_map_delete_elem(bpf_map__fd(t->skel->maps.file_index),
					    &t->files[idx[k]].key);
		__atomic_add_fetch(&t->files[idx[k]].gen, 1, __ATOMIC_SEQ_CST);
	}
	if (keys)
		delete_keys(bpf_map__fd(t->skel->maps.file_index), keys, n, sizeof(*keys));
	free(keys);
}

static bool rows_scarce(struct tracer *t)
{
	return __atomic_load_n(&t->skel->bss->rows_taken, __ATOMIC_RELAXED) >= MAX_FILE_ROWS / 2;
}

/*
 * A recycled entry's row back to the programs: a bit set in place, or in the compat build
 * pushed on its queue (a syscall). False when the queue refused it (never: it holds every
 * row).
 */
static bool give_row_back(struct tracer *t, uint32_t row)
{
	if (t->build == BUILD_COMPAT)
		return !bpf_map_update_elem(bpf_map__fd(t->skel->maps.free_rows_queue), NULL, &row,
					    BPF_ANY);
	__atomic_fetch_or(&t->skel->bss->free_rows[row / 64], 1ULL << (row % 64),
			  __ATOMIC_SEQ_CST);
	return true;
}

/*
 * Entry i, read, back to the free list with its gen, and its rows back to the programs'
 * free rows. Rows left with a free entry for its next file gathered every call its earlier
 * files made: files of many kinds of use (a machine's, in top) used up the table (33,269 of
 * 96,004 calls lost in 12,000 files of mixed calls). The programs zero a row when they
 * take it; one the queue refused stays with the entry, zeroed.
 */
static void recycle_entry(struct tracer *t, uint32_t i)
{
	struct file_stat *st = &t->files[i];
	uint32_t gen = st->gen, rows[FILE_OP_SLOTS];

	memcpy(rows, st->row, sizeof(rows));
	for (uint32_t op = 1; op < FILE_OP_SLOTS; op++) {
		uint32_t row = rows[op] - 1;

		if (!rows[op] || rows[op] > MAX_FILE_ROWS)
			continue;
		if (give_row_back(t, row)) {
			rows[op] = 0;
			__atomic_sub_fetch(&t->skel->bss->rows_taken, 1, __ATOMIC_SEQ_CST);
		} else {
			memset(&t->rows[row], 0, sizeof(t->rows[0]));
		}
	}
	memset(st, 0, sizeof(*st));
	memcpy(st->row, rows, sizeof(rows));
	st->gen = gen;
	__atomic_store_n(&t->skel->bss->file_owners[i], 0, __ATOMIC_RELAXED);
	__atomic_fetch_or(&t->skel->bss->free_files[i / 64], 1ULL << (i % 64), __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&t->skel->bss->files_live, 1, __ATOMIC_SEQ_CST);
}

/* Entries read and recycled at once by take_entries: ~0.8 KiB each. */
#define TAKE_BATCH 256

/*
 * Reads the entries in idx[] (retired, grace period past) and recycles them, TAKE_BATCH at
 * a time, then hands each batch to fn: the kernel gets its entries back before the loader
 * spends time on them (tar opens thousands of files a second), and a copy of the whole
 * table is never held (~0.8 KiB per entry on top of the loader's peak memory).
 */
static int take_entries(struct tracer *t, const uint32_t *idx, size_t n, ledger_entry_fn fn,
			void *ctx)
{
	/* No more room than the entries need: a short process has a few (not 256 KiB zeroed). */
	const size_t batch = n < TAKE_BATCH ? n : TAKE_BATCH;
	const uint32_t room = 4 * batch; /* chunk keys deleted in one batch */
	struct ledger_entry *e;
	struct chunk_key *gone;
	int err = 0;

	if (!n)
		return 0;
	e = calloc(batch, sizeof(*e));
	gone = malloc(room * sizeof(*gone));
	for (size_t at = 0; e && gone && at < n; at += TAKE_BATCH) {
		size_t m = n - at < TAKE_BATCH ? n - at : TAKE_BATCH;
		uint32_t ngone = 0;

		for (size_t k = 0; k < m; k++) {
			if (read_entry(t, idx[at + k], &e[k]))
				err = -ENOMEM;
			take_chunks(t, idx[at + k], &e[k], gone, &ngone, room);
		}
		delete_keys(bpf_map__fd(t->skel->maps.page_bits), gone, ngone, sizeof(*gone));
		/* Only now: a recycled entry may be taken at once, and its chunks must be gone. */
		for (size_t k = 0; k < m; k++)
			recycle_entry(t, idx[at + k]);
		for (size_t k = 0; k < m; k++) {
			fn(&e[k], ctx);
			ledger_entry_free(&e[k]);
		}
	}
	if (!e || !gone)
		err = -ENOMEM;
	free(e);
	free(gone);
	return err;
}

int tracer_take_files(struct tracer *t, uint32_t owner, ledger_entry_fn fn, void *ctx)
{
	const __u32 *owners = t->skel->bss->file_owners;
	uint32_t count = nr_entries(t), *idx = NULL;
	size_t k = 0, cap = 0;
	int err;

	/*
	 * The owner exited: none of its threads can find its entries any more. Found by the
	 * dense owners' array; the entry's own key has the last word.
	 */
	for (uint32_t i = 0; owner && i < count; i++) {
		if (__atomic_load_n(&owners[i], __ATOMIC_RELAXED) != owner ||
		    t->files[i].key.owner != owner)
			continue;
		if (VEC_ROOM(idx, k, cap)) {
			free(idx);
			return -ENOMEM;
		}
		idx[k++] = i;
	}
	retire_entries(t, idx, k);
	err = take_entries(t, idx, k, fn, ctx);
	free(idx);
	return err;
}

struct aged {
	uint32_t idle; /* epochs since its last use */
	uint32_t idx;
};

static int cmp_idle(const void *a, const void *b)
{
	const struct aged *x = a, *y = b;

	return (x->idle < y->idle) - (x->idle > y->idle);
}

/*
 * The entries not used longest, as many as bring the table down to a quarter full, of those
 * idle for `age` epochs at least; none while it is under half full. Files stay in the kernel
 * as long as the table's room allows, so a slow reader keeps one entry (and its page
 * bitmaps) for its file. Returns how many of cand[] to take.
 */
static size_t choose_idle(struct tracer *t, uint32_t age, struct aged *cand, uint32_t count)
{
	uint32_t now = t->skel->bss->ledger_epoch;
	size_t live = 0, n = 0;

	for (uint32_t i = 0; i < count; i++) {
		if (!t->files[i].key.owner)
			continue;
		live++;
		if (now - t->files[i].epoch >= age)
			cand[n++] = (struct aged){ .idle = now - t->files[i].epoch, .idx = i };
	}
	if (live < MAX_FILES / 2)
		return 0;
	qsort(cand, n, sizeof(*cand), cmp_idle);
	return n < live - MAX_FILES / 4 ? n : live - MAX_FILES / 4;
}

int tracer_evict_idle(struct tracer *t, uint32_t age, ledger_entry_fn fn, void *ctx, size_t *n)
{
	uint32_t count = nr_entries(t), *idx;
	struct aged *cand;
	size_t k;
	int err;

	*n = 0;
	if (count < MAX_FILES / 2 && !rows_scarce(t))
		return 0;
	cand = malloc(count * sizeof(*cand));
	idx = calloc(count, sizeof(*idx));
	if (!cand || !idx) {
		free(cand);
		free(idx);
		return -ENOMEM;
	}
	k = choose_idle(t, age, cand, count);
	for (size_t i = 0; i < k; i++)
		idx[i] = cand[i].idx;
	retire_entries(t, idx, k);
	if (k)
		grace_period();
	err = take_entries(t, idx, k, fn, ctx);
	*n = k;
	free(cand);
	free(idx);
	return err;
}

void tracer_tick(struct tracer *t)
{
	__atomic_add_fetch(&t->skel->bss->ledger_epoch, 1, __ATOMIC_RELAXED);
}

/* ---- at the end, or for a scrape: every entry, left in place ---- */

/* Each entry's page-bitmap chunks, by entry index. */
struct chunk_walk {
	struct page_bits *bits;
	uint32_t n;
	int err;
};

static bool visit_chunk(const void *key, const void *value, void *ctx)
{
	const struct chunk_key *k = key;
	struct chunk_walk *w = ctx;

	if (k->file < w->n && add_chunk(&w->bits[k->file], k->chunk, value))
		w->err = -ENOMEM;
	return false;
}

/* Every entry with an owner to fn, left in place; bits: with its page bitmaps. */
static int read_all(struct tracer *t, bool bits, ledger_entry_fn fn, void *ctx)
{
	uint32_t count = nr_entries(t);
	struct chunk_walk w = { .bits = calloc(count ? count : 1, sizeof(*w.bits)), .n = count };
	struct ledger_entry e;
	bool chunks_lost;

	if (!w.bits)
		return -ENOMEM;
	if (bits && MAP_WALK(t, page_bits, visit_chunk, &w))
		w.err = -ENOMEM;
	chunks_lost = w.err != 0;
	for (uint32_t i = 0; i < count; i++) {
		/* Owner 0: a free entry, or one made by a CPU that then found the key taken. */
		if (t->files[i].key.owner) {
			if (read_entry(t, i, &e))
				w.err = -ENOMEM;
			e.chunks_lost |= chunks_lost;
			e.bits = w.bits[i];
			w.bits[i] = (struct page_bits){ 0 };
			if (bits && add_first_chunk(&e))
				w.err = -ENOMEM;
			fn(&e, ctx);
			ledger_entry_free(&e);
		}
		free(w.bits[i].chunks);
	}
	free(w.bits);
	return w.err;
}

int tracer_read_files(struct tracer *t, ledger_entry_fn fn, void *ctx)
{
	return read_all(t, true, fn, ctx);
}

int tracer_peek_files(struct tracer *t, ledger_entry_fn fn, void *ctx)
{
	return read_all(t, false, fn, ctx);
}

void tracer_forget_names(struct tracer *t, const struct path_key *keys, size_t n)
{
	delete_keys(bpf_map__fd(t->skel->maps.named), keys, n, sizeof(*keys));
}

struct key_list {
	void *keys;
	size_t n, size;
	int err;
};

static void add_key(struct key_list *l, const void *key)
{
	void *slot = vec_append(&l->keys, l->n, l->size);

	if (!slot) {
		l->err = -ENOMEM;
		return;
	}
	memcpy(slot, key, l->size);
	l->n++;
}

/* ---- per-file block records ---- */

struct block_walk {
	tracer_file_block_fn fn;
	void *ctx;
	int epoch; /* the generation to take, or -1 for all */
	struct key_list taken;
};

static bool visit_file_block(const void *key, const void *value, void *ctx)
{
	const struct file_block_key *k = key;
	struct block_walk *w = ctx;

	if (w->epoch >= 0 && k->epoch != w->epoch)
		return false;
	/* A key made when a request started (block.bpf.c, prepare_keys): nothing to add. */
	if (((const struct file_block_stat *)value)->requests)
		w->fn(k, value, w->ctx);
	add_key(&w->taken, key);
	return false;
}

int tracer_take_file_blocks(struct tracer *t, bool all, tracer_file_block_fn fn, void *ctx)
{
	struct block_walk w = { fn, ctx, -1, { .size = sizeof(struct file_block_key) } };
	int fd = bpf_map__fd(t->skel->maps.file_blocks);
	int err;

	if (!all) {
		/* The kernel fills the other generation from now on. */
		w.epoch = __atomic_fetch_add(&t->skel->bss->block_epoch, 1, __ATOMIC_SEQ_CST) & 1;
		__atomic_store_n(&t->skel->bss->file_blocks_new, 0, __ATOMIC_SEQ_CST);
		grace_period();
	}
	err = MAP_WALK(t, file_blocks, visit_file_block, &w);
	for (size_t i = 0; i < w.taken.n; i++)
		bpf_map_delete_elem(fd, (char *)w.taken.keys + i * w.taken.size);
	free(w.taken.keys);
	return err ? err : w.taken.err;
}

bool tracer_files_filling(struct tracer *t)
{
	return __atomic_load_n(&t->skel->bss->files_live, __ATOMIC_RELAXED) >= MAX_FILES / 2 ||
	       rows_scarce(t);
}

bool tracer_file_blocks_filling(struct tracer *t)
{
	return __atomic_load_n(&t->skel->bss->file_blocks_new, __ATOMIC_RELAXED) >=
	       MAX_FILE_BLOCKS / 4;
}

/* ---- requests whose completion the kernel skipped ---- */

struct unseen_walk {
	tracer_file_block_fn fn;
	void *ctx;
};

static bool visit_unseen(const struct block_rq_info *info, void *ctx)
{
	struct unseen_walk *u = ctx;
	struct file_block_key key = {
		.owner = info->tgid, .fdev = info->ino ? info->fdev : 0, .ino = info->ino,
		.igen = info->ino ? info->igen : 0, .disk = info->dev, .op = info->op,
	};
	struct file_block_stat st = { .requests = 1, .bytes = info->bytes };

	if (info->charge != CHARGE_NONE)
		u->fn(&key, &st, u->ctx);
	return false;
}

void tracer_unseen_file_blocks(struct tracer *t, tracer_file_block_fn fn, void *ctx)
{
	struct unseen_walk u = { fn, ctx };

	tracer_for_each_inflight(t, visit_unseen, &u);
}
