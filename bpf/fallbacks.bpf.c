// SPDX-License-Identifier: GPL-2.0
/*
 * Part of bpf/iotrace.bpf.c, which builds every part into one object.
 *
 * The same events on kernels that lack a tracepoint the other parts use. Each program here
 * stands in for one of theirs and calls the same code: fentry or fexit on the function the
 * tracepoint sits in (same task, same moment), a kprobe where fentry cannot attach (6.1's
 * trampolines take at most six arguments), or an older tracepoint. The loader takes, for
 * each hook, the first way this kernel offers (user/kernel/tracer_hooks.c: from its BTF,
 * and the first of those that attaches); the programs of other ways are not loaded. Which
 * way each hook took is in `iotrace info` and the JSON report's "kernel" (docs/kernels.md).
 */

/* ---- readahead (no tracepoints in 6.1) ---- */

/*
 * Before folios (5.16) the same tracepoint took a page: a page cache page of 5.10's
 * filesystems is one base page (no large folios in the page cache then).
 */
SEC("tp_btf/writeback_dirty_page")
int BPF_PROG(handle_writeback_dirty_page, struct page *page, struct address_space *mapping)
{
	return dirtied(ctx, mapping, NULL);
}

SEC("fentry/page_cache_sync_ra")
int BPF_PROG(handle_page_cache_sync_ra_fn, struct readahead_control *ractl,
	     unsigned long req_count)
{
	ractl = UNTRUSTED(readahead_control, ractl);
	announce(ctx, ractl->mapping->host, ractl->ra, RA_SYNC);
	return 0;
}

#define PG_WRITEBACK_BIT bpf_core_enum_value(enum pageflags, PG_writeback)

/* The tracepoint sits after two early returns: readahead off, a folio under writeback. */
SEC("fentry/page_cache_async_ra")
int BPF_PROG(handle_page_cache_async_ra_fn, struct readahead_control *ractl,
	     struct folio *folio, unsigned long req_count)
{
	__u64 flags = folio_flags(UNTRUSTED(folio, folio));

	ractl = UNTRUSTED(readahead_control, ractl);
	if (!ractl->ra->ra_pages || (flags & (1UL << PG_WRITEBACK_BIT)))
		return 0;
	announce(ctx, ractl->mapping->host, ractl->ra, RA_ASYNC);
	return 0;
}

SEC("fentry/page_cache_ra_order")
int BPF_PROG(handle_page_cache_ra_order_fn, struct readahead_control *ractl,
	     struct file_ra_state *ra)
{
	ractl = UNTRUSTED(readahead_control, ractl);
	ra_order(ctx, ractl->mapping->host, ractl->_index, ractl->ra->size);
	return 0;
}

SEC("fentry/page_cache_ra_unbounded")
int BPF_PROG(handle_page_cache_ra_unbounded_fn, struct readahead_control *ractl,
	     unsigned long nr_to_read, unsigned long lookahead_size)
{
	ractl = UNTRUSTED(readahead_control, ractl);
	ra_unbounded(ctx, ractl->mapping->host, ractl->_index, nr_to_read, lookahead_size);
	return 0;
}

/*
 * In 5.10 the readahead state came beside the readahead_control, not in it. Before 5.18 a
 * window had no function of its own (page_cache_ra_order; do_page_cache_ra is inlined in
 * ondemand_readahead or only calls on): page_cache_ra_unbounded opens them
 * (windows_in_unbounded).
 */
SEC("fentry/page_cache_sync_ra")
int BPF_PROG(handle_page_cache_sync_ra_state_fn, struct readahead_control *ractl,
	     struct file_ra_state *ra, unsigned long req_count)
{
	ractl = UNTRUSTED(readahead_control, ractl);
	announce(ctx, ractl->mapping->host, ra, RA_SYNC);
	return 0;
}

/* struct page's fields as kernels before 6.x's renames name them (CO-RE flavour). */
struct page___plain {
	unsigned long flags;
	struct address_space *mapping;
	unsigned long index;
} __attribute__((preserve_access_index));

