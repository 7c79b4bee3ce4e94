// SPDX-License-Identifier: GPL-2.0
/*
 * What this kernel offers, asked of the kernel itself (its BTF, a test attach, its kprobe
 * PMU), never of its version number: which build of the programs it can load (the kfuncs
 * it has, bpf/maps.bpf.h), and for each event the programs need, the first way to get it
 * (its tracepoint; fentry or fexit on the function the tracepoint sits in; a kprobe where
 * fentry cannot attach; an older tracepoint: bpf/fallbacks.bpf.c). The programs of the ways
 * not taken are switched off (bpf_program__set_autoload); an event no way gives makes its
 * group's numbers "n/a" with the reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "btf_args.h"
#include "hook_args.h"
#include "tracer_impl.h"

/*
 * One way to get an event: its programs (two when the tracepoint is split in two), and the
 * arguments its program reads where kernels differ in them (btf_args.h: types as BTF names
 * them, "?" for one it does not read; NULL: not checked).
 */
struct way {
	const char *progs[2];
	const char *args;
};

/* An event the programs use, named after its tracepoint (6.18's), and its ways, best first. */
struct hook_def {
	const char *event;
	enum tracer_hooks group;
	struct way ways[HOOK_WAYS];
};

/* A way of one program or two, and one whose program reads these arguments. */
#define WAY(...) { .progs = { __VA_ARGS__ } }
#define WAY_ARGS(sig, prog) { .progs = { prog }, .args = sig }
#define HOOK(name, grp, ...) { .event = name, .group = grp, .ways = { __VA_ARGS__ } }

