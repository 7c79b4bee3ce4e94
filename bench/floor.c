// SPDX-License-Identifier: GPL-2.0
/*
 * floor [-l LEVEL] -- CMD...: runs CMD with bpf/floor.bpf.c attached, the least any
 * tp_btf sys_enter/sys_exit tracer can cost. Used by `make bench` only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "floor.skel.h"

int main(int argc, char **argv)
{
	struct floor_bpf *skel;
	int level = 0, arg = 1, status = 1;
	pid_t pid;

	if (argc > 2 && !strcmp(argv[1], "-l")) {
		level = atoi(argv[2]);
		arg = 3;
	}
	if (arg < argc && !strcmp(argv[arg], "--"))
		arg++;
	if (arg >= argc) {
		fprintf(stderr, "usage: floor [-l LEVEL] -- CMD [ARGS...]\n");
		return 2;
	}
	skel = floor_bpf__open();
	if (!skel)
		return 1;
	skel->rodata->level = level;
	if (floor_bpf__load(skel) || floor_bpf__attach(skel)) {
		fprintf(stderr, "floor: cannot load or attach\n");
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[arg], &argv[arg]);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
out:
	floor_bpf__destroy(skel);
	return status;
}
