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
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "tracer_impl.h"

/* One way to get an event: its programs (two when the tracepoint is split in two). */
struct way {
	const char *progs[2];
	int nargs; /* a tracepoint's arguments the program expects (0: any) */
};

/* An event the programs use, named after its tracepoint (6.18's), and its ways, best first. */
struct hook_def {
	const char *event;
	enum tracer_hooks group;
	struct way ways[HOOK_WAYS];
};

/* A way of one program or two, and one that expects the tracepoint to have n arguments. */
#define WAY(...) { .progs = { __VA_ARGS__ } }
#define WAY_ARGS(n, prog) { .progs = { prog }, .nargs = n }
#define HOOK(name, grp, ...) { .event = name, .group = grp, .ways = { __VA_ARGS__ } }

static const struct hook_def hook_defs[] = {
	HOOK("sys_enter", HOOKS_CORE, WAY("handle_sys_enter")),
	HOOK("sys_exit", HOOKS_CORE, WAY("handle_sys_exit")),
	HOOK("sched_process_fork", HOOKS_CORE, WAY("handle_sched_process_fork")),
	HOOK("sched_process_exec", HOOKS_CORE, WAY("handle_sched_process_exec")),
	HOOK("task_rename", HOOKS_CORE, WAY("handle_task_rename")),
	HOOK("sched_process_exit", HOOKS_CORE, WAY_ARGS(2, "handle_sched_process_exit"),
	     WAY_ARGS(1, "handle_sched_process_exit_nogroup")),
	HOOK("page_cache_sync_ra", HOOKS_PAGE_CACHE, WAY("handle_page_cache_sync_ra"),
	     WAY("handle_page_cache_sync_ra_fn")),
	HOOK("page_cache_async_ra", HOOKS_PAGE_CACHE, WAY("handle_page_cache_async_ra"),
	     WAY("handle_page_cache_async_ra_fn")),
	HOOK("page_cache_ra_order", HOOKS_PAGE_CACHE, WAY("handle_page_cache_ra_order"),
	     WAY("handle_page_cache_ra_order_fn")),
	HOOK("page_cache_ra_unbounded", HOOKS_PAGE_CACHE, WAY("handle_page_cache_ra_unbounded"),
	     WAY("handle_page_cache_ra_unbounded_fn")),
	HOOK("mm_filemap_add_to_page_cache", HOOKS_PAGE_CACHE,
	     WAY("handle_mm_filemap_add_to_page_cache")),
	HOOK("mm_filemap_get_pages", HOOKS_PAGE_CACHE, WAY("handle_mm_filemap_get_pages"),
	     WAY_ARGS(3, "handle_filemap_get_pages_fn"),
	     WAY_ARGS(4, "handle_filemap_get_pages_count_fn")),
	HOOK("mm_filemap_fault", HOOKS_PAGE_CACHE, WAY("handle_mm_filemap_fault"),
	     WAY("handle_filemap_fault_fn")),
	HOOK("mm_filemap_map_pages", HOOKS_PAGE_CACHE, WAY("handle_mm_filemap_map_pages"),
	     WAY("handle_filemap_map_pages_fn")),
	HOOK("iomap_dio_rw_begin", HOOKS_DIRECT_IO, WAY("handle_iomap_dio_rw_begin"),
	     WAY("handle_iomap_dio_rw_fn"), WAY("handle_iomap_dio_rw_kprobe")),
	HOOK("iomap_dio_complete", HOOKS_DIRECT_IO,
	     WAY("handle_iomap_dio_complete", "handle_iomap_dio_rw_queued"),
	     WAY("handle_iomap_dio_rw_exit_fn"), WAY("handle_iomap_dio_rw_kretprobe")),
	HOOK("writeback_dirty_folio", HOOKS_BLOCK, WAY("handle_writeback_dirty_folio")),
	HOOK("block_io_start", HOOKS_BLOCK, WAY("handle_block_io_start"),
	     WAY("handle_block_getrq")),
	HOOK("block_rq_insert", HOOKS_BLOCK, WAY("handle_block_rq_insert")),
	HOOK("block_rq_issue", HOOKS_BLOCK, WAY("handle_block_rq_issue")),
	HOOK("block_rq_complete", HOOKS_BLOCK, WAY("handle_block_rq_complete")),
	HOOK("io_uring_submit_req", HOOKS_URING, WAY("handle_io_uring_submit_req"),
	     WAY("handle_io_uring_submit_sqe")),
	HOOK("io_uring_req_failed", HOOKS_URING, WAY("handle_io_uring_req_failed")),
	HOOK("io_uring_queue_async_work", HOOKS_URING, WAY("handle_io_uring_queue_async_work")),
	HOOK("io_uring_poll_arm", HOOKS_URING, WAY("handle_io_uring_poll_arm")),
	HOOK("io_uring_complete", HOOKS_URING, WAY_ARGS(3, "handle_io_uring_complete"),
	     WAY_ARGS(7, "handle_io_uring_complete_fields")),
	HOOK("io_uring_cqe_overflow", HOOKS_URING, WAY("handle_io_uring_cqe_overflow")),
};

