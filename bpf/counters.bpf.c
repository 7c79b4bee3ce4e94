// SPDX-License-Identifier: GPL-2.0
/*
 * Part of bpf/iotrace.bpf.c, which builds every part into one object.
 *
 * Where a process's syscall and read/write-family counters are kept (iotrace.h, "per-CPU
 * caches"): each CPU has a small cache of rows tagged by (slot, syscall) or (slot, kind),
 * which only that CPU's sys_exit increments, plainly; a row is found from its tag (hashed,
 * or for I/O rows laid out by slot: IO_CACHE_ROW), one inlined array lookup, as the
 * [cpu][slot] regions before. A row wanted for another tag is first moved into the totals
 * (sc_totals, io_totals) with atomics. The loader takes a dead slot's rows by swapping their
 * tag to CACHE_CLAIMED; a CPU that finds its row so claimed counts that call into the
 * totals directly.
 *
 * Memory: ncpus x (SC_CACHE_ROWS x 40 B + IO_CACHE_ROWS x 2.8 KiB), ~130 KiB a CPU, plus
 * totals for the rows moved out; none of it per slot, so every live process (up to
 * MAX_SLOTS) gets its own counters on any number of CPUs.
 *
 * Every key that takes a row is marked in its slot's marks (seen) first: the loader
 * then reads a slot's rows where its keys hash to, on each CPU, instead of every row of
 * every CPU.
 */

/* Multiplicative hash of a tag to a row of a CPU's cache of rows rows. */
static __always_inline __u32 cache_row(__u32 cpu, __u32 tag, __u32 rows)
{
	return CACHE_ROW(cpu, tag, rows);
}

/* The CPU moves a row into the totals: its cache_moves counter is odd meanwhile. */
static __always_inline void moving(__u32 cpu)
{
	__u64 *seq = bpf_map_lookup_elem(&cache_moves, &cpu);

	if (seq)
		__sync_fetch_and_add(seq, 1);
}

static __always_inline void sc_add_totals(__u32 tag, const struct syscall_stat *st)
{
	static const struct syscall_stat zero;
	struct syscall_stat *t = lookup_or_init(&sc_totals, &tag, &zero, DROP_TOTALS, NULL);
	struct slot_marks *m = marks_of(TAG_SLOT_SC(tag));
	__u32 nr = (tag - 1) % MAX_SYSCALLS;

	if (!t)
		return;
	__sync_fetch_and_add(&t->calls, st->calls);
	__sync_fetch_and_add(&t->errors, st->errors);
	__sync_fetch_and_add(&t->total_ns, st->total_ns);
	__sync_fetch_and_add(&t->timed, st->timed);
	if (m)
		ATOMIC_OR(&m->sc_moved[nr / 64], 1ULL << (nr % 64));
}

/*
 * Claims a cache row for its taker: *old gets the tag it had (0: empty, nothing to move).
 * -1 when the loader has it claimed, or took it first. A row with counts is claimed with
 * the CPU's cache_moves already odd: a loader that finds the row claimed and then reads the
 * counter even again knows the counts are in the totals. (Claimed first and counted as
 * moving after, the counts of a dead slot could reach its totals after the loader took
 * them, and count for the slot's next process.) The caller ends the move (moving) when
 * *old is not 0.
 */
static __always_inline int claim_row(__u32 cpu, __u32 *tag, __u32 *old)
{
	*old = *(volatile __u32 *)tag;
	if (*old == CACHE_CLAIMED)
		return -1;
	if (!*old)
		return 0;
	moving(cpu);
	if (CMPXCHG(tag, *old, CACHE_CLAIMED) != *old) {
		moving(cpu);
		return -1;
	}
	return 0;
}

/*
 * Takes the row at idx of this CPU's syscall cache for tag: its counts so far to the
 * totals, then zeroed. 0, or -1 when the loader has it claimed (count into the totals).
 * Global: verified once, and only a miss pays for the call.
 */
__noinline int sc_row_take(__u32 cpu, __u32 idx, __u32 tag)
{
	struct sc_cache_row *row = bpf_map_lookup_elem(&sc_cache, &idx);
	struct slot_marks *m = marks_of(TAG_SLOT_SC(tag));
	__u32 old, nr = (tag - 1) % MAX_SYSCALLS;

	/* Before the tag: a row of the key is never where the loader would not look. */
	if (m)
		ATOMIC_OR(&m->sc_seen[nr / 64], 1ULL << (nr % 64));
	if (!row || claim_row(cpu, &row->tag, &old))
		return -1;
	if (old) {
		sc_add_totals(old, &row->st);
		moving(cpu);
	}
	__builtin_memset(&row->st, 0, sizeof(row->st));
	row->tag = tag;
	return 0;
}

/* One call counted straight into the totals (its row is claimed by the loader). */
__noinline int sc_count_totals(__u32 tag, __u64 errors, __u64 total_ns, __u64 timed)
{
	struct syscall_stat st = { .calls = 1, .errors = errors, .total_ns = total_ns,
				   .timed = timed };

	sc_add_totals(tag, &st);
	return 0;
}

/* ---- the read/write family's sizes and histograms ---- */

#define IO_WORDS (sizeof(struct io_stat) / 8)

struct io_move {
	__u64 *from, *to;
	__u32 used; /* the row's used groups */
	__u32 base; /* io_move_word's word 0 (a group's first) */
};

