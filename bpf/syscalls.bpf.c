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
 * Why plain increments are exact: the counters are rows of per-CPU caches (counters.bpf.c)
 * written only by handle_sys_exit on their CPU, and one program never runs twice at once on
 * a CPU: it runs with preemption off (syscall tracepoints guard their BPF probes with
 * preempt_notrace), and the kernel skips a run that would nest in a running one (the
 * per-program "active" count of bpf_trace_run). A locked add costs ~20 cycles; a read
 * accounts up to seven of them.
 */
/* SIGKILL in a sigset_t's first word: a fatal signal pending (__fatal_signal_pending). */
#define SIGKILL_BIT (1ULL << (9 - 1))
/* iovec entries read to size a readv/writev request; longer arrays count as unknown. */
#define IOV_READ_MAX 8

struct iovec_user {
	void *base;
	__u64 len;
};

/*
 * A thread killed in a call (another thread's exit_group or execve, a SIGKILL) passes
 * sys_exit on its way out but never returns to user space; strace sees no return either
 * (ptrace stops are skipped once a fatal signal is pending): not a call. A call the kill
 * interrupted returns EINTR or one of the ERESTART codes (-512..-516): only then is the
 * task's pending set read, a line of task_struct no other call reads (+10 ns a call when
 * read on every one). A call that completed just as the kill came is counted (strace
 * would not count it): the kill's own race.
 */
static __always_inline bool killed_in_call(struct task_struct *task, long ret)
{
	/* A mask, not branches on ret (bpf/masks.h): the branch is on the mask. */
	if (!interrupted_ret(ret))
		return false;
	return TASK_READ(task, pending.signal.sig[0]) & SIGKILL_BIT;
}

/* Traced slot of the current task, or 0. */
static __always_inline __u32 current_slot(struct task_struct *task, __u16 **entryp)
{
	__u16 *entry = slot_entry(TASK_READ(task, tgid));

	*entryp = entry;
	return entry ? *entry : 0;
}

/* The current thread's syscall state; another thread's leftovers are cleared first. */
static __always_inline struct thread_io *thread_io_of(struct task_struct *task)
{
	__u32 key = TASK_READ(task, pid) & inflight_mask;
	struct thread_io *ti = bpf_map_lookup_elem(&inflight, &key);

	if (ti && ti->tid != TASK_READ(task, pid)) {
		__builtin_memset(ti, 0, sizeof(*ti));
		ti->tid = TASK_READ(task, pid);
	}
	return ti;
}

/*
 * close(): the fd is gone when it returns, so its file is found on the way in. Global:
 * verified once, apart from sys_enter's few instructions.
 */
__noinline int note_closing_file(__u64 fd)
{
	struct task_struct *task = current_task();
	__u32 key = TASK_READ(task, pid) & inflight_mask, idx;
	struct thread_io *ti = bpf_map_lookup_elem(&inflight, &key);
	struct file_stat *st;

	if (!ti || ti->tid != TASK_READ(task, pid))
		return 0;
	st = entry_of_fd(task, ti, fd, &idx, false);
	ti->close_idx = st ? idx + 1 : 0;
	ti->close_gen = st ? st->gen : 0;
	return 0;
}

/*
 * Whether to time this call, and the weight of its time (the calls it stands for); 0: not
 * timed. Each CPU's counters of a (process, syscall) time its first SAMPLE_WARMUP calls
 * (weight 1). Then the period doubles as the syscall's calls double: 2 from 1,000 calls,
 * 4 from 2,000 ... sample_period from sample_period / 2 thousand (32,000); each call is
 * timed with probability 1/period and weighted by the period (Horvitz-Thompson: sums and
 * histograms estimate every call). While a syscall ramps up each call draws on its own;
 * at the full period the thread keeps a countdown over its busy calls instead, with gaps
 * from period/2 to 3*period/2 (mean period): no draw on the calls it skips, and the number
 * timed varies less than independent draws would make it. A new thread starts at a random
 * place in its first gap, and the random gaps keep a thread alternating between syscalls
 * (read, write, read...) from always timing the same one.
 */
