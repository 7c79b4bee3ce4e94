// SPDX-License-Identifier: GPL-2.0
/*
 * Part of bpf/iotrace.bpf.c, which builds every part into one object.
 *
 * io_uring per process and opcode: the I/O that never calls read or write. A request is
 * followed from io_uring_submit_req (in the thread that submitted it: a thread of the
 * process in io_uring_enter, or the ring's SQPOLL thread) to its CQE (io_uring_complete,
 * in whichever thread posts it: the submitter, its task work, an io-wq worker). io-wq
 * workers (iou-wrk-*) and SQPOLL threads (iou-sqp-*) are threads of the process that owns
 * the ring, so its tgid, slot and cgroup are theirs: their block I/O is charged to it by
 * the block programs unchanged. A request is keyed by its struct io_kiocb while it is in
 * flight; io_uring_queue_async_work and io_uring_poll_arm say how it ran.
 *
 * Requests not followed: those flagged IOSQE_CQE_SKIP_SUCCESS (no CQE when they succeed;
 * counted as ops, and their failures as errors), those whose CQE overflowed the ring (the
 * overflow tracepoint carries no request: counted in drops and left in flight), and those
 * submitted while the in-flight table was full (drops). Data opcodes are also counted on
 * their file in the ledger (ops uring_NAME), apart from the syscalls so that those stay
 * comparable with strace.
 */
#define IOSQE_CQE_SKIP_SUCCESS (1U << 6) /* REQ_F_CQE_SKIP: the first flags are the SQE's */
#define IORING_CQE_F_MORE (1U << 1)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_URING_INFLIGHT);
	__type(key, __u64); /* the request's struct io_kiocb */
	__type(value, struct uring_req);
} uring_inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MAX_URING_KEYS);
	__type(key, struct uring_key);
	__type(value, struct uring_stat);
} uring_stats SEC(".maps");

/*
 * Multishot requests by (ring, user_data): before its last, a multishot request posts its
 * CQEs without the request (io_uring_complete's req is NULL on 6.18: the CQE is filled
 * from the ring's side, io_req_post_cqe), so they are matched to it this way.
 */
struct uring_data_key {
	__u64 ctx;
	__u64 user_data;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct uring_data_key);
	__type(value, __u64); /* the request's key in uring_inflight */
} uring_multishot SEC(".maps");

/* Opcodes that may post several CQEs (multishot variants), set by the loader by name. */
const volatile __u8 uring_multishot_op[MAX_URING_OPS] = {};

/* Opcode -> the ledger op it is counted under on its file (FOP_uring_NAME), or 0. */
const volatile __u8 uring_file_op[MAX_URING_OPS] = {};
/* Opcode -> enum uring_kind. */
#define UK_ENTRY(name, kind) UK_##kind,
static const __u8 uring_kind_of[MAX_URING_OPS] = { URING_OPS(UK_ENTRY) };

static const struct uring_stat zero_uring;

static __always_inline struct uring_stat *uring_stat_of(__u32 owner, __u32 op)
{
	struct uring_key key = { .owner = owner, .op = op & (MAX_URING_OPS - 1) };

	return lookup_or_init(&uring_stats, &key, &zero_uring, DROP_URING_KEYS, NULL);
}

/* A request submitted (its SQE read and the request made from it). */
static __always_inline void uring_submit(void *ctx, struct io_kiocb *req)
{
	struct task_struct *task = hook_task(ctx);
	struct io_kiocb *r = UNTRUSTED(io_kiocb, req);
	struct uring_req e = { .owner = chargeable_tgid(task), .tgid = TASK_READ(task, tgid),
			       .tid = TASK_READ(task, pid) };
	struct uring_req *old;
	struct uring_stat *st;
	__u64 key = (__u64)req;

	if (!e.owner)
		return;
	e.op = r->opcode;
	st = uring_stat_of(e.owner, e.op);
	if (st) {
		__sync_fetch_and_add(&st->ops, 1);
		if (TASK_READ(task, flags) & PF_IO_WORKER)
			__sync_fetch_and_add(&st->sqpoll_ops, 1);
	}
	if (r->flags & IOSQE_CQE_SKIP_SUCCESS)
		return;
	/* A request recycled while we still held it: its CQE was never matched (overflow). */
	old = bpf_map_lookup_elem(&uring_inflight, &key);
	if (old && !old->seen) {
		st = uring_stat_of(old->owner, old->op);
		if (st)
			__sync_fetch_and_add(&st->unseen, 1);
	}
	e.start_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&uring_inflight, &key, &e, BPF_ANY)) {
		__sync_fetch_and_add(&drops[DROP_URING_INFLIGHT], 1);
		return;
	}
	if (uring_multishot_op[e.op & (MAX_URING_OPS - 1)]) {
		struct uring_data_key dk = { .ctx = (__u64)r->ctx, .user_data = r->cqe.user_data };

		bpf_map_update_elem(&uring_multishot, &dk, &key, BPF_ANY);
	}
}

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(handle_io_uring_submit_req, struct io_kiocb *req)
{
	uring_submit(ctx, req);
	return 0;
}

