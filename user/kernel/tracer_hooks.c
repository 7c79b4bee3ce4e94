// SPDX-License-Identifier: GPL-2.0
/*
 * Which hooks this kernel offers: a program whose tracepoint is missing is switched off
 * before loading (bpf_program__set_autoload), and its group reports "n/a" with the reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "tracer_impl.h"

/* Tracepoints the page-cache programs need; a kernel without one gets "n/a" for them. */
static const char *const page_cache_tps[] = {
	"page_cache_sync_ra", "page_cache_async_ra", "page_cache_ra_order",
	"page_cache_ra_unbounded", "mm_filemap_add_to_page_cache", "mm_filemap_get_pages",
	"mm_filemap_fault", "mm_filemap_map_pages",
};

/* IOTRACE_DISABLE_TRACEPOINTS=a,b pretends those are missing (tests, or to bisect a bug). */
static bool disabled_by_env(const char *tp)
{
	const char *list = getenv("IOTRACE_DISABLE_TRACEPOINTS");
	size_t len = strlen(tp);

	for (const char *p = list; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (!strncmp(p, tp, len) && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

static bool kernel_has_tracepoint(const struct btf *vmlinux, const char *tp, const char **why)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	*why = "not in this kernel";
	if (disabled_by_env(tp))
		*why = "disabled by IOTRACE_DISABLE_TRACEPOINTS";
	else if (!vmlinux || btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) >= 0)
		return true; /* without BTF at hand, assume present: a failed load will tell */
	return false;
}

/* A group of programs that only make sense together, and their tracepoints. */
struct hook_group {
	enum tracer_hooks group;
	const char *const *tps;
	size_t ntps;
	struct bpf_program **progs;
	size_t nprogs;
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Switches a group off when one of its tracepoints is missing, and says which and why. */
static void probe_group(struct tracer *t, const struct btf *vmlinux, const struct hook_group *g,
			char *reason, size_t len)
{
	const char *why;

	for (size_t i = 0; i < g->ntps; i++) {
		if (kernel_has_tracepoint(vmlinux, g->tps[i], &why))
			continue;
		snprintf(reason, len, "tracepoint %s %s", g->tps[i], why);
		t->missing[g->group] = reason;
	}
	if (t->missing[g->group])
		for (size_t i = 0; i < g->nprogs; i++)
			bpf_program__set_autoload(g->progs[i], false);
}

static const char *const dio_tps[] = { "iomap_dio_rw_begin", "iomap_dio_complete",
				       "iomap_dio_rw_queued" };
static const char *const uring_tps[] = {
	"io_uring_submit_req", "io_uring_req_failed", "io_uring_queue_async_work",
	"io_uring_poll_arm", "io_uring_complete", "io_uring_cqe_overflow",
};

/* Switches off the programs whose tracepoint this kernel lacks, saying why. */
void probe_hooks(struct tracer *t, bool full)
{
	static char reasons[TRACER_HOOK_GROUPS][160];
	struct iotrace_bpf *s = t->skel;
	/* Parsing vmlinux BTF costs ~12 ms: only after a failed load, or for the env list. */
	struct btf *vmlinux = full ? btf__load_vmlinux_btf() : NULL;
	struct bpf_program *pc_progs[] = {
		s->progs.handle_page_cache_sync_ra, s->progs.handle_page_cache_async_ra,
		s->progs.handle_page_cache_ra_order, s->progs.handle_page_cache_ra_unbounded,
		s->progs.handle_mm_filemap_add_to_page_cache, s->progs.handle_mm_filemap_get_pages,
		s->progs.handle_mm_filemap_fault, s->progs.handle_mm_filemap_map_pages,
	};
	struct bpf_program *dio_progs[] = { s->progs.handle_iomap_dio_rw_begin,
					    s->progs.handle_iomap_dio_complete,
					    s->progs.handle_iomap_dio_rw_queued };
	struct bpf_program *uring_progs[] = {
		s->progs.handle_io_uring_submit_req, s->progs.handle_io_uring_req_failed,
		s->progs.handle_io_uring_queue_async_work, s->progs.handle_io_uring_poll_arm,
		s->progs.handle_io_uring_complete, s->progs.handle_io_uring_cqe_overflow,
	};
	const struct hook_group groups[] = {
		{ HOOKS_PAGE_CACHE, page_cache_tps, COUNT(page_cache_tps), pc_progs,
		  COUNT(pc_progs) },
		{ HOOKS_DIRECT_IO, dio_tps, COUNT(dio_tps), dio_progs, COUNT(dio_progs) },
		{ HOOKS_URING, uring_tps, COUNT(uring_tps), uring_progs, COUNT(uring_progs) },
	};

	for (size_t i = 0; i < COUNT(groups); i++)
		probe_group(t, vmlinux, &groups[i], reasons[groups[i].group],
			    sizeof(reasons[0]));
	btf__free(vmlinux);
}