static __always_inline __u32 time_this_call(struct task_struct *task, struct thread_io *ti,
					    __u32 slot, long id)
{
	__u32 nr = (__u64)id < MAX_SYSCALLS ? id : SYSCALL_OTHER, x, period, key, tag;
	struct sc_cache_row *row;
	struct syscall_stat *st;

	if (!sample_period) /* --time-all, --trace: every call (the verifier drops the rest) */
		return 1;
	/*
	 * A syscall this thread found at the full period, while the countdown runs: skipped
	 * without reading its row (the row would say the same unless this CPU gave it to
	 * another process meanwhile, or the thread moved to a CPU whose row is new: then the
	 * warm-up starts once the countdown ends, not at once; every call is still timed with
	 * probability 1/period, the estimate stays unbiased).
	 */
	if (ti->countdown > 1 && (ti->full_nr[0] == nr + 1 || ti->full_nr[1] == nr + 1)) {
		ti->countdown--;
		return 0;
	}
	tag = SC_TAG(slot & ~SLOT_PENDING & (MAX_SLOTS - 1), nr);
	key = cache_row(bpf_get_smp_processor_id(), tag, SC_CACHE_ROWS);
	row = bpf_map_lookup_elem(&sc_cache, &key);
	/* Not in this CPU's cache (yet, or any more): its warm-up starts (again). */
	if (!row || row->tag != tag || row->st.timed < SAMPLE_WARMUP)
		return 1;
	st = &row->st;
	if (st->calls < (__u64)SAMPLE_WARMUP / 2 * sample_period) {
		period = 1u << bit_length(st->calls / SAMPLE_WARMUP); /* a real division in BPF */
		return thread_random(task, ti) & (period - 1) ? 0 : period;
	}
	if (ti->full_nr[0] != nr + 1) {
		ti->full_nr[1] = ti->full_nr[0];
		ti->full_nr[0] = nr + 1;
	}
	if (ti->countdown > 1) {
		ti->countdown--;
		return 0;
	}
	x = thread_random(task, ti);
	if (!ti->countdown) { /* the thread's first busy call */
		ti->countdown = 1 + (x & (sample_period - 1));
		return 0;
	}
	ti->countdown = sample_period / 2 + (x & (sample_period - 1)) + ((x >> 16) & 1);
	return sample_period;
}

/* serve, top: address of the process's name (its main thread's), to label it from any thread. */
static __always_inline __u64 leader_comm(struct task_struct *task)
{
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);

	return (__u64)leader + bpf_core_field_offset(struct task_struct, comm);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(handle_sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task = syscall_task(regs);
	struct thread_io *ti;
	__u16 *entry;

	__u32 slot = current_slot(task, &entry);

	if (!slot && top)
		slot = top_slot(TASK_READ(task, tgid), BPF_CORE_READ(task, real_parent, tgid),
				EV_FOUND, leader_comm(task));
	if (!slot || ((serve || top) && slot == SLOT_NONE))
		return 0;
	ti = thread_io_of(task);
	if (!ti)
		return 0;
	ti->close_idx = 0;
	if (!serve && !(slot & SLOT_PENDING) && (__u64)id < MAX_SYSCALLS &&
	    fd_arg[file_op_of[syscall_index(id)] & (FILE_OP_SLOTS - 1)] == FD_ENTER)
		note_closing_file(SC_ARG1(regs));
	ti->weight = time_this_call(task, ti, slot, id);
	ti->skipped = !ti->weight;
	if (ti->skipped) {
		ti->start_ns = 0;
		return 0;
	}
	ti->nr = id;
	ti->start_ns = bpf_ktime_get_ns();
	return 0;
}

/* Requested bytes that could not be read (an iovec array too long, or unreadable). */
#define IOV_UNKNOWN (~0ULL)

/*
 * The bytes an iovec array of cnt entries at addr asks for, or IOV_UNKNOWN. Global, out of
 * sys_exit's frame: its 128-byte array there made the deepest call chain (sys_exit, the
 * second file of a copy, naming a file) pass the verifier's 512-byte limit on 6.1, which
 * counts global functions' frames in it.
 */
__noinline __u64 iovec_bytes(__u64 addr, __u64 cnt)
{
	/*
	 * Zeroed first: the verifiers of 5.10, Ubuntu's 5.19 and 6.2 read a variable size into
	 * the stack only where all of it was written ("invalid indirect read from stack").
	 */
	struct iovec_user iov[IOV_READ_MAX] = {};
	__u64 sum = 0;

	if (cnt > IOV_READ_MAX ||
	    bpf_probe_read_user(iov, cnt * sizeof(iov[0]) & (sizeof(iov) * 2 - 1), (void *)addr))
		return IOV_UNKNOWN;
	for (int i = 0; i < IOV_READ_MAX; i++)
		if (i < cnt)
			sum += iov[i].len;
	return sum;
}

