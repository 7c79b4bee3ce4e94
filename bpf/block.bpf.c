// SPDX-License-Identifier: GPL-2.0
/*
 * Part of bpf/iotrace.bpf.c, which builds every part into one object.
 *
 * Block I/O per process and disk. A request is charged when it starts (block_io_start,
 * in the submitting task, or block_rq_insert/issue for requests that skip accounting such
 * as flushes): to the submitter if it is traced; otherwise, for writeback done by a
 * kworker, to the traced process that last dirtied the file of its first page
 * (writeback_dirty_folio runs in the dirtier's context). Everything else is charged to
 * tgid 0, "other I/O" (journal, metadata, other processes), so per-disk totals add up to
 * what the disk did. Completion (block_rq_complete) adds sizes and latencies.
 */
#define REQ_OP_BITS 8
#define BDEVFS_MAGIC 0x62646576

/*
 * Snoop mode: stream completions; filters on the charged process, disk, and with
 * nr_cgroup_filters on the cgroups (containers) the charged process is in, at any depth.
 */
const volatile bool snoop = false;
const volatile __u32 snoop_tgid = 0;
const volatile __u32 snoop_dev = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_BLOCK_INFLIGHT);
	__type(key, struct request *);
	__type(value, struct block_rq_info);
} block_inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MAX_BLOCK_KEYS);
	__type(key, struct block_key);
	__type(value, struct block_stat);
} block_stats SEC(".maps");

/*
 * snoop: the current task's own cgroup (its container, for the CONTAINER column), or 0 when
 * it is outside every --container/-c filter (the request is not shown).
 */
static __always_inline __u64 snoop_cgroup(void)
{
	__u64 in = filter_cgroup(); /* without filters: the task's own cgroup already */

	return in && nr_cgroup_filters ? bpf_get_current_cgroup_id() : in;
}

struct dirtier_info {
	__u32 tgid;
	char comm[COMM_LEN];
	__u64 cgroup; /* snoop: the dirtier's snoop_cgroup(), for its writeback's */
};

/* (dev, ino) -> the (traced, or in snoop any) process that last dirtied the file's pages. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct path_key);
	__type(value, struct dirtier_info);
} dirtier SEC(".maps");

/* Per (owner, file, disk, op); the loader harvests one epoch while the other fills. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MAX_FILE_BLOCKS);
	__type(key, struct file_block_key);
	__type(value, struct file_block_stat);
} file_blocks SEC(".maps");

/*
 * The generation (0 or 1) of file_blocks keys being filled; flipped by the loader. A
 * completion reads it before it reads the clock (completion_epoch): then every request whose
 * completion time is before the loader's flip is in the generation it takes next, which is
 * what makes top's block_until_ns a bound (user/collect/top_collect.c).
 */
__u32 block_epoch = 0;

static __always_inline __u32 completion_epoch(void)
{
	return *(volatile __u32 *)&block_epoch;
}

/*
 * Keys file_blocks gained since the loader last switched generations; a quarter of the table
 * wakes it to read them now (cold reads of many files make keys fast).
 */
__u32 file_blocks_new = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* snoop's size; run mode shrinks it to one page */
} block_events SEC(".maps");

static const struct block_stat zero_stat;
static const struct file_block_stat zero_file_stat;

/* An io_uring thread (io-wq worker "iou-wrk-N", or SQPOLL "iou-sqp-N") or the task's own. */
static __always_inline __u32 submit_thread(struct task_struct *task, const char *comm)
{
	if (!(TASK_READ(task, flags) & PF_IO_WORKER))
		return VIA_TASK;
	return comm[4] == 's' && comm[5] == 'q' && comm[6] == 'p' ? VIA_SQPOLL : VIA_IOWQ;
}

/*
 * The process a request started by this task is charged to, or 0: a traced process in run
 * mode; in snoop mode any user process (kernel threads such as the writeback kworker and
 * jbd2 are looked through to the dirtier when possible).
 */
static __always_inline __u32 chargeable_tgid(struct task_struct *task)
{
	__u16 *entry;

	if (snoop)
		return TASK_READ(task, flags) & PF_KTHREAD ? 0 : TASK_READ(task, tgid);
	entry = slot_entry(TASK_READ(task, tgid));
	if (!entry || !*entry || (*entry & SLOT_PENDING))
		return 0;
	/* serve charges labels: the owner of block keys is then the label's slot. */
	return serve ? *entry : TASK_READ(task, tgid);
}

