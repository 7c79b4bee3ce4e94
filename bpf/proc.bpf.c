// SPDX-License-Identifier: GPL-2.0
/*
 * Part of bpf/iotrace.bpf.c, which builds every part into one object.
 *
 * Process tree of the traced command: new processes inherit tracing from a traced
 * parent, exec and rename refresh the name, and the last thread's exit retires the
 * process so the loader can harvest and recycle its slot.
 */
/* Lowest clear bit of a word that is not all ones, as an index 0..63. */
static __always_inline __u32 lowest_clear_bit(__u64 word)
{
	return bit_index(~word & (word + 1));
}

struct slot_search {
	__u32 slot;
};

/* One bitmap word: take its lowest clear bit, retrying if another CPU took it first. */
static long try_word(__u32 w, void *data)
{
	struct slot_search *s = data;

	if (w >= MAX_SLOTS / 64)
		return 1;
	/* compat: one try a word, or the verifier's branches pass 5.10's limit (compat.bpf.h) */
	for (int tries = 0; tries < (HAVE_COMPAT ? 1 : 4); tries++) {
		__u64 used = slot_used[w];
		__u64 bit;

		if (used == ~0ULL)
			return 0;
		bit = ~used & (used + 1);
		if (!(FETCH_OR(&slot_used[w], bit) & bit)) {
			s->slot = w * 64 + lowest_clear_bit(used);
			return 1;
		}
	}
	return 0;
}

#if HAVE_COMPAT
/* compat: one word's try, a global function: the search unrolled is calls (compat.bpf.h). */
__noinline int try_slot_word(__u32 w)
{
	struct slot_search s = { .slot = 0 };

	try_word(w, &s);
	return s.slot;
}
#endif

/*
 * Take a free slot from the shared bitmap. Slots 0 (untraced) and 1 (overflow) and those
 * past nr_slots are marked used by the loader, so they are never handed out. bpf_loop keeps
 * the verifier from unrolling the search (and the load time short).
 */
COMPAT_GLOBAL(static) __u32 alloc_slot(void)
{
	struct slot_search s = { .slot = 0 };

#if HAVE_COMPAT
	for (__u32 w = 0; w < MAX_SLOTS / 64 && w < (nr_slots + 63) / 64 && !s.slot; w++)
		s.slot = try_slot_word(w);
#else
	bpf_loop((nr_slots + 63) / 64, try_word, &s, 0);
#endif
	if (s.slot)
		return s.slot;
	__sync_fetch_and_add(&drops[DROP_SLOTS], 1);
	return OVERFLOW_SLOT;
}

/*
 * Waking the loader costs more than the rest of a process's tracing together: the ring
 * buffer's wakeup is an irq_work (a self-IPI, a VM exit in a guest) and then a wakeup of
 * the loader's thread on another CPU — ~15 µs per event in this VM, paid by the traced
 * process. So fork, exec and rename events never wake it: they wait in the buffer, in
 * order, for the next wakeup. An exit may (exit_wakes), and a new serve label always does,
 * so that the loader reads the cgroup's path while the cgroup is populated; so does a
 * buffer filled past a quarter. The wakeups are forced: after records submitted without
 * one, the default "wake if the reader has caught up" would not fire.
 */
#define PROC_EVENTS_WAKE_BYTES (256 * 1024 / 4)