/* A requested size that was not known (an iovec array too long to read). */
#define REQ_UNKNOWN IOV_UNKNOWN

/* The bytes the call asked for, or REQ_UNKNOWN. */
static __always_inline __u64 requested_bytes(struct pt_regs *regs, __u32 kind)
{
	switch (io_request_arg[kind & 15]) {
	case REQ_ARG3:
		return SC_ARG3(regs);
	case REQ_ARG4:
		return SC_ARG4(regs);
	case REQ_ARG5:
		return SC_ARG5(regs);
	}
	/* REQ_IOVEC: (fd, iov, iovcnt, ...) */
	return iovec_bytes(SC_ARG2(regs), SC_ARG3(regs));
}

/*
 * What a call did, for the counters it goes to. Whether it was timed and whether its size is
 * known are values, not flags the code set on one branch (lat_ns 0, req REQ_UNKNOWN): the
 * verifier then walks what follows once, not once per combination of constant flags.
 */
struct call {
	long ret;
	__u64 lat_ns; /* 0: not timed (a timed call takes at least 1 ns) */
	__u32 weight; /* calls the timed one stands for (time_this_call) */
	__u64 req; /* bytes asked for, or REQ_UNKNOWN */
	bool data; /* a read/write-family call (ret is a byte count) */
};

/*
 * One call of the read/write family counted straight into the totals, its row being
 * claimed by the loader: req is REQ_UNKNOWN when it is not known, lat_ns 0 when untimed.
 */
__noinline int io_count_totals(__u32 tag, __s64 ret, __u64 req, __u64 lat_ns, __u32 weight)
{
	static const struct io_stat zero;
	struct io_stat *t = lookup_or_init(&io_totals, &tag, &zero, DROP_TOTALS, NULL);
	struct slot_marks *m;

	if (!t)
		return 0;
	if (req != ~0ULL)
		__sync_fetch_and_add(&t->requested, req);
	else
		__sync_fetch_and_add(&t->unknown_request, 1);
	if (ret >= 0) {
		__sync_fetch_and_add(&t->transferred, ret);
		__sync_fetch_and_add(&t->size_hist[log2_bucket(ret)], 1);
	}
	if (lat_ns)
		__sync_fetch_and_add(&t->lat_hist[fine_bucket(lat_ns)], weight);
	m = marks_of(TAG_SLOT_IO(tag));
	if (m)
		ATOMIC_OR(&m->io_moved, 1u << ((tag - 1) & 15));
	return 0;
}

static __always_inline void account_io(struct call *c, __u32 cpu, __u32 slot, __u32 kind)
{
	__u32 tag = IO_TAG(slot & (MAX_SLOTS - 1), kind), key = IO_CACHE_ROW(cpu, tag);
	struct io_cache_row *row = bpf_map_lookup_elem(&io_cache, &key);
	long ret = c->ret;
	__u64 lat_ns = c->lat_ns, req = c->req;
	__u32 used, b;
	struct io_stat *io;

	if (!row)
		return;
	if (row->tag != tag && io_row_take(cpu, key, tag)) {
		io_count_totals(tag, ret, req, lat_ns, c->weight);
		return;
	}
	io = &row->st;
	used = 1; /* group 0: the sums, minima and maxima */
	if (req != REQ_UNKNOWN)
		io->requested += req;
	else
		io->unknown_request++;
	if (ret >= 0) {
		b = log2_bucket(ret);
		io->transferred += ret;
		io->size_hist[b]++;
		used |= 1u << IO_GROUP_OF(IO_SIZE_WORD0 + b);
		if (!io->size_min_plus1 || ret + 1 < io->size_min_plus1)
			io->size_min_plus1 = ret + 1;
		if (ret > io->size_max)
			io->size_max = ret;
	}
	if (lat_ns) {
		b = fine_bucket(lat_ns);
		io->lat_hist[b] += c->weight;
		used |= 1u << IO_GROUP_OF(IO_LAT_WORD0 + b);
		if (!io->lat_min_plus1 || lat_ns + 1 < io->lat_min_plus1)
			io->lat_min_plus1 = lat_ns + 1;
		if (lat_ns > io->lat_max)
			io->lat_max = lat_ns;
	}
	row->used |= used;
}

