/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Maps and globals shared by the tracer's kernel programs (the parts of iotrace.bpf.c).
 * Sizes marked "set at load" are adjusted by the loader before the object is loaded.
 */
#ifndef IOTRACE_MAPS_BPF_H
#define IOTRACE_MAPS_BPF_H

#define BUCKETS_INLINE static __always_inline
#define MASKS_INLINE static __always_inline
#include "iotrace.h"
#include "masks.h"
#include "regs.bpf.h"
#include "compat.bpf.h"

/* Slot of each traced process: four u16 per element, indexed by tgid (set at load: pid_max/4). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 32768 / 4);
} proc_slot SEC(".maps");

/* Per-CPU caches of (slot, syscall) counters: [cpu][SC_CACHE_ROWS] (set at load). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct sc_cache_row);
	__uint(max_entries, 1);
} sc_cache SEC(".maps");

/* Per-CPU caches of (slot, I/O kind) sizes and histograms: [cpu][IO_CACHE_ROWS]. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct io_cache_row);
	__uint(max_entries, 1);
} io_cache SEC(".maps");

/*
 * The counts of rows taken from the caches for another key, by (slot, syscall) and (slot,
 * I/O kind): they grow with the keys whose rows were evicted, not with CPUs or slots.
 * Added to with atomics; never made in interrupt context (syscalls only).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* SC_TAG */
	__type(value, struct syscall_stat);
	__uint(max_entries, 1 << 17);
} sc_totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* IO_TAG */
	__type(value, struct io_stat);
	__uint(max_entries, 1 << 14);
} io_totals SEC(".maps");

/*
 * Per CPU, a counter made odd while the CPU moves a row into the totals and even again
 * after: the loader reads caches and totals together only between two such moves.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1); /* ncpus */
} cache_moves SEC(".maps");

/* Each thread's syscall state (thread_io), indexed by tid & inflight_mask (set at load). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct thread_io);
	__uint(max_entries, 1);
} inflight SEC(".maps");

/* Process lifecycle events (fork, exec, exit, rename): rare, so a ring buffer is cheap. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} proc_events SEC(".maps");

/*
 * Run mode and top: each slot's process (struct slot_proc), written at its fork (top: when
 * it gets its slot), exec, rename and exit and kept until the loader frees the slot: the
 * ring buffer's events are notices, and the loader reads this table when some were lost
 * (bpf/proc.bpf.c). nr_slots rows.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct slot_proc);
	__uint(max_entries, MAX_SLOTS);
} slot_procs SEC(".maps");

/* Set by the loader before load. */
const volatile __u32 nr_slots = MAX_SLOTS;
const volatile __u32 inflight_mask = 0;
const volatile bool timing = true;
/* With timing: 0 times every call (--time-all), else the mean gap between timed calls. */
const volatile __u32 sample_period = 0;
/* Syscall numbers resolved by the loader from libseccomp, so none is typed by hand here. */
const volatile __u32 nr_execve = 0;
const volatile __u32 nr_execveat = 0;
const volatile __u32 nr_rt_sigreturn = 0;
const volatile __u32 nr_fork = 0;
const volatile __u32 nr_vfork = 0;
const volatile __u32 nr_clone = 0;
const volatile __u32 nr_clone3 = 0;
const volatile __u32 nr_rename = 0;
const volatile __u32 nr_renameat = 0;
const volatile __u32 nr_renameat2 = 0;
const volatile __u8 io_kind_of[MAX_SYSCALLS] = {};
/* The ledger's op of each syscall (FILE_OPS, or FOP_NAMING; bpf/ledger.bpf.c, names.bpf.c). */
const volatile __u8 file_op_of[MAX_SYSCALLS] = {};
/* 16 entries (an I/O kind's 4 bits): indexed with kind & 15, a bound the verifier sees; a
 * mask of IO_KINDS - 1 (13) sent writev to pwrite64's entry and sendfile to preadv2's. */
const volatile __u8 io_request_arg[16] = {};

/*
 * serve: slots stand for labels (cgroup, and comm with --comm) instead of processes, every
 * process on the machine is counted under its label, and slots are never recycled.
 */
