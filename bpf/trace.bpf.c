// SPDX-License-Identifier: GPL-2.0
/*
 * Part of bpf/iotrace.bpf.c, which builds every part into one object.
 *
 * The timeline (--trace FILE): one event per traced call that took trace_min_ns or more,
 * per block request and per io_uring request, for user/report/trace.c to write in the Trace Event
 * Format. Nothing of it runs without --trace: `trace` is read-only data, so the verifier
 * removes every branch on it at load when it is false, and the hot path stays as it was.
 * The syscall, block and io_uring parts call these helpers from their own programs.
 */
const volatile bool trace = false;
const volatile __u64 trace_min_ns = 0;
/* A buffer holding more than this wakes the loader (set to a quarter of its size). */
const volatile __u64 trace_wake_bytes = 1 << 20;
/* Syscalls the timeline shows: the read/write family, sync calls, opens, io_uring_enter. */
const volatile __u8 trace_nr[MAX_SYSCALLS] = {};
/* Which counters a syscall's bytes go to: 1 read, 2 write, 3 both (a copy). */
const volatile __u8 trace_rw[MAX_SYSCALLS] = {};

/* Per slot: the counter tracks' values (enum trace_counter), read by the loader in place. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* nr_slots with --trace */
	__type(key, __u32);
	__type(value, __u64[TRACE_COUNTERS]);
} trace_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 12); /* one page; the loader sizes it with --trace */
} trace_events SEC(".maps");

/*
 * Threads whose name went out (TE_THREAD), so that each is sent once. An LRU map is
 * preallocated: one entry unless --trace (the loader sizes it then).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} trace_named SEC(".maps");

/* Copies an event into the trace ring; 0, or an error when it had no room. */
static __always_inline long trace_output(void *data, __u64 size)
{
	__u64 flags = bpf_ringbuf_query(&trace_events, BPF_RB_AVAIL_DATA) > trace_wake_bytes
			      ? BPF_RB_FORCE_WAKEUP
			      : BPF_RB_NO_WAKEUP;

	return bpf_ringbuf_output(&trace_events, data, size, flags);
}

/* The same for an event of the timeline itself: a lost one is counted. */
static __always_inline void trace_emit(void *data, __u64 size)
{
	if (trace_output(data, size))
		__sync_fetch_and_add(&drops[DROP_TRACE], 1);
}

/* The current thread's name, the first time the timeline shows it. */
static __always_inline void trace_thread_name(struct task_struct *task)
{
	struct trace_thread t = { .kind = TE_THREAD, .tid = TASK_READ(task, pid),
				  .tgid = TASK_READ(task, tgid) };
	__u32 one = 1;

	if (bpf_map_lookup_elem(&trace_named, &t.tid))
		return;
	bpf_get_current_comm(t.comm, sizeof(t.comm));
	trace_emit(&t, sizeof(t));
	bpf_map_update_elem(&trace_named, &t.tid, &one, BPF_ANY);
}

static __always_inline void trace_count(__u32 slot, __u32 which, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&trace_counters, &slot);

	if (c)
		__sync_fetch_and_add(&c[which & (TRACE_COUNTERS - 1)], n);
}

/* The same for the current task, by its process's slot. */
static __always_inline void trace_count_task(struct task_struct *task, __u32 which, __u64 n)
{
	__u16 *entry = slot_entry(TASK_READ(task, tgid));

	if (entry && *entry && !(*entry & SLOT_PENDING))
		trace_count(*entry, which, n);
}

/* A call sys_exit is counting: its start, and no file yet (account_files finds them). */
static __always_inline void trace_call_begin(struct thread_io *ti, __u64 start_ns)
{
	ti->trace_start_ns = start_ns;
	__builtin_memset(ti->trace_files, 0, sizeof(ti->trace_files));
}

static __always_inline void trace_file_of(struct trace_file *tf, __u32 dev, __u64 ino,
					  __u32 igen)
{
	tf->ino = ino;
	tf->dev = ino ? dev : 0;
	tf->igen = ino ? igen : 0;
}
