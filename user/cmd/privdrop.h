/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serve's privilege drop. Once its programs are attached and its socket is bound, serve
 * only reads maps through descriptors it already holds, answers HTTP and reads /proc, /sys
 * and the cgroup tree. privdrop_apply() then, for every thread of the process:
 *   - switches to an unprivileged user (its uid and gid, no supplementary groups), which
 *     leaves no capability: reading a map through an open descriptor needs none
 *     (docs/prometheus.md, "Privileges", says how that was checked);
 *   - sets no_new_privs;
 *   - installs a seccomp allow-list of the syscalls serve makes from then on; any other
 *     syscall kills the whole process with SIGSYS.
 */
#ifndef IOTRACE_PRIVDROP_H
#define IOTRACE_PRIVDROP_H

#include <stddef.h>
#include <sys/types.h>

#define PRIVDROP_DEFAULT_USER "nobody"
/* Test hook: the syscall named here is made once the filter is in place (tests/). */
#define PRIVDROP_TEST_ENV "IOTRACE_TEST_FORBIDDEN_SYSCALL"

struct privdrop_user {
	uid_t uid;
	gid_t gid;
};

/* USER (a name, or a uid with a passwd entry) into *out; 0, or -1 with *why set. */
int privdrop_resolve(const char *user, struct privdrop_user *out, const char **why);

/*
 * Drops to u for the whole process (uid 0 keeps root and its capabilities; no_new_privs
 * and the filter still apply). Returns 0, or -1 with why (len bytes) saying what failed.
 */
int privdrop_apply(const struct privdrop_user *u, char *why, size_t len);

#endif