const volatile bool serve = false;
const volatile bool label_comm = false;
const volatile __u32 nr_cgroup_filters = 0;
const volatile __u64 cgroup_filter_id[MAX_CGROUP_FILTERS] = {};
const volatile __u32 cgroup_filter_level[MAX_CGROUP_FILTERS] = {};

/* serve (bpf/proc.bpf.c): labels the current process tgid and returns its slot. */
int serve_label_slot(__u32 tgid, __u64 comm_addr);

/*
 * top: every process on the machine traced as run mode traces a command's (its own slot,
 * records owned by its tgid, harvested when it exits), from its fork or, for a process
 * running before top started, its first syscall; outside the -c cgroups, none (SLOT_NONE).
 */
const volatile bool top = false;
/* top (bpf/proc.bpf.c): gives process tgid a slot and tells the loader (EV_FORK, EV_FOUND). */
int top_slot(__u32 tgid, __u32 ppid, __u32 kind, __u64 comm_addr);

/* Allocation bitmap of slots; the loader frees a slot after harvesting its counters. */
__u64 slot_used[MAX_SLOTS / 64] = {};
/*
 * Each slot's marks (iotrace.h): an array map mmapped by the loader, not .bss, which libbpf
 * copies in whole at load (2.2 MiB: 1.5 to 7 ms of start-up here).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct slot_marks);
	__uint(max_entries, MAX_SLOTS);
} slot_marks SEC(".maps");

static __always_inline struct slot_marks *marks_of(__u32 slot)
{
	__u32 key = slot & (MAX_SLOTS - 1);

	return bpf_map_lookup_elem(&slot_marks, &key);
}
__u64 drops[DROP_COUNTERS] = {};

/*
 * The kernel side is built three times from this source (Makefile), for what the running
 * kernel offers; the loader picks the build this kernel can load (user/kernel/tracer_hooks.c):
 * HAVE_RDONLY_CAST: the bpf_rdonly_cast kfunc (kernels since 6.2); HAVE_VMA_ITER: the task
 * VMA iterator kfuncs (since 6.7). A kfunc the kernel lacks fails the whole object's load
 * (libbpf resolves every extern; 6.1's verifier refuses an unresolved call even when it is
 * dead code), hence builds rather than switches. Every build has the same maps, programs
 * and globals, so one skeleton serves all of them.
 */
#ifndef HAVE_RDONLY_CAST
#define HAVE_RDONLY_CAST 1
#endif
#ifndef HAVE_VMA_ITER
#define HAVE_VMA_ITER HAVE_RDONLY_CAST
#endif

const volatile __u32 kernel_type_id[KERNEL_CAST_TYPES] = {};

/*
 * A kfunc's declaration: an extern libbpf finds in the kernel's BTF, or in the by-id build
 * a helper-like call of a number the loader rewrites (KFUNCS in bpf/iotrace.h).
 */
