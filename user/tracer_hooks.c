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

/* Switches off the programs whose tracepoint this kernel lacks, saying why. */
void probe_hooks(struct tracer *t, bool full)
{
	static char pc_reason[160], dio_reason[160];
	struct iotrace_bpf *s = t->skel;
	/* Parsing vmlinux BTF costs ~12 ms: only after a failed load, or for the env list. */
	struct btf *vmlinux = full ? btf__load_vmlinux_btf() : NULL;
	struct bpf_program *pc_progs[] = {
		s->progs.handle_page_cache_sync_ra, s->progs.handle_page_cache_async_ra,
		s->progs.handle_page_cache_ra_order, s->progs.handle_page_cache_ra_unbounded,
		s->progs.handle_mm_filemap_add_to_page_cache, s->progs.handle_mm_filemap_get_pages,
		s->progs.handle_mm_filemap_fault, s->progs.handle_mm_filemap_map_pages,
	};
	static const char *const dio_tps[] = { "iomap_dio_rw_begin", "iomap_dio_complete",
					       "iomap_dio_rw_queued" };
	struct bpf_program *dio_progs[] = { s->progs.handle_iomap_dio_rw_begin,
					    s->progs.handle_iomap_dio_complete,
					    s->progs.handle_iomap_dio_rw_queued };
	const char *why;

	for (size_t i = 0; i < sizeof(page_cache_tps) / sizeof(page_cache_tps[0]); i++) {
		if (kernel_has_tracepoint(vmlinux, page_cache_tps[i], &why))
			continue;
		snprintf(pc_reason, sizeof(pc_reason), "tracepoint %s %s", page_cache_tps[i], why);
		t->missing[HOOKS_PAGE_CACHE] = pc_reason;
	}
	if (t->missing[HOOKS_PAGE_CACHE])
		for (size_t i = 0; i < sizeof(pc_progs) / sizeof(pc_progs[0]); i++)
			bpf_program__set_autoload(pc_progs[i], false);
	for (size_t i = 0; i < sizeof(dio_tps) / sizeof(dio_tps[0]); i++) {
		if (kernel_has_tracepoint(vmlinux, dio_tps[i], &why))
			continue;
		snprintf(dio_reason, sizeof(dio_reason), "tracepoint %s %s", dio_tps[i], why);
		t->missing[HOOKS_DIRECT_IO] = dio_reason;
	}
	if (t->missing[HOOKS_DIRECT_IO])
		for (size_t i = 0; i < sizeof(dio_progs) / sizeof(dio_progs[0]); i++)
			bpf_program__set_autoload(dio_progs[i], false);
	btf__free(vmlinux);
}