/* One call on one ledger entry, in the row of its syscall. */
static __always_inline void count_row(struct file_stat *st, __u32 idx, __u32 op, struct call *c)
{
	struct file_row *row = file_row_of(st, idx, op);

	if (!row)
		return;
	__sync_fetch_and_add(&row->calls, 1);
	if (call_failed(c->ret))
		__sync_fetch_and_add(&row->errors, 1);
	else if (c->data)
		__sync_fetch_and_add(&row->transferred, c->ret);
	if (c->data && c->req != REQ_UNKNOWN)
		__sync_fetch_and_add(&row->requested, c->req);
	if (c->lat_ns) {
		__sync_fetch_and_add(&row->timed, 1);
		__sync_fetch_and_add(&row->total_ns, c->lat_ns * c->weight);
		__sync_fetch_and_add(&row->lat_hist[log2_bucket(c->lat_ns)], c->weight);
	}
}

static __always_inline __u64 fd_value(struct pt_regs *regs, __u32 arg, long ret)
{
	switch (arg) {
	case FD_ARG1:
		return SC_ARG1(regs);
	case FD_ARG2:
		return SC_ARG2(regs);
	case FD_ARG3:
		return SC_ARG3(regs);
	case FD_ARG5:
		return SC_ARG5(regs);
	case FD_RET:
		return ret; /* an error is negative: no fd */
	}
	return -1;
}

/*
 * One call (ti->ret, ->lat_ns, ->req) on the file behind fd (for close, the file sys_enter
 * found), in the row of op. Ops before FOP_fsync are the read/write family (ret is bytes).
 * which: the call's first file (0) or a copy's destination (1), for --trace.
 */
static __always_inline int count_file(struct task_struct *task, struct thread_io *ti,
				      __u32 op, __u64 fd, __u32 which)
{
	struct file_stat *st;
	struct call c;
	__u32 idx;

	op &= FILE_OP_SLOTS - 1;
	if (!op)
		return -1;
	if (fd_arg[op] == FD_ENTER) {
		idx = ti->close_idx - 1;
		st = ti->close_idx ? entry_at(idx, ti->close_gen) : NULL;
		ti->close_idx = 0;
	} else {
		st = entry_of_fd(task, ti, fd, &idx, fd_arg[op] == FD_RET);
	}
	if (!st)
		return -1;
	/* Made here, not before the lookup: live across it, it took room in the frame. */
	c = (struct call){ .ret = ti->ret, .lat_ns = ti->lat_ns, .weight = ti->weight,
			   .req = ti->req, .data = op < FOP_fsync };
	count_row(st, idx, op, &c);
	if (trace)
		trace_file_of(&ti->trace_files[which & 1], st->key.dev, st->key.ino, st->key.igen);
	return idx;
}

/*
 * The second file of a copy (sendfile, copy_file_range, splice). Global: verified once, and
 * only copies pay for the call (a BPF-to-BPF call returns through the same RET thunk as a
 * helper call, ~50 ns with AMD's SRSO mitigation): the first file's count is inlined.
 */
__noinline int count_second_file(__u32 op, __u64 fd)
{
	struct task_struct *task = current_task();
	__u32 key = TASK_READ(task, pid) & inflight_mask;
	struct thread_io *ti = bpf_map_lookup_elem(&inflight, &key);

	if (ti && ti->tid == TASK_READ(task, pid))
		count_file(task, ti, op, fd, 1);
	return 0;
}

/* mmap's prot argument: the mapping may execute (uapi asm-generic/mman-common.h). */
#define PROT_EXEC 0x4

/*
 * A successful mmap with PROT_EXEC of the file whose entry is idx (count_file just found
 * it): code the process loaded (mark_loaded). Global: verified once, and only those mmaps
 * (a few per library) pay the call.
 */
__noinline int note_exec_map(__u32 idx)
{
	struct file_stat *st = bpf_map_lookup_elem(&file_stats, &idx);

	if (st)
		mark_loaded(st, LOAD_MAPPED_EXEC);
	return 0;
}