#if KFUNC_BY_ID
#define KFUNC(ret, name, ...)                                                                    \
	static ret (*const name)(__VA_ARGS__) = (void *)(KFUNC_CALL_BASE + KFN_##name)
#else
#define KFUNC(ret, name, ...) extern ret name(__VA_ARGS__) __ksym
#endif

#if HAVE_RDONLY_CAST
/*
 * A kernel pointer re-typed as "untrusted": loads through it (and through the pointers read
 * from it) become fault-safe PROBE_MEM loads, with no helper call at run time; the call
 * itself is rewritten into a register move by the verifier. Walking fields of a *trusted*
 * tp_btf argument instead makes the verifier look up "<type>__safe_trusted"-style names by
 * linear search over all of vmlinux's BTF at every such load: a third of iotrace's
 * start-up before these casts (docs/design.md).
 *
 * The cast takes the struct's id in the *kernel's* BTF. CO-RE finds it when relocating
 * against the kernel's BTF; against the minimal BTF (user/kernel/kbtf.h) ids are renumbered, so
 * the loader passes the kernel's ids in kernel_type_id instead. Either way the verifier sees
 * a constant (read-only data is frozen) and drops the branch not taken.
 */
KFUNC(void *, bpf_rdonly_cast, const void *obj, __u32 btf_id);
#define UNTRUSTED(name, p)                                                                  \
	((struct name *)bpf_rdonly_cast((p), kernel_type_id[KT_##name] ?:                   \
						     bpf_core_type_id_kernel(struct name)))
/*
 * A field reached through a pointer that came from a number (an fd table's slot, a global
 * function's argument) and was re-typed with UNTRUSTED: here a plain load.
 */
#define KREAD(src, a, ...) ___arrow(src, a, ##__VA_ARGS__)
#else
/*
 * Without the kfunc (6.1): tp_btf and fentry arguments are walked directly, which costs
 * that verifier no search (it has no trusted walks), and a pointer that came from a number
 * is read with bpf_probe_read_kernel, one helper call per field.
 */
#define UNTRUSTED(name, p) ((struct name *)(p))
#define KREAD(src, a, ...) BPF_CORE_READ(src, a, ##__VA_ARGS__)
#endif

/* task_struct flags (include/linux/sched.h): a kernel thread, an io_uring worker. */
#define PF_KTHREAD 0x00200000
#define PF_IO_WORKER 0x00000010

/* The proc_slot word holding process tgid's entry (four 16-bit entries a word). */
static __always_inline __u64 *slot_word(__u32 tgid)
{
	__u32 key = tgid / 4;

	return bpf_map_lookup_elem(&proc_slot, &key);
}

static __always_inline __u16 *slot_entry(__u32 tgid)
{
	__u64 *word = slot_word(tgid);

	if (!word)
		return NULL;
	return (__u16 *)word + (tgid & 3);
}

/*
 * Process tgid's slot entry, taken (set to 0) by one thread only: where the exit hook has no
 * group_dead, two threads exiting at once may both find the group's live count at 0, and
 * both retired the slot; the second's row could be written after the loader had freed the
 * slot, and the loader made a second record of the process (its io_uring worker exiting
 * with it, arm64 6.1 guest). A compare-and-swap of the 64-bit word the entry lies in; under
 * contention that outlasts the tries, taken plainly as before.
 */
static __always_inline __u32 take_slot_entry(__u32 tgid)
{
	__u32 shift = (tgid & 3) * 16, slot;
	__u64 *word = slot_word(tgid), old;
	__u16 *entry;

	if (!word)
		return 0;
	for (int tries = 0; tries < 4; tries++) {
		old = *(volatile __u64 *)word;
		slot = (old >> shift) & 0xffff;
		if (!slot)
			return 0;
		if (CMPXCHG(word, old, old & ~(0xffffULL << shift)) == old)
			return slot;
	}
	entry = (__u16 *)word + (tgid & 3);
	slot = *entry;
	*entry = 0;
	return slot;
}

/*
 * The value of key in a hash map, inserted as a copy of *init when absent; NULL when the map
 * is full, counted in drops[drop]. When another CPU inserts the key first, BPF_NOEXIST fails
 * and the second lookup finds that CPU's value. *created (if not NULL) tells whether this
 * call inserted it. The one create-or-lookup of the kernel side (bcc's maps.bpf.h has the
 * same shape).
 */
static __always_inline void *lookup_or_init(void *map, const void *key, const void *init,
					    enum drop_counter drop, bool *created)
{
	void *value = bpf_map_lookup_elem(map, key);
	long err;

	if (created)
		*created = false;
	if (value)
		return value;
	err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (created)
		*created = !err;
	value = bpf_map_lookup_elem(map, key);
	if (!value)
		__sync_fetch_and_add(&drops[drop], 1);
	return value;
}

/*
 * A syscall number (below MAX_SYSCALLS) as an array index the verifier can bound wherever it
 * was kept: 6.1's verifier forgets the bounds of a number spilled to the stack, and clang
 * would drop a mask it can prove useless, so the mask comes after an optimisation barrier.
 */
static __always_inline __u32 syscall_index(__u64 nr)
{
	barrier_var(nr);
	return nr & (MAX_SYSCALLS - 1);
}

/* Index of v's lowest set bit, v a power of two (v & -v). */
static __always_inline __u32 bit_index(__u64 v)
{
	return popcount64(v - 1);
}

/* The thread's xorshift generator: no helper call. */
static __always_inline __u32 thread_random(struct task_struct *task, struct thread_io *ti)
{
	__u32 x = ti->rng ?: TASK_READ(task, pid) | 1;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	ti->rng = x;
	return x;
}

#endif /* IOTRACE_MAPS_BPF_H */
