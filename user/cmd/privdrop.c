// SPDX-License-Identifier: GPL-2.0
/* serve's privilege drop: user, capabilities, no_new_privs, seccomp (privdrop.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <seccomp.h>
#include "privdrop.h"

int privdrop_resolve(const char *user, struct privdrop_user *out, const char **why)
{
	size_t digits = strspn(user, "0123456789");
	struct passwd *pw;

	errno = 0;
	pw = getpwnam(user);
	/* A uid (0 included) with a passwd entry: at most 10 digits, so strtoul cannot wrap. */
	if (!pw && digits && !user[digits] && digits <= 10 && strtoul(user, NULL, 10) <= UINT32_MAX)
		pw = getpwuid((uid_t)strtoul(user, NULL, 10));
	if (!pw) {
		/* getpwnam(3): not found may leave errno 0 or set one of these */
		bool missing = !errno || errno == ENOENT || errno == ESRCH || errno == EBADF ||
			       errno == EPERM;

		*why = missing ? "no such user" : strerror(errno);
		return -1;
	}
	out->uid = pw->pw_uid;
	out->gid = pw->pw_gid;
	return 0;
}

/*
 * The syscalls serve makes once it serves, found with `strace -f` on serve under scrapes
 * (small and large), cgroup churn, bad and idle HTTP connections and SIGTERM
 * (docs/prometheus.md, "Privileges"). Anything else kills the process. openat, mmap,
 * mprotect, prctl, ioctl and bpf are allowed with narrowed arguments only (add_narrowed()).
 */
static const int allowed[] = {
	/* HTTP thread (libmicrohttpd with MHD_USE_EPOLL): its event loop and connections */
	SCMP_SYS(epoll_wait),
	SCMP_SYS(epoll_ctl),
	SCMP_SYS(accept4),
	SCMP_SYS(recvfrom),
	SCMP_SYS(sendto),
	SCMP_SYS(sendmsg),
	SCMP_SYS(setsockopt),
	SCMP_SYS(shutdown),
	SCMP_SYS(fcntl),
	/* main thread: SIGINT/SIGTERM through the signalfd, label events from the ring buffer */
	SCMP_SYS(poll),
	/* files: /proc/self/mounts, /sys/dev/block/ uevents, /etc/localtime (the HTTP Date
	 * header), the cgroup tree (nftw) */
	SCMP_SYS(read),
	SCMP_SYS(lseek),
	SCMP_SYS(newfstatat),
	SCMP_SYS(getdents64),
	SCMP_SYS(close),
	/* stderr: the lines serve prints from now on */
	SCMP_SYS(write),
	/* malloc: the heap, large buffers (a scrape of many labels), the HTTP thread's arena */
	SCMP_SYS(brk),
	SCMP_SYS(munmap),
	SCMP_SYS(mremap),
	SCMP_SYS(madvise),
	/* the cgroup-cache mutex; stopping and joining the HTTP thread at exit */
	SCMP_SYS(futex),
	/* a scrape reading a label's counters while a CPU moves a row (tracer_read.c) */
	SCMP_SYS(sched_yield),
	SCMP_SYS(exit),
	SCMP_SYS(exit_group),
	/* the HTTP thread may still be starting when the filter lands: glibc's thread start
	 * (rseq, set_robust_list, its signal mask) and libmicrohttpd's SIGPIPE block */
	SCMP_SYS(rseq),
	SCMP_SYS(set_robust_list),
	SCMP_SYS(rt_sigprocmask),
	/* signals: a handler's return, a call restarted after a stop */
	SCMP_SYS(rt_sigreturn),
	SCMP_SYS(restart_syscall),
	/* abort(), so that a failed assertion still ends in SIGABRT, not SIGSYS */
	SCMP_SYS(getpid),
	SCMP_SYS(gettid),
	SCMP_SYS(tgkill),
	/* time, when the vDSO cannot answer (an unstable clocksource) */
	SCMP_SYS(clock_gettime),
};

/* bpf() commands that read maps (and the sweep's iterator): nothing that loads or attaches. */
static const int bpf_cmds[] = {
	BPF_MAP_LOOKUP_ELEM,
	BPF_MAP_GET_NEXT_KEY,
	BPF_MAP_LOOKUP_BATCH, /* the readers' map walker (kernel/tracer.c) */
	BPF_OBJ_GET_INFO_BY_FD, /* the programs' recursion_misses (tracer_read_drops) */
	/*
	 * The block sweep (tracer_sweep_blocks): an iterator of serve's own link, read like a
	 * file; it runs the one program the link holds, loading and attaching nothing.
	 */
	BPF_ITER_CREATE,
};