/* The ledger's side of a call: its row on each file it used (both ends of a copy). */
static __always_inline void account_files(struct task_struct *task, struct thread_io *ti,
					  struct pt_regs *regs, __u32 nr, struct call *c)
{
	__u32 op = file_op_of[syscall_index(nr)] & (FILE_OP_SLOTS - 1);
	int idx;

	if (!op)
		return;
	if (op == FOP_NAMING) {
		names_changed(nr, c->ret == 0);
		return;
	}
	ti->ret = c->ret;
	ti->lat_ns = c->lat_ns;
	ti->req = c->req;
	idx = count_file(task, ti, op, fd_value(regs, fd_arg[op], c->ret), 0);
	if (fd2_arg[op])
		count_second_file(fd2_op[op], fd_value(regs, fd2_arg[op], c->ret));
	else if (op == FOP_mmap && (fd_value(regs, FD_ARG3, 0) & PROT_EXEC) && c->ret >= 0 &&
		 idx >= 0)
		note_exec_map(idx);
}

/* trace_syscall's duration of a call that was not timed (in flight when iotrace started). */
#define TRACE_UNTIMED (~0ULL)

/*
 * --trace: the call sys_exit just counted, its bytes on the slot's counter tracks, and as
 * an event of the timeline if it shows this syscall and the call took trace_min_ns or more;
 * else, if the call started block requests, a note that no flow leads to them. Global:
 * verified once, called with --trace only (sys_exit's branch to it is removed at load
 * otherwise).
 */
__noinline int trace_syscall(__u32 nr, __u32 slot, __s64 ret, __u64 dur_ns)
{
	struct task_struct *task = current_task();
	__u32 key = TASK_READ(task, pid) & inflight_mask;
	struct thread_io *ti = bpf_map_lookup_elem(&inflight, &key);
	struct trace_syscall e = { .kind = TE_SYSCALL };
	struct trace_unlinked u = { .kind = TE_UNLINKED };

	if (nr >= MAX_SYSCALLS)
		return 0;
	if (ret > 0 && (trace_rw[nr] & 1))
		trace_count(slot, TC_SYS_READ, ret);
	if (ret > 0 && (trace_rw[nr] & 2))
		trace_count(slot, TC_SYS_WRITE, ret);
	if (!ti || ti->tid != TASK_READ(task, pid))
		return 0;
	if (trace_nr[nr] && dur_ns != TRACE_UNTIMED && dur_ns >= trace_min_ns) {
		e.tid = TASK_READ(task, pid);
		e.tgid = TASK_READ(task, tgid);
		e.nr = nr;
		e.start_ns = ti->trace_start_ns;
		e.dur_ns = dur_ns;
		e.ret = ret;
		e.files[0] = ti->trace_files[0];
		e.files[1] = ti->trace_files[1];
		e.linked = ti->linked;
		trace_thread_name(task);
		trace_emit(&e, sizeof(e));
	} else if (ti->linked) {
		u.tid = TASK_READ(task, pid);
		u.start_ns = ti->trace_start_ns;
		u.linked = ti->linked;
		trace_emit(&u, sizeof(u));
	}
	ti->linked = 0;
	return 0;
}

/* What else a counted call goes to: its files, the timeline, its stack. */
static __always_inline void after_call(void *ctx, struct task_struct *task, struct thread_io *ti,
				       struct pt_regs *regs, __u32 slot, __u32 nr, struct call *c,
				       __u64 start_ns)
{
	if (trace)
		trace_call_begin(ti, start_ns);
	if (!serve)
		account_files(task, ti, regs, nr, c);
	if (trace)
		trace_syscall(nr, slot, c->ret, c->lat_ns ?: TRACE_UNTIMED);
	if (stacks && stack_nr[nr & (MAX_SYSCALLS - 1)])
		stack_call(ctx, task, ti, regs, slot, nr, c->ret,
			   c->lat_ns * c->weight);
}

/*
 * The call on its (slot, syscall) row of this CPU's cache (counters.bpf.c): plain
 * increments, exact because only this CPU's sys_exit writes its rows and a program does not
 * nest in itself on a CPU. -1 when the cache cannot be read.
 */
