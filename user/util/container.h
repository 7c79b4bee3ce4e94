/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which container a process or a cgroup is (docs/containers.md): the runtime, ID and pod
 * read from the cgroup's path (container_path.h), and the container's name, image and pod
 * name from its runtime (container_rt.h), asked once per container on a thread of its own
 * and cached, so that a caller never waits for a runtime. Also the cgroup that
 * --container NAME|ID stands for (a kernel filter's id and level), and a process's mount and
 * pid namespaces. Knows no record of iotrace's.
 */
#ifndef IOTRACE_CONTAINER_H
#define IOTRACE_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cgroup.h"
#include "container_path.h"
#include "container_rt.h"

enum container_meta_state {
	META_NONE,       /* nothing to ask: the host, a unit, a pod's own cgroup */
	META_PENDING,    /* being asked (the answer comes at a later call) */
	META_FOUND,      /* meta holds the runtime's answer (or the machine's name) */
	META_UNANSWERED, /* no source knew it: meta.source says which was asked last */
};

struct container_info {
	struct container_path path;
	struct container_meta meta;
	enum container_meta_state state;
};

/*
 * The container of a cgroup path below the v2 root ("/libpod_parent/libpod-<id>"): what the
 * path says at once, and what its runtime said if it has answered (else it is asked in the
 * background: state META_PENDING). Thread-safe; never blocks on a runtime.
 */
void container_of_path(const char *cgroup_path, struct container_info *out);
/* The same for a process, from /proc/PID/cgroup's cgroup v2 line; -1 if it is gone. */
int container_of_pid(pid_t pid, struct container_info *out);
/*
 * Waits until every look-up asked so far has its answer, at most max_ms: for one-shot
 * listings and tests, never for a refresh.
 */
void container_settle(int max_ms);
/*
 * Asks about the container of every process running now and waits for the answers (at
 * most max_ms), so that a stream's first lines name the containers already there.
 */
void container_prime(int max_ms);
/*
 * The container in a few characters, for a column: its name; else its ID's first 12
 * digits, the machine's or unit's name, "pod:" and the pod UID's first 8; or "host".
 */
const char *container_label(const struct container_info *c, char *buf, size_t len);

/*
 * --container NAME|ID: the cgroup of the one running container whose name (from its
 * runtime, or an nspawn machine's) is NAME, or whose ID starts with ID (or a pod, by its
 * UID): its id and level are what the kernel filters on. Walks the cgroup tree and may ask
 * the runtimes: call it before the tracer starts. Returns 0, or -1 with a reason in why.
 */
int container_cgroup(const char *arg, struct cgroup_ref *out, char *why, size_t why_len);

/* A process's mount and pid namespaces (the inode numbers ls -l /proc/PID/ns shows). */
struct ns_ids {
	uint64_t mnt, pid;
};
int proc_namespaces(pid_t pid, struct ns_ids *out);

#endif
