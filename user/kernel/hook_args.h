/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arguments the programs of the ways that kernels differ in read (btf_args.h's
 * notation), for the hook table (tracer_hooks.c) and its unit test (tests/c/btf_args_test.c).
 */
#ifndef IOTRACE_HOOK_ARGS_H
#define IOTRACE_HOOK_ARGS_H

#define ARGS_sched_process_exit "struct task_struct *,bool"
#define ARGS_sched_process_exit_nogroup "struct task_struct *"
#define ARGS_filemap_get_pages_iter "struct kiocb *,struct iov_iter *,?"
#define ARGS_filemap_get_pages_count "struct kiocb *,size_t,struct folio_batch *,bool"
/*
 * The page cache of the 5.x kernels: in 5.10 the readahead state passed beside the
 * readahead_control, not in it (5.15 has it inside); pages, not folios, before 5.16; no
 * page_cache_ra_order before 5.18 (ondemand_readahead without a folio: 5.10 with the state,
 * 5.15 with a bool); no filemap_get_pages before 5.12 (generic_file_buffered_read), and a
 * pagevec instead of a folio_batch before 5.19 (its programs do not read it). Only the
 * types told apart are named.
 */
#define ARGS_page_cache_sync_ra "struct readahead_control *,?"
#define ARGS_page_cache_sync_ra_state "struct readahead_control *,struct file_ra_state *,?"
#define ARGS_page_cache_async_ra "struct readahead_control *,struct folio *,?"
#define ARGS_page_cache_async_ra_page "struct readahead_control *,struct page *,?"
#define ARGS_page_cache_async_ra_state                                                          \
	"struct readahead_control *,struct file_ra_state *,struct page *,?"
#define ARGS_ondemand_readahead_state "struct readahead_control *,struct file_ra_state *,?,?"
#define ARGS_ondemand_readahead_bool "struct readahead_control *,bool,?"
#define ARGS_mm_filemap_add_to_page_cache "struct folio *"
#define ARGS_mm_filemap_add_to_page_cache_page "struct page *"
#define ARGS_generic_file_buffered_read "struct kiocb *,struct iov_iter *,?"
#define ARGS_block_getrq "struct bio *"
#define ARGS_block_getrq_queue "struct request_queue *,struct bio *,int"
#define ARGS_io_uring_submit_sqe "struct io_kiocb *,bool"
/* Only the request is read: 7.x passes a bool where 6.1 to 6.18 pass an int. */
#define ARGS_io_uring_queue_async_work "struct io_kiocb *,?"
#define ARGS_io_uring_poll_arm "struct io_kiocb *,?,?"
#define ARGS_io_uring_complete "?,?,struct io_uring_cqe *"
#define ARGS_io_uring_complete_fields "?,?,u64,int,unsigned int,u64,u64"

#endif /* IOTRACE_HOOK_ARGS_H */
