// SPDX-License-Identifier: GPL-2.0
/*
 * Part of bpf/iotrace.bpf.c, which builds every part into one object.
 *
 * The current task without a helper call where the kernel does not inline one
 * (bpf_get_current_task_btf on x86 before 6.19, ~50 ns a call with AMD's SRSO mitigation):
 * each CPU keeps the task its hooks saw last, and a hook checks that guess against an
 * address only the current task's kernel stack can hold (the syscall registers, or the
 * hook's own arguments). Included first: every hook finds its task here.
 */

/*
 * Per CPU, the task its hooks saw last, and hook_task's way to make its arguments' address
 * a number. One cache line each, in .bss: found by address, not by a map
 * look-up (whose inlined form stores the key and loads it back: 2 ns of sys_enter's ~63 on
 * tr2u here). CPUs past CPU_THREAD_ROWS share rows: a row is only ever a guess that
 * syscall_task and hook_task check, so sharing costs misses, never a wrong task.
 */
struct cpu_thread {
	__u64 task;
	__u64 at;
	__u64 pad[6];
};
_Static_assert(sizeof(struct cpu_thread) == 64, "one cache line per CPU");

#define CPU_THREAD_ROWS 1024
__u64 cpu_threads[CPU_THREAD_ROWS * 8] __attribute__((aligned(64))) = {};

/* This CPU's row (its address: no look-up). */
static __always_inline struct cpu_thread *cpu_thread_row(void)
{
	return (struct cpu_thread *)&cpu_threads[(bpf_get_smp_processor_id() &
						  (CPU_THREAD_ROWS - 1)) * 8];
}

/*
 * Where a task's syscall registers lie in its kernel stack (task_pt_regs: the stack's size
 * less the pt_regs and the padding above them), the same for every task of a kernel; learnt
 * at the first miss.
 */
__u64 regs_in_stack = 0;

/*
 * The current task, as an untrusted pointer (its fields are read with fault-safe loads).
 * The cached task is current when its own stack holds the registers the hook was given:
 * a stack belongs to one live task, and release_task_stack sets task->stack to NULL before
 * a freed stack can be taken again on that CPU. Nothing but that test is trusted, not the
 * row: where the syscall tracepoints run their programs preemptibly (7.x, PREEMPT_RT),
 * another task's hook may rewrite the row between this one's reads, or between its writes
 * (a row of one task's registers and another's pointer once charged a child's calls to an
 * untraced task until it migrated). Without the cast kfunc (the nokfunc build) every field
 * read would be a helper call, and arm64's JIT makes the helper one instruction (a read of
 * sp_el0, since 6.11): there the helper it is.
 */
static __always_inline struct task_struct *syscall_task(struct pt_regs *regs)
{
#if HAVE_RDONLY_CAST && defined(__TARGET_ARCH_x86)
	struct cpu_thread *c = cpu_thread_row();
	struct task_struct *task;
	__u64 off;

	task = UNTRUSTED(task_struct, (void *)c->task);
	if ((__u64)task->stack + regs_in_stack == (__u64)regs)
		return task;
	task = bpf_get_current_task_btf();
	c->task = (__u64)task;
	/*
	 * Once (the line is read by every CPU). The registers' address as a number: 6.12's
	 * verifier refuses arithmetic on the trusted pointer itself.
	 */
	if (!regs_in_stack) {
		bpf_probe_read_kernel(&off, sizeof(off), &regs);
		regs_in_stack = off - (__u64)task->stack;
	}
	return UNTRUSTED(task_struct, task);
#else
	return current_task();
#endif
}

/*
 * The current task in a hook other than the syscall hooks, which have no registers to check
 * the cached task against: its arguments (ctx) lie on the kernel stack of the task it runs
 * in (bpf_trace_run's frame for tp_btf, the trampoline's for fentry/fexit; not the BPF
 * frame, which 6.14's JIT may move to a private per-CPU stack), so the row's task is current
 * when ctx lies in its stack below the registers. The address goes through the row to
 * become a number (the verifier allows no arithmetic on ctx) and must read back as stored:
 * a hook that ran on this CPU in between (a preemptible tracepoint) sends it to the helper.
 * A hook on an interrupt's stack takes the helper too, and leaves its answer as the guess.
 */
static __always_inline struct task_struct *hook_task(void *ctx)
{
#if HAVE_RDONLY_CAST && defined(__TARGET_ARCH_x86)
	struct cpu_thread *c = cpu_thread_row();
	struct task_struct *task;
	__u64 at, off;

	c->at = (__u64)ctx;
	at = *(volatile __u64 *)&c->at;
	task = UNTRUSTED(task_struct, (void *)c->task);
	/*
	 * The distance taken before the compare, and made opaque: past it clang knows at is
	 * ctx and subtracted from ctx itself, which verifiers before 6.17 refuse (math between a
	 * ctx pointer and an unbounded number).
	 */
	off = at - (__u64)task->stack;
	barrier_var(off);
	if (at == (__u64)ctx && off < regs_in_stack)
		return task;
	task = bpf_get_current_task_btf();
	c->task = (__u64)task;
	return UNTRUSTED(task_struct, task);
#else
	return current_task();
#endif
}

/*
 * task's syscall registers (task_pt_regs) outside the syscall hooks. On x86-64 with the
 * cast kfunc, where syscall_task learnt their place in a task's kernel stack (the same in
 * every task's), found there, and NULL before it has (the first syscall on the machine):
 * bpf_task_pt_regs is a helper call (~10-50 ns here), and the page cache's read start
 * takes them on every read. Elsewhere the helper (TASK_PT_REGS: NULL without it).
 */
static __always_inline struct pt_regs *task_syscall_regs(struct task_struct *task)
{
#if HAVE_RDONLY_CAST && defined(__TARGET_ARCH_x86)
	__u64 off = regs_in_stack;

	return off ? UNTRUSTED(pt_regs, (void *)((__u64)task->stack + off)) : NULL;
#else
	return TASK_PT_REGS(task);
#endif
}
