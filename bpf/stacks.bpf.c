// SPDX-License-Identifier: GPL-2.0
/*
 * Part of bpf/iotrace.bpf.c, which builds every part into one object.
 *
 * Where (--stacks FILE): the user-space call stack of each I/O syscall of a traced process.
 * Two ways to get it, called from sys_exit:
 * - frame pointers (STACKS_FP): bpf_get_stackid walks the user stack's frame-pointer chain
 *   into stack_traces, and calls, bytes and time add up per (process, syscall, stack) in
 *   stack_counts, every call. A syscall wrapper that sets up no frame (glibc's read when
 *   the process has one thread) hides its caller from that walk: the word on top of the
 *   stack is its return address, kept as `leaf` when it returns into executable code.
 *   The instruction and stack pointers and that word of a thread's last calls are kept:
 *   the same again (a loop) is the same stack, not walked again.
 * - DWARF (STACKS_DWARF), for code without frame pointers: the registers and the top 8 KiB
 *   of the user stack of each (process, syscall)'s first STACK_DWARF_WARMUP calls, then of
 *   one in STACK_DWARF_PERIOD, go to user space, which unwinds them with libdw
 *   (user/collect/stacks.c); each sample carries the calls, bytes and time since the last one, so
 *   the sums stay exact.
 * User space symbolizes the addresses after the process may have gone: the process's
 * executable file mappings (file key, addresses, offset) are sent when they change.
 * Nothing here runs without --stacks: `stacks` is read-only data, 0 then.
 */
#define VM_EXEC 0x00000004

const volatile __u8 stacks = STACKS_OFF;
/* Syscalls whose stacks are recorded (the timeline's set: trace_nr's). */
const volatile __u8 stack_nr[MAX_SYSCALLS] = {};

/*
 * Frame-pointer stacks by a 64-bit hash of their frames. Not a STACK_TRACE map: its ids are
 * its buckets, and two stacks in one bucket lose the second (or, with REUSE_STACKID, the
 * first one's counts go to the second): with a hundred stacks in 16,384 buckets that is
 * one run in three. Two stacks with one 64-bit hash are not to be expected.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1); /* MAX_STACK_IDS with --stacks */
	__type(key, __u64);
	__type(value, struct stack_ips);
} stack_traces SEC(".maps");

/* bpf_get_stack's buffer (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_ips);
} stack_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1); /* MAX_STACK_KEYS with --stacks */
	__type(key, struct stack_key);
	__type(value, struct stack_val);
} stack_counts SEC(".maps");

/* DWARF mode: per (slot, syscall), SC_TAG's key; it grows with the pairs stacked. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1); /* 1 << 16 with --stacks dwarf */
	__type(key, __u32);
	__type(value, struct stack_pending);
} stack_pending SEC(".maps");

static const struct stack_pending zero_pending;

/* Per slot: (exec id, mm->map_count + 1) when its mappings were last sent (0: never). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* nr_slots with --stacks */
	__type(key, __u32);
	__type(value, __u64);
} stack_maps_sent SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 12); /* sized by the loader with --stacks */
} stack_events SEC(".maps");

static const struct stack_val zero_stack_val;

#if HAVE_VMA_ITER
KFUNC(int, bpf_iter_task_vma_new, struct bpf_iter_task_vma *it, struct task_struct *task,
      __u64 addr);
KFUNC(struct vm_area_struct *, bpf_iter_task_vma_next, struct bpf_iter_task_vma *it);
KFUNC(void, bpf_iter_task_vma_destroy, struct bpf_iter_task_vma *it);

/* The process's executable file mappings, to user space (global: verified once). */
__noinline int stack_send_maps(void)
{
	struct task_struct *task = current_task();
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct stack_maps *m = bpf_ringbuf_reserve(&stack_events, sizeof(*m), 0);
	__u32 n = 0;

	if (!m) {
		__sync_fetch_and_add(&drops[DROP_STACKS], 1);
		return 0;
	}
	m->kind = SE_MAPS;
	m->tgid = TASK_READ(task, tgid);
	m->exec_id = TASK_READ(task, self_exec_id);
	bpf_iter_task_vma_new(&it, task, 0);
	while ((vma = bpf_iter_task_vma_next(&it)) && n < MAX_STACK_VMAS) {
		struct inode *inode;

		/* Untrusted: each pointer loaded through a trusted one costs the verifier a
		 * search of the kernel's BTF by name, in every state of this loop. */
		vma = UNTRUSTED(vm_area_struct, vma);
		if (!(vma->vm_flags & VM_EXEC) || !vma->vm_file)
			continue;
		inode = vma->vm_file->f_inode;
		m->vmas[n].start = vma->vm_start;
		m->vmas[n].end = vma->vm_end;
		m->vmas[n].pgoff = vma->vm_pgoff;
		m->vmas[n].ino = inode->i_ino;
		m->vmas[n].dev = inode->i_sb->s_dev;
		m->vmas[n].igen = inode->i_generation;
		n++;
	}
	bpf_iter_task_vma_destroy(&it);
	m->n = n;
	bpf_ringbuf_submit(m, 0);
	return 0;
}
#else
/*
 * A kernel without the task VMA iterator (before 6.7): user space reads /proc/PID/maps
 * when this arrives, so a process must still be running for its frames to get names.
 */