_Static_assert(sizeof(hook_defs) / sizeof(hook_defs[0]) == NR_HOOKS, "NR_HOOKS in tracer.h");

const char *const tracer_group_names[TRACER_HOOK_GROUPS] = {
	[HOOKS_CORE] = "syscalls and processes", [HOOKS_PAGE_CACHE] = "page cache",
	[HOOKS_DIRECT_IO] = "direct I/O", [HOOKS_BLOCK] = "block I/O", [HOOKS_URING] = "io_uring",
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

/* ---- what the kernel has ---- */

/* A function's or tracepoint's argument count from its BTF prototype, or -1. */
static int proto_args(const struct btf *btf, int id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_typedef(t) || btf_is_ptr(t) || btf_is_func(t)))
		t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) ? btf_vlen(t) : -1;
}

static int tracepoint_args(const struct btf *btf, const char *tp)
{
	char name[128];
	int id;

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	/* The prototype's first argument is the tracepoint's data pointer. */
	return id < 0 ? -1 : proto_args(btf, id) - 1;
}

#define BPF_INSN(op, k) { .code = (op), .imm = (k) }

/*
 * Whether fentry/fexit can attach to the function: loads a program that does nothing and
 * attaches it (the kernel builds the trampoline at attach, and may refuse then: 6.1 takes
 * at most six arguments). 0, or the error.
 */
static int test_trampoline(int func_id, enum bpf_attach_type type)
{
	const struct bpf_insn insns[] = { BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0),
					  BPF_INSN(BPF_JMP | BPF_EXIT, 0) };
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type,
		    .attach_btf_id = func_id);
	int prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "iotrace_probe", "GPL", insns, 2, &opts);
	int link, err;

	if (prog < 0)
		return -errno;
	link = bpf_raw_tracepoint_open(NULL, prog);
	err = link < 0 ? -errno : 0;
	if (link >= 0)
		close(link);
	close(prog);
	return err;
}

/* The kprobe PMU's type (sysfs; no tracefs needed), or -1. */
static int kprobe_pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/kprobe/type", "r");
	int type = -1;

	if (f) {
		if (fscanf(f, "%d", &type) != 1)
			type = -1;
		fclose(f);
	}
	return type;
}

/* Whether a kprobe can be put on func: a perf kprobe event made and closed. 0 or error. */
static int test_kprobe(const char *func)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	int type = kprobe_pmu_type(), fd;

	if (type < 0)
		return -ENOENT;
	attr.type = type;
	attr.config1 = (__u64)(unsigned long)func; /* kprobe_func */
	fd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* ---- ways ---- */

