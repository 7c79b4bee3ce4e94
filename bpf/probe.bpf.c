// SPDX-License-Identifier: GPL-2.0
/*
 * Toolchain probe used by tests/c/probe_test.c: counts one syscall number made by one
 * process through tp_btf/sys_enter, proving that clang, bpftool's skeletons and libbpf
 * load and attach a BTF tracepoint program on the running kernel.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 targ_tgid = 0;
const volatile long targ_nr = 0;
__u64 hits = 0;

SEC("tp_btf/sys_enter")
int BPF_PROG(handle_sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (task->tgid == targ_tgid && id == targ_nr)
		__sync_fetch_and_add(&hits, 1);
	return 0;
}
