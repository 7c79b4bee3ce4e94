// SPDX-License-Identifier: GPL-2.0
/* -p's pid against /proc (pidinfo.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pidinfo.h"

/* include/linux/sched.h */
#define PF_KTHREAD 0x00200000

int pid_read_file(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

int pid_info_read(pid_t pid, struct pid_info *out)
{
	char stat[1024], status[4096], *p;
	unsigned long flags = 0;

	if (pid <= 0 || pid_read_file(pid, "stat", stat, sizeof(stat)) < 0 ||
	    pid_read_file(pid, "status", status, sizeof(status)) < 0) {
		errno = ESRCH;
		return -1;
	}
	/* The name in parentheses may hold anything: the fields follow the last ')'. */
	p = strrchr(stat, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &out->state, &flags) != 2) {
		errno = EINVAL;
		return -1;
	}
	out->kthread = flags & PF_KTHREAD;
	p = strstr(status, "\nTgid:");
	out->tgid = p ? (pid_t)strtol(p + 6, NULL, 10) : pid;
	return 0;
}

const char *pid_refusal(pid_t pid, bool no_kthreads, char *why, size_t len)
{
	struct pid_info info;

	if (pid_info_read(pid, &info))
		snprintf(why, len, "no process %d", (int)pid);
	else if (info.tgid != pid)
		snprintf(why, len, "%d is a thread of process %d: give -p %d", (int)pid,
			 (int)info.tgid, (int)info.tgid);
	else if (info.state == 'Z' || info.state == 'X')
		snprintf(why, len, "process %d has exited (a zombie): it makes no more calls",
			 (int)pid);
	else if (no_kthreads && info.kthread)
		snprintf(why, len, "process %d is a kernel thread: it makes no syscalls "
			 "(its I/O: iotrace snoop -p %d)", (int)pid, (int)pid);
	else
		return NULL;
	return why;
}

char *pid_cwd(pid_t pid)
{
	char path[64], dir[PATH_MAX];
	ssize_t n;

	if (!pid)
		return getcwd(NULL, 0);
	snprintf(path, sizeof(path), "/proc/%d/cwd", pid);
	n = readlink(path, dir, sizeof(dir) - 1);
	if (n <= 0)
		return NULL;
	dir[n] = '\0';
	return strdup(dir);
}
