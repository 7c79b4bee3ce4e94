// SPDX-License-Identifier: GPL-2.0
/*
 * Toolchain probe: loads bpf/probe.bpf.c through its skeleton, attaches it to
 * tp_btf/sys_enter, makes N getppid calls and prints how many the kernel counted.
 * tests/test_toolchain.py runs it and compares the count with N.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "probe.skel.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	struct probe_bpf *skel;
	int err;

	skel = probe_bpf__open();
	if (!skel) {
		perror("probe_test: open");
		return 1;
	}
	skel->rodata->targ_tgid = getpid();
	skel->rodata->targ_nr = SYS_getppid;
	err = probe_bpf__load(skel);
	if (err) {
		fprintf(stderr, "probe_test: load: %d\n", err);
		goto out;
	}
	err = probe_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "probe_test: attach: %d\n", err);
		goto out;
	}
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	printf("attach_type=%s hits=%llu\n",
	       bpf_program__section_name(skel->progs.handle_sys_enter),
	       (unsigned long long)skel->bss->hits);
out:
	probe_bpf__destroy(skel);
	return err ? 1 : 0;
}
