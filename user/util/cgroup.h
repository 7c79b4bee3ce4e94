/* SPDX-License-Identifier: GPL-2.0 */
/* cgroup v2 paths and the ids BPF sees (a cgroup directory's inode number). */
#ifndef IOTRACE_CGROUP_H
#define IOTRACE_CGROUP_H

#include <stdint.h>
#include <sys/types.h>

/* Mount point of the cgroup v2 hierarchy (the one BPF's cgroup ids come from), or NULL. */
const char *cgroup_root(void);

struct cgroup_ref {
	uint64_t id;
	uint32_t level; /* 0 for the root, 1 for its children, ... */
	char path[512]; /* below cgroup_root(): "/" or "/system.slice/ssh.service" */
};

/*
 * A cgroup named by its directory ("/sys/fs/cgroup/a/b") or by its path below the root
 * ("/a/b" or "a/b"). Returns 0, or -1 with a reason
 * in why (for a one-line error).
 */
int cgroup_resolve(const char *arg, struct cgroup_ref *out, char *why, size_t why_len);
/* Path of a cgroup id below the root ("/a/b") as of the last cgroup_rescan() (a removed
 * cgroup keeps its last path); "id:N" for one never seen. Not thread-safe. */
const char *cgroup_path_of(uint64_t id);
/* A group's path: a -c filter's own (of the n in refs) when id is one, else cgroup_path_of. */
const char *cgroup_group_path(const struct cgroup_ref *refs, uint32_t n, uint64_t id);
/* Walks the cgroup tree afresh: a path removed and made again is a new id. */
void cgroup_rescan(void);
/* A process's cgroup v2 path ("/a/b", from /proc/PID/cgroup's "0::" line); -1 if gone. */
int cgroup_path_of_pid(pid_t pid, char *buf, size_t len);
/* ... and that cgroup's id; 0 if it is gone or not found. */
uint64_t cgroup_id_of_pid(pid_t pid);
/* Makes sure id's path is known (rescanning if it is new), while the cgroup exists. */
void cgroup_note(uint64_t id);

#endif