/* Pages a traced process dirties, on its ledger entry for the file (run mode and serve). */
static __always_inline void count_dirtied(struct task_struct *task, struct inode *host,
					  __u64 pages)
{
	struct file_stat *st;
	__u32 idx;

	if (snoop || !regular_file(host))
		return;
	st = file_stat_of(task, thread_state(task), host, &idx);
	if (!st)
		return;
	__sync_fetch_and_add(&st->dirtied_pages, pages);
	if (trace)
		trace_count_task(task, TC_PAGES_DIRTIED, pages);
}

/*
 * A folio (NULL: one base page) of mapping dirtied by the current task: its ledger entry
 * counts its pages, and the file's writeback is charged to it (the file's last dirtier).
 */
static __always_inline int dirtied(void *ctx, struct address_space *mapping, struct folio *folio)
{
	struct task_struct *task = hook_task(ctx);
	struct inode *host = mapping_host(mapping);
	struct dirtier_info *known, who = { .tgid = chargeable_tgid(task) };
	struct path_key key;

	if (!who.tgid || !host)
		return 0;
	count_dirtied(task, host, folio ? 1ULL << (folio_order(folio) & 31) : 1);
	key.dev = host->i_sb->s_dev;
	key.igen = host->i_generation;
	key.ino = host->i_ino;
	known = bpf_map_lookup_elem(&dirtier, &key);
	if (known && known->tgid == who.tgid)
		return 0;
	bpf_get_current_comm(who.comm, sizeof(who.comm));
	if (snoop)
		who.cgroup = snoop_cgroup();
	bpf_map_update_elem(&dirtier, &key, &who, BPF_ANY);
	return 0;
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(handle_writeback_dirty_folio, struct folio *folio, struct address_space *mapping)
{
	return dirtied(ctx, UNTRUSTED(address_space, mapping), UNTRUSTED(folio, folio));
}

#if HAVE_COMPAT
/* Older kernels (5.10) name a request's disk in the request (its queue has none). */
struct request___rq_disk {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));
#endif

static __always_inline __u32 disk_dev(struct request *rq)
{
#if HAVE_COMPAT
	struct gendisk *disk = bpf_core_field_exists(struct request_queue, disk) ?
				       BPF_CORE_READ(rq, q, disk) :
				       BPF_CORE_READ((struct request___rq_disk *)rq, rq_disk);
#else
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);
#endif

	if (!disk)
		return 0;
	return (BPF_CORE_READ(disk, major) << 20) | BPF_CORE_READ(disk, first_minor);
}

/* (dev, ino) of the file behind the bio's first page, or ino 0. */
static __always_inline struct path_key first_page_file(struct bio *bio)
{
	struct page *page = BPF_CORE_READ(bio, bi_io_vec, bv_page);
	struct address_space *mapping = BPF_CORE_READ(page, mapping);
	struct inode *host;
	struct path_key key = {};

	/* Anonymous pages tag their mapping pointer's low bits; only file pages qualify. */
	if (!mapping || ((unsigned long)mapping & 3))
		return key;
	host = BPF_CORE_READ(mapping, host);
	/* Filesystem metadata in the block device's own page cache (buffer heads) is no file. */
	if (!host || BPF_CORE_READ(host, i_sb, s_magic) == BDEVFS_MAGIC)
		return key;
	key.dev = BPF_CORE_READ(host, i_sb, s_dev);
	key.ino = BPF_CORE_READ(host, i_ino);
	key.igen = BPF_CORE_READ(host, i_generation);
	return key;
}

/* What a completion reports (BPF calls take at most five arguments). */
struct done {
	__u64 now, sector;
	__u32 flags, bytes;
	int error;
	__u32 fdev; /* the file it is charged to (ino 0: none) */
	__u32 igen;
	__u32 epoch; /* block_epoch, read before now (completion_epoch) */
	__u64 ino;
	bool keys_only; /* make the keys, count nothing (prepare_keys) */
};

static void account(struct block_key *key, struct block_rq_info *info, struct done *d);

static void emit(struct block_rq_info *info, struct block_key *key, struct done *d, bool late);
static __u32 op_of(__u32 flags);

static __always_inline bool has_flag(__u32 flags, int bit)
{
	return flags & (1U << bit);
}

/* --trace: a completed request (late: its completion was skipped) on its disk's timeline. */
static __always_inline void trace_request(struct block_rq_info *info, struct block_key *key,
					  struct done *d, bool late)
{
	__u32 f = d->flags;
	struct trace_block e = {
		.kind = TE_BLOCK, .tgid = key->owner, .dev = key->dev, .op = key->op,
		.sector = d->sector, .bytes = d->bytes, .error = d->error,
		.late = late, .done_ns = late ? bpf_ktime_get_ns() : d->now,
	};