/* A request refused at submission (bad SQE): one op; its CQE carries the error. */
SEC("tp_btf/io_uring_req_failed")
int BPF_PROG(handle_io_uring_req_failed, const struct io_uring_sqe *sqe, struct io_kiocb *req,
	     int error)
{
	__u32 owner = chargeable_tgid(current_task());
	struct uring_stat *st;

	if (!owner)
		return 0;
	st = uring_stat_of(owner, UNTRUSTED(io_kiocb, req)->opcode);
	if (st)
		__sync_fetch_and_add(&st->ops, 1);
	return 0;
}

static __always_inline void note_how(struct io_kiocb *req, __u8 how)
{
	__u64 key = (__u64)req;
	struct uring_req *e = bpf_map_lookup_elem(&uring_inflight, &key);

	/* Async (io-wq) wins over poll: a polled request may be punted later. */
	if (e && !e->seen && e->how < how)
		e->how = how;
}

SEC("tp_btf/io_uring_queue_async_work")
int BPF_PROG(handle_io_uring_queue_async_work, struct io_kiocb *req, int rw)
{
	note_how(req, URING_ASYNC);
	return 0;
}

SEC("tp_btf/io_uring_poll_arm")
int BPF_PROG(handle_io_uring_poll_arm, struct io_kiocb *req, int mask, int events)
{
	note_how(req, URING_POLL);
	return 0;
}

/*
 * A completion on the request's file, in the ledger of the ring owner's process (one call
 * per CQE). Its name comes from the open that made its fd (a syscall program), or is
 * found from its handle at the end (names.c): naming here would add to the verifier's work.
 */
__noinline int count_uring_file(__u32 tgid, __u64 req, __u32 op, __s64 res, __u64 lat_ns)
{
	__u32 fop = uring_file_op[op & (MAX_URING_OPS - 1)];
	__u8 kind = uring_kind_of[op & (MAX_URING_OPS - 1)];
	struct call c = { .ret = res, .lat_ns = lat_ns, .req = REQ_UNKNOWN,
			  .data = kind == UK_READ || kind == UK_WRITE };
	__u64 file_addr = 0;
	struct file_stat *st;
	struct inode *inode;
	struct file *file;
	struct path_key pk;
	__u32 idx;
	int found;

	if (!fop || !req)
		return 0;
#if HAVE_COMPAT
	/* An atomic add of a known 0 (weight) becomes an atomic OR, which 5.10 lacks. */
	barrier_var(c.weight);
#endif
	bpf_probe_read_kernel(&file_addr, sizeof(file_addr),
			      (void *)(req + bpf_core_field_offset(struct io_kiocb, file)));
	file = UNTRUSTED(file, (void *)file_addr);
	inode = file_addr ? KREAD(file, f_inode) : NULL;
	if (!inode)
		return 0;
	file_key_of(inode, file, &pk);
	found = file_index_of(tgid, pk.dev, pk.ino, pk.igen);
	if (found < 0)
		return 0;
	idx = found;
	st = bpf_map_lookup_elem(&file_stats, &idx);
	if (!st)
		return 0;
	st->epoch = ledger_epoch;
	count_row(st, idx, fop, &c);
	return 0;
}

/*
 * --trace: a request's first completion, an async slice from its submission; lat_ns from the
 * clock read that times it for the histogram.
 */