__noinline int stack_send_maps(void)
{
	struct task_struct *task = current_task();
	struct stack_maps *m = bpf_ringbuf_reserve(&stack_events, sizeof(*m), 0);

	if (!m) {
		__sync_fetch_and_add(&drops[DROP_STACKS], 1);
		return 0;
	}
	m->kind = SE_MAPS_PROC;
	m->tgid = TASK_READ(task, tgid);
	m->exec_id = TASK_READ(task, self_exec_id);
	m->n = 0;
	bpf_ringbuf_submit(m, 0);
	return 0;
}
#endif

/* Sends the mappings when the process has none sent or has changed them since. */
static __always_inline void stack_note_maps(struct task_struct *task, __u32 slot)
{
	__u64 *sent = bpf_map_lookup_elem(&stack_maps_sent, &slot);
	struct mm_struct *mm = HAVE_COMPAT ? NULL : UNTRUSTED(task_struct, task)->mm;
	__u64 now;

	if (HAVE_COMPAT || !sent || !mm) /* compat: --stacks is n/a (compat.bpf.h) */
		return;
	now = (TASK_READ(task, self_exec_id) << 32) |
	      (__u32)(UNTRUSTED(mm_struct, mm)->map_count + 1);
	if (*sent == now)
		return;
	*sent = now;
	stack_send_maps();
}

struct exec_check {
	__u64 addr;
	bool exec;
};

static long vma_exec(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct exec_check *c = data;

	c->exec = vma->vm_flags & VM_EXEC;
	return 0;
}

/*
 * The caller of a frameless syscall wrapper, or 0: the word on top of the stack when it
 * points into executable code (user space drops it when the walk found it second anyway:
 * a program cannot read a stack-trace map).
 */
static __always_inline __u64 leaf_caller(struct task_struct *task, __u64 top)
{
	struct exec_check c = { .addr = top };

	if (!top)
		return 0;
	FIND_VMA(task, top, vma_exec, &c);
	return c.exec ? top : 0;
}

/* The stack of this call, walked by its frame pointers, kept by hash: the hash, or -1. */
static __always_inline __s64 walk_stack(void *ctx)
{
	__u32 zero = 0;
	struct stack_ips *st = bpf_map_lookup_elem(&stack_scratch, &zero);
	__u64 h = 0xcbf29ce484222325ULL;
	long bytes;

	if (!st)
		return -1;
	bytes = bpf_get_stack(ctx, st->ips, sizeof(st->ips), BPF_F_USER_STACK);
	if (bytes <= 0)
		return -1;
	st->depth = bytes / sizeof(__u64);
	for (int i = 0; i < MAX_STACK_DEPTH; i++) {
		if (i >= st->depth)
			break;
		h = (h ^ st->ips[i]) * 0x100000001b3ULL;
	}
	h = (h ^ (h >> 31)) & 0x7fffffffffffffffULL; /* a stack id is never negative */
	bpf_map_update_elem(&stack_traces, &h, st, BPF_NOEXIST);
	return h;
}

/* Frame-pointer mode: this call (its result in SC_RET) on its (process, syscall, stack). */
static __noinline int stack_fp(void *ctx, struct thread_io *ti, struct pt_regs *regs, __u32 nr,
			       __u64 weighted_ns)
{
	__s64 ret = SC_RET(regs);
	struct task_struct *task = current_task();
	struct stack_key key = { .tgid = TASK_READ(task, tgid), .nr = nr,
				 .exec_id = TASK_READ(task, self_exec_id) };
	struct stack_cache *c = &ti->stk[nr & 1];
	struct stack_val *v;
	__u64 top = 0;

	top = wrapper_return(regs);
	/* Not rbp: code without frame pointers uses it as any register (tr2u's loop does). */
	if (c->ip == USER_PC(regs) && c->sp == USER_SP(regs) && c->top == top) {
		key.stackid = c->id;
		key.leaf = c->leaf;
	} else {
		key.stackid = walk_stack(ctx);
		if (key.stackid < 0) {
			__sync_fetch_and_add(&drops[DROP_STACKS], 1);
			return 0;
		}
		key.leaf = leaf_caller(task, top);
		*c = (struct stack_cache){ .ip = USER_PC(regs), .sp = USER_SP(regs), .top = top,
					   .leaf = key.leaf, .id = key.stackid };
	}
	v = lookup_or_init(&stack_counts, &key, &zero_stack_val, DROP_STACKS, NULL);
	if (!v)
		return 0;
	__sync_fetch_and_add(&v->calls, 1);
	if (io_kind_of[nr & (MAX_SYSCALLS - 1)] && ret > 0)
		__sync_fetch_and_add(&v->bytes, ret);
	__sync_fetch_and_add(&v->time_ns, weighted_ns);
	return 0;
}

