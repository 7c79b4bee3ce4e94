// SPDX-License-Identifier: GPL-2.0
/*
 * The overhead floor for benchmarks: tp_btf sys_enter/sys_exit programs that do nothing
 * but, optionally, the one helper call any filter needs. Not part of iotrace.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* 0: return at once; 1: also read current's tgid (bpf_get_current_task_btf). */
const volatile int level = 0;
__u64 sink = 0;

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_sys_enter, struct pt_regs *regs, long id)
{
	if (level)
		sink = bpf_get_current_task_btf()->tgid;
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_sys_exit, struct pt_regs *regs, long ret)
{
	if (level)
		sink = bpf_get_current_task_btf()->tgid;
	return 0;
}