static __always_inline void trace_uring_request(struct uring_req *r, __s32 res, __u64 lat_ns)
{
	struct trace_uring t = {
		.kind = TE_URING, .tgid = r->tgid, .tid = r->tid, .op = r->op,
		.submit_ns = r->start_ns, .done_ns = r->start_ns + lat_ns, .res = res,
		.how = r->how,
	};

	trace_emit(&t, sizeof(t));
}

/* The stats of a CQE's request, and how long it took (0: not its first CQE, or unknown). */
static __always_inline void count_cqe(struct uring_stat *st, struct uring_req *e, __s32 res,
				      __u64 lat_ns)
{
	__u32 how;

	__sync_fetch_and_add(&st->completions, 1);
	if (res < 0)
		__sync_fetch_and_add(&st->errors, 1);
	else
		__sync_fetch_and_add(&st->res_bytes, res);
	if (!e || e->seen)
		return;
	how = e->how < URING_HOWS ? e->how : URING_INLINE;
	__sync_fetch_and_add(&st->ran[how], 1);
	__sync_fetch_and_add(&st->latency_sum_ns, lat_ns);
	__sync_fetch_and_add(&st->lat_hist[fine_bucket(lat_ns)], 1);
}

/* A CQE posted for req (NULL: a multishot request's, or an auxiliary one) of ring ctx_. */
static __always_inline void uring_complete(void *ctx, void *ctx_, void *req, __u64 user_data,
					   __s32 res, __u32 cflags)
{
	struct task_struct *task = hook_task(ctx);
	struct uring_data_key dk = { .ctx = (__u64)ctx_, .user_data = user_data };
	__u64 key = (__u64)req, lat_ns = 0, *multishot = NULL;
	__u32 owner, tgid, op;
	struct uring_req *e;
	struct uring_stat *st;

	if (!req) {
		/* A multishot request's CQE, or an auxiliary one (a message from another ring). */
		multishot = bpf_map_lookup_elem(&uring_multishot, &dk);
		if (!multishot)
			return;
		key = *multishot;
	}
	e = bpf_map_lookup_elem(&uring_inflight, &key);
	if (e) {
		owner = e->owner;
		tgid = e->tgid;
		op = e->op;
		lat_ns = e->seen ? 0 : bpf_ktime_get_ns() - e->start_ns;
	} else {
		/* Not followed (CQE_SKIP failing, table full): still this process's CQE. */
		owner = chargeable_tgid(task);
		tgid = TASK_READ(task, tgid);
		/* req is a void * of the tracepoint: a number, not a BTF pointer */
		op = req ? KREAD(UNTRUSTED(io_kiocb, req), opcode) : 0;
		if (!owner || !req)
			return;
	}
	st = uring_stat_of(owner, op);
	if (st)
		count_cqe(st, e, res, lat_ns);
	if (trace && e && !e->seen)
		trace_uring_request(e, res, lat_ns);
	if (!serve && uring_file_op[op & (MAX_URING_OPS - 1)])
		count_uring_file(tgid, key, op, res, lat_ns);
	if (!e)
		return;
	if (cflags & IORING_CQE_F_MORE) {
		e->seen = 1;
	} else {
		bpf_map_delete_elem(&uring_inflight, &key);
		if (uring_multishot_op[op & (MAX_URING_OPS - 1)])
			bpf_map_delete_elem(&uring_multishot, &dk);
	}
}

SEC("tp_btf/io_uring_complete")
int BPF_PROG(handle_io_uring_complete, void *ctx_, void *req, struct io_uring_cqe *cqe)
{
	uring_complete(ctx, ctx_, req, cqe->user_data, cqe->res, cqe->flags);
	return 0;
}

/* A CQE that did not fit the ring: it names no request, so its request stays in flight. */
SEC("tp_btf/io_uring_cqe_overflow")
int BPF_PROG(handle_io_uring_cqe_overflow, void *ctx_, __u64 user_data, __s32 res, __u32 cflags,
	     void *ocqe)
{
	if (chargeable_tgid(current_task()))
		__sync_fetch_and_add(&drops[DROP_URING_OVERFLOW], 1);
	return 0;
}