	e.flags = (has_flag(f, bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)) ? TBF_SYNC : 0) |
		  (has_flag(f, bpf_core_enum_value(enum req_flag_bits, __REQ_RAHEAD))
			   ? TBF_READAHEAD : 0) |
		  (has_flag(f, bpf_core_enum_value(enum req_flag_bits, __REQ_META)) ? TBF_META : 0) |
		  (has_flag(f, bpf_core_enum_value(enum req_flag_bits, __REQ_FUA)) ? TBF_FUA : 0) |
		  (has_flag(f, bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH))
			   ? TBF_PREFLUSH : 0);

	if (info) {
		e.charge = info->charge;
		e.via = info->via;
		e.start_ns = info->start_ns;
		e.issue_ns = info->issue_ns;
		e.sys_tid = info->sys_tid;
		e.sys_start_ns = info->sys_start_ns;
	}
	trace_file_of(&e.file, d->fdev, d->ino, d->igen);
	trace_emit(&e, sizeof(e));
}

/*
 * block_inflight's key for rq: its address as a number of its own. Not &rq: clang may keep
 * rq itself in that stack slot, and a helper reading a slot that holds a pointer makes
 * 6.1's verifier forget it is one; rq would be unusable after the lookup. The barrier keeps
 * clang from merging the two.
 */
static __always_inline __u64 rq_key(struct request *rq)
{
	__u64 key = (__u64)rq;

	barrier_var(key);
	return key;
}

/*
 * The one program that counts a request takes it: the first to set its entry's taken flag
 * (an atomic fetch-or), which then counts it and deletes the entry. A completion and the
 * sweep (or the start of a later request in the struct) can find the same entry at once;
 * only one counts it. No copy of the entry is made (6.1 allows 512 bytes of stack to a
 * whole call chain), and none is needed: the entry stays in place until its taker deletes
 * it, and a later request in the same struct cannot replace it before that.
 */
static __always_inline bool take(struct block_rq_info *info)
{
	return !FETCH_OR(&info->taken, 1);
}

/*
 * Some completions never reach block_rq_complete's program: one nested in itself on a CPU
 * is skipped (the kernel counts it, drops.nested_runs), and on 6.18 under a full virtqueue a
 * few in 10,000 are skipped with no count at all (perf counts every block_rq_complete; the
 * program's run_cnt is short by drops.block_completions_unseen). Such a request is counted
 * late, without latencies, by whoever takes its entry first: the start of a later request
 * in its struct, or the sweep (sweep_block_inflight).
 */
static void count_late(__u64 rqk, struct block_rq_info *old)
{
	struct block_key key = { .owner = old->charge != CHARGE_NONE || snoop ? old->tgid : 0,
				 .dev = old->dev, .op = old->op };
	struct done d = { .sector = old->sector, .flags = old->flags, .bytes = old->bytes,
			  .fdev = old->fdev, .ino = old->ino, .igen = old->igen,
			  .epoch = completion_epoch() };

	if (!take(old))
		return; /* counted by another program */
	if (snoop)
		emit(old, &key, &d, true);
	else
		account(&key, NULL, &d);
	if (trace)
		trace_request(old, &key, &d, true);
	__sync_fetch_and_add(&drops[DROP_BLOCK_UNSEEN], 1);
	bpf_map_delete_elem(&block_inflight, &rqk);
}

/*
 * An O_DIRECT request's pages are the process's own buffer, not the file's: its file is the
 * one of the O_DIRECT call this thread is in (iomap_dio_rw_begin noted it).
 */
static __always_inline void direct_io_file(struct task_struct *task, struct path_key *file)
{
	__u32 key = TASK_READ(task, pid) & (THREAD_STATES - 1);
	struct thread_state *t;

	if (file->ino || (TASK_READ(task, flags) & PF_KTHREAD))
		return;
	t = bpf_map_lookup_elem(&thread_states, &key);
	if (t && t->tid == TASK_READ(task, pid) && t->dio_ino) {
		file->dev = t->dio_dev;
		file->ino = t->dio_ino;
		file->igen = t->dio_gen;
	}
}

/*
 * --trace: the syscall the submitting thread is in, so the timeline can draw a flow from
 * that call to the request (readahead in a read, O_DIRECT, fsync's writes).
 */
static __always_inline void link_syscall(struct task_struct *task, struct block_rq_info *info)
{
	__u32 key = TASK_READ(task, pid) & inflight_mask;
	struct thread_io *ti = bpf_map_lookup_elem(&inflight, &key);

	if (!ti || ti->tid != TASK_READ(task, pid) || !ti->start_ns)
		return;
	info->sys_tid = TASK_READ(task, pid);
	info->sys_start_ns = ti->start_ns;
	ti->linked++; /* only this thread's own programs touch its entry */
}