/* The same two early returns as handle_page_cache_async_ra_fn's, with a page. */
SEC("fentry/page_cache_async_ra")
int BPF_PROG(handle_page_cache_async_ra_state_fn, struct readahead_control *ractl,
	     struct file_ra_state *ra, struct page *page, unsigned long req_count)
{
	struct page___plain *p = (void *)page;

	if (!ra->ra_pages || (p->flags & (1UL << PG_WRITEBACK_BIT)))
		return 0;
	ractl = UNTRUSTED(readahead_control, ractl);
	announce(ctx, ractl->mapping->host, ra, RA_ASYNC);
	return 0;
}

/*
 * 5.15's (Ubuntu 22.04): the state inside the readahead_control, as in 6.x, but a page for
 * the folio; the same two early returns.
 */
SEC("fentry/page_cache_async_ra")
int BPF_PROG(handle_page_cache_async_ra_page_fn, struct readahead_control *ractl,
	     struct page *page, unsigned long req_count)
{
	struct page___plain *p = (void *)page;

	ractl = UNTRUSTED(readahead_control, ractl);
	if (!ractl->ra->ra_pages || (p->flags & (1UL << PG_WRITEBACK_BIT)))
		return 0;
	announce(ctx, ractl->mapping->host, ractl->ra, RA_ASYNC);
	return 0;
}

/*
 * The read's window logic starts: the window page_cache_ra_unbounded opens next for this
 * file is this read's (windows_in_unbounded), of the kind announced.
 */
static __always_inline void ondemand_starts(void *ctx, struct readahead_control *ractl)
{
	struct task_struct *task = traced_task(ctx);
	struct thread_state *t = task ? thread_state(task) : NULL;

	if (t)
		t->ondemand_mapping = UNTRUSTED(readahead_control, ractl)->mapping;
}

SEC("fentry/ondemand_readahead")
int BPF_PROG(handle_ondemand_readahead_fn, struct readahead_control *ractl,
	     struct file_ra_state *ra, bool hit_readahead_marker, unsigned long req_size)
{
	ondemand_starts(ctx, ractl);
	return 0;
}

/* 5.15's: the state inside the control. */
SEC("fentry/ondemand_readahead")
int BPF_PROG(handle_ondemand_readahead_bool_fn, struct readahead_control *ractl,
	     bool hit_readahead_marker, unsigned long req_size)
{
	ondemand_starts(ctx, ractl);
	return 0;
}

/* Before folios (5.16) a page was added, one base page (no large folios then). */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(handle_mm_filemap_add_to_page_cache_page, struct page *page)
{
	struct task_struct *task = traced_task(ctx);
	struct page___plain *p = (void *)page;

	if (task)
		pages_added(task, p->mapping, p->index, 1);
	return 0;
}

/* ---- page-cache lookups and faults (no tracepoints in 6.1) ---- */

/*
 * The tracepoint fires where filemap_get_pages succeeds, with the read's first page and
 * last page (not clamped to the file); the fexit also counts the two other ways it returns
 * 0 (a partial batch, a page it created itself), which the tracepoint skips.
 */
static __always_inline void get_pages_returned(void *ctx, struct kiocb *iocb, __u64 count,
					       int ret)
{
	__u64 pos;

	iocb = UNTRUSTED(kiocb, iocb);
	pos = iocb->ki_pos;
	if (!ret && count)
		get_pages(ctx, iocb->ki_filp->f_mapping, pos >> PAGE_SHIFT,
			  (pos + count - 1) >> PAGE_SHIFT);
}

/* 6.1's filemap_get_pages(iocb, iter, fbatch), and 5.12-5.18's with a pagevec. */
SEC("fexit/filemap_get_pages")
int BPF_PROG(handle_filemap_get_pages_fn, struct kiocb *iocb, struct iov_iter *iter,
	     struct folio_batch *fbatch, int ret)
{
	get_pages_returned(ctx, iocb, iter->count, ret);
	return 0;
}