static __always_inline void submit_event(void *e, bool wake)
{
	if (!wake && bpf_ringbuf_query(&proc_events, BPF_RB_AVAIL_DATA) > PROC_EVENTS_WAKE_BYTES)
		wake = true;
	bpf_ringbuf_submit(e, wake ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/*
 * The cgroup the current task is counted under (serve's label, top's group, snoop's
 * filter): with cgroup filters (-c, --container), the filter's cgroup it is in (at any depth
 * below it), 0 when it is in none; else its own cgroup. One helper call per filter, made
 * where a process gets its slot or a request its charge, never per syscall.
 */
static __always_inline __u64 filter_cgroup(void)
{
	if (!nr_cgroup_filters)
		return bpf_get_current_cgroup_id();
	for (int i = 0; i < MAX_CGROUP_FILTERS; i++) {
		if (i >= nr_cgroup_filters)
			break;
		if (bpf_get_current_ancestor_cgroup_id(cgroup_filter_level[i]) ==
		    cgroup_filter_id[i])
			return cgroup_filter_id[i];
	}
	return 0;
}

/* serve: label -> slot. A label keeps its slot (and its counters) for the whole run. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_SLOTS);
	__type(key, struct label_key);
	__type(value, __u32);
} label_slots SEC(".maps");

/*
 * serve: the slot of the current task's label, recorded as tgid's proc_slot entry. comm_addr
 * is the kernel address of a new name (task_rename), or 0 for the current one. Global, so
 * the verifier checks it once, and with scalar arguments only.
 */
__noinline int serve_label_slot(__u32 tgid, __u64 comm_addr)
{
	struct label_key key = {};
	__u16 *entry = slot_entry(tgid);
	__u32 *found, slot;

	if (!entry)
		return SLOT_NONE;
	key.cgroup = filter_cgroup();
	if (!key.cgroup) {
		*entry = SLOT_NONE;
		return SLOT_NONE;
	}
	if (label_comm) {
		if (comm_addr)
			bpf_probe_read_kernel_str(key.comm, sizeof(key.comm), (void *)comm_addr);
		else
			bpf_get_current_comm(key.comm, sizeof(key.comm));
	}
	found = bpf_map_lookup_elem(&label_slots, &key);
	if (found) {
		*entry = *found;
		return *found;
	}
	slot = alloc_slot();
	if (slot != OVERFLOW_SLOT && bpf_map_update_elem(&label_slots, &key, &slot, BPF_NOEXIST)) {
		/* Another CPU labelled it first (use its slot and give ours back), or the map is full. */
		found = bpf_map_lookup_elem(&label_slots, &key);
		ATOMIC_AND(&slot_used[(slot / 64) & (MAX_SLOTS / 64 - 1)],
				     ~(1ULL << (slot % 64)));
		slot = found ? *found : OVERFLOW_SLOT;
	} else if (slot != OVERFLOW_SLOT) {
		/* The cgroup is populated now: user space reads its path before it can go away. */
		struct iot_proc_event *e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);

		if (e) {
			__builtin_memset(e, 0, __builtin_offsetof(struct iot_proc_event, comm));
			e->kind = EV_LABEL;
			e->slot = slot;
			e->ts_ns = key.cgroup;
			submit_event(e, true);
		} else {
			__sync_fetch_and_add(&drops[DROP_RINGBUF], 1);
		}
	}
	*entry = slot;
	return slot;
}

/*
 * top: sets tgid's proc_slot entry to value if it is still 0. Two threads of a process that
 * was running before top may both make its first syscall at once: one slot wins, the other
 * is given back. The entry shares its 64-bit word with three other pids' (compare-and-swap
 * works on 32 and 64 bits), so a neighbour's change makes it try again.
 */
static __always_inline bool claim_entry(__u32 tgid, __u16 value)
{
	__u32 key = tgid / 4, shift = (tgid & 3) * 16;
	__u64 *word = bpf_map_lookup_elem(&proc_slot, &key);

	if (!word)
		return false;
	for (int tries = 0; tries < 4; tries++) {
		__u64 old = *(volatile __u64 *)word;

		if ((old >> shift) & 0xffff)
			return false;
		if (CMPXCHG(word, old, old | ((__u64)value << shift)) == old)
			return true;
	}
	return false;
}

static __always_inline void free_slot(__u32 slot)
{
	if (slot != OVERFLOW_SLOT)
		ATOMIC_AND(&slot_used[(slot / 64) & (MAX_SLOTS / 64 - 1)],
				     ~(1ULL << (slot % 64)));
}

static __always_inline void top_row(__u32 slot, __u32 tgid, __u32 ppid, __u64 cgroup,
				    __u64 comm_addr);

/*
 * top: a slot of its own for process tgid, and an event (kind EV_FORK or EV_FOUND) that
 * tells the loader its slot, name (at comm_addr) and cgroup; outside every -c cgroup
 * SLOT_NONE, which every hook skips. Runs in the process itself or, at a fork, in its parent:
 * the same cgroup either way. The event does not wake the loader: it reads events before it
 * reads counters. Global, so the verifier checks it once, and with scalar arguments only.
 */
__noinline int top_slot(__u32 tgid, __u32 ppid, __u32 kind, __u64 comm_addr)
{
	__u64 cgroup = filter_cgroup();
	struct iot_proc_event *e;
	__u16 *entry;
	__u32 slot;

	if (!cgroup) {
		claim_entry(tgid, SLOT_NONE);
		return SLOT_NONE;
	}
	slot = alloc_slot();
	if (!claim_entry(tgid, slot)) {
		free_slot(slot);
		entry = slot_entry(tgid);
		return entry ? *entry : 0;
	}
	top_row(slot, tgid, ppid, cgroup, comm_addr);
	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&drops[DROP_RINGBUF], 1);
		return slot;
	}
	e->kind = kind;
	e->pid = tgid;
	e->ppid = ppid;
	e->slot = slot;
	e->ts_ns = bpf_ktime_get_ns();
	e->cgroup = cgroup;
	e->exit_code = 0;
	e->args_len = 0;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), (void *)comm_addr);
	submit_event(e, false);
	return slot;
}