static const struct hook_def hook_defs[] = {
	HOOK("sys_enter", HOOKS_CORE, WAY("handle_sys_enter")),
	HOOK("sys_exit", HOOKS_CORE, WAY("handle_sys_exit")),
	HOOK("sched_process_fork", HOOKS_CORE, WAY("handle_sched_process_fork")),
	HOOK("sched_process_exec", HOOKS_CORE, WAY("handle_sched_process_exec")),
	HOOK("task_rename", HOOKS_CORE, WAY("handle_task_rename")),
	HOOK("sched_process_exit", HOOKS_CORE,
	     WAY_ARGS(ARGS_sched_process_exit, "handle_sched_process_exit"),
	     WAY_ARGS(ARGS_sched_process_exit_nogroup, "handle_sched_process_exit_nogroup")),
	HOOK("page_cache_sync_ra", HOOKS_PAGE_CACHE, WAY("handle_page_cache_sync_ra"),
	     WAY_ARGS(ARGS_page_cache_sync_ra, "handle_page_cache_sync_ra_fn"),
	     WAY_ARGS(ARGS_page_cache_sync_ra_state, "handle_page_cache_sync_ra_state_fn")),
	HOOK("page_cache_async_ra", HOOKS_PAGE_CACHE, WAY("handle_page_cache_async_ra"),
	     WAY_ARGS(ARGS_page_cache_async_ra, "handle_page_cache_async_ra_fn"),
	     WAY_ARGS(ARGS_page_cache_async_ra_state, "handle_page_cache_async_ra_state_fn"),
	     WAY_ARGS(ARGS_page_cache_async_ra_page, "handle_page_cache_async_ra_page_fn")),
	HOOK("page_cache_ra_order", HOOKS_PAGE_CACHE, WAY("handle_page_cache_ra_order"),
	     WAY("handle_page_cache_ra_order_fn"),
	     WAY_ARGS(ARGS_ondemand_readahead_state, "handle_ondemand_readahead_fn"),
	     WAY_ARGS(ARGS_ondemand_readahead_bool, "handle_ondemand_readahead_bool_fn")),
	HOOK("page_cache_ra_unbounded", HOOKS_PAGE_CACHE, WAY("handle_page_cache_ra_unbounded"),
	     WAY("handle_page_cache_ra_unbounded_fn")),
	HOOK("mm_filemap_add_to_page_cache", HOOKS_PAGE_CACHE,
	     WAY_ARGS(ARGS_mm_filemap_add_to_page_cache, "handle_mm_filemap_add_to_page_cache"),
	     WAY_ARGS(ARGS_mm_filemap_add_to_page_cache_page,
		      "handle_mm_filemap_add_to_page_cache_page")),
	HOOK("mm_filemap_get_pages", HOOKS_PAGE_CACHE, WAY("handle_mm_filemap_get_pages"),
	     WAY_ARGS(ARGS_filemap_get_pages_iter, "handle_filemap_get_pages_fn"),
	     WAY_ARGS(ARGS_filemap_get_pages_count, "handle_filemap_get_pages_count_fn"),
	     WAY_ARGS(ARGS_generic_file_buffered_read, "handle_generic_file_buffered_read_fn")),
	HOOK("mm_filemap_fault", HOOKS_PAGE_CACHE, WAY("handle_mm_filemap_fault"),
	     WAY("handle_filemap_fault_fn")),
	HOOK("mm_filemap_map_pages", HOOKS_PAGE_CACHE, WAY("handle_mm_filemap_map_pages"),
	     WAY("handle_filemap_map_pages_fn")),
	HOOK("iomap_dio_rw_begin", HOOKS_DIRECT_IO, WAY("handle_iomap_dio_rw_begin"),
	     WAY("handle_iomap_dio_rw_fn"), WAY("handle_iomap_dio_rw_kprobe")),
	HOOK("iomap_dio_complete", HOOKS_DIRECT_IO,
	     WAY("handle_iomap_dio_complete", "handle_iomap_dio_rw_queued"),
	     WAY("handle_iomap_dio_rw_exit_fn"), WAY("handle_iomap_dio_rw_kretprobe")),
	HOOK("writeback_dirty_folio", HOOKS_BLOCK, WAY("handle_writeback_dirty_folio"),
	     WAY("handle_writeback_dirty_page")),
	HOOK("block_io_start", HOOKS_BLOCK, WAY("handle_block_io_start"),
	     WAY_ARGS(ARGS_block_getrq, "handle_block_getrq"),
	     WAY_ARGS(ARGS_block_getrq_queue, "handle_block_getrq_queue")),
	HOOK("block_rq_insert", HOOKS_BLOCK, WAY("handle_block_rq_insert")),
	HOOK("block_rq_issue", HOOKS_BLOCK, WAY("handle_block_rq_issue")),
	HOOK("block_rq_complete", HOOKS_BLOCK, WAY("handle_block_rq_complete")),
	HOOK("block_rq_merge", HOOKS_BLOCK, WAY("handle_block_rq_merge")),
	HOOK("io_uring_submit_req", HOOKS_URING, WAY("handle_io_uring_submit_req"),
	     WAY_ARGS(ARGS_io_uring_submit_sqe, "handle_io_uring_submit_sqe")),
	HOOK("io_uring_req_failed", HOOKS_URING, WAY("handle_io_uring_req_failed")),
	HOOK("io_uring_queue_async_work", HOOKS_URING,
	     WAY_ARGS(ARGS_io_uring_queue_async_work, "handle_io_uring_queue_async_work")),
	HOOK("io_uring_poll_arm", HOOKS_URING,
	     WAY_ARGS(ARGS_io_uring_poll_arm, "handle_io_uring_poll_arm")),
	HOOK("io_uring_complete", HOOKS_URING,
	     WAY_ARGS(ARGS_io_uring_complete, "handle_io_uring_complete"),
	     WAY_ARGS(ARGS_io_uring_complete_fields, "handle_io_uring_complete_fields")),
	HOOK("io_uring_cqe_overflow", HOOKS_URING, WAY("handle_io_uring_cqe_overflow")),
	HOOK("inode_set_ctime_to_ts", HOOKS_RENAMES, WAY("handle_inode_set_ctime_to_ts")),
	HOOK("ctime_ns_xchg", HOOKS_RENAMES, WAY("handle_ctime_ns_xchg")),
	HOOK("ctime_xchg_skip", HOOKS_RENAMES, WAY("handle_ctime_xchg_skip")),
};

_Static_assert(sizeof(hook_defs) / sizeof(hook_defs[0]) == NR_HOOKS, "NR_HOOKS in tracer.h");

const char *const tracer_group_names[TRACER_HOOK_GROUPS] = {
	[HOOKS_CORE] = "syscalls and processes", [HOOKS_PAGE_CACHE] = "page cache",
	[HOOKS_DIRECT_IO] = "direct I/O", [HOOKS_BLOCK] = "block I/O", [HOOKS_URING] = "io_uring",
	[HOOKS_RENAMES] = "renamed files' new names",
};

