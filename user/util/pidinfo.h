/* SPDX-License-Identifier: GPL-2.0 */
/* What /proc says of a pid given with -p: whether it is a process that can still run. */
#ifndef IOTRACE_PIDINFO_H
#define IOTRACE_PIDINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct pid_info {
	pid_t tgid;   /* its process (the pid itself unless it is a thread) */
	char state;   /* /proc/PID/stat's state: R, S, D, Z (zombie), X, T, ... */
	bool kthread; /* a kernel thread (PF_KTHREAD) */
};

/* /proc/PID/NAME read into buf (NUL-terminated): the bytes read, or -1. */
int pid_read_file(pid_t pid, const char *name, char *buf, size_t len);
/* The working directory of pid (0: ours), allocated; NULL if unknown. */
char *pid_cwd(pid_t pid);
/* 0 and *out filled, or -1 with errno (ESRCH: no such pid). */
int pid_info_read(pid_t pid, struct pid_info *out);
/*
 * Why pid cannot be traced as a process (no such pid, a thread of another process, a
 * zombie, and with no_kthreads a kernel thread, which makes no syscalls), in why; NULL
 * when it can.
 */
const char *pid_refusal(pid_t pid, bool no_kthreads, char *why, size_t len);

#endif