/*
 * top: the address of a process's name (its main thread's) as a scalar: the verifier takes
 * no pointer into a task as a global function's argument, and a read through
 * BPF_CORE_READ yields a plain number.
 */
static __always_inline __u64 group_comm(struct task_struct *task)
{
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);

	return (__u64)leader + bpf_core_field_offset(struct task_struct, comm);
}

static __always_inline void fill_event(struct iot_proc_event *e, __u32 kind,
				       struct task_struct *task, __u32 slot)
{
	e->kind = kind;
	e->pid = TASK_READ(task, tgid);
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	e->slot = slot;
	e->ts_ns = bpf_ktime_get_ns();
	e->cgroup = 0;
	e->exit_code = 0;
	e->args_len = 0;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
}

static __always_inline struct iot_proc_event *reserve_event(__u32 kind, struct task_struct *task,
							__u32 slot)
{
	struct iot_proc_event *e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&drops[DROP_RINGBUF], 1);
		return NULL;
	}
	fill_event(e, kind, task, slot);
	return e;
}

/*
 * The new image's argv into args (ARGS_LEN bytes), cut there; its length. It sits in the
 * task's own memory; exec's tracepoint runs in that task's context.
 */
static __always_inline __u32 read_args(struct task_struct *p, char *args)
{
	unsigned long start = BPF_CORE_READ(p, mm, arg_start), end = BPF_CORE_READ(p, mm, arg_end);
	__u64 len = end > start ? end - start : 0;

	if (len > ARGS_LEN)
		len = ARGS_LEN;
	/* The verifier sees the bound checked where the length is used. */
	barrier_var(len);
	if (!len || len > ARGS_LEN || bpf_probe_read_user(args, len, (void *)start))
		return 0;
	return len;
}

/* ---- run mode's slot table (slot_procs): the loader's copy of who each slot is ---- */

static __always_inline struct slot_proc *slot_row(__u32 slot)
{
	return slot > OVERFLOW_SLOT ? bpf_map_lookup_elem(&slot_procs, &slot) : NULL;
}

/*
 * A row is written between two steps of its seqcount (odd while written), so the loader
 * reading it meanwhile reads it again. Its writers are the process itself (fork, exec,
 * rename, exit: one at a time) and, rarely, another task renaming it (/proc/PID/comm):
 * the one that finds the count odd writes without it (a name read torn then is read again
 * at the exit, which is the read that counts). Compare-and-swap on both steps: a full
 * barrier on every JIT. Returns the count to end with, 0 when not held.
 */