/* The hook section of a program: "fentry/page_cache_sync_ra" -> kind and target. */
static void split_section(const char *sec, char *kind, size_t klen, const char **target)
{
	size_t n = strcspn(sec, "/");

	snprintf(kind, klen, "%.*s", (int)n, sec);
	*target = sec[n] ? sec + n + 1 : "";
}

/* Whether this kernel can run one program of a way; why not in why. */
static bool prog_available(struct bpf_program *prog, const struct btf *btf, int nargs,
			   char *why, size_t len)
{
	const char *target;
	char kind[16];
	int id, n, err;

	split_section(bpf_program__section_name(prog), kind, sizeof(kind), &target);
	if (!btf) /* no BTF to ask: the default, and the load will tell */
		return true;
	if (!strcmp(kind, "tp_btf")) {
		n = tracepoint_args(btf, target);
		if (n < 0)
			snprintf(why, len, "tracepoint %s not in this kernel", target);
		else if (nargs && n != nargs)
			snprintf(why, len, "tracepoint %s has %d arguments here, not %d", target, n,
				 nargs);
		return n >= 0 && (!nargs || n == nargs);
	}
	if (!strcmp(kind, "kprobe") || !strcmp(kind, "kretprobe")) {
		err = test_kprobe(target);
		if (err)
			snprintf(why, len, "kprobe on %s: %s", target, strerror(-err));
		return !err;
	}
	id = btf__find_by_name_kind(btf, target, BTF_KIND_FUNC);
	n = id < 0 ? -1 : proto_args(btf, id);
	if (id >= 0 && nargs && n != nargs) {
		snprintf(why, len, "%s has %d arguments here, not %d", target, n, nargs);
		return false;
	}
	err = id < 0 ? -ENOENT
		     : test_trampoline(id, !strcmp(kind, "fexit") ? BPF_TRACE_FEXIT
								 : BPF_TRACE_FENTRY);
	if (err)
		snprintf(why, len, "%s on %s: %s", kind, target,
			 id < 0 ? "not in the kernel's BTF" : strerror(-err));
	return !err;
}

static struct bpf_program *prog_of(struct tracer *t, const char *name)
{
	return name ? bpf_object__find_program_by_name(t->skel->obj, name) : NULL;
}

/* The first way this kernel offers for hook h; its index, or -1 with the reasons in c->why. */
static int choose_way(struct tracer *t, const struct hook_def *h, const struct btf *btf,
		      struct hook_choice *c)
{
	size_t used = 0;

	c->why[0] = '\0';
	if (disabled_by_env(h->event)) {
		snprintf(c->why, sizeof(c->why), "tracepoint %s disabled by "
			 "IOTRACE_DISABLE_TRACEPOINTS", h->event);
		return -1;
	}
	for (int w = 0; w < HOOK_WAYS && h->ways[w].progs[0]; w++) {
		bool ok = true;

		for (int p = 0; p < 2 && h->ways[w].progs[p] && ok; p++) {
			char why[128] = "";

			ok = prog_available(prog_of(t, h->ways[w].progs[p]), btf, h->ways[w].nargs,
					    why, sizeof(why));
			if (!ok && used < sizeof(c->why))
				used += snprintf(c->why + used, sizeof(c->why) - used, "%s%s",
						 used ? "; " : "", why);
		}
		if (ok)
			return w;
	}
	return -1;
}