/* The charge of I/O started by task now on file: see the top of this file. */
static __always_inline void charge_file(struct task_struct *task, struct block_rq_info *info,
					struct path_key *file)
{
	struct dirtier_info *who;

	info->ino = file->ino;
	info->fdev = file->dev;
	info->igen = file->igen;
	info->tgid = chargeable_tgid(task);
	if (info->tgid) {
		info->charge = CHARGE_SUBMITTER;
		bpf_get_current_comm(info->comm, sizeof(info->comm));
		info->via = submit_thread(task, info->comm);
		if (trace)
			link_syscall(task, info);
	} else if (file->ino && (who = bpf_map_lookup_elem(&dirtier, file))) {
		info->tgid = who->tgid;
		info->charge = CHARGE_DIRTIER;
		__builtin_memcpy(info->comm, who->comm, sizeof(info->comm));
		/* snoop: writeback is filtered by the container that dirtied it */
		info->cgroup = who->cgroup;
	}
	if (snoop) {
		if (info->charge != CHARGE_DIRTIER)
			info->cgroup = snoop_cgroup();
		if (!info->charge) {
			/* Snoop shows the submitter for everything not charged elsewhere. */
			info->tgid = TASK_READ(task, tgid);
			bpf_get_current_comm(info->comm, sizeof(info->comm));
			info->via = submit_thread(task, info->comm);
		}
	}
}

/*
 * I/O of bio started now by the current task: who it is charged to and its file (that of
 * the first page, or of the O_DIRECT call in progress).
 */
static __always_inline void charge_start(struct task_struct *task, struct block_rq_info *info,
					 struct bio *bio)
{
	struct path_key file = first_page_file(bio);

	direct_io_file(task, &file);
	charge_file(task, info, &file);
}

/*
 * Kernels without block_io_start (6.1): block_getrq, in the submitting task just before the
 * request is made from the bio, notes who started it, keyed by the bio; the request's first
 * insert or issue finds the note by its first bio (bpf/fallbacks.bpf.c).
 */
const volatile bool start_by_bio = false;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1); /* MAX_BLOCK_INFLIGHT with start_by_bio */
	__type(key, __u64);     /* struct bio * */
	__type(value, struct block_rq_info);
} block_starts SEC(".maps");

/* 6.1: block_getrq's note of who started rq, found by its first bio (NULL: none). */
static __always_inline struct block_rq_info *noted_start(struct request *rq, __u64 *bio)
{
	*bio = 0;
	if (!start_by_bio)
		return NULL;
	bpf_probe_read_kernel(bio, sizeof(*bio), &rq->bio);
	return bpf_map_lookup_elem(&block_starts, bio);
}

/*
 * The keys a request's completion counts on, made when it starts, in the task that starts
 * it. Made at completion, in interrupt context, they could fail: on 6.1 a hash without
 * preallocated elements refills its per-CPU free list from an irq_work, and a burst of
 * writeback completions emptied it (4 of 15 requests not counted per file, drops.file_blocks).
 * Completion then only finds them, or makes them as before when this one has gone.
 */
static __always_inline void prepare_keys(const struct block_rq_info *info)
{
	struct block_key key = { .owner = info->charge != CHARGE_NONE ? info->tgid : 0,
				 .dev = info->dev, .op = info->op };
	struct done d = { .fdev = info->fdev, .ino = info->ino, .igen = info->igen,
			  .epoch = completion_epoch(), .keys_only = true };

	account(&key, (struct block_rq_info *)info, &d);
}

/*
 * What the request is now: merges into it (bio merges, and block_rq_merge's) grew its bytes,
 * a front merge moved its sector, and a request merge gave it the older start of the two
 * (attempt_merge), which is the start the disk's time counts from (blk_account_io_done:
 * now - start_time_ns). The kernel stamps start_time_ns only when something needs it (an
 * I/O scheduler, iostats): without it, the start is when iotrace saw the request begin.
 * stamped: whether the stamp is this request's. At block_io_start it may be the struct's
 * last request's: 6.18 stamps the request just after that tracepoint (blk_account_io_start),
 * so the start is then when iotrace saw it begin, and an insert, issue or completion reads
 * the kernel's stamp later. A request none of them sees (an empty write asking for a flush
 * whose completion was skipped, counted late) kept the last request's stamp: on the trace it
 * began before the call that started it, its flow ran back in time.
 */
static __always_inline void note_request(struct block_rq_info *info, struct request *rq,
					 bool issued, bool stamped)
{
	__u64 born = stamped ? rq->start_time_ns : 0;

	if (born) {
		info->born_ns = born;
		info->start_ns = born;
	} else if (!info->start_ns) {
		info->start_ns = bpf_ktime_get_ns();
	}
	info->bytes = info->done_bytes + rq->__data_len;
	info->sector = rq->__sector;
	if (issued)
		info->issue_ns = bpf_ktime_get_ns();
}