static long vma_end(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	*(__u64 *)data = vma->vm_end;
	return 0;
}

#define PAGE 4096

/*
 * Copies size bytes of user stack from sp, or the most of them it can: a page that was
 * never touched cannot be read without a fault (the first frame sits up to 8 KiB below
 * the stack's top, arch_align_stack, and the pages between may not exist), so the read
 * falls back to the page of sp and the next. Returns the bytes copied.
 */
static __always_inline __u32 read_stack(struct stack_sample *s, __u64 sp, __u64 size)
{
	__u64 first = PAGE - (sp & (PAGE - 1)), second;

	/* Bounded here, where it is used: 6.1's verifier forgets a bound kept across a spill. */
	barrier_var(size);
	if (size > STACK_DWARF_BYTES)
		return 0;
	if (!bpf_probe_read_user(s->stack, size, (void *)sp))
		return size;
	if (first > size)
		first = size;
	/* (never taken: bounds for a verifier that lost them, as 6.1's does here) */
	barrier_var(first);
	if (first > PAGE)
		return 0;
	if (bpf_probe_read_user(s->stack, first, (void *)sp))
		return 0;
	second = size - first;
	if (second > PAGE)
		second = PAGE;
	if (bpf_probe_read_user(s->stack + first, second, (void *)(sp + first)))
		return first;
	return first + second;
}

/* DWARF mode: the calls since the last sample add up; this one is sampled, or not. */
__noinline int stack_dwarf(__u32 slot, __u32 nr, __s64 ret, __u64 weighted_ns, __u32 rnd)
{
	__u32 k = SC_TAG(slot & (MAX_SLOTS - 1), nr & (MAX_SYSCALLS - 1));
	struct stack_pending *p = lookup_or_init(&stack_pending, &k, &zero_pending, DROP_STACKS,
						 NULL);
	struct task_struct *task;
	struct stack_sample *s;
	struct pt_regs *regs;
	__u64 end = 0, size;

	if (!p)
		return 0;
	__sync_fetch_and_add(&p->calls, 1);
	if (io_kind_of[nr & (MAX_SYSCALLS - 1)] && ret > 0)
		__sync_fetch_and_add(&p->bytes, ret);
	__sync_fetch_and_add(&p->time_ns, weighted_ns);
	if (p->sampled >= STACK_DWARF_WARMUP && (rnd & (STACK_DWARF_PERIOD - 1)))
		return 0;
	task = current_task(); /* helper calls only for a sample */
	regs = TASK_PT_REGS(task);
	if (!regs)
		return 0;
	s = bpf_ringbuf_reserve(&stack_events, sizeof(*s), 0);
	if (!s) {
		__sync_fetch_and_add(&drops[DROP_STACKS], 1);
		return 0;
	}
	s->kind = SE_SAMPLE;
	s->tgid = TASK_READ(task, tgid);
	s->tid = TASK_READ(task, pid);
	s->nr = nr;
	dwarf_regs(s->regs, regs);
	/* Up to the end of the stack's mapping: a read past it would fail whole. */
	FIND_VMA(task, USER_SP(regs), vma_end, &end);
	size = end > USER_SP(regs) ? end - USER_SP(regs) : 0;
	if (size > STACK_DWARF_BYTES)
		size = STACK_DWARF_BYTES;
	s->size = read_stack(s, USER_SP(regs), size);
	/* What it stands for: itself and the calls since the last sample (exact sums). */
	s->calls = XCHG(&p->calls, 0);
	s->bytes = XCHG(&p->bytes, 0);
	s->time_ns = XCHG(&p->time_ns, 0);
	p->sampled++;
	bpf_ringbuf_submit(s, 0);
	return 0;
}

/* Where this call's stack goes: every call's (frame pointers), or a sample's (DWARF). */
static __always_inline void stack_call(void *ctx, struct task_struct *task, struct thread_io *ti,
				       struct pt_regs *regs, __u32 slot, __u32 nr, __s64 ret,
				       __u64 weighted_ns)
{
	stack_note_maps(task, slot);
	if (stacks == STACKS_FP) {
		stack_fp(ctx, ti, regs, nr, weighted_ns);
		return;
	}
	stack_dwarf(slot, nr, ret, weighted_ns, thread_random(task, ti));
}
