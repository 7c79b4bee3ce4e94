// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the argument check of the hooks' ways (user/kernel/btf_args.c) with the
 * argument lists of the hook table (user/kernel/hook_args.h), on BTF made here the way
 * kernels have it: each fallback tracepoint's arguments as the kernel the program was
 * written for has them (taken), and as an older kernel had them under the same name
 * (refused, the reason naming what that kernel has). tests/test_kernels.py runs it; one
 * line per check, exit 0 if all pass.
 */
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include "kernel/btf_args.h"
#include "kernel/hook_args.h"

static int failures;

static void check(bool ok, const char *what, const char *why)
{
	printf("%s %s%s%s\n", ok ? "ok" : "FAIL", what, why && *why ? ": " : "", why ? why : "");
	failures += !ok;
}

/* Type ids of a small kernel BTF: the named structs, ints and typedefs the lists use. */
struct kbtf {
	struct btf *btf;
	int s_bio, s_queue, s_kiocb_io, s_io_wq_work, s_ctx, s_task, s_cqe, s_kiocb, s_iter,
		s_batch, s_pvec, s_ractl, s_ra, s_folio, s_page, t_ulong, t_ssize, t_int, t_uint, t_u8, t_u64, t_bool, t_size, p_void;
};

static int ptr(struct btf *b, int id)
{
	return btf__add_ptr(b, id);
}

static void kbtf_init(struct kbtf *k)
{
	struct btf *b = btf__new_empty();
	int ulong, ubyte, ull;

	k->btf = b;
	k->t_int = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	k->t_uint = btf__add_int(b, "unsigned int", 4, 0);
	ubyte = btf__add_int(b, "unsigned char", 1, 0);
	ull = btf__add_int(b, "long long unsigned int", 8, 0);
	ulong = btf__add_int(b, "long unsigned int", 8, 0);
	k->t_u8 = btf__add_typedef(b, "u8", ubyte);
	k->t_u64 = btf__add_typedef(b, "u64", ull);
	k->t_bool = btf__add_typedef(b, "bool", btf__add_int(b, "_Bool", 1, BTF_INT_BOOL));
	k->t_size = btf__add_typedef(b, "size_t", ulong);
	k->p_void = ptr(b, 0);
	k->s_bio = ptr(b, btf__add_struct(b, "bio", 8));
	k->s_queue = ptr(b, btf__add_struct(b, "request_queue", 8));
	k->s_kiocb_io = ptr(b, btf__add_struct(b, "io_kiocb", 8));
	k->s_io_wq_work = ptr(b, btf__add_struct(b, "io_wq_work", 8));
	k->s_ctx = ptr(b, btf__add_struct(b, "io_ring_ctx", 8));
	k->s_task = ptr(b, btf__add_struct(b, "task_struct", 8));
	k->s_cqe = ptr(b, btf__add_const(b, btf__add_struct(b, "io_uring_cqe", 8)));
	k->s_kiocb = ptr(b, btf__add_struct(b, "kiocb", 8));
	k->s_iter = ptr(b, btf__add_struct(b, "iov_iter", 8));
	k->s_batch = ptr(b, btf__add_struct(b, "folio_batch", 8));
	k->s_pvec = ptr(b, btf__add_struct(b, "pagevec", 8));
	k->s_ractl = ptr(b, btf__add_struct(b, "readahead_control", 8));
	k->s_ra = ptr(b, btf__add_struct(b, "file_ra_state", 8));
	k->s_folio = ptr(b, btf__add_struct(b, "folio", 8));
	k->s_page = ptr(b, btf__add_struct(b, "page", 8));
	k->t_ulong = ulong;
	k->t_ssize = btf__add_typedef(b, "ssize_t", btf__add_int(b, "long int", 8, BTF_INT_SIGNED));
}

/* A tracepoint's btf_trace_NAME typedef: a pointer to a prototype (void *, args...). */
static int add_tracepoint(struct kbtf *k, const char *name, const int *args, int n)
{
	char tname[128];
	int proto = btf__add_func_proto(k->btf, 0);

	btf__add_func_param(k->btf, "__data", k->p_void);
	for (int i = 0; i < n; i++)
		btf__add_func_param(k->btf, "", args[i]);
	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	return btf__add_typedef(k->btf, tname, ptr(k->btf, proto));
}