/* How a request begins (begin_request). */
enum { BEGIN_IO_STARTED = 1, BEGIN_ISSUED = 2 };

/*
 * A request begins: from block_io_start, or from its first insert or issue (flushes). Not
 * inlined: its frame (the new entry) and count_late's are never on one call chain, which
 * 6.1's verifier limits to 512 bytes of stack (inlined, the chain of block_rq_insert's
 * program, count_late, account and add_request took 544).
 */
static __noinline void begin_request(struct request *rq, __u64 rqk, __u64 bio,
				     struct block_rq_info *noted, __u32 how)
{
	struct block_rq_info info = {};
	bool io_started = how & BEGIN_IO_STARTED, issued = how & BEGIN_ISSUED;

	if (noted) {
		info = *noted;
		bpf_map_delete_elem(&block_starts, &bio);
	} else {
		charge_start(current_task(), &info, (struct bio *)BPF_CORE_READ(rq, bio));
	}
	info.io_started = io_started;
	info.flags = rq->cmd_flags;
	info.op = op_of(info.flags);
	info.dev = disk_dev(rq);
	/* 6.1's note (block_getrq) begins at an insert or issue: the stamp is this request's */
	note_request(&info, rq, issued, noted || !io_started);
	if (!snoop)
		prepare_keys(&info);
	if (bpf_map_update_elem(&block_inflight, &rqk, &info, BPF_NOEXIST))
		__sync_fetch_and_add(&drops[DROP_BLOCK_INFLIGHT], 1);
}

/*
 * block_io_start fires once in a request's life (blk_account_io_start, as the request is
 * made from its bio): an entry still there for this struct is of a request whose
 * completion the kernel skipped.
 */
SEC("tp_btf/block_io_start")
int BPF_PROG(handle_block_io_start, struct request *rq)
{
	__u64 rqk = rq_key(rq);
	struct block_rq_info *old = bpf_map_lookup_elem(&block_inflight, &rqk);

	if (old)
		count_late(rqk, old);
	begin_request(rq, rqk, 0, NULL, BEGIN_IO_STARTED);
	return 0;
}

/*
 * Whether an entry found at an insert or issue is of an earlier request in the same struct.
 * One begun by block_io_start is this request (requeued, or a flush sequence's data step
 * inserted again; the next request's block_io_start replaces it). One begun here (flushes,
 * passthrough) is earlier if the kernel stamped this request later: the flush request
 * struct is stamped anew for every flush (blk_rq_init), a tag's request at every allocation;
 * merges only make a stamp older.
 */
static __always_inline bool earlier_request(struct request *rq, struct block_rq_info *info)
{
	return !info->io_started && rq->start_time_ns > info->born_ns;
}

