// SPDX-License-Identifier: GPL-2.0
/*
 * cmdtime OUT -- CMD [ARGS...]: becomes CMD (exec, same pid, so a tracer that follows only
 * the pid it started still sees it) and writes CMD's wall time, from just before the exec
 * to its exit, in nanoseconds to OUT. A tracer's start-up and teardown fall outside it:
 * this is the time the traced program itself takes. Used by `make bench` only.
 *
 * A forked watcher waits on a pidfd of this process, which becomes readable when CMD exits,
 * and records the end. It writes with pwrite, so read/write counts of the tracers are
 * unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct pollfd pfd = { .events = POLLIN };
	char buf[32];
	long long t0;
	int out;

	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: cmdtime OUT -- CMD [ARGS...]\n");
		return 2;
	}
	out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	/* Opened here, so the watcher's pidfd refers to this process, which becomes CMD. */
	pfd.fd = syscall(SYS_pidfd_open, getpid(), 0);
	if (out < 0 || pfd.fd < 0) {
		fprintf(stderr, "cmdtime: %s: %s\n", out < 0 ? argv[1] : "pidfd_open", strerror(errno));
		return 1;
	}
	t0 = now_ns();
	switch (fork()) {
	case -1:
		perror("cmdtime: fork");
		return 1;
	case 0:
		while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			;
		int n = snprintf(buf, sizeof(buf), "%lld\n", now_ns() - t0);

		_exit(pwrite(out, buf, n, 0) == n ? 0 : 1);
	}
	execvp(argv[3], argv + 3);
	fprintf(stderr, "cmdtime: %s: %s\n", argv[3], strerror(errno));
	return 127;
}
