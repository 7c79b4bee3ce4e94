// SPDX-License-Identifier: GPL-2.0
/*
 * How this kernel is traced, as a plain record (model/kernel_report.h): the kernel itself,
 * its BTF, the build of the programs it took, and each event's hook, for `iotrace info` and
 * the JSON report's "kernel".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "tracer_impl.h"

#define BTF_PATH "/sys/kernel/btf/vmlinux"

/* The kernel memory charged for one map: its fdinfo's memlock line (0 if unreadable). */
static uint64_t map_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

uint64_t tracer_map_bytes(const struct tracer *t, uint32_t *nmaps)
{
	struct bpf_map *map;
	uint64_t sum = 0;
	uint32_t n = 0;

	bpf_object__for_each_map(map, t->skel->obj) {
		int fd = bpf_map__fd(map);

		if (fd < 0)
			continue;
		sum += map_memlock(fd);
		n++;
	}
	if (nmaps)
		*nmaps = n;
	return sum;
}

static void describe_kernel(const struct tracer *t, struct kernel_report *out)
{
	struct utsname u;
	struct stat st;

	if (!uname(&u)) {
		snprintf(out->release, sizeof(out->release), "%s", u.release);
		snprintf(out->version, sizeof(out->version), "%s", u.version);
		snprintf(out->machine, sizeof(out->machine), "%s", u.machine);
		out->preempt_rt = strstr(u.version, "PREEMPT_RT") != NULL;
	}
	out->cpus = t->ncpus;
	snprintf(out->btf, sizeof(out->btf), "%s", BTF_PATH);
	out->btf_bytes = stat(BTF_PATH, &st) ? 0 : (uint64_t)st.st_size;
	snprintf(out->core, sizeof(out->core), "%s", t->core);
	out->probed = t->probed;
	snprintf(out->build, sizeof(out->build), "%s", tracer_build_names[t->build]);
	snprintf(out->build_why, sizeof(out->build_why), "%s", t->build_why ? t->build_why : "");
	out->vma_iter = t->build == BUILD_FULL;
	out->stacks_na = tracer_stacks_na(t);
	out->load_ms = t->load_ms;
	out->attach_ms = t->attach_ms;
	out->map_bytes = tracer_map_bytes(t, &out->nmaps);
}

/* JSON keys of the groups, by enum tracer_hooks. */
static const char *const group_keys[TRACER_HOOK_GROUPS] = {
	[HOOKS_CORE] = "syscalls", [HOOKS_PAGE_CACHE] = "page_cache",
	[HOOKS_DIRECT_IO] = "direct_io", [HOOKS_BLOCK] = "block", [HOOKS_URING] = "io_uring",
	[HOOKS_RENAMES] = "renames",
};

_Static_assert(TRACER_HOOK_GROUPS == KERNEL_GROUPS, "kernel_report's groups");
_Static_assert(NR_HOOKS <= KERNEL_HOOKS_MAX, "kernel_report's hooks");

void tracer_describe(const struct tracer *t, struct kernel_report *out)
{
	memset(out, 0, sizeof(*out));
	describe_kernel(t, out);
	for (int g = 0; g < TRACER_HOOK_GROUPS; g++) {
		struct kernel_group *kg = &out->groups[g];

		snprintf(kg->name, sizeof(kg->name), "%s", tracer_group_names[g]);
		snprintf(kg->key, sizeof(kg->key), "%s", group_keys[g]);
		kg->available = !t->missing[g];
		snprintf(kg->why, sizeof(kg->why), "%s", t->missing[g] ? t->missing[g] : "");
	}
	for (int i = 0; i < NR_HOOKS; i++) {
		struct kernel_hook *h = &out->hooks[out->nhooks++];
		struct tracer_hook_info hi;

		tracer_hook_info(t, i, &hi);
		snprintf(h->event, sizeof(h->event), "%s", hi.event);
		h->group = hi.group;
		h->wanted = hi.wanted;
		h->way = hi.way;
		snprintf(h->kind, sizeof(h->kind), "%s", hi.kind ? hi.kind : "");
		snprintf(h->target, sizeof(h->target), "%s", hi.target ? hi.target : "");
		snprintf(h->why, sizeof(h->why), "%s", hi.why ? hi.why : "");
	}
}