static __always_inline __u32 row_begin(struct slot_proc *row)
{
	__u32 seq = *(volatile __u32 *)&row->seq;

	if (seq & 1 || CMPXCHG(&row->seq, seq, seq + 1) != seq)
		return 0;
	return seq + 1;
}

static __always_inline void row_end(struct slot_proc *row, __u32 seq)
{
	if (seq)
		ATOMIC_CMPXCHG(&row->seq, seq, seq + 1);
}

/*
 * Run mode: the mount and pid namespaces task is in (the inode numbers lsns and
 * /proc/PID/ns show): its pid namespace is the one its pid was made in, at its level.
 */
static __always_inline void row_namespaces(struct slot_proc *row, struct task_struct *t)
{
	struct pid *pid = BPF_CORE_READ(t, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid up = {};

	row->mnt_ns = BPF_CORE_READ(t, nsproxy, mnt_ns, ns.inum);
	bpf_probe_read_kernel(&up, sizeof(up),
			      (void *)pid + bpf_core_field_offset(struct pid, numbers) +
				      (__u64)(level & 63) * bpf_core_type_size(struct upid));
	row->pid_ns = BPF_CORE_READ(up.ns, ns.inum);
}

/*
 * The row of a new process, written before any of its calls can count (the child runs
 * only after this tracepoint): no other writer yet. Until it execs, a child runs its
 * parent's program: it gets its parent's command line.
 */
static __always_inline void row_start(__u32 slot, struct task_struct *child, __u32 ppid,
				      __u32 parent_slot)
{
	struct slot_proc *row = slot_row(slot), *parent = slot_row(parent_slot);
	__u32 seq;

	if (!row)
		return;
	seq = row_begin(row);
	row->pid = child->tgid;
	row->ppid = ppid;
	row->exit_code = 0;
	row->start_ns = bpf_ktime_get_ns();
	row->end_ns = 0;
	/* Run mode: its cgroup (this runs in the parent, whose cgroup it starts in). */
	row->cgroup = bpf_get_current_cgroup_id();
	row_namespaces(row, child);
	bpf_probe_read_kernel_str(row->comm, sizeof(row->comm), child->comm);
	row->args_len = 0;
	if (parent) {
		row->args_len = parent->args_len;
		__builtin_memcpy(row->args, parent->args, ARGS_LEN);
	}
	row->state = SP_LIVE;
	row_end(row, seq);
}

/*
 * top: the row of a process given a slot (at its fork, in its parent, or at its first
 * syscall since top started: another of its threads may use the slot meanwhile, but no
 * other writes its row yet).
 */
static __always_inline void top_row(__u32 slot, __u32 tgid, __u32 ppid, __u64 cgroup,
				    __u64 comm_addr)
{
	struct slot_proc *row = slot_row(slot);
	__u32 seq;

	if (!row)
		return;
	seq = row_begin(row);
	row->pid = tgid;
	row->ppid = ppid;
	row->cgroup = cgroup;
	/* Below a filter's cgroup, the container is its own's (-c system.slice: docker's). */
	row->own_cgroup = nr_cgroup_filters ? bpf_get_current_cgroup_id() : cgroup;
	row->exit_code = 0;
	row->start_ns = bpf_ktime_get_ns();
	row->end_ns = 0;
	row->args_len = 0;
	bpf_probe_read_kernel_str(row->comm, sizeof(row->comm), (void *)comm_addr);
	row->state = SP_LIVE;
	row_end(row, seq);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	struct iot_proc_event *e;
	__u16 *parent_slot, *child_slot;
	__u32 slot;

	/* A new thread joins its process's tgid, which is already traced or not. */
	if (child->pid != child->tgid)
		return 0;
	if (serve) {
		/* This runs in the parent: same cgroup and, until an exec, the same name. */
		serve_label_slot(child->tgid, 0);
		return 0;
	}
	if (top) {
		/* Kernel threads make no syscalls; what they do for others is charged to those. */
		if (!(child->flags & PF_KTHREAD))
			top_slot(child->tgid, parent->tgid, EV_FORK, group_comm(child));
		return 0;
	}
	parent_slot = slot_entry(parent->tgid);
	if (!parent_slot || !*parent_slot || (*parent_slot & SLOT_PENDING))
		return 0;
	child_slot = slot_entry(child->tgid);
	if (!child_slot)
		return 0;
	slot = alloc_slot();
	row_start(slot, child, parent->tgid, *parent_slot);
	*child_slot = slot;
	e = reserve_event(EV_FORK, child, slot);
	if (e)
		submit_event(e, false);
	return 0;
}

__noinline int note_exec_files(__u64 exe_inode, __u64 exe_file); /* pagecache.bpf.c */

/*
 * An execve made by a thread other than the leader: the kernel has killed the other
 * threads and given this one the leader's tid (de_thread). Its syscall state, kept under
 * its old tid since sys_enter, moves to the new one, where the dead leader's leftovers of
 * its last call (killed in it: never returned) would otherwise be taken for the execve's:
 * sys_exit counted the leader's call in its place, or an execve without a start.
 */
static __always_inline void move_thread_state(__u32 tid, __u32 old_tid)
{
	__u32 from = old_tid & inflight_mask, to = tid & inflight_mask;
	struct thread_io *src, *dst;

	src = bpf_map_lookup_elem(&inflight, &from);
	dst = bpf_map_lookup_elem(&inflight, &to);
	if (!src || !dst || src->tid != old_tid)
		return;
	if (src != dst) {
		__builtin_memcpy(dst, src, sizeof(*dst));
		src->tid = 0; /* no thread's: the next to use the element clears it */
	}
	dst->tid = tid;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_sched_process_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u16 *entry = slot_entry(p->tgid);
	struct iot_proc_event *e;
	struct iot_exec_event *x;
	struct slot_proc *row;
	struct inode *inode;
	struct file *file;
	__u64 exe = 0, exe_file = 0;
	__u32 slot, seq;

	if ((__u32)old_pid != p->pid)
		move_thread_state(p->pid, old_pid);
	if (serve) {
		/*
		 * Runs in the task, named after its new image already, and in the cgroup it
		 * was moved to since its fork (how services start): label it afresh.
		 */
		serve_label_slot(p->tgid, 0);
		return 0;
	}
	if (top && entry && (!*entry || (*entry == SLOT_NONE && nr_cgroup_filters))) {
		/*
		 * Its first syscall since top started is this execve; or it was outside every
		 * -c cgroup at its fork and may have been moved into one since (how services
		 * start). One thread is left after an exec: no other writes the entry.
		 */
		*entry = 0;
		top_slot(p->tgid, BPF_CORE_READ(p, real_parent, tgid), EV_FOUND, group_comm(p));
	}
	/* A pending slot is the command's own execve, which is just completing. */
	if (!entry || !*entry || (top && *entry == SLOT_NONE))
		return 0;
	/* The program the kernel mapped: its inode and file, as numbers for the global function. */
	file = bprm->file;
	inode = file->f_inode;
	bpf_probe_read_kernel(&exe, sizeof(exe), &inode);
	bpf_probe_read_kernel(&exe_file, sizeof(exe_file), &file);
	note_exec_files(exe, exe_file);
	slot = *entry & ~SLOT_PENDING;
	row = slot_row(slot);
	if (top) {
		if (row) {
			seq = row_begin(row);
			bpf_probe_read_kernel_str(row->comm, sizeof(row->comm), p->comm);
			row->cgroup = filter_cgroup();
			row->own_cgroup = nr_cgroup_filters ? bpf_get_current_cgroup_id()
							    : row->cgroup;
			row_end(row, seq);
		}
		e = reserve_event(EV_EXEC, p, slot);
		if (!e)
			return 0;
		e->cgroup = filter_cgroup();
		submit_event(e, false);
		return 0;
	}
	if (row) {
		seq = row_begin(row);
		bpf_probe_read_kernel_str(row->comm, sizeof(row->comm), p->comm);
		/* Moved since its fork (a container's process joins its cgroup, then execs). */
		row->cgroup = bpf_get_current_cgroup_id();
		row_namespaces(row, p);
		row->args_len = read_args(p, row->args);
		row_end(row, seq);
		e = reserve_event(EV_EXEC, p, slot);
		if (e)
			submit_event(e, false);
		return 0;
	}
	/* No row (the overflow slot): the event carries the command line. */
	x = bpf_ringbuf_reserve(&proc_events, sizeof(*x), 0);
	if (!x) {
		__sync_fetch_and_add(&drops[DROP_RINGBUF], 1);
		return 0;
	}
	fill_event(&x->e, EV_EXEC, p, slot);
	x->e.args_len = read_args(p, x->args);
	submit_event(x, false);
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(handle_task_rename, struct task_struct *task, const char *comm)
{
	__u16 *entry = slot_entry(TASK_READ(task, tgid));
	struct iot_proc_event *e;
	struct slot_proc *row;
	__u32 seq;

	if (serve) {
		/* A rename from another task (/proc/PID/comm) keeps the old label. */
		if (label_comm && TASK_READ(task, pid) == TASK_READ(task, tgid) &&
		    TASK_READ(task, tgid) == bpf_get_current_pid_tgid() >> 32 && entry && *entry)
			serve_label_slot(TASK_READ(task, tgid), (__u64)comm);
		return 0;
	}
	if (!entry || !*entry || (*entry & SLOT_PENDING) ||
	    TASK_READ(task, pid) != TASK_READ(task, tgid))
		return 0;
	/* exec renames too, just before its own event, which carries the same name. */
	if (bpf_core_field_exists(task->in_execve) && BPF_CORE_READ_BITFIELD(task, in_execve))
		return 0;
	row = slot_row(*entry);
	if (row) {
		seq = row_begin(row);
		bpf_probe_read_kernel_str(row->comm, sizeof(row->comm), comm);
		row_end(row, seq);
	}
	e = reserve_event(EV_COMM, task, *entry);
	if (!e)
		return 0;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), comm);
	submit_event(e, false);
	return 0;
}