/* IOTRACE_DISABLE_TRACEPOINTS=a,b: no way at all for those events (tests, bisecting). */
static bool disabled_by_env(const char *event)
{
	const char *list = getenv("IOTRACE_DISABLE_TRACEPOINTS");
	size_t len = strlen(event);

	for (const char *p = list; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (!strncmp(p, event, len) && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

/* ---- ways ---- */

/* The hook section of a program: "fentry/page_cache_sync_ra" -> kind and target. */
static void split_section(const char *sec, char *kind, size_t klen, const char **target)
{
	size_t n = strcspn(sec, "/");

	snprintf(kind, klen, "%.*s", (int)n, sec);
	*target = sec[n] ? sec + n + 1 : "";
}

/*
 * Whether this kernel may run a program of a way, from its BTF: the tracepoint or function
 * is there, with the arguments the program reads (args, btf_args.h). (Whether fentry or a
 * kprobe attaches is known only by attaching: 6.1's trampolines take six arguments at
 * most.) Why not, in why.
 */
static bool prog_available(struct bpf_program *prog, const struct btf_index *btf,
			   const char *args, char *why, size_t len)
{
	bool tp, ok = true;
	const char *target;
	char kind[16], diff[400];
	int id;

	split_section(bpf_program__section_name(prog), kind, sizeof(kind), &target);
	if (!btf) /* no BTF to ask: the default, and the load will tell */
		return true;
	if (!strcmp(kind, "kprobe") || !strcmp(kind, "kretprobe"))
		return true;
	tp = !strcmp(kind, "tp_btf");
	id = tp ? tracepoint_id(btf, target) : btf_index_find(btf, target, true);
	/* A tracepoint's prototype starts with its data pointer: not an argument. */
	if (id >= 0 && args)
		ok = btf_args_match(btf_index_btf(btf), id, tp, args, diff, sizeof(diff));
	if (id < 0 && tp)
		snprintf(why, len, "tracepoint %s not in this kernel", target);
	else if (id < 0)
		snprintf(why, len, "%s %s: not in the kernel's BTF", kind, target);
	else if (!ok && snprintf(why, len, "%s %s: %s", tp ? "tracepoint" : kind, target, diff) >=
			       (int)len)
		why[len - 1] = '\0'; /* cut: the reason's start says enough */
	return id >= 0 && ok;
}

static struct bpf_program *prog_of(struct tracer *t, const char *name)
{
	return name ? tracer_prog(t, bpf_object__find_program_by_name(t->skel->obj, name)) : NULL;
}

static void add_why(struct hook_choice *c, const char *why)
{
	size_t used = strlen(c->why);

	if (why[0] && used + 3 < sizeof(c->why))
		snprintf(c->why + used, sizeof(c->why) - used, "%s%s", used ? "; " : "", why);
}

static bool is_tracepoint(struct tracer *t, const struct way *w)
{
	return !strncmp(bpf_program__section_name(prog_of(t, w->progs[0])), "tp_btf/", 7);
}

/*
 * The ways this kernel may offer for hook h, best first, in c->cands: up to the first
 * tracepoint (which attaches where it exists); before it, functions (fentry, kprobes),
 * which are known to attach only when they do (attach_hooks tries them in turn).
 */
static void find_ways(struct tracer *t, const struct hook_def *h, const struct btf_index *btf,
		      struct hook_choice *c)
{
	c->why[0] = '\0';
	c->ncands = 0;
	if (disabled_by_env(h->event)) {
		snprintf(c->why, sizeof(c->why), "tracepoint %s disabled by "
			 "IOTRACE_DISABLE_TRACEPOINTS", h->event);
		return;
	}
	for (int w = 0; w < HOOK_WAYS && h->ways[w].progs[0]; w++) {
		bool ok = true;

		for (int p = 0; p < 2 && h->ways[w].progs[p] && ok; p++) {
			char why[HOOK_WHY_LEN] = "";

			ok = prog_available(prog_of(t, h->ways[w].progs[p]), btf, h->ways[w].args,
					    why, sizeof(why));
			add_why(c, why);
		}
		if (!ok)
			continue;
		c->cands[c->ncands++] = w;
		if (!btf || is_tracepoint(t, &h->ways[w]))
			break;
	}
}

/*
 * Names what way w of h is, e.g. "fentry page_cache_sync_ra" (for `info` and JSON): from
 * the first instance's program, whichever loaded it (the sections are the same).
 */
static void describe_way(struct tracer *t, const struct hook_def *h, int w, struct hook_choice *c)
{
	const char *target;
	char kind[16];

	split_section(bpf_program__section_name(bpf_object__find_program_by_name(
			      t->skel->obj, h->ways[w].progs[0])), kind, sizeof(kind), &target);
	snprintf(c->kind, sizeof(c->kind), "%s", kind);
	snprintf(c->target, sizeof(c->target), "%s", target);
}

/* The way taken for event, or -1. */
static int way_of(const struct tracer *t, const char *event)
{
	for (int i = 0; i < NR_HOOKS; i++)
		if (!strcmp(hook_defs[i].event, event))
			return t->hooks[i].way;
	return -1;
}

/* Settings of the programs that depend on the way taken. */
static void configure_ways(struct tracer *t, const struct btf_index *btf)
{
	struct iotrace_bpf *s = t->skel;

	/* before page_cache_ra_order (either ondemand_readahead): its windows from
	 * page_cache_ra_unbounded (pagecache.bpf.c) */
	if (way_of(t, "page_cache_ra_order") >= 2)
		s->rodata->windows_in_unbounded = true;
	if (way_of(t, "block_io_start") >= 1) { /* block_getrq, either argument list */
		s->rodata->start_by_bio = true;
		bpf_map__set_max_entries(s->maps.block_starts, MAX_BLOCK_INFLIGHT);
	}
	/* The sweep is a map element iterator (5.9; its BTF function names its context). */
	if (btf && btf_index_find(btf, "bpf_iter_bpf_map_elem", true) < 0)
		bpf_program__set_autoload(s->progs.sweep_block_inflight, false);
}

/*
 * The first reason a group lost a hook is the group's. Kept outside the tracer: a run's
 * result points at it after the tracer is closed (one tracer per process).
 */
static void note_missing(struct tracer *t, enum tracer_hooks g, const char *why)
{
	static char reasons[TRACER_HOOK_GROUPS][HOOK_WHY_LEN];

	if (t->missing[g])
		return;
	snprintf(reasons[g], HOOK_WHY_LEN, "%s", why);
	t->missing[g] = reasons[g];
}

static bool required_missing(const struct tracer *t)
{
	return t->missing[HOOKS_CORE] || t->missing[HOOKS_BLOCK];
}

/* Every program of hook h's ways loaded (candidates only) or not; none attached by libbpf. */
static void set_loading(struct tracer *t, const struct hook_def *h, const struct hook_choice *c)
{
	for (int w = 0; w < HOOK_WAYS; w++) {
		bool cand = false;

		for (int k = 0; k < c->ncands; k++)
			cand = cand || c->cands[k] == w;
		for (int p = 0; p < 2 && h->ways[w].progs[p]; p++) {
			bpf_program__set_autoload(prog_of(t, h->ways[w].progs[p]), cand);
			bpf_program__set_autoattach(prog_of(t, h->ways[w].progs[p]), false);
		}
	}
}

/*
 * Finds every hook's ways (btf NULL: the first way of each, unchecked) and loads only
 * theirs; the way itself is settled when attaching (attach_hooks). A hook whose primary
 * program the mode switched off (snoop, --no-time) stays off. Returns -1 when a hook of a
 * group iotrace cannot do without has no way (t->missing says which).
 */
int probe_hooks(struct tracer *t, const struct btf_index *btf)
{
	for (int g = 0; g < TRACER_HOOK_GROUPS; g++)
		t->missing[g] = NULL;
	for (int i = 0; i < NR_HOOKS; i++) {
		const struct hook_def *h = &hook_defs[i];
		struct hook_choice *c = &t->hooks[i];

		c->wanted = bpf_program__autoload(prog_of(t, h->ways[0].progs[0]));
		c->ncands = 0;
		if (c->wanted)
			find_ways(t, h, btf, c);
		c->way = c->ncands ? c->cands[0] : -1;
		c->linked = false;
		set_loading(t, h, c);
		if (c->wanted && !c->ncands)
			note_missing(t, h->group, c->why);
	}
	configure_ways(t, btf);
	if (required_missing(t))
		return -1;
	for (int i = 0; i < NR_HOOKS; i++)
		if (t->missing[hook_defs[i].group]) /* half a story: the group's other hooks off */
			set_loading(t, &hook_defs[i], &(struct hook_choice){ .ncands = 0 });
	return 0;
}

/*
 * A way's program and its link's place: in instance `in` when one thread attaches what it
 * loaded (attach_own_hooks, beside the other thread's load: nothing of the other instance
 * is read), else in whichever instance loaded it.
 */
static struct bpf_program *way_prog(struct tracer *t, struct iotrace_bpf *in, const char *name)
{
	return in ? bpf_object__find_program_by_name(in->obj, name) : prog_of(t, name);
}

static struct bpf_link **way_slot(struct tracer *t, struct iotrace_bpf *in,
				  const struct bpf_program *prog)
{
	return in ? skel_link_slot(in, prog) : tracer_link_slot(t, prog);
}

static void unlink_way(struct tracer *t, const struct way *w, struct iotrace_bpf *in)
{
	for (int p = 0; p < 2 && w->progs[p]; p++) {
		struct bpf_link **slot = way_slot(t, in, way_prog(t, in, w->progs[p]));

		if (slot && *slot) {
			bpf_link__destroy(*slot);
			*slot = NULL;
		}
	}
}

/* Attaches every program of way w of h; 0, or the error (nothing left attached). */
static int link_way(struct tracer *t, const struct hook_def *h, int w, struct hook_choice *c,
		    struct iotrace_bpf *in)
{
	for (int p = 0; p < 2 && h->ways[w].progs[p]; p++) {
		struct bpf_program *prog = way_prog(t, in, h->ways[w].progs[p]);
		struct bpf_link **slot = way_slot(t, in, prog);
		struct bpf_link *link = bpf_program__attach(prog);
		char why[160];

		if (!link || !slot) {
			int err = -errno;

			bpf_link__destroy(link);
			unlink_way(t, &h->ways[w], in);
			/* 524: the kernel's own ENOTSUPP, which strerror does not know. */
			snprintf(why, sizeof(why), "%s: %s", bpf_program__section_name(prog),
				 err == -524 ? "not supported by this kernel (ENOTSUPP)"
					     : strerror(-err));
			add_why(c, why);
			return err ?: -EINVAL;
		}
		*slot = link;
	}
	return 0;
}

/* Hook h's first way that attaches, in c->way (-1: none); 0 or the last way's error. */
static int link_hook(struct tracer *t, const struct hook_def *h, struct hook_choice *c,
		     struct iotrace_bpf *in)
{
	int err = -ENOENT;

	for (int k = 0; k < c->ncands && err; k++)
		if (!(err = link_way(t, h, c->cands[k], c, in)))
			c->way = c->cands[k];
	if (err)
		c->way = -1;
	else
		describe_way(t, h, c->way, c);
	return err;
}

/* Whether instance s loaded every program of every way hook h may take. */
static bool loaded_all(struct iotrace_bpf *s, const struct hook_def *h, const struct hook_choice *c)
{
	for (int k = 0; k < c->ncands; k++)
		for (int p = 0; p < 2 && h->ways[c->cands[k]].progs[p]; p++) {
			struct bpf_program *prog =
				bpf_object__find_program_by_name(s->obj, h->ways[c->cands[k]].progs[p]);

			if (!prog || !bpf_program__autoload(prog))
				return false;
		}
	return c->ncands > 0;
}

/*
 * With two loader threads, each attaches the hooks whose programs it loaded as soon as it
 * has, beside the other's load (tracer_objects.c); attach_hooks then takes the rest and
 * settles the groups. Each touches only its own hooks' choices and its own instance.
 */
void attach_own_hooks(struct tracer *t, struct iotrace_bpf *in)
{
	for (int i = 0; i < NR_HOOKS; i++) {
		const struct hook_def *h = &hook_defs[i];
		struct hook_choice *c = &t->hooks[i];

		if (!c->wanted || !c->ncands || t->missing[h->group] || !loaded_all(in, h, c))
			continue;
		c->link_err = link_hook(t, h, c, in);
		c->linked = true;
	}
}

/*
 * Attaches each hook's first way that attaches (a fentry the kernel refuses gives its place
 * to the kprobe after it), those attach_own_hooks did not. Returns 0, or the first error
 * when syscalls, processes or block I/O could not be attached; a page-cache, O_DIRECT or
 * io_uring hook that cannot makes its group n/a and detaches the group's other hooks.
 */
int attach_hooks(struct tracer *t)
{
	int first_err = 0;

	for (int i = 0; i < NR_HOOKS; i++) {
		const struct hook_def *h = &hook_defs[i];
		struct hook_choice *c = &t->hooks[i];
		int err;

		if (!c->wanted || !c->ncands || t->missing[h->group])
			continue;
		err = c->linked ? c->link_err : link_hook(t, h, c, NULL);
		c->linked = false;
		if (!err)
			continue;
		first_err = first_err ?: err;
		note_missing(t, h->group, c->why);
	}
	for (int i = 0; i < NR_HOOKS; i++)
		if (t->hooks[i].way >= 0 && t->missing[hook_defs[i].group]) {
			unlink_way(t, &hook_defs[i].ways[t->hooks[i].way], NULL);
			t->hooks[i].way = -1;
		}
	return required_missing(t) ? first_err : 0;
}

void tracer_hook_info(const struct tracer *t, int i, struct tracer_hook_info *out)
{
	const struct hook_choice *c = &t->hooks[i];

	*out = (struct tracer_hook_info){
		.event = hook_defs[i].event, .group = hook_defs[i].group, .wanted = c->wanted,
		.way = c->way,
		.kind = c->way >= 0 ? c->kind : NULL, .target = c->way >= 0 ? c->target : NULL,
		.why = c->why,
	};
}

enum tracer_build tracer_build(const struct tracer *t, const char **why)
{
	*why = t->build_why;
	return t->build;
}

/* ---- builds ---- */

const char *tracer_stacks_na(const struct tracer *t)
{
	return t->build == BUILD_COMPAT ? "helpers bpf_task_pt_regs and bpf_find_vma not in this "
					  "kernel (compat build)" : NULL;
}

const char *const tracer_build_names[TRACER_BUILDS] = {
	[BUILD_FULL] = "full", [BUILD_NOITER] = "no task VMA iterator",
	[BUILD_NOKFUNC] = "no kfuncs", [BUILD_COMPAT] = "compat",
};

/*
 * Whether the verifier knows bpf_loop, by a trial load (helpers are not in BTF): the newest
 * of what the compat build does without (bpf/compat.bpf.h), so a kernel that has it has them
 * all. 1 yes, 0 no, <0 the probe itself failed.
 */
static int have_bpf_loop(void)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_SOCKET_FILTER, BPF_FUNC_loop, NULL);
}

/* The build of the programs this kernel can load: the kfuncs it has (maps.bpf.h). */
enum tracer_build choose_build(const struct btf_index *btf, const char **why)
{
	/* IOTRACE_BUILD=noiter|nokfunc|compat: a build with fewer kfuncs on this kernel (cost A/B). */
	const char *forced = getenv("IOTRACE_BUILD");

	if (forced && !strcmp(forced, "nokfunc")) {
		*why = "IOTRACE_BUILD=nokfunc";
		return BUILD_NOKFUNC;
	}
	if (forced && !strcmp(forced, "compat")) {
		*why = "IOTRACE_BUILD=compat";
		return BUILD_COMPAT;
	}
	if (forced && !strcmp(forced, "noiter")) {
		*why = "IOTRACE_BUILD=noiter";
		return BUILD_NOITER;
	}
	if (!btf) {
		*why = "the kernel iotrace was built on, which has them all";
		return BUILD_FULL;
	}
	if (btf_index_find(btf, "bpf_rdonly_cast", true) < 0 && have_bpf_loop() == 0) {
		*why = "helper bpf_loop not in this kernel (a trial load): bounded loops, atomics "
		       "under a lock, task fields read with probe reads; --stacks n/a";
		return BUILD_COMPAT;
	}
	if (btf_index_find(btf, "bpf_rdonly_cast", true) < 0) {
		*why = "kfunc bpf_rdonly_cast not in this kernel: fields of kernel pointers "
		       "read with bpf_probe_read_kernel";
		return BUILD_NOKFUNC;
	}
	if (btf_index_find(btf, "bpf_iter_task_vma_new", true) < 0) {
		*why = "kfunc bpf_iter_task_vma_new not in this kernel: --stacks reads "
		       "/proc/PID/maps, exited processes' frames unnamed";
		return BUILD_NOITER;
	}
	*why = "every kfunc the programs use is in this kernel";
	return BUILD_FULL;
}