static int add_narrowed(scmp_filter_ctx ctx)
{
	int err = 0;

	/* Files are only read: write-mode opens and creation are refused. */
	err = err ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT, O_RDONLY));
	/* No executable memory: malloc never asks for it, injected code would. */
	err = err ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	err = err ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	/* libmicrohttpd names its thread ("MHD-single") as it starts, maybe after the filter. */
	err = err ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				      SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
	/*
	 * At exit, libbpf disables a hook attached through a perf event (a kprobe: 6.1's
	 * O_DIRECT way) before closing it: that ioctl only.
	 */
	err = err ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu,
					      PERF_EVENT_IOC_DISABLE));
	for (size_t i = 0; !err && i < sizeof(bpf_cmds) / sizeof(bpf_cmds[0]); i++)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(bpf), 1,
				       SCMP_A0(SCMP_CMP_EQ, bpf_cmds[i]));
	return err;
}

/*
 * KILL_PROCESS, not KILL_THREAD: a forbidden call in the HTTP thread must not leave a
 * process that is alive but never answers. TSYNC puts the filter (and no_new_privs) on
 * every thread, the HTTP thread included, or fails.
 */
static int install_filter(char *why, size_t len)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int err;

	if (!ctx) {
		snprintf(why, len, "seccomp_init failed");
		return -1;
	}
	err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	for (size_t i = 0; !err && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	err = err ?: add_narrowed(ctx);
	err = err ?: seccomp_load(ctx);
	seccomp_release(ctx);
	if (err)
		snprintf(why, len, "installing the seccomp filter: %s", strerror(-err));
	return err ? -1 : 0;
}

/*
 * Kernels before "bpf: refine kernel.unprivileged_bpf_disabled behaviour" (2022) refuse
 * every bpf() command without CAP_BPF while kernel.unprivileged_bpf_disabled is set (5.10 of
 * Debian 11, 5.15 of Ubuntu 22.04), newer ones only map creation and program loads. Rather
 * than guess from a version, read a map after the switch: without a capability first, and
 * where that is refused with CAP_BPF alone, which serve then keeps (the filter lets bpf()
 * do nothing but read, add_narrowed()).
 */
static int make_probe_map(char *why, size_t len)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "iotrace_probe", 4, 4, 1, NULL);

	if (fd < 0)
		snprintf(why, len, "creating a probe map: %s", strerror(errno));
	return fd;
}

static int map_readable(int fd)
{
	__u32 key = 0, value;

	return bpf_map_lookup_elem(fd, &key, &value) ? -errno : 0;
}

/* The calling thread's permitted and effective capability sets (masks); inheritable none. */
static int set_caps(__u64 permitted, __u64 effective)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	data[0].permitted = (__u32)permitted;
	data[1].permitted = (__u32)(permitted >> 32);
	data[0].effective = (__u32)effective;
	data[1].effective = (__u32)(effective >> 32);
	return syscall(SYS_capset, &hdr, data);
}

/*
 * glibc runs setgroups/setresgid/setresuid on every thread, and the kernel empties the
 * permitted, effective and ambient capability sets of each thread whose uids all leave 0,
 * except where PR_SET_KEEPCAPS keeps the permitted set: this thread's only, so that CAP_BPF
 * can stay there while the map is read without it. capset() then leaves nothing, or CAP_BPF
 * alone where the kernel wants it (and empties the inheritable set). Threads made after
 * this one inherit what it kept.
 */
static int switch_user(const struct privdrop_user *u, int probe, const char **kept, char *why,
		       size_t len)
{
	const __u64 bpf = 1ULL << CAP_BPF;
	int err;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) ||
	    setresgid(u->gid, u->gid, u->gid) || setresuid(u->uid, u->uid, u->uid)) {
		snprintf(why, len, "switching to uid %u gid %u: %s", u->uid, u->gid,
			 strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) || set_caps(bpf, 0)) {
		snprintf(why, len, "narrowing capabilities: %s", strerror(errno));
		return -1;
	}
	err = map_readable(probe);
	if (err == -EPERM && !set_caps(bpf, bpf) && !(err = map_readable(probe))) {
		*kept = "CAP_BPF";
		return 0;
	}
	if (err) {
		snprintf(why, len, "reading a BPF map as uid %u: %s", u->uid, strerror(-err));
		return -1;
	}
	if (set_caps(0, 0)) {
		snprintf(why, len, "clearing capabilities: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void run_test_hook(const char *name)
{
	int nr = name ? seccomp_syscall_resolve_name(name) : __NR_SCMP_ERROR;

	if (nr != __NR_SCMP_ERROR)
		syscall(nr, 0, 0, 0, 0, 0, 0);
}

int privdrop_switch(const struct privdrop_user *u, const char **kept, char *why, size_t len)
{
	int probe, err;

	*kept = NULL;
	if (!u->uid)
		return 0;
	probe = make_probe_map(why, len);
	if (probe < 0)
		return -1;
	err = switch_user(u, probe, kept, why, len);
	close(probe);
	return err;
}

int privdrop_confine(char *why, size_t len)
{
	const char *test_call = getenv(PRIVDROP_TEST_ENV);

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		snprintf(why, len, "setting no_new_privs: %s", strerror(errno));
		return -1;
	}
	if (install_filter(why, len))
		return -1;
	run_test_hook(test_call);
	return 0;
}
