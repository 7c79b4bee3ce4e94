// SPDX-License-Identifier: GPL-2.0
/*
 * Part of bpf/iotrace.bpf.c, which builds every part into one object.
 *
 * Per-process syscall counters and read/write-family histograms, aggregated in the
 * kernel. This is the hot path: it runs for every syscall on the machine, so an
 * untraced task costs one task lookup and one inlined array read, and a traced one
 * adds only inlined array lookups, plain increments on this CPU's own cache lines and,
 * when timing, one clock read per hook (each helper call costs ~50 ns with AMD's SRSO
 * mitigation).
 *
 * Why plain increments are exact: the counters are [cpu][slot][...] regions written only by
 * handle_sys_exit, and one program never runs twice at once on a CPU: it runs with
 * preemption off (syscall tracepoints guard their BPF probes with preempt_notrace), and the
 * kernel skips a run that would nest in a running one (the per-program "active" count of
 * bpf_trace_run). A locked add costs ~20 cycles; a read accounts up to seven of them.
 */
/* Largest syscall return value that is an error: the kernel's -MAX_ERRNO..-1 range. */
#define MAX_ERRNO 4095
/* iovec entries read to size a readv/writev request; longer arrays count as unknown. */
#define IOV_READ_MAX 8

struct iovec_user {
	void *base;
	__u64 len;
};

/* Traced slot of the current task, or 0. */
static __always_inline __u32 current_slot(struct task_struct *task, __u16 **entryp)
{
	__u16 *entry = slot_entry(task->tgid);

	*entryp = entry;
	return entry ? *entry : 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(handle_sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct inflight *f;
	__u16 *entry;
	__u32 key;

	__u32 slot = current_slot(task, &entry);

	if (!slot || (serve && slot == SLOT_NONE))
		return 0;
	key = task->pid & inflight_mask;
	f = bpf_map_lookup_elem(&inflight, &key);
	if (!f)
		return 0;
	f->tid = task->pid;
	f->nr = id;
	f->start_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline __u64 requested_bytes(struct pt_regs *regs, __u32 kind, bool *known)
{
	struct iovec_user iov[IOV_READ_MAX];
	__u64 cnt, sum = 0;

	*known = true;
	switch (io_request_arg[kind & (IO_KINDS - 1)]) {
	case REQ_ARG3:
		return regs->dx;
	case REQ_ARG4:
		return regs->r10;
	case REQ_ARG5:
		return regs->r8;
	}
	/* REQ_IOVEC: (fd, iov, iovcnt, ...) */
	cnt = regs->dx;
	if (cnt > IOV_READ_MAX ||
	    bpf_probe_read_user(iov, cnt * sizeof(iov[0]) & (sizeof(iov) * 2 - 1),
				(void *)regs->si)) {
		*known = false;
		return 0;
	}
	for (int i = 0; i < IOV_READ_MAX; i++)
		if (i < cnt)
			sum += iov[i].len;
	return sum;
}

static __always_inline void account_io(struct pt_regs *regs, __u32 cpu, __u32 slot, __u32 kind,
				       long ret, __u64 lat_ns, bool timed)
{
	__u32 key = (cpu * nr_slots + slot) * IO_KINDS + kind;
	struct io_stat *io = bpf_map_lookup_elem(&io_stats, &key);
	bool known;
	__u64 req;

	if (!io)
		return;
	req = requested_bytes(regs, kind, &known);
	if (known)
		io->requested += req;
	else
		io->unknown_request++;
	if (ret >= 0) {
		io->transferred += ret;
		io->size_hist[log2_bucket(ret)]++;
		if (!io->size_min_plus1 || ret + 1 < io->size_min_plus1)
			io->size_min_plus1 = ret + 1;
		if (ret > io->size_max)
			io->size_max = ret;
	}
	if (timed) {
		io->lat_hist[log2_bucket(lat_ns)]++;
		if (!io->lat_min_plus1 || lat_ns + 1 < io->lat_min_plus1)
			io->lat_min_plus1 = lat_ns + 1;
		if (lat_ns > io->lat_max)
			io->lat_max = lat_ns;
	}
}

/*
 * Calls are counted when they return, as strace -c counts them: exit and exit_group
 * never return and are not counted, and neither is anything a task did before the
 * execve that made it the traced command.
 */
/* serve: address of the process's name (its main thread's), for labelling from any thread. */
static __always_inline __u64 leader_comm(struct task_struct *task)
{
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);

	return (__u64)leader + bpf_core_field_offset(struct task_struct, comm);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct syscall_stat *st;
	__u64 lat_ns = 0;
	bool timed = false;
	__u32 slot, nr, key, cpu, kind;
	__u16 *entry;
	long id;

	slot = current_slot(task, &entry);
	if (!slot) {
		/* serve: a process that was running before iotrace gets its label now. */
		if (!serve)
			return 0;
		slot = serve_label_slot(task->tgid, leader_comm(task));
	}
	if (serve && slot == SLOT_NONE)
		return 0;
	id = regs->orig_ax;
	/*
	 * A new task's first return to user space passes sys_exit of the fork/clone that made
	 * it, with 0. strace counts that call once, in the parent, and so do we.
	 */
	if (!ret && (id == nr_clone || id == nr_clone3 || id == nr_fork || id == nr_vfork))
		return 0;
	if (slot & SLOT_PENDING) {
		/* Until its execve returns, the child runs iotrace's code: count none of it. */
		if (id != nr_execve && id != nr_execveat)
			return 0;
		slot &= ~SLOT_PENDING;
		if (entry)
			*entry = slot;
	}
	if (timing) {
		key = task->pid & inflight_mask;
		struct inflight *f = bpf_map_lookup_elem(&inflight, &key);

		if (f && f->tid == task->pid) {
			lat_ns = bpf_ktime_get_ns() - f->start_ns;
			id = f->nr;
			timed = true;
			f->tid = 0;
		} else {
			__sync_fetch_and_add(&drops[DROP_UNTIMED], 1);
		}
	}
	/* x86 rt_sigreturn restores the interrupted context, orig_ax = -1 included. */
	if (id == -1)
		id = nr_rt_sigreturn;
	nr = (__u64)id < MAX_SYSCALLS ? id : SYSCALL_OTHER;
	cpu = bpf_get_smp_processor_id();
	key = (cpu * nr_slots + slot) * MAX_SYSCALLS + nr;
	st = bpf_map_lookup_elem(&syscall_stats, &key);
	if (!st)
		return 0;
	st->calls++;
	if (ret < 0 && ret >= -MAX_ERRNO)
		st->errors++;
	if (timed)
		st->total_ns += lat_ns;
	kind = io_kind_of[nr];
	if (kind)
		account_io(regs, cpu, slot, kind, ret, lat_ns, timed);
	return 0;
}
