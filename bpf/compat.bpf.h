/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The compat build (HAVE_COMPAT=0 below: Makefile's iotrace_compat): the programs for kernels
 * whose verifier lacks what the other builds take for granted, the 5.10-5.16 kernels still in
 * service (Debian 11, Amazon Linux 2, RHEL 9's 5.14 where not backported). What each missing
 * feature is replaced by, and the kernel that brought it (the loader asks the kernel, by a
 * trial load, never by version: user/kernel/tracer_hooks.c):
 *
 * - bpf_loop and its callbacks (5.17; callbacks as BPF_PSEUDO_FUNC 5.13): a bounded loop the
 *   verifier unrolls, with the same callback called directly (BPF_LOOP).
 * - atomic fetch operations (fetch-add too), compare-and-swap, exchange and OR/AND (5.12):
 *   the plain read-modify-write under a lock taken by inserting the word's address into a
 *   hash map with BPF_NOEXIST (an insert is atomic under the bucket's lock): atomic against
 *   every other program; a store of the loader's (user space) between the read and the
 *   write is lost, which only ever leaks a slot or an entry bit the loader gave back
 *   (counted nowhere else). Plain atomic adds (BPF_XADD) exist on every kernel and stay;
 *   5.10 refuses the whole program for one fetch-add anywhere in it, dead code included
 *   ("BPF_STX uses reserved fields", before the verifier walks it).
 * - bpf_get_current_task_btf (5.11): bpf_get_current_task, its fields read with CO-RE probe
 *   reads (TASK_READ: a helper call each, where the other builds load directly).
 * - bpf_task_pt_regs (5.15) and bpf_find_vma (5.17): not used; --stacks and the interpreter
 *   an exec mapped are n/a there, and the renamed inodes' syscall is taken from the thread's
 *   state instead of its registers.
 */
#ifndef IOTRACE_COMPAT_BPF_H
#define IOTRACE_COMPAT_BPF_H

#ifndef HAVE_COMPAT
#define HAVE_COMPAT 0
#endif

/* Chunks of pages (CHUNK_SHIFT) one range marks at most in the compat build (256 MiB). */
#define COMPAT_MARK_CHUNKS 128

/*
 * A search over a bitmap's words, which the compat build unrolls: there a global function,
 * verified once on its own, whose callers go on from one state (its result a number)
 * instead of one per word the search may end at (256 of them times the rest of top_slot
 * and of the fork hook passed 5.10's million instructions). The other builds keep it as
 * it was (bpf_loop verifies one step): COMPAT_GLOBAL(what it is there).
 */
#if HAVE_COMPAT
#define COMPAT_GLOBAL(...) __noinline
#else
#define COMPAT_GLOBAL(...) __VA_ARGS__
#endif

#if !HAVE_COMPAT
#define current_task() bpf_get_current_task_btf()
#define TASK_READ(t, a, ...) ___arrow(t, a, ##__VA_ARGS__)
#define BPF_LOOP(n, cb, ctx, max) bpf_loop((n), (cb), (ctx), 0)
/* The same, their result unused: in the compat build these must not give up (below). */
#define ATOMIC_OR(p, v) ((void)__sync_fetch_and_or((p), (v)))
#define ATOMIC_AND(p, v) ((void)__sync_fetch_and_and((p), (v)))
#define ATOMIC_CMPXCHG(p, old, new) ((void)__sync_val_compare_and_swap((p), (old), (new)))
#define FETCH_OR(p, v) __sync_fetch_and_or((p), (v))
#define FETCH_AND(p, v) __sync_fetch_and_and((p), (v))
#define CMPXCHG(p, old, new) __sync_val_compare_and_swap((p), (old), (new))
#define XCHG(p, v) __sync_lock_test_and_set((p), (v))
/* A number handed out once (an index): the value before the add. */
#define TAKE_NEXT(p) __sync_fetch_and_add((p), 1)
/* A count that must never lose an add, and its value after this one (for thresholds). */
#define COUNT_ADD(p, v) (__sync_fetch_and_add((p), (v)) + (v))
#define FIND_VMA(task, addr, cb, ctx) bpf_find_vma((task), (addr), (cb), (ctx), 0)
#define TASK_PT_REGS(task) ((struct pt_regs *)bpf_task_pt_regs(task))
#else
#define current_task() ((struct task_struct *)bpf_get_current_task())
#define TASK_READ(t, a, ...) BPF_CORE_READ(t, a, ##__VA_ARGS__)
/* max: a constant bound of n, so the verifier sees the loop end. */
#define BPF_LOOP(n, cb, ctx, max)                                                            \
	do {                                                                                 \
		__u32 __n = (n);                                                             \
		for (__u32 __i = 0; __i < (max) && __i < __n; __i++)                          \
			if ((cb)(__i, (ctx)))                                                \
				break;                                                       \
	} while (0)

/* No bpf_find_vma: the callback is not called (the callers' results stay unset). */
#define FIND_VMA(task, addr, cb, ctx) ((void)(cb), 0)
#define TASK_PT_REGS(task) ((struct pt_regs *)0)

/*
 * The syscall number of the current thread, from its user registers at the top of its
 * kernel stack (task_pt_regs() of x86_64 and arm64 without KASAN's larger stacks).
 */
#define COMPAT_THREAD_SIZE (4096 << 2)
static __always_inline __u64 compat_syscall_nr(struct task_struct *task)
{
	struct pt_regs *regs = (struct pt_regs *)((__u64)BPF_CORE_READ(task, stack) +
						  COMPAT_THREAD_SIZE) - 1;
	__u64 nr = ~0ULL;

	bpf_probe_read_kernel(&nr, sizeof(nr), &SC_NR(regs));
	return nr;
}

/* Addresses whose word a program is changing: the lock of COMPAT_RMW. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, __u8);
	__uint(max_entries, 1024);
} compat_locks SEC(".maps");

/*
 * A holder keeps the lock for a load and a store, never across a wait. Claims (a result
 * used) try once: their callers already retry, or move to the next word, and each try is a
 * branch the verifier explores in every iteration of their loops (5.10 refuses more than
 * 8,192 pending: "The sequence of 8193 jumps is too complex"). Updates whose result is
 * unused (a bit given back, a key to read) must not be lost: COMPAT_MUST_TRIES.
 */
#define COMPAT_MUST_TRIES 8
static __always_inline bool compat_lock(void *p, int tries)
{
	__u64 key = (__u64)p;
	__u8 one = 1;

	for (int i = 0; i < tries; i++)
		if (!bpf_map_update_elem(&compat_locks, &key, &one, BPF_NOEXIST))
			return true;
	return false;
}

static __always_inline void compat_unlock(void *p)
{
	__u64 key = (__u64)p;

	bpf_map_delete_elem(&compat_locks, &key);
}

/*
 * *p = expr(__old) under the lock; the old value. Without the lock (eight inserts failed)
 * nothing is written and fail is returned, a value each caller reads as "another CPU took
 * it" (a bit given back then stays taken: a slot or entry lost, never one given twice).
 */
#define COMPAT_RMW(p, expr, fail, tries)                                                     \
	({                                                                                   \
		typeof(*(p)) __old = (fail);                                                 \
		if (compat_lock((void *)(p), (tries))) {                                     \
			__old = *(volatile typeof(*(p)) *)(p);                               \
			*(volatile typeof(*(p)) *)(p) = (expr);                              \
			compat_unlock((void *)(p));                                          \
		}                                                                            \
		__old;                                                                       \
	})
/* A bit claimed by OR is free where it was clear; one claimed by AND, where it was set. */
#define FETCH_OR(p, v) COMPAT_RMW(p, __old | (v), (typeof(*(p)))~0ULL, 1)
#define FETCH_AND(p, v) COMPAT_RMW(p, __old & (v), 0, 1)
#define XCHG(p, v) COMPAT_RMW(p, (v), 0, 1)
#define CMPXCHG(p, o, n) COMPAT_RMW(p, __old == (o) ? (n) : __old, ~(o), 1)
/*
 * Fetch-and-add (BPF_FETCH, 5.12): an index handed out under the lock, all ones (none: the
 * caller's table-full path) without it; a count by the plain atomic add, never lost, read
 * back after it (another CPU's add may be in the value: a threshold crossed at once by two
 * is seen by neither, and the loader, which also polls the count, takes it up).
 */
#define TAKE_NEXT(p) COMPAT_RMW(p, __old + 1, (typeof(*(p)))~0ULL, COMPAT_MUST_TRIES)
#define COUNT_ADD(p, v)                                                                      \
	({                                                                                   \
		__sync_fetch_and_add((p), (v));                                              \
		*(volatile typeof(*(p)) *)(p);                                               \
	})
#define ATOMIC_OR(p, v) ((void)COMPAT_RMW(p, __old | (v), 0, COMPAT_MUST_TRIES))
#define ATOMIC_AND(p, v) ((void)COMPAT_RMW(p, __old & (v), 0, COMPAT_MUST_TRIES))
#define ATOMIC_CMPXCHG(p, o, n)                                                              \
	((void)COMPAT_RMW(p, __old == (o) ? (n) : __old, 0, COMPAT_MUST_TRIES))
#endif

#endif /* IOTRACE_COMPAT_BPF_H */
