/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serve's privilege drop. Once its programs are attached and its socket is bound, serve
 * only reads maps through descriptors it already holds, answers HTTP and reads /proc, /sys
 * and the cgroup tree. privdrop_switch(), before the HTTP thread starts, switches to an
 * unprivileged user (its uid and gid, no supplementary groups) with no capability: reading
 * a map through an open descriptor needs none on kernels since 2022 (docs/prometheus.md,
 * "Privileges", says how that was checked); where the kernel still wants CAP_BPF for it
 * (kernel.unprivileged_bpf_disabled set on 5.x), CAP_BPF alone. privdrop_confine(), once
 * the HTTP thread runs, for every thread of the process:
 *   - sets no_new_privs;
 *   - installs a seccomp allow-list of the syscalls serve makes from then on (bpf() only
 *     to read maps); any other syscall kills the whole process with SIGSYS.
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
 * Switches the process (its one thread: call it before any other starts) to u, uid 0
 * keeping root and its capabilities. *kept names the capability it kept, or is NULL.
 * Returns 0, or -1 with why (len bytes) saying what failed.
 */
int privdrop_switch(const struct privdrop_user *u, const char **kept, char *why, size_t len);

/* no_new_privs and the seccomp filter on every thread: 0, or -1 with why. */
int privdrop_confine(char *why, size_t len);

#endif