/* Later kernels': filemap_get_pages(iocb, count, fbatch, need_uptodate). */
SEC("fexit/filemap_get_pages")
int BPF_PROG(handle_filemap_get_pages_count_fn, struct kiocb *iocb, size_t count,
	     struct folio_batch *fbatch, bool need_uptodate, int ret)
{
	get_pages_returned(ctx, iocb, count, ret);
	return 0;
}

/*
 * Before filemap_get_pages (5.12) a read's pages were looked up one at a time in
 * generic_file_buffered_read: at its end, the pages it returned (it moved ki_pos past them;
 * its result counts the written bytes its caller passed in) are the read's request.
 */
SEC("fexit/generic_file_buffered_read")
int BPF_PROG(handle_generic_file_buffered_read_fn, struct kiocb *iocb, struct iov_iter *iter,
	     ssize_t written, ssize_t ret)
{
	__u64 end;

	if (ret <= written)
		return 0;
	iocb = UNTRUSTED(kiocb, iocb);
	end = iocb->ki_pos;
	get_pages(ctx, iocb->ki_filp->f_mapping, (end - (ret - written)) >> PAGE_SHIFT,
		  (end - 1) >> PAGE_SHIFT);
	return 0;
}

SEC("fentry/filemap_fault")
int BPF_PROG(handle_filemap_fault_fn, struct vm_fault *vmf)
{
	struct address_space *mapping;
	__u64 index;

	vmf = UNTRUSTED(vm_fault, vmf);
	mapping = vmf->vma->vm_file->f_mapping;
	index = vmf->pgoff;
	/* The tracepoint comes after the check for a fault past the end of the file. */
	if (index > last_page(mapping->host))
		return 0;
	filemap_fault(ctx, mapping, index);
	return 0;
}

/* At its end, as the tracepoint (which a fault-around that found no page skips). */
SEC("fexit/filemap_map_pages")
int BPF_PROG(handle_filemap_map_pages_fn, struct vm_fault *vmf, unsigned long start,
	     unsigned long end)
{
	vmf = UNTRUSTED(vm_fault, vmf);
	map_pages(ctx, vmf->vma->vm_file->f_mapping, start, end);
	return 0;
}

/* ---- O_DIRECT (no tracepoints in 6.1) ---- */

#if HAVE_COMPAT
/* Older kernels (5.10): the direction is bit 0 of type (WRITE: the iterator supplies data). */
struct iov_iter___type {
	unsigned int type;
} __attribute__((preserve_access_index));

static __always_inline bool iter_data_source(struct iov_iter *iter)
{
	if (bpf_core_field_exists(iter->data_source))
		return BPF_CORE_READ(iter, data_source);
	return BPF_CORE_READ((struct iov_iter___type *)iter, type) & 1;
}
#define ITER_DATA_SOURCE(iter) iter_data_source(iter)
#else
#define ITER_DATA_SOURCE(iter) BPF_CORE_READ(iter, data_source)
#endif

SEC("fentry/__iomap_dio_rw")
int BPF_PROG(handle_iomap_dio_rw_fn, struct kiocb *iocb, struct iov_iter *iter)
{
	struct inode *inode = UNTRUSTED(kiocb, iocb)->ki_filp->f_inode;
	struct inode_ids id;

	if (!regular_file(inode))
		return 0;
	id = (struct inode_ids){ .addr = (__u64)inode, .ino = inode->i_ino,
				 .dev = inode->i_sb->s_dev, .igen = inode->i_generation };
#if HAVE_COMPAT
	dio_begin(ctx, &id, inode->i_size, iter->count, ITER_DATA_SOURCE(iter), iocb);
#else
	dio_begin(ctx, &id, inode->i_size, iter->count, iter->data_source, iocb);
#endif
	return 0;
}

/* Its requests are submitted when it returns, whether it waited for them or queued. */
SEC("fexit/__iomap_dio_rw")
int BPF_PROG(handle_iomap_dio_rw_exit_fn)
{
	direct_io_done(NULL);
	return 0;
}

/*
 * __iomap_dio_rw has seven arguments: 6.1's fentry trampolines take six, so there the
 * kprobe. Its arguments are plain numbers: every field is read with a helper call (once
 * per O_DIRECT call).
 */