/*
 * Word base + i of an io_stat into the totals, and zeroed (an empty row is all zeros: the
 * loader zeroes a row it takes, and 2.8 KiB is too much for one memset here). Min + 1 and
 * max go by compare-and-swap.
 */
static long io_move_word(__u32 i, void *data)
{
	struct io_move *m = data;
	__u64 v, old;

	i += m->base;
	if (i >= IO_WORDS)
		return 1;
	v = m->from[i];
	if (!v)
		return 0;
	m->from[i] = 0;
	if (!m->to) /* the totals had no room (counted): zeroed only */
		return 0;
	if (i == __builtin_offsetof(struct io_stat, size_min_plus1) / 8 ||
	    i == __builtin_offsetof(struct io_stat, lat_min_plus1) / 8) {
		for (int tries = 0; tries < 8; tries++) {
			old = m->to[i];
			if ((old && old <= v) || CMPXCHG(&m->to[i], old, v) == old)
				break;
		}
	} else if (i == __builtin_offsetof(struct io_stat, size_max) / 8 ||
		   i == __builtin_offsetof(struct io_stat, lat_max) / 8) {
		for (int tries = 0; tries < 8; tries++) {
			old = m->to[i];
			if (old >= v || CMPXCHG(&m->to[i], old, v) == old)
				break;
		}
	} else {
		__sync_fetch_and_add(&m->to[i], v);
	}
	return 0;
}

#if !HAVE_COMPAT
/*
 * The words of group g of a row into the totals, if the row used that group: a short
 * process's row, moved when the CPU's next process wants its place, has used a few of the
 * 22 groups, and a callback per word (351 of them) was half of sys_exit's profile samples
 * while sh started /bin/true in a loop (docs/startup.md).
 */
static long io_move_group(__u32 g, void *data)
{
	struct io_move *m = data;

	if (g >= IO_GROUPS)
		return 1;
	if (!((m->used >> g) & 1))
		return 0;
	m->base = g * IO_GROUP_WORDS;
	bpf_loop(IO_GROUP_WORDS, io_move_word, m, 0);
	return 0;
}
#endif

#if HAVE_COMPAT
/*
 * compat: the histograms' words of row idx (plain sums, io_stat's last) into old's totals
 * and zeroed; the words before them (the minima and maxima) go one by one by io_move_word.
 * A global function with a loop the verifier walks once a word, with only the value to
 * branch on: ~350 words of io_move_word unrolled took 167,000 of sys_exit's 208,000
 * instructions to verify, and in io_row_take's loop each state that reached it walked it.
 */
#define IO_PLAIN_FIRST (__builtin_offsetof(struct io_stat, size_hist) / 8)
_Static_assert(__builtin_offsetof(struct io_stat, lat_max) / 8 < IO_PLAIN_FIRST &&
		       __builtin_offsetof(struct io_stat, lat_hist) / 8 > IO_PLAIN_FIRST,
	       "the histograms are io_stat's last words, summed");

__noinline int io_move_sums(__u32 idx, __u32 old)
{
	struct io_cache_row *row = bpf_map_lookup_elem(&io_cache, &idx);
	__u64 *to = bpf_map_lookup_elem(&io_totals, &old), *from;

	if (!row)
		return 0;
	from = (__u64 *)&row->st;
	if (!to) { /* the totals had no room (counted): zeroed only */
		for (__u32 i = IO_PLAIN_FIRST; i < IO_WORDS; i++)
			*(volatile __u64 *)&from[i] = 0; /* not a memset: no such call in BPF */
		return 0;
	}
	for (__u32 i = IO_PLAIN_FIRST; i < IO_WORDS; i++) {
		__u64 v = from[i];

		if (v) {
			from[i] = 0;
			__sync_fetch_and_add(&to[i], v);
		}
	}
	return 0;
}
#endif

/*
 * The same for the I/O cache: a row's sizes and histograms into the totals (a loop over
 * the groups of words its calls used: only a miss pays it, about when a CPU switches
 * between processes).
 */
__noinline int io_row_take(__u32 cpu, __u32 idx, __u32 tag)
{
	static const struct io_stat zero;
	struct io_cache_row *row = bpf_map_lookup_elem(&io_cache, &idx);
	struct slot_marks *marks = marks_of(TAG_SLOT_IO(tag));
	struct io_move m = {};
	struct io_stat *t;
	__u32 old;

	if (marks)
		ATOMIC_OR(&marks->io_seen, 1u << ((tag - 1) & 15));
	if (!row || claim_row(cpu, &row->tag, &old))
		return -1;
	if (old) {
		t = lookup_or_init(&io_totals, &old, &zero, DROP_TOTALS, NULL);
		m.from = (__u64 *)&row->st;
		m.to = (__u64 *)t;
#if HAVE_COMPAT
		for (__u32 i = 0; i < IO_PLAIN_FIRST; i++)
			io_move_word(i, &m);
		io_move_sums(idx, old);
#else
		m.used = row->used;
		bpf_loop(IO_GROUPS, io_move_group, &m, 0);
#endif
		marks = marks_of(TAG_SLOT_IO(old));
		if (t && marks)
			ATOMIC_OR(&marks->io_moved, 1u << ((old - 1) & 15));
		moving(cpu);
	}
	row->used = 0; /* every word is zero now */
	row->tag = tag;
	return 0;
}