static int add_function(struct kbtf *k, const char *name, const int *args, int n)
{
	int proto = btf__add_func_proto(k->btf, k->t_int);

	for (int i = 0; i < n; i++)
		btf__add_func_param(k->btf, "", args[i]);
	return btf__add_func(k->btf, name, BTF_FUNC_GLOBAL, proto);
}

/* Tracepoint id's arguments against want: taken (expect true) or refused with a reason. */
static void expect(struct kbtf *k, int id, int skip, const char *want, bool taken,
		   const char *what)
{
	char why[400] = "";
	bool ok = btf_args_match(k->btf, id, skip, want, why, sizeof(why));

	check(ok == taken && (taken || strstr(why, "here, not (")), what, why);
}

#define N(a) (int)(sizeof(a) / sizeof((a)[0]))

int main(void)
{
	struct kbtf k;

	kbtf_init(&k);
	{ /* block_getrq: (bio) since 5.16; (q, bio, op) before */
		int now[] = { k.s_bio }, old[] = { k.s_queue, k.s_bio, k.t_int };

		expect(&k, add_tracepoint(&k, "block_getrq", now, N(now)), 1, ARGS_block_getrq,
		       true, "block_getrq (bio) taken");
		expect(&k, add_tracepoint(&k, "block_getrq_old", old, N(old)), 1,
		       ARGS_block_getrq, false, "block_getrq (q, bio, op) refused");
	}
	{ /* io_uring_queue_async_work: (req, rw) since 5.19, (req, bool) in 7.x; before,
	   (ctx, hashed, req, work, flags) */
		int now[] = { k.s_kiocb_io, k.t_int }, seven[] = { k.s_kiocb_io, k.t_bool };
		int old[] = { k.p_void, k.t_int, k.p_void, k.s_io_wq_work, k.t_uint };

		expect(&k, add_tracepoint(&k, "qaw", now, N(now)), 1,
		       ARGS_io_uring_queue_async_work, true, "io_uring_queue_async_work (req, rw) taken");
		expect(&k, add_tracepoint(&k, "qaw7", seven, N(seven)), 1,
		       ARGS_io_uring_queue_async_work, true,
		       "io_uring_queue_async_work (req, bool) taken: only req is read");
		expect(&k, add_tracepoint(&k, "qaw_old", old, N(old)), 1,
		       ARGS_io_uring_queue_async_work, false,
		       "io_uring_queue_async_work (ctx, hashed, req, work, flags) refused");
	}
	{ /* io_uring_poll_arm: (req, mask, events); (ctx, req, opcode, user_data, mask, events) */
		int now[] = { k.s_kiocb_io, k.t_int, k.t_int };
		int old[] = { k.p_void, k.p_void, k.t_u8, k.t_u64, k.t_int, k.t_int };
		int same_count[] = { k.p_void, k.t_int, k.t_int };

		expect(&k, add_tracepoint(&k, "pa", now, N(now)), 1, ARGS_io_uring_poll_arm, true,
		       "io_uring_poll_arm (req, mask, events) taken");
		expect(&k, add_tracepoint(&k, "pa_old", old, N(old)), 1, ARGS_io_uring_poll_arm,
		       false, "io_uring_poll_arm (ctx, req, opcode, user_data, mask, events) refused");
		expect(&k, add_tracepoint(&k, "pa_void", same_count, N(same_count)), 1,
		       ARGS_io_uring_poll_arm, false,
		       "io_uring_poll_arm with as many arguments, the first another type, refused");
	}
	{ /* io_uring_complete: (ctx, req, cqe) or its fields; "?" takes any ctx, req */
		int now[] = { k.s_ctx, k.p_void, k.s_cqe };
		int fields[] = { k.p_void, k.p_void, k.t_u64, k.t_int, k.t_uint, k.t_u64, k.t_u64 };
		int id_now = add_tracepoint(&k, "ic", now, N(now));
		int id_fields = add_tracepoint(&k, "ic_f", fields, N(fields));

		expect(&k, id_now, 1, ARGS_io_uring_complete, true,
		       "io_uring_complete (ctx, req, const cqe) taken");
		expect(&k, id_fields, 1, ARGS_io_uring_complete, false,
		       "io_uring_complete's cqe way refused where it has the fields");
		expect(&k, id_fields, 1, ARGS_io_uring_complete_fields, true,
		       "io_uring_complete's fields way taken where it has them");
		expect(&k, id_now, 1, ARGS_io_uring_complete_fields, false,
		       "io_uring_complete's fields way refused where it has the cqe");
	}
	{ /* sched_process_exit: (p, group_dead) or (p) */
		int now[] = { k.s_task, k.t_bool }, old[] = { k.s_task };
		int id_now = add_tracepoint(&k, "spe", now, N(now));
		int id_old = add_tracepoint(&k, "spe_old", old, N(old));

		expect(&k, id_now, 1, ARGS_sched_process_exit, true, "sched_process_exit (p, bool)");
		expect(&k, id_old, 1, ARGS_sched_process_exit, false,
		       "sched_process_exit's group_dead way refused without it");
		expect(&k, id_old, 1, ARGS_sched_process_exit_nogroup, true,
		       "sched_process_exit (p) taken by its way");
	}
	{ /* a function (fentry): filemap_get_pages(iocb, iter, batch) or (iocb, count, ...) */
		int iter[] = { k.s_kiocb, k.s_iter, k.s_batch };
		int count[] = { k.s_kiocb, k.t_size, k.s_batch, k.t_bool };
		int id_iter = add_function(&k, "filemap_get_pages", iter, N(iter));
		int id_count = add_function(&k, "filemap_get_pages2", count, N(count));
		int pvec[] = { k.s_kiocb, k.s_iter, k.s_pvec };
		int id_pvec = add_function(&k, "filemap_get_pages3", pvec, N(pvec));

		expect(&k, id_iter, 0, ARGS_filemap_get_pages_iter, true,
		       "filemap_get_pages (iocb, iter, batch) taken");
		expect(&k, id_count, 0, ARGS_filemap_get_pages_iter, false,
		       "filemap_get_pages' iter way refused where it takes a count");
		expect(&k, id_count, 0, ARGS_filemap_get_pages_count, true,
		       "filemap_get_pages (iocb, count, batch, bool) taken");
		expect(&k, id_pvec, 0, ARGS_filemap_get_pages_iter, true,
		       "filemap_get_pages (iocb, iter, pagevec) taken by the iter way");
	}
	{ /* the page cache before 5.18: the readahead state beside the control, pages */
		int sync[] = { k.s_ractl, k.t_ulong }, sync_old[] = { k.s_ractl, k.s_ra, k.t_ulong };
		int async[] = { k.s_ractl, k.s_folio, k.t_ulong };
		int async_old[] = { k.s_ractl, k.s_ra, k.s_page, k.t_ulong };
		int ondemand[] = { k.s_ractl, k.s_folio, k.t_ulong };
		int ondemand_old[] = { k.s_ractl, k.s_ra, k.t_bool, k.t_ulong };
		int async_page[] = { k.s_ractl, k.s_page, k.t_ulong };
		int ondemand_bool[] = { k.s_ractl, k.t_bool, k.t_ulong };
		int folio[] = { k.s_folio }, page[] = { k.s_page };
		int read_old[] = { k.s_kiocb, k.s_iter, k.t_ssize };
		int id_sync = add_function(&k, "page_cache_sync_ra", sync, N(sync));
		int id_sync_old = add_function(&k, "page_cache_sync_ra2", sync_old, N(sync_old));
		int id_async = add_function(&k, "page_cache_async_ra", async, N(async));
		int id_async_old = add_function(&k, "page_cache_async_ra2", async_old, N(async_old));
		int id_od = add_function(&k, "ondemand_readahead", ondemand, N(ondemand));
		int id_od_old = add_function(&k, "ondemand_readahead2", ondemand_old, N(ondemand_old));
		int id_async_page = add_function(&k, "page_cache_async_ra3", async_page,
						 N(async_page));
		int id_od_bool = add_function(&k, "ondemand_readahead3", ondemand_bool,
					      N(ondemand_bool));
		int id_folio = add_tracepoint(&k, "add_folio", folio, N(folio));
		int id_page = add_tracepoint(&k, "add_page", page, N(page));
		int id_read = add_function(&k, "generic_file_buffered_read", read_old, N(read_old));

		expect(&k, id_sync, 0, ARGS_page_cache_sync_ra, true, "page_cache_sync_ra (ractl, n)");
		expect(&k, id_sync_old, 0, ARGS_page_cache_sync_ra, false,
		       "page_cache_sync_ra's way refused where the state is beside the control");
		expect(&k, id_sync_old, 0, ARGS_page_cache_sync_ra_state, true,
		       "page_cache_sync_ra (ractl, ra, n) taken by its way");
		expect(&k, id_sync, 0, ARGS_page_cache_sync_ra_state, false,
		       "page_cache_sync_ra's state way refused where the control holds it");
		expect(&k, id_async, 0, ARGS_page_cache_async_ra, true,
		       "page_cache_async_ra (ractl, folio, n)");
		expect(&k, id_async_old, 0, ARGS_page_cache_async_ra, false,
		       "page_cache_async_ra's folio way refused with (ractl, ra, page, n)");
		expect(&k, id_async_old, 0, ARGS_page_cache_async_ra_state, true,
		       "page_cache_async_ra (ractl, ra, page, n) taken by its way");
		expect(&k, id_async, 0, ARGS_page_cache_async_ra_state, false,
		       "page_cache_async_ra's page way refused with a folio");
		expect(&k, id_od_old, 0, ARGS_ondemand_readahead_state, true,
		       "ondemand_readahead (ractl, ra, bool, n) taken");
		expect(&k, id_od, 0, ARGS_ondemand_readahead_state, false,
		       "ondemand_readahead (ractl, folio, n) refused: page_cache_ra_order's kernels");
		expect(&k, id_async_page, 0, ARGS_page_cache_async_ra_page, true,
		       "page_cache_async_ra (ractl, page, n) taken by its way (5.15)");
		expect(&k, id_async_page, 0, ARGS_page_cache_async_ra, false,
		       "page_cache_async_ra's folio way refused with (ractl, page, n)");
		expect(&k, id_async, 0, ARGS_page_cache_async_ra_page, false,
		       "page_cache_async_ra's 5.15 way refused with a folio");
		expect(&k, id_async_old, 0, ARGS_page_cache_async_ra_page, false,
		       "page_cache_async_ra's 5.15 way refused with the state beside");
		expect(&k, id_od_bool, 0, ARGS_ondemand_readahead_bool, true,
		       "ondemand_readahead (ractl, bool, n) taken (5.15)");
		expect(&k, id_od_bool, 0, ARGS_ondemand_readahead_state, false,
		       "ondemand_readahead's 5.10 way refused with (ractl, bool, n)");
		expect(&k, id_od, 0, ARGS_ondemand_readahead_bool, false,
		       "ondemand_readahead's 5.15 way refused with a folio");
		expect(&k, id_folio, 1, ARGS_mm_filemap_add_to_page_cache, true,
		       "mm_filemap_add_to_page_cache (folio)");
		expect(&k, id_page, 1, ARGS_mm_filemap_add_to_page_cache, false,
		       "mm_filemap_add_to_page_cache's folio way refused with a page");
		expect(&k, id_page, 1, ARGS_mm_filemap_add_to_page_cache_page, true,
		       "mm_filemap_add_to_page_cache (page) taken by its way");
		expect(&k, id_read, 0, ARGS_generic_file_buffered_read, true,
		       "generic_file_buffered_read (iocb, iter, written)");
	}
	btf__free(k.btf);
	return failures ? 1 : 0;
}