static __always_inline int count_call(__u32 cpu, __u32 slot, __u32 nr, struct call *c)
{
	__u32 tag = SC_TAG(slot & (MAX_SLOTS - 1), nr), key = cache_row(cpu, tag, SC_CACHE_ROWS);
	struct sc_cache_row *row = bpf_map_lookup_elem(&sc_cache, &key);
	__u64 error = call_failed(c->ret);
	struct syscall_stat *st;

	if (!row)
		return -1;
	if (row->tag != tag && sc_row_take(cpu, key, tag)) {
		sc_count_totals(tag, error, c->lat_ns * c->weight, c->lat_ns != 0);
		return 0;
	}
	st = &row->st;
	st->calls++;
	if (error)
		st->errors++;
	if (c->lat_ns) {
		st->total_ns += c->lat_ns * c->weight;
		st->timed++;
	}
	return 0;
}

/*
 * A return sys_exit does not count: a new task's first return to user space passes sys_exit
 * of the fork or clone that made it, with 0 (strace counts that call once, in the parent,
 * and so do we); and until its execve returns, a pending child runs iotrace's code. Masks,
 * not branches on ret and id (bpf/masks.h), which the verifier kept apart to the end.
 */
static __always_inline bool not_a_call_of_its_own(long ret, long id, __u32 slot)
{
	__u64 zero = all_ones_if_zero(ret), execed;

	barrier_var(zero);
	if (zero && (id == nr_clone || id == nr_clone3 || id == nr_fork || id == nr_vfork))
		return true;
	if (!(slot & SLOT_PENDING))
		return false;
	execed = eq_mask(id, nr_execve) | eq_mask(id, nr_execveat);
	barrier_var(execed);
	return !execed;
}

/*
 * Calls are counted when they return, as strace -c counts them: exit and exit_group
 * never return and are not counted, and neither is anything a task did before the
 * execve that made it the traced command.
 */

SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task = syscall_task(regs);
	struct call c = { .ret = ret };
	__u64 start_ns = 0;
	struct thread_io *ti;
	__u32 slot, nr, cpu, kind;
	bool adopted = false;
	__u16 *entry;
	long id;

	slot = current_slot(task, &entry);
	if (!slot) {
		/* serve, top: a process that was running before iotrace gets its slot now. */
		if (serve)
			slot = serve_label_slot(TASK_READ(task, tgid), leader_comm(task));
		else if (top)
			slot = top_slot(TASK_READ(task, tgid),
					BPF_CORE_READ(task, real_parent, tgid), EV_FOUND,
					leader_comm(task));
		else
			return 0;
		adopted = true; /* this call started before it had one: not timed */
	}
	if ((serve || top) && slot == SLOT_NONE)
		return 0;
	id = SC_NR(regs);
	if (not_a_call_of_its_own(ret, id, slot))
		return 0;
	if (slot & SLOT_PENDING) { /* its execve returned: counted from here on */
		slot &= ~SLOT_PENDING;
		if (entry)
			*entry = slot;
	}
	ti = killed_in_call(task, ret) ? NULL : thread_io_of(task);
	if (!ti) /* not a call; or never: its key is masked into the array */
		return 0;
	if (timing) {
		ti->lat_ns = 0;
		if (ti->start_ns) {
			start_ns = ti->start_ns;
			c.lat_ns = bpf_ktime_get_ns() - start_ns;
			ti->lat_ns = c.lat_ns | !c.lat_ns;
			id = ti->nr;
			ti->start_ns = 0;
		} else if (ti->skipped) {
			ti->skipped = 0; /* left untimed by the sampling rule */
		} else if (!adopted) {
			__sync_fetch_and_add(&drops[DROP_UNTIMED], 1);
		}
		/* Read back from the map: one way on from here for the verifier, not three. */
		c.lat_ns = ti->lat_ns;
		c.weight = ti->weight;
	}
	/* With masks: branches on id kept the verifier's walk apart to the end (masks.h). */
	nr = syscall_row_of(id, nr_rt_sigreturn, MAX_SYSCALLS);
	cpu = bpf_get_smp_processor_id();
	if (count_call(cpu, slot, nr, &c))
		return 0;
	kind = io_kind_of[syscall_index(nr)];
	if (kind) {
		c.data = true;
		c.req = requested_bytes(regs, kind);
		account_io(&c, cpu, slot, kind);
	}
	after_call(ctx, task, ti, regs, slot, nr, &c, start_ns);
	return 0;
}