/* block_rq_insert, block_rq_issue: a request begins here, or is seen again. */
static __always_inline void request_seen(struct request *rq, bool issued)
{
	__u64 rqk = rq_key(rq), bio = 0;
	struct block_rq_info *info = bpf_map_lookup_elem(&block_inflight, &rqk), *noted = NULL;

	/*
	 * 6.1: a note of block_getrq for the request's bio is a new request. Looked for only
	 * when there is no entry or the entry was issued before (requeued, or a stale one).
	 */
	if (start_by_bio && (!info || info->issue_ns))
		noted = noted_start(rq, &bio);
	if (info && !noted && !earlier_request(rq, info)) {
		note_request(info, rq, issued, true);
		return;
	}
	if (info)
		count_late(rqk, info);
	begin_request(rq, rqk, bio, noted,
		      (noted ? BEGIN_IO_STARTED : 0) | (issued ? BEGIN_ISSUED : 0));
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(handle_block_rq_insert, struct request *rq)
{
	request_seen(rq, false);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(handle_block_rq_issue, struct request *rq)
{
	request_seen(rq, true);
	return 0;
}

/*
 * rq is merged into another request (attempt_merge) and freed without completing: the
 * survivor now carries its bytes and is the one request the disk counts
 * (blk_account_io_merge_request counts rq as a merge, not as an I/O). Its entry goes;
 * left, it would be counted late when its struct is reused.
 */
SEC("tp_btf/block_rq_merge")
int BPF_PROG(handle_block_rq_merge, struct request *rq)
{
	__u64 rqk = rq_key(rq);

	bpf_map_delete_elem(&block_inflight, &rqk);
	return 0;
}

/*
 * The disk's groups of operations (op_stat_group): discard; flush (blk_account_io_flush,
 * for the flush requests the flush machinery sends); every other operation by its direction
 * bit, so write-zeroes and secure erase are writes. Passthrough commands
 * (REQ_OP_DRV_IN/OUT) are not in the disk's statistics (blk_do_io_stat): "other".
 */
static __u32 op_of(__u32 flags)
{
	__u32 op = flags & ((1 << REQ_OP_BITS) - 1);

	if (op == REQ_OP_DISCARD)
		return BOP_DISCARD;
	if (op == REQ_OP_FLUSH)
		return BOP_FLUSH;
	if (op >= REQ_OP_DRV_IN)
		return BOP_OTHER;
	return op & 1 ? BOP_WRITE : BOP_READ;
}

/*
 * The counts of one completed request, common to block_stat and file_block_stat (st may
 * point at either: only the members of BLOCK_COUNTS are touched); latencies are summed
 * here and bucketed by the caller (ADD_LATENCIES), finely or by log2.
 */
static void add_request(struct block_stat *st, struct block_rq_info *info, struct done *d)
{
	__u32 flags = d->flags, bytes = d->bytes;
	__u64 now = d->now, sector = d->sector;
	int error = d->error;

	__sync_fetch_and_add(&st->requests, 1);
	__sync_fetch_and_add(&st->bytes, bytes);
	if (error)
		__sync_fetch_and_add(&st->errors, 1);
	if (has_flag(flags, bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)))
		__sync_fetch_and_add(&st->sync, 1);
	if (has_flag(flags, bpf_core_enum_value(enum req_flag_bits, __REQ_RAHEAD)))
		__sync_fetch_and_add(&st->readahead, 1);
	if (has_flag(flags, bpf_core_enum_value(enum req_flag_bits, __REQ_META)))
		__sync_fetch_and_add(&st->meta, 1);
	if (has_flag(flags, bpf_core_enum_value(enum req_flag_bits, __REQ_FUA)))
		__sync_fetch_and_add(&st->fua, 1);
	if (has_flag(flags, bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH)))
		__sync_fetch_and_add(&st->preflush, 1);
	if (info && info->charge == CHARGE_DIRTIER) {
		__sync_fetch_and_add(&st->writeback, 1);
		__sync_fetch_and_add(&st->writeback_bytes, bytes);
	}
	if (bytes && sector == st->next_sector)
		__sync_fetch_and_add(&st->sequential, 1);
	st->next_sector = sector + (bytes >> 9);
	__sync_fetch_and_add(&st->size_hist[log2_bucket(bytes)], 1);
	if (info && info->issue_ns)
		__sync_fetch_and_add(&st->lat_ns, now - info->issue_ns);
	if (info && info->start_ns)
		__sync_fetch_and_add(&st->qlat_ns, now - info->start_ns);
}

/* Latency buckets: fine per (owner, disk, op), log2 per file. */
#define ADD_LATENCIES(st, info, d, bucket)                                                        \
	do {                                                                                       \
		if ((info) && (info)->issue_ns)                                                    \
			__sync_fetch_and_add(&(st)->lat_hist[bucket((d)->now - (info)->issue_ns)], \
					     1);                                                   \
		if ((info) && (info)->start_ns)                                                    \
			__sync_fetch_and_add(                                                      \
				&(st)->qlat_hist[bucket((d)->now - (info)->start_ns)], 1);         \
	} while (0)

/* A completed request, on its (owner, disk, op) and on its (owner, file, disk, op). */
static void account(struct block_key *key, struct block_rq_info *info, struct done *d)
{
	struct block_stat *st = lookup_or_init(&block_stats, key, &zero_stat, DROP_BLOCK_KEYS, NULL);
	struct file_block_stat *fst;
	bool created = false;
	struct file_block_key fk = {
		.owner = key->owner, .fdev = d->ino ? d->fdev : 0, .ino = d->ino,
		.igen = d->ino ? d->igen : 0, .disk = key->dev, .op = key->op,
		.epoch = d->epoch & 1,
	};

	if (st && !d->keys_only) {
		add_request(st, info, d);
		ADD_LATENCIES(st, info, d, fine_bucket);
	}
	if (serve) /* serve reports labels, never files */
		return;
	fst = lookup_or_init(&file_blocks, &fk, &zero_file_stat, DROP_FILE_BLOCKS, &created);
	if (created && COUNT_ADD(&file_blocks_new, 1) == MAX_FILE_BLOCKS / 4)
		ledger_wake_loader();
	if (fst && !d->keys_only) {
		add_request((struct block_stat *)fst, info, d);
		ADD_LATENCIES(fst, info, d, log2_bucket);
	}
}