SEC("kprobe/__iomap_dio_rw")
int BPF_KPROBE(handle_iomap_dio_rw_kprobe, struct kiocb *iocb, struct iov_iter *iter)
{
	struct inode *inode = BPF_CORE_READ(iocb, ki_filp, f_inode);
	struct inode_ids id;

	if (!inode || (BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFREG)
		return 0;
	id = (struct inode_ids){ .addr = (__u64)inode, .ino = BPF_CORE_READ(inode, i_ino),
				 .dev = BPF_CORE_READ(inode, i_sb, s_dev),
				 .igen = BPF_CORE_READ(inode, i_generation) };
	dio_begin(ctx, &id, BPF_CORE_READ(inode, i_size), BPF_CORE_READ(iter, count),
		  ITER_DATA_SOURCE(iter), iocb);
	return 0;
}

SEC("kretprobe/__iomap_dio_rw")
int BPF_KRETPROBE(handle_iomap_dio_rw_kretprobe)
{
	direct_io_done(NULL);
	return 0;
}

/* ---- block: a request's start (no block_io_start in 6.1) ---- */

/*
 * block_getrq: a new request for bio, in the submitting task, just before the kernel fills
 * the request from the bio and accounts its start (where block_io_start fires since).
 */
static __always_inline int getrq_start(void *ctx, struct bio *bio)
{
	struct block_rq_info info = { .start_ns = bpf_ktime_get_ns() };
	__u64 key = (__u64)bio;

	charge_start(hook_task(ctx), &info, bio);
	bpf_map_update_elem(&block_starts, &key, &info, BPF_ANY);
	return 0;
}

SEC("tp_btf/block_getrq")
int BPF_PROG(handle_block_getrq, struct bio *bio)
{
	return getrq_start(ctx, bio);
}

/* Before 5.11 block_getrq took the queue and the operation too. */
SEC("tp_btf/block_getrq")
int BPF_PROG(handle_block_getrq_queue, struct request_queue *q, struct bio *bio, int rw)
{
	return getrq_start(ctx, bio);
}

/* ---- io_uring (the older tracepoints' arguments) ---- */

/* io_uring_submit_req's older name (6.1), with an argument more. */
SEC("tp_btf/io_uring_submit_sqe")
int BPF_PROG(handle_io_uring_submit_sqe, struct io_kiocb *req, bool force_nonblock)
{
	uring_submit(ctx, req);
	return 0;
}

/* In 6.1 the CQE's fields come one by one, not as a struct io_uring_cqe. */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(handle_io_uring_complete_fields, void *ctx_, void *req, __u64 user_data, int res,
	     unsigned int cflags)
{
	uring_complete(ctx, ctx_, req, user_data, res, cflags);
	return 0;
}

/* ---- processes ---- */

/*
 * sched_process_exit without group_dead (6.1 has none; 6.18 has it): do_exit has taken the
 * thread off signal->live by then, so the last thread finds it at 0. (Two threads exiting
 * at once may both find 0: the first one retires the process, the second finds no slot.)
 */
#define SIGNAL_GROUP_EXIT 0x00000004 /* include/linux/sched/signal.h */

/*
 * The status wait(2) reports (wait_task_zombie): the group's code when it exits as a group,
 * else its leader's. Not the thread's own: the first to find live at 0 may be a thread that
 * ended on its own (exit(2), 0) while its process's exit_group ran (5.10's storm: a child
 * with threads reported status 0 for 1).
 */
static __always_inline int exit_status(struct task_struct *p)
{
	if (BPF_CORE_READ(p, signal, flags) & SIGNAL_GROUP_EXIT)
		return BPF_CORE_READ(p, signal, group_exit_code);
	return BPF_CORE_READ(p, group_leader, exit_code);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_sched_process_exit_nogroup, struct task_struct *p)
{
	if (!BPF_CORE_READ(p, signal, live.counter))
		process_exited(p, exit_status(p));
	return 0;
}
