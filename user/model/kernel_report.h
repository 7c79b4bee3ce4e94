/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How the running kernel was traced: what it is, which build of the programs it took and
 * why, and for each event the hook that gives it (or why none does). Filled by the kernel
 * side's describer (kernel/tracer_info.c), shown by `iotrace info` and as the JSON report's
 * "kernel" (report/report_kernel.c). A plain record: no libbpf here.
 */
#ifndef IOTRACE_KERNEL_REPORT_H
#define IOTRACE_KERNEL_REPORT_H

#include <stdbool.h>
#include <stdint.h>

/* The groups of hooks, as kernel/tracer.h numbers them (enum tracer_hooks). */
#define KERNEL_GROUPS 6
#define KERNEL_HOOKS_MAX 36

struct kernel_hook {
	char event[40];  /* the tracepoint's name (the kernel iotrace is written against) */
	int group;       /* index into kernel_report.groups */
	bool wanted;     /* the mode uses it */
	int way;         /* which of its ways: 0 the tracepoint it is named after, -1 none */
	char kind[16];   /* tp_btf, fentry, fexit, kprobe, kretprobe; "" when none attached */
	char target[64]; /* the tracepoint or function */
	char why[320];   /* why better ways were not taken; or why none was */
};

struct kernel_group {
	char name[32];   /* "page cache" */
	char key[16];    /* its JSON key: "page_cache" */
	bool available;
	char why[320];   /* when not available */
};

struct kernel_report {
	char release[65], version[200], machine[65];
	uint32_t cpus;          /* possible CPUs */
	bool preempt_rt;        /* the version string says PREEMPT_RT */
	char btf[96];           /* the kernel BTF's path */
	uint64_t btf_bytes;
	char core[160];         /* what CO-RE relocated against, and why */
	bool probed;            /* the kernel's BTF was asked what it has */
	char build[32];         /* the build of the programs loaded */
	char build_why[200];
	bool vma_iter;          /* exited processes' frames can be named (--stacks) */
	const char *stacks_na;  /* why --stacks cannot work on this kernel, or NULL */
	double load_ms, attach_ms;
	uint64_t map_bytes;     /* kernel memory of the run's BPF maps (fdinfo memlock) */
	uint32_t nmaps;
	struct kernel_group groups[KERNEL_GROUPS];
	struct kernel_hook hooks[KERNEL_HOOKS_MAX];
	uint32_t nhooks;
};

#endif /* IOTRACE_KERNEL_REPORT_H */