static void emit(struct block_rq_info *info, struct block_key *key, struct done *d, bool late)
{
	__u64 now = late ? bpf_ktime_get_ns() : d->now, sector = d->sector;
	__u32 flags = d->flags, bytes = d->bytes;
	int error = d->error;
	struct block_event *e;

	if ((snoop_tgid && key->owner != snoop_tgid) || (snoop_dev && key->dev != snoop_dev) ||
	    (nr_cgroup_filters && (!info || !info->cgroup)))
		return;
	e = bpf_ringbuf_reserve(&block_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&drops[DROP_BLOCK_EVENTS], 1);
		return;
	}
	e->ts_ns = now;
	e->sector = sector;
	e->qlat_ns = info && info->start_ns && !late ? now - info->start_ns : 0;
	e->lat_ns = info && info->issue_ns && !late ? now - info->issue_ns : 0;
	e->late = late;
	e->ino = info ? info->ino : 0;
	e->cgroup = info ? info->cgroup : 0;
	e->tgid = key->owner;
	e->dev = key->dev;
	e->bytes = bytes;
	e->op = key->op;
	e->flags = flags;
	e->charge = info ? info->charge : CHARGE_NONE;
	e->error = error;
	e->via = info ? info->via : VIA_TASK;
	__builtin_memset(e->comm, 0, sizeof(e->comm));
	if (info)
		__builtin_memcpy(e->comm, info->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

/*
 * Whether this completion ends the request. The disk counts a request's sectors at every
 * completion (blk_account_io_completion) and the request itself once, when it ends
 * (blk_account_io_done), so iotrace counts it there too. Two completions do not end it:
 * - The data step of a flush sequence (RQF_FLUSH_SEQ on a request that is not the flush
 *   request): its bytes are done, but blk_account_io_done leaves it out and the request goes
 *   on to its post-flush; it ends later, completing again with 0 bytes and RQF_FLUSH_SEQ
 *   cleared (blk_flush_restore_request), and is counted then, with the bytes of the first.
 *   That is every journal commit (REQ_PREFLUSH | REQ_FUA) on a disk with a write cache and
 *   no FUA (virtio, loop, many SSDs). An empty write that asked for a flush has no data
 *   step: the disk counts it as a write of 0 bytes, and the flush request as a flush.
 * - A partial completion (fewer bytes than remain, blk_update_request): the rest follows.
 */
enum rqf_flags___local { __RQF_FLUSH_SEQ___local = 4 };

static __always_inline bool request_ends(struct request *rq, __u32 op, __u32 nr_bytes)
{
	/* An enum since 6.11 (declared here: not every vmlinux.h has it); a #define before. */
	__u32 flush_seq =
		bpf_core_enum_value_exists(enum rqf_flags___local, __RQF_FLUSH_SEQ___local)
			? 1U << bpf_core_enum_value(enum rqf_flags___local, __RQF_FLUSH_SEQ___local)
			: 1U << 4;

	if (op != BOP_FLUSH && (rq->rq_flags & flush_seq))
		return false;
	return nr_bytes >= rq->__data_len;
}

/*
 * The request's entry (or, 6.1, block_getrq's note for a request that no insert or issue
 * saw: an empty write that asked for a flush goes straight to the flush machinery), or
 * NULL; *lost when the sweep took the entry first (and counted it).
 */
static __always_inline struct block_rq_info *take_request(struct request *rq, __u64 rqk,
							  __u64 *bio, bool *lost)
{
	struct block_rq_info *info = bpf_map_lookup_elem(&block_inflight, &rqk);

	*lost = false;
	*bio = 0;
	if (info) {
		*lost = !take(info);
		return info;
	}
	info = noted_start(rq, bio);
	if (!info)
		*bio = 0;
	return info;
}

/*
 * A completion that does not end its request, of a request no program saw begin (it was
 * issued before iotrace attached: a journal commit's data step, then its post-flush): an
 * entry of no one's, keeping these bytes for its end, which completes with none left. Its
 * start is the kernel's stamp when there is one; it has no issue time (no latency).
 */
static __noinline void begin_midway(struct request *rq, __u64 rqk, __u32 done)
{
	struct block_rq_info info = {};

	info.flags = rq->cmd_flags;
	info.op = op_of(info.flags);
	info.dev = disk_dev(rq);
	info.sector = rq->__sector;
	info.born_ns = rq->start_time_ns;
	info.start_ns = info.born_ns;
	info.done_bytes = done;
	info.bytes = rq->__data_len;
	if (bpf_map_update_elem(&block_inflight, &rqk, &info, BPF_NOEXIST))
		__sync_fetch_and_add(&drops[DROP_BLOCK_INFLIGHT], 1);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(handle_block_rq_complete, struct request *rq, blk_status_t error,
	     unsigned int nr_bytes)
{
	__u64 rqk = rq_key(rq), bio;
	__u32 flags = rq->cmd_flags, op = op_of(flags);
	struct block_rq_info *info;
	struct block_key key = { .op = op };
	struct done d = { .flags = flags, .bytes = nr_bytes, .error = error };
	bool lost;

	if (!request_ends(rq, op, nr_bytes)) {
		info = bpf_map_lookup_elem(&block_inflight, &rqk);
		if (info)
			__sync_fetch_and_add(&info->done_bytes, nr_bytes);
		else
			begin_midway(rq, rqk, nr_bytes);
		return 0;
	}
	info = take_request(rq, rqk, &bio, &lost);
	if (lost)
		return 0;
	d.epoch = completion_epoch(); /* before the clock: see block_epoch */
	d.now = bpf_ktime_get_ns();
	/* block_getrq's note knows the submitter, not yet the request's disk and sector. */
	d.sector = info && !bio ? info->sector : rq->__sector;
	key.dev = info && !bio ? info->dev : disk_dev(rq);
	if (info) {
		/*
		 * The start the disk's time counts from, read again: a request no insert or issue
		 * saw (an empty flush write goes straight to the flush machinery) kept the stamp
		 * block_io_start read, which 6.18 writes just after that tracepoint.
		 */
		if (rq->start_time_ns)
			info->start_ns = rq->start_time_ns;
		/* The flags the submitter asked for: the flush machinery clears PREFLUSH and FUA. */
		d.flags = info->flags;
		/*
		 * What it completed before (a flush sequence's data step, partial completions),
		 * or, when the kernel skipped the program for one of those, its bytes as of its
		 * last issue (a merge after it is seen in the completions' sum).
		 */
		d.bytes += info->done_bytes;
		if (info->bytes > d.bytes)
			d.bytes = info->bytes;
		d.fdev = info->fdev;
		d.ino = info->ino;
		d.igen = info->igen;
		key.owner = info->charge != CHARGE_NONE || snoop ? info->tgid : 0;
	}
	if (snoop) {
		emit(info, &key, &d, false);
	} else {
		account(&key, info, &d);
		if (trace)
			trace_request(info, &key, &d, false);
	}
	if (bio)
		bpf_map_delete_elem(&block_starts, &bio);
	else if (info)
		bpf_map_delete_elem(&block_inflight, &rqk);
	return 0;
}

/* ---- the sweep: requests whose completion no program saw ---- */

/*
 * An entry whose request is over: its struct was freed (a request's ref is 1 from its
 * allocation until blk_mq_free_request; the flush request's from blk_kick_flush until
 * flush_end_io), or it was issued and the struct has since been stamped for a later request.
 * A request waiting in a plug, a scheduler or the flush machinery holds its ref, so it
 * stays. The struct's memory is the tag set's, kept while the disk lives; a read that
 * faults (the disk gone) reads 0, and the entry goes too.
 *
 * An iterator over block_inflight: the loader (tracer_sweep_blocks) makes one and reads it
 * before it reads the block counters: at every refresh of top, every scrape of serve,
 * snoop's ticks and the end of every mode. Reading an iterator is a read(2) of a file: serve,
 * with its privileges dropped, can still do it (BPF_ITER_CREATE on its own link). Each
 * request it counts writes one byte.
 */
#if HAVE_COMPAT
struct request___refcount {
	refcount_t ref;
} __attribute__((preserve_access_index));
#endif

SEC("iter/bpf_map_elem")
int sweep_block_inflight(struct bpf_iter__bpf_map_elem *ctx)
{
	__u64 *key = ctx->key, rqk;
	struct block_rq_info *info;
	struct request *rq;
	__u64 born;
	int ref;
	char one = 1;

	if (!key)
		return 0;
	rqk = *key;
	info = bpf_map_lookup_elem(&block_inflight, &rqk);
	if (!info || info->taken)
		return 0;
	rq = (struct request *)rqk;
	born = BPF_CORE_READ(rq, start_time_ns);
#if HAVE_COMPAT
	/* a refcount_t in older kernels (5.10) */
	ref = bpf_core_field_exists(rq->ref.counter) ?
		      BPF_CORE_READ(rq, ref.counter) :
		      BPF_CORE_READ((struct request___refcount *)rq, ref.refs.counter);
#else
	ref = BPF_CORE_READ(rq, ref.counter);
#endif
	if (ref && !(info->issue_ns && born > info->born_ns))
		return 0;
	count_late(rqk, info);
	bpf_seq_write(ctx->meta->seq, &one, sizeof(one));
	return 0;
}
