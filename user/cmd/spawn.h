/* SPDX-License-Identifier: GPL-2.0 */
/* Starting the traced command so that nothing before its execve is traced. */
#ifndef IOTRACE_SPAWN_H
#define IOTRACE_SPAWN_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

struct child {
	pid_t pid;
	const char *user; /* run as this user (its name, allocated), or NULL */
	uid_t uid;
	gid_t gid;
	int go_fd;    /* write end: one byte releases the child into execve */
	int error_fd; /* read end: the child's errno if execve failed, EOF if it succeeded */
	char *path;   /* resolved executable */
};

/*
 * Resolves argv[0] like a shell (PATH search when it has no '/'). Returns 0, or the
 * shell's status for a command that cannot run (127 not found, 126 not executable)
 * after printing one line.
 */
int spawn_resolve(const char *cmd, char **path);
/* Looks up -u USER; prints one line and returns -1 if there is no such user. */
int spawn_set_user(struct child *c, const char *user);
/* Forks a child that waits for spawn_release(); sigmask is restored in the child. */
int spawn_prepare(struct child *c, char *const argv[], const sigset_t *child_mask);
/* Lets the child execve; returns 0, or its errno when execve failed. */
int spawn_release(struct child *c);
void spawn_cleanup(struct child *c);
/* Why execve of path failed with err, for the error line (buf may hold it). */
const char *spawn_error(const char *path, int err, char *buf, size_t len);

#endif