/*
 * An exit wakes the loader (it harvests the process's counters and frees its slot) if none
 * did in the last WAKE_INTERVAL_NS, or at once if slots run short (the exiting one is in the
 * upper half: slots are taken lowest first); otherwise the loader's own timer (RUN_POLL_MS,
 * user/cmd/run.c) collects it.
 */
#define WAKE_INTERVAL_NS (10 * 1000 * 1000)

__u64 last_exit_wakeup_ns = 0;

static __always_inline bool exit_wakes(__u32 slot, __u64 now)
{
	if (slot < nr_slots / 2 && now - last_exit_wakeup_ns <= WAKE_INTERVAL_NS)
		return false;
	last_exit_wakeup_ns = now;
	return true;
}

/* The process's last thread is exiting: retire its slot and tell the loader. */
/* The process of task p (its last thread) ended with status code (wait(2)'s). */
static __always_inline void process_exited(struct task_struct *p, int code)
{
	struct iot_proc_event *e;
	struct slot_proc *row;
	__u32 slot, seq;

	slot = take_slot_entry(p->tgid);
	if (!slot)
		return;
	if (serve || slot == SLOT_NONE)
		return;
	slot &= ~SLOT_PENDING;
	row = slot_row(slot);
	/* Its last word: the loader harvests and frees a slot whose row says it exited. */
	if (row) {
		seq = row_begin(row);
		row->exit_code = code;
		row->end_ns = bpf_ktime_get_ns();
		/* Run mode: the cgroup it ended in (top's is its group's, set at fork and exec). */
		if (!top)
			row->cgroup = bpf_get_current_cgroup_id();
		row->state = SP_EXITED;
		row_end(row, seq);
	}
	e = reserve_event(EV_EXIT, p, slot);
	if (!e)
		return;
	e->exit_code = code;
	submit_event(e, exit_wakes(slot, e->ts_ns));
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_sched_process_exit, struct task_struct *p, bool group_dead)
{
	/* Only the last thread ends the process; earlier threads' syscalls are all counted. */
	if (group_dead)
		process_exited(p, p->exit_code);
	return 0;
}