/* Names what way w of h is, e.g. "fentry page_cache_sync_ra" (for `info` and JSON). */
static void describe_way(struct tracer *t, const struct hook_def *h, int w, struct hook_choice *c)
{
	const char *target;
	char kind[16];

	split_section(bpf_program__section_name(prog_of(t, h->ways[w].progs[0])), kind,
		      sizeof(kind), &target);
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
static void configure_ways(struct tracer *t)
{
	struct iotrace_bpf *s = t->skel;

	if (way_of(t, "block_io_start") == 1) { /* block_getrq */
		s->rodata->start_by_bio = true;
		bpf_map__set_max_entries(s->maps.block_starts, MAX_BLOCK_INFLIGHT);
	}
}

/*
 * Chooses every hook's way (btf NULL: the first way of each, unchecked) and switches the
 * other ways' programs off. A hook whose primary program the mode switched off (snoop,
 * --no-time) stays off. Returns -1 when a hook of a group iotrace cannot do without is
 * missing (t->missing says which).
 */
int probe_hooks(struct tracer *t, const struct btf *btf)
{
	for (int g = 0; g < TRACER_HOOK_GROUPS; g++)
		t->missing[g] = NULL;
	for (int i = 0; i < NR_HOOKS; i++) {
		const struct hook_def *h = &hook_defs[i];
		struct hook_choice *c = &t->hooks[i];
		bool wanted = bpf_program__autoload(prog_of(t, h->ways[0].progs[0]));

		c->way = wanted ? choose_way(t, h, btf, c) : -1;
		c->wanted = wanted;
		for (int w = 0; w < HOOK_WAYS; w++)
			for (int p = 0; p < 2 && h->ways[w].progs[p]; p++)
				bpf_program__set_autoload(prog_of(t, h->ways[w].progs[p]),
							  w == c->way);
		if (c->way >= 0)
			describe_way(t, h, c->way, c);
		else if (wanted && !t->missing[h->group]) {
			snprintf(t->missing_why[h->group], HOOK_WHY_LEN, "%s", c->why);
			t->missing[h->group] = t->missing_why[h->group];
		}
	}
	configure_ways(t);
	for (int g = 0; g < TRACER_HOOK_GROUPS; g++)
		if (t->missing[g] && (g == HOOKS_CORE || g == HOOKS_BLOCK))
			return -1;
	/* The group's other programs would count half a story: off with it. */
	for (int i = 0; i < NR_HOOKS; i++)
		if (t->missing[hook_defs[i].group] && t->hooks[i].way >= 0) {
			for (int p = 0; p < 2 && hook_defs[i].ways[t->hooks[i].way].progs[p]; p++)
				bpf_program__set_autoload(
					prog_of(t, hook_defs[i].ways[t->hooks[i].way].progs[p]),
					false);
			t->hooks[i].way = -1;
			snprintf(t->hooks[i].why, sizeof(t->hooks[i].why), "off: %s",
				 t->missing[hook_defs[i].group]);
		}
	return 0;
}

void tracer_hook_info(const struct tracer *t, int i, struct tracer_hook_info *out)
{
	const struct hook_choice *c = &t->hooks[i];

	*out = (struct tracer_hook_info){
		.event = hook_defs[i].event, .group = hook_defs[i].group, .wanted = c->wanted,
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

const char *const tracer_build_names[TRACER_BUILDS] = {
	[BUILD_FULL] = "full", [BUILD_NOITER] = "no task VMA iterator",
	[BUILD_NOKFUNC] = "no kfuncs",
};

/* The build of the programs this kernel can load: the kfuncs it has (maps.bpf.h). */
enum tracer_build choose_build(const struct btf *btf, const char **why)
{
	if (!btf) {
		*why = "the build kernel's";
		return BUILD_FULL;
	}
	if (btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC) < 0) {
		*why = "kfunc bpf_rdonly_cast not in this kernel: fields of kernel pointers "
		       "read with bpf_probe_read_kernel";
		return BUILD_NOKFUNC;
	}
	if (btf__find_by_name_kind(btf, "bpf_iter_task_vma_new", BTF_KIND_FUNC) < 0) {
		*why = "kfunc bpf_iter_task_vma_new not in this kernel: --stacks reads "
		       "/proc/PID/maps, exited processes' frames unnamed";
		return BUILD_NOITER;
	}
	*why = "every kfunc the programs use is in this kernel";
	return BUILD_FULL;
}
