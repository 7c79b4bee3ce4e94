// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer's life: configure, load (with CO-RE), map, attach, detach, close. It sets up the
 * parts (tracer_hooks.c switches off what this kernel lacks, tracer_trace.c and
 * tracer_stacks.c size and map theirs), which, like it, use tracer.c's helpers.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "kbtf.h"
#include "model/syscall_table.h"
#include "tracer_impl.h"
#include "iotrace_noiter.skel.h"
#include "iotrace_nokfunc.skel.h"
#include "iotrace_compat.skel.h"

#define BTF_PATH "/sys/kernel/btf/vmlinux"
#define NOTES_PATH "/sys/kernel/notes"

static bool verbose_libbpf;
static char last_libbpf_warning[512]; /* the first warning of a failure */
/* A kernel struct's field or enum the programs read that this kernel lays out otherwise. */
static char core_miss[160];

/* Said with every failure that comes from the kernel: what iotrace runs on (kernels.md). */
#define SUPPORTED_KERNELS                                                                      \
	"iotrace runs on kernels with BTF and BPF trampolines or tracepoints (tested: Debian's "  \
	"6.1, 6.12 and 7.x, and 6.18; x86_64 and arm64)"

/*
 * The verifier's log of a program whose CO-RE relocation failed names the field
 * ("failed to resolve CO-RE relocation <byte_off> [604] struct dentry.d_u.d_alias"):
 * that, rather than the log, is what the one line of the failure says.
 */
static void note_core_miss(const char *fmt, va_list args)
{
	static const char marker[] = "failed to resolve CO-RE relocation ";
	char *msg = NULL, *at;

	if (core_miss[0] || vasprintf(&msg, fmt, args) < 0)
		return;
	at = strstr(msg, marker);
	if (at) {
		at += sizeof(marker) - 1;
		at += strcspn(at, "]") + (strchr(at, ']') ? 2 : 0); /* past "<kind> [id] " */
		char *end = strstr(at, " (");
		int n = end && end < at + strcspn(at, "\n") ? end - at : (int)strcspn(at, "\n");

		snprintf(core_miss, sizeof(core_miss), "%.*s", n, at);
		/* "struct dentry___flavour.d_alias" (0:0 @ offset 0): the kernel's own name. */
		at = strstr(core_miss, "___");
		if (at)
			memmove(at, at + strcspn(at, "."), strlen(at + strcspn(at, ".")) + 1);
	}
	free(msg);
}

/* Keeps libbpf quiet unless -v, but remembers its last warning for our one-line error. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	/* Two threads may load (below): a line at a time, and one first warning. */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	va_list copy;

	pthread_mutex_lock(&lock);
	if (verbose_libbpf) {
		va_copy(copy, args);
		vfprintf(stderr, fmt, copy);
		va_end(copy);
	}
	/* The first warning names the failing program; later ones only repeat the failure. */
	if (level == LIBBPF_WARN && !last_libbpf_warning[0]) {
		va_copy(copy, args);
		vsnprintf(last_libbpf_warning, sizeof(last_libbpf_warning), fmt, copy);
		va_end(copy);
		last_libbpf_warning[strcspn(last_libbpf_warning, "\n")] = '\0';
	}
	if (level == LIBBPF_WARN)
		note_core_miss(fmt, args);
	pthread_mutex_unlock(&lock);
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void report_failure(const char *what, int err)
{
	err = err < 0 ? -err : err;
	/* As root, EACCES is the verifier refusing a program, not a missing privilege. */
	if (err == EPERM || (err == EACCES && geteuid() != 0)) {
		fprintf(stderr, "iotrace: need root (CAP_BPF and CAP_PERFMON) to %s\n", what);
		return;
	}
	if (core_miss[0]) {
		fprintf(stderr, "iotrace: failed to %s: this kernel's %s is not laid out as iotrace "
			"knows; " SUPPORTED_KERNELS "\n", what, core_miss);
		goto hint;
	}
	fprintf(stderr, "iotrace: failed to %s: %s%s%s%s\n", what, strerror(err),
		last_libbpf_warning[0] ? " (" : "", last_libbpf_warning,
		last_libbpf_warning[0] ? ")" : "");
hint:
	if (!verbose_libbpf)
		fprintf(stderr, "iotrace: run with -v for libbpf's log and the verifier output\n");
}

static uint32_t read_pid_max(void)
{
	unsigned long v = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	/* PID_MAX_LIMIT on 64-bit kernels bounds every pid if the sysctl is unreadable. */
	return v ? (uint32_t)v : 4U * 1024 * 1024;
}

/* Structs the programs pass to bpf_rdonly_cast, by enum kernel_cast_type (bpf/iotrace.h). */
#define KT_NAME_ENTRY(name) [KT_##name] = #name,
static const char *const cast_types[KERNEL_CAST_TYPES] = { KERNEL_CAST_STRUCTS(KT_NAME_ENTRY) };

/*
 * CO-RE against the minimal BTF cut from this very kernel at build time (kbtf.h) when
 * it is that kernel: libbpf then searches a few dozen types instead of the kernel's ~127k
 * once per struct (~18 ms). Otherwise, or with IOTRACE_FULL_BTF=1, the kernel's own BTF.
 * Returns the minimal BTF's descriptor and sets ids[] to the kernel's ids of cast_types,
 * or returns -1.
 */
static int choose_core_btf(struct tracer *t, const struct tracer_config *cfg, char *path,
			   size_t len, uint32_t ids[KERNEL_CAST_TYPES])
{
	const char *why = "IOTRACE_FULL_BTF is set";
	int fd = -1;

	if (!getenv("IOTRACE_FULL_BTF"))
		fd = kbtf_open(&kbtf_cut, BTF_PATH, NOTES_PATH, &why);
	for (int i = 0; fd >= 0 && i < KERNEL_CAST_TYPES; i++) {
		ids[i] = kbtf_type_id(&kbtf_cut, cast_types[i]);
		if (!ids[i]) { /* scripts/min_btf.py records them all or no BTF: a guard */
			why = "the build recorded no kernel id for a struct bpf_rdonly_cast needs";
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		snprintf(t->core, sizeof(t->core), "%s: %s", BTF_PATH, why);
	else
		snprintf(t->core, sizeof(t->core), "the minimal BTF cut from this kernel at build "
			 "time");
	if (cfg->verbose && fd < 0) {
		fprintf(stderr, "iotrace: CO-RE against %s: %s\n", BTF_PATH, why);
	} else if (cfg->verbose) {
		fprintf(stderr, "iotrace: CO-RE against the minimal BTF cut from this kernel at "
				"build time; kernel BTF ids:");
		for (int i = 0; i < KERNEL_CAST_TYPES; i++)
			fprintf(stderr, " %s=%u", cast_types[i], ids[i]);
		fputc('\n', stderr);
	}
	if (fd >= 0)
		snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/*
 * -v: each program's verifier statistics (log level 4), into one buffer per program. Newer
 * verifiers add a line per call of a global function (the compat build's unrolled searches
 * call one per word: 256 lines in the fork hook), which 4 KiB did not hold.
 */
#define STATS_LOG_SIZE 65536

static char (*verifier_stats(struct iotrace_bpf *s))[STATS_LOG_SIZE]
{
	struct bpf_object_skeleton *sk = s->skeleton;
	char (*logs)[STATS_LOG_SIZE] = calloc(sk->prog_cnt, STATS_LOG_SIZE);

	for (int i = 0; logs && i < sk->prog_cnt; i++) {
		bpf_program__set_log_level(*sk->progs[i].prog, 4);
		bpf_program__set_log_buf(*sk->progs[i].prog, logs[i], STATS_LOG_SIZE);
	}
	return logs;
}

/* Each loaded program's statistics, from the instance that loaded it (b: the second). */
static void print_verifier_stats(struct iotrace_bpf *a, char (*la)[STATS_LOG_SIZE],
				 struct iotrace_bpf *b, char (*lb)[STATS_LOG_SIZE])
{
	for (int i = 0; i < a->skeleton->prog_cnt; i++) {
		struct bpf_program *prog = *a->skeleton->progs[i].prog;
		const char *log = la ? la[i] : "", *time, *insns;
		bool second = false;

		if (!bpf_program__autoload(prog) && b &&
		    bpf_program__autoload(*b->skeleton->progs[i].prog)) {
			prog = *b->skeleton->progs[i].prog;
			log = lb ? lb[i] : "";
			second = true;
		}
		time = strstr(log, "verification time");
		insns = strstr(log, "processed");
		if (time && insns && bpf_program__autoload(prog) && prog != a->progs.maps_ready)
			fprintf(stderr, "iotrace: %s: %.*s, %.*s%s\n", bpf_program__name(prog),
				(int)strcspn(time, "\n"), time, (int)strcspn(insns, "("), insns,
				second ? "(second thread)" : "");
	}
}

/* Each build's programs have the same maps, programs and globals as the full one's. */
_Static_assert(sizeof(*((struct iotrace_bpf *)0)->rodata) ==
		       sizeof(*((struct iotrace_nokfunc_bpf *)0)->rodata) &&
	       sizeof(*((struct iotrace_bpf *)0)->rodata) ==
		       sizeof(*((struct iotrace_noiter_bpf *)0)->rodata) &&
	       sizeof(*((struct iotrace_bpf *)0)->bss) ==
		       sizeof(*((struct iotrace_nokfunc_bpf *)0)->bss) &&
	       sizeof(*((struct iotrace_bpf *)0)->bss) ==
		       sizeof(*((struct iotrace_noiter_bpf *)0)->bss) &&
	       sizeof(*((struct iotrace_bpf *)0)->rodata) ==
		       sizeof(*((struct iotrace_compat_bpf *)0)->rodata) &&
	       sizeof(*((struct iotrace_bpf *)0)->bss) ==
		       sizeof(*((struct iotrace_compat_bpf *)0)->bss),
	       "every build of the programs has the same globals");

/* The skeleton of iotrace.skel.h over the object of build b (same names, same layout). */
static struct iotrace_bpf *open_build(enum tracer_build b, const struct bpf_object_open_opts *opts)
{
	struct iotrace_bpf *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	err = iotrace_bpf__create_skeleton(s);
	if (!err && b == BUILD_NOITER)
		s->skeleton->data = iotrace_noiter_bpf__elf_bytes(&s->skeleton->data_sz);
	else if (!err && b == BUILD_NOKFUNC)
		s->skeleton->data = iotrace_nokfunc_bpf__elf_bytes(&s->skeleton->data_sz);
	else if (!err && b == BUILD_COMPAT)
		s->skeleton->data = iotrace_compat_bpf__elf_bytes(&s->skeleton->data_sz);
	err = err ?: bpf_object__open_skeleton(s->skeleton, opts);
	if (err) {
		iotrace_bpf__destroy(s);
		errno = -err;
		return NULL;
	}
	/* Loaded only as the signal of the two threads' load (below). */
	bpf_program__set_autoload(s->progs.maps_ready, false);
	return s;
}

/* Opens the skeleton and sets everything that must be set before loading. */
static int open_configured(struct tracer *t, const struct tracer_config *cfg,
			   const struct bpf_object_open_opts *opts, const uint32_t *ids,
			   const struct btf_index *btf)
{
	t->skel = open_build(t->build, opts);
	if (!t->skel)
		return -errno;
	tracer_configure(t, cfg);
	/* The minimal BTF renumbers types: bpf_rdonly_cast needs the kernel's (maps.bpf.h). */
	memcpy((void *)t->skel->rodata->kernel_type_id, ids, KERNEL_CAST_TYPES * sizeof(*ids));
	return probe_hooks(t, btf) ? -ENOTSUP : 0;
}

/*
 * ---- Loading in two threads ----
 *
 * The kernel's verifier is four fifths of start-up, and it checks privileged loads in
 * parallel (bpf_check takes bpf_verifier_lock only when the loader lacks CAP_BPF). libbpf
 * loads an object's programs one after the other, so the programs are split between two
 * instances of the same object, balanced by the verifier's work: t->skel creates every map
 * and loads its share; t->skel2, opened in a second thread, reuses every one of those maps
 * (bpf_map__reuse_fd: .rodata, .bss and .kconfig too, which t->skel filled and froze, so
 * the verifier sees the same constants; the second instance creates nothing) and loads the
 * rest. It may reuse them only once they exist: t->skel loads maps_ready (bpf/iotrace.bpf.c)
 * first, right after creating them, and a handler of its section tells the second thread.
 * Each program is attached from the instance that loaded it (tracer_prog). Any failure
 * loads again in one thread, for the one-line error and -v's log. Only when a CPU is idle
 * (two_threads).
 */

/*
 * The verifier's work per program, instructions processed (`iotrace -v`, the full build on
 * 6.18, 2026-11-26); a program not named counts 1,000. Only the split depends on it: wrong
 * figures make one thread finish later, nothing else.
 */
static const struct {
	const char *prog;
	unsigned int cost;
} verifier_costs[] = {
	{ "handle_sys_exit", 18321 }, { "handle_sched_process_exec", 6300 },
	{ "handle_sys_enter", 6041 }, { "handle_mm_filemap_get_pages", 5685 },
	{ "handle_block_rq_complete", 2889 }, { "handle_mm_filemap_add_to_page_cache", 2529 },
	{ "handle_mm_filemap_map_pages", 2511 }, { "handle_mm_filemap_fault", 2380 },
	{ "handle_block_rq_insert", 2163 }, { "handle_block_rq_issue", 2145 },
	{ "handle_block_io_start", 2108 }, { "handle_io_uring_complete", 1612 },
	{ "handle_page_cache_ra_unbounded", 1514 }, { "handle_page_cache_ra_order", 1306 },
	{ "sweep_block_inflight", 1156 }, { "handle_writeback_dirty_folio", 1090 },
	{ "handle_sched_process_fork", 955 }, { "handle_iomap_dio_rw_begin", 935 },
	{ "handle_page_cache_sync_ra", 885 }, { "handle_page_cache_async_ra", 885 },
	{ "handle_sched_process_exit", 233 }, { "handle_task_rename", 174 },
	{ "handle_inode_set_ctime_to_ts", 182 }, { "handle_ctime_ns_xchg", 182 },
	{ "handle_ctime_xchg_skip", 182 }, { "handle_io_uring_submit_req", 188 },
	{ "handle_io_uring_req_failed", 76 }, { "handle_io_uring_cqe_overflow", 41 },
};

static unsigned int verifier_cost(const struct bpf_program *prog)
{
	for (size_t i = 0; i < sizeof(verifier_costs) / sizeof(verifier_costs[0]); i++)
		if (!strcmp(verifier_costs[i].prog, bpf_program__name(prog)))
			return verifier_costs[i].cost;
	return bpf_program__insn_cnt(prog) < 64 ? 20 : 1000;
}

/*
 * Gives the second instance (to_b[i]) about half the verifier's work among the programs
 * s loads, heaviest first each to the lighter side, and switches them off in s. Returns
 * how many it gave.
 */
static int split_programs(struct iotrace_bpf *s, bool *to_b)
{
	struct bpf_object_skeleton *sk = s->skeleton;
	int order[sk->prog_cnt], n = 0, given = 0;
	unsigned long load[2] = { 0, 0 };

	for (int i = 0; i < sk->prog_cnt; i++) {
		struct bpf_program *prog = *sk->progs[i].prog;
		int j = n++;

		to_b[i] = false;
		if (!bpf_program__autoload(prog)) {
			n--;
			continue;
		}
		for (; j > 0 && verifier_cost(*sk->progs[order[j - 1]].prog) <
				verifier_cost(prog); j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	for (int k = 0; k < n; k++) {
		int side = load[1] < load[0];

		load[side] += verifier_cost(*sk->progs[order[k]].prog);
		if (side) {
			to_b[order[k]] = true;
			bpf_program__set_autoload(*sk->progs[order[k]].prog, false);
			given++;
		}
	}
	return given;
}

/* Whether the maps exist (1), or the first instance failed before they did (-1). */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state;
} maps_sync = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };

static void set_maps_state(int state)
{
	pthread_mutex_lock(&maps_sync.lock);
	if (!maps_sync.state)
		maps_sync.state = state;
	pthread_cond_broadcast(&maps_sync.cond);
	pthread_mutex_unlock(&maps_sync.lock);
}

/* libbpf calls it right before loading maps_ready: after creating and filling every map. */
static int on_maps_ready(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long cookie)
{
	if (!strcmp(bpf_program__name(prog), "maps_ready"))
		set_maps_state(1);
	return 0;
}

/*
 * Whether to load in two threads: a handler for maps_ready, two CPUs to run on, and one of
 * them idle now (/proc/loadavg's runnable tasks, this one included, fewer than the CPUs):
 * the second instance costs CPU time of its own (its open and its parse of the kernel's
 * BTF, ~15 ms), which is a loss when its thread only waits for a CPU that others hold.
 * IOTRACE_LOAD_THREADS=1 or 2 decides instead. Says why not with -v.
 */
static bool two_threads(const struct tracer_config *cfg)
{
	static int handler = -2;
	const char *forced = getenv("IOTRACE_LOAD_THREADS"), *why = NULL;
	unsigned int running = 0;
	cpu_set_t cpus;
	FILE *f;

	if (forced && strcmp(forced, "2"))
		why = "IOTRACE_LOAD_THREADS is not 2";
	else if (sched_getaffinity(0, sizeof(cpus), &cpus) || CPU_COUNT(&cpus) < 2)
		why = "one CPU to run on";
	if (!why && !forced && (f = fopen("/proc/loadavg", "r"))) {
		if (fscanf(f, "%*s %*s %*s %u/", &running) == 1 &&
		    running >= (unsigned int)CPU_COUNT(&cpus))
			why = "no idle CPU (/proc/loadavg: runnable tasks)";
		fclose(f);
	}
	if (!why && handler == -2) {
		LIBBPF_OPTS(libbpf_prog_handler_opts, hopts, .prog_prepare_load_fn = on_maps_ready);

		handler = libbpf_register_prog_handler("socket", BPF_PROG_TYPE_SOCKET_FILTER, 0,
						       &hopts);
	}
	if (!why && handler < 0)
		why = "libbpf refused a handler for maps_ready";
	if (why && cfg->verbose)
		fprintf(stderr, "iotrace: loading the programs in one thread: %s\n", why);
	return !why;
}

static int loaded_by(struct iotrace_bpf *s)
{
	int n = 0;

	for (int i = 0; i < s->skeleton->prog_cnt; i++)
		n += bpf_program__autoload(*s->skeleton->progs[i].prog) &&
		     *s->skeleton->progs[i].prog != s->progs.maps_ready;
	return n;
}

/* The second thread's instance: what it loads, and how it went. */
struct second_half {
	enum tracer_build build;
	const struct bpf_object_open_opts *opts;
	struct iotrace_bpf *first;
	const bool *mine, *attach;
	bool verbose;
	struct iotrace_bpf *s;
	char (*logs)[STATS_LOG_SIZE];
	int err;
	double open_ms, btf_ms, wait_ms, load_ms; /* its steps, for -v */
};

static void *load_second_half(void *arg)
{
	struct second_half *h = arg;
	struct bpf_object_skeleton *sk;
	struct bpf_map *mine, *theirs;
	double t0 = now_ms(), t1, t2, t3;

	h->s = open_build(h->build, h->opts);
	if (!h->s) {
		h->err = -errno;
		return NULL;
	}
	sk = h->s->skeleton;
	for (int i = 0; i < sk->prog_cnt; i++) {
		bpf_program__set_autoload(*sk->progs[i].prog, h->mine[i]);
		bpf_program__set_autoattach(*sk->progs[i].prog, h->attach[i]);
	}
	if (h->verbose)
		h->logs = verifier_stats(h->s);
	t1 = now_ms();
	/* The kernel's BTF (its tracepoints' ids, the kfuncs), parsed now by setting a
	 * program's own target, while the first instance creates the maps. */
	for (int i = 0; i < sk->prog_cnt; i++) {
		const char *sec = bpf_program__section_name(*sk->progs[i].prog);

		if (h->mine[i] && !strncmp(sec, "tp_btf/", 7)) {
			bpf_program__set_attach_target(*sk->progs[i].prog, 0, sec + 7);
			break;
		}
	}
	t2 = now_ms();
	pthread_mutex_lock(&maps_sync.lock);
	while (!maps_sync.state)
		pthread_cond_wait(&maps_sync.cond, &maps_sync.lock);
	pthread_mutex_unlock(&maps_sync.lock);
	t3 = now_ms();
	h->open_ms = t1 - t0;
	h->btf_ms = t2 - t1;
	h->wait_ms = t3 - t2;
	if (maps_sync.state < 0) {
		h->err = -ECANCELED;
		return NULL;
	}
	/* Same object, same maps in the same order. */
	for (mine = bpf_object__next_map(h->s->obj, NULL),
	     theirs = bpf_object__next_map(h->first->obj, NULL);
	     mine && theirs && !h->err; mine = bpf_object__next_map(h->s->obj, mine),
	     theirs = bpf_object__next_map(h->first->obj, theirs))
		h->err = bpf_map__fd(theirs) >= 0 ? bpf_map__reuse_fd(mine, bpf_map__fd(theirs))
						  : bpf_map__set_autocreate(mine, false);
	h->err = h->err ?: iotrace_bpf__load(h->s);
	h->load_ms = now_ms() - t3;
	return NULL;
}

/*
 * Opens t->skel configured and loads it with a second instance in a second thread; 1 when
 * it should load in one (nothing given to the second), 0 when loaded, or the error.
 */
static int load_in_two(struct tracer *t, const struct tracer_config *cfg,
		       const struct bpf_object_open_opts *opts, const uint32_t *ids,
		       const struct btf_index *btf)
{
	struct second_half h = { .build = t->build, .opts = opts, .verbose = cfg->verbose };
	char (*logs)[STATS_LOG_SIZE] = NULL;
	pthread_t thread;
	int err = open_configured(t, cfg, opts, ids, btf), n, given;

	if (err)
		return err;
	n = t->skel->skeleton->prog_cnt;
	bool to_b[n], attach[n];

	for (int i = 0; i < n; i++)
		attach[i] = bpf_program__autoattach(*t->skel->skeleton->progs[i].prog);
	given = split_programs(t->skel, to_b);
	if (!given)
		return 1;
	h.first = t->skel;
	h.mine = to_b;
	h.attach = attach;
	maps_sync.state = 0;
	bpf_program__set_autoload(t->skel->progs.maps_ready, true);
	if (cfg->verbose)
		logs = verifier_stats(t->skel);
	err = -pthread_create(&thread, NULL, load_second_half, &h);
	if (!err) {
		err = iotrace_bpf__load(t->skel);
		set_maps_state(err ? -1 : 1); /* failed before the maps, or loaded: let it go on */
		pthread_join(thread, NULL);
		t->skel2 = h.s;
		err = err ?: h.err;
	}
	if (!err && cfg->verbose) {
		print_verifier_stats(t->skel, logs, t->skel2, h.logs);
		fprintf(stderr, "iotrace: second thread: %d of %d programs; open %.1f ms, kernel BTF "
			"%.1f ms, waited for the maps %.1f ms, load %.1f ms\n", given,
			given + loaded_by(t->skel), h.open_ms, h.btf_ms, h.wait_ms, h.load_ms);
	}
	free(logs);
	free(h.logs);
	return err;
}

static int open_and_load(struct tracer *t, const struct tracer_config *cfg, const char *btf_path,
			 const uint32_t *ids, const struct btf_index *btf)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf_path);
	char (*logs)[STATS_LOG_SIZE];
	int err;

	if (two_threads(cfg)) {
		err = load_in_two(t, cfg, &opts, ids, btf);
		if (!err)
			return 0;
		if (err < 0 && cfg->verbose)
			fprintf(stderr, "iotrace: loading in two threads failed (%s); again in one\n",
				strerror(-err));
		iotrace_bpf__destroy(t->skel2);
		iotrace_bpf__destroy(t->skel);
		t->skel = t->skel2 = NULL;
		last_libbpf_warning[0] = core_miss[0] = '\0';
	}
	err = open_configured(t, cfg, &opts, ids, btf);
	if (err || !cfg->verbose) {
		err = err ?: iotrace_bpf__load(t->skel);
		goto out;
	}
	logs = verifier_stats(t->skel);
	err = iotrace_bpf__load(t->skel);
	if (!err && logs)
		print_verifier_stats(t->skel, logs, NULL, NULL);
	free(logs);
	if (err) {
		/* libbpf prints a failing program's verifier log only when no log buffer was
		 * given: load once more without the statistics buffers, for that log. */
		iotrace_bpf__destroy(t->skel);
		err = open_configured(t, cfg, &opts, ids, btf) ?: iotrace_bpf__load(t->skel);
	}
out:
	return err;
}

struct bpf_program *tracer_prog(struct tracer *t, struct bpf_program *prog)
{
	struct bpf_object_skeleton *sk = t->skel->skeleton;

	if (!prog || !t->skel2 || bpf_program__autoload(prog))
		return prog;
	for (int i = 0; i < sk->prog_cnt; i++)
		if (*sk->progs[i].prog == prog)
			return bpf_program__autoload(*t->skel2->skeleton->progs[i].prog)
			       ? *t->skel2->skeleton->progs[i].prog : prog;
	return prog;
}

struct bpf_link **tracer_link_slot(struct tracer *t, const struct bpf_program *prog)
{
	struct iotrace_bpf *skels[2] = { t->skel, t->skel2 };

	for (int k = 0; k < 2 && skels[k]; k++)
		for (int i = 0; i < skels[k]->skeleton->prog_cnt; i++)
			if (*skels[k]->skeleton->progs[i].prog == prog)
				return skels[k]->skeleton->progs[i].link;
	return NULL;
}

/* How many slots, and checks before loading; prints one line and returns -1 on failure. */
static int size_tracer(struct tracer *t, const struct tracer_config *cfg)
{
	int ncpus;

	if (access(BTF_PATH, R_OK)) {
		fprintf(stderr,
			"iotrace: kernel BTF not found at %s (needs CONFIG_DEBUG_INFO_BTF); "
			SUPPORTED_KERNELS "\n", BTF_PATH);
		return -1;
	}
	if (syscall_table_init()) {
		fprintf(stderr, "iotrace: out of memory building the syscall table\n");
		return -1;
	}
	t->pid_max = read_pid_max();
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		report_failure("count possible CPUs", ncpus);
		return -1;
	}
	t->ncpus = ncpus;
	t->nr_slots = cfg->max_procs ? cfg->max_procs + OVERFLOW_SLOT + 1
		      : MAX_SLOTS;
	if (cfg->max_procs > MAX_SLOTS - OVERFLOW_SLOT - 1 || t->nr_slots > MAX_SLOTS) {
		fprintf(stderr, "iotrace: --max-procs is at most %d\n", MAX_SLOTS - 2);
		return -1;
	}
	return 0;
}

/*
 * The sweep of block requests whose completion was skipped (bpf/block.bpf.c): an iterator
 * over block_inflight. Without it (a kernel without map element iterators, 5.9) a skipped
 * completion is counted when its request struct is reused, or at the end.
 */
static void attach_sweep(struct tracer *t)
{
	struct bpf_program *prog = tracer_prog(t, t->skel->progs.sweep_block_inflight);
	union bpf_iter_link_info info = { .map.map_fd = bpf_map__fd(t->skel->maps.block_inflight) };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info, .link_info_len = sizeof(info));
	struct bpf_link **slot = tracer_link_slot(t, prog);
	struct bpf_link *link;

	if (bpf_program__fd(prog) < 0 || !slot)
		return;
	link = bpf_program__attach_iter(prog, &opts);
	*slot = libbpf_get_error(link) ? NULL : link;
}

/* One line on what the kernel lacks that iotrace cannot do without. */
static void report_missing(const struct tracer *t)
{
	for (int g = 0; g < TRACER_HOOK_GROUPS; g++)
		if (t->missing[g] && (g == HOOKS_CORE || g == HOOKS_BLOCK))
			fprintf(stderr, "iotrace: this kernel cannot trace %s: %s; "
				SUPPORTED_KERNELS "\n", tracer_group_names[g], t->missing[g]);
}

/* --stacks where the build cannot walk stacks: one line, -ECANCELED (said already). */
static int refuse_stacks(const struct tracer *t, const struct tracer_config *cfg)
{
	const char *why = tracer_stacks_na(t);

	if (!cfg->stacks || !why)
		return 0;
	fprintf(stderr, "iotrace: --stacks is not available on this kernel: %s; run without "
		"--stacks\n", why);
	return -ECANCELED;
}

/*
 * Asks the kernel's BTF what it has (~10 ms to parse), picks the build and every event's way,
 * and loads: the kernel it was built on skips the asking and takes the full build and every
 * tracepoint, unless that load fails.
 */
static int load(struct tracer *t, const struct tracer_config *cfg)
{
	uint32_t ids[KERNEL_CAST_TYPES] = { 0 };
	char path[64];
	int btf_fd = choose_core_btf(t, cfg, path, sizeof(path), ids), err;
	const char *btf_path = btf_fd >= 0 ? path : NULL;
	struct btf *btf = NULL;
	struct btf_index *ix = NULL;

	t->build_why = "the kernel iotrace was built on";
	if (btf_fd < 0 || cfg->probe_all) {
		btf = btf__load_vmlinux_btf();
		ix = btf_index_new(btf);
		t->probed = ix != NULL;
	}
	t->build = choose_build(ix, &t->build_why);
	err = refuse_stacks(t, cfg) ?: open_and_load(t, cfg, btf_path, ids, ix);
	if (err && err != -ECANCELED && !ix && err != -EPERM && err != -EACCES && err != -ENOTSUP) {
		/* Not quite the kernel it was built on: ask its BTF, choose again, retry. */
		iotrace_bpf__destroy(t->skel2);
		iotrace_bpf__destroy(t->skel);
		t->skel = t->skel2 = NULL;
		last_libbpf_warning[0] = '\0';
		btf = btf__load_vmlinux_btf();
		ix = btf_index_new(btf);
		t->probed = ix != NULL;
		t->build = choose_build(ix, &t->build_why);
		err = refuse_stacks(t, cfg) ?: open_and_load(t, cfg, btf_path, ids, ix);
	}
	btf_index_free(ix);
	btf__free(btf);
	if (btf_fd >= 0)
		close(btf_fd);
	if (err == -ENOTSUP)
		report_missing(t);
	else if (err && t->build == BUILD_COMPAT && err != -EPERM && err != -EACCES &&
		 err != -ECANCELED)
		/* 5.10's verifier still refuses parts of it: said as what it is (kernels.md). */
		fprintf(stderr, "iotrace: this kernel's verifier refused the compat build of the "
			"programs (kernels without bpf_loop: support incomplete, docs/kernels.md): "
			"%s; " SUPPORTED_KERNELS "\n", last_libbpf_warning[0] ? last_libbpf_warning :
			strerror(-err));
	else if (err && err != -ECANCELED)
		report_failure(t->skel ? "load the BPF programs" : "open the BPF object", err);
	return err;
}

/* The counters user space reads in place, and the ring buffer of events. */
static int map_counters(struct tracer *t, const struct tracer_config *cfg,
			tracer_event_fn on_event, void *ctx)
{
	t->proc_slot = map_mmap(t->skel->maps.proc_slot, &t->proc_slot_len);
	t->sc = map_mmap(t->skel->maps.sc_cache, &t->sc_len);
	t->io = map_mmap(t->skel->maps.io_cache, &t->io_len);
	t->moves = map_mmap(t->skel->maps.cache_moves, &t->moves_len);
	t->files = map_mmap(t->skel->maps.file_stats, &t->files_len);
	t->rows = map_mmap(t->skel->maps.file_rows, &t->rows_len);
	if (!cfg->serve && !cfg->snoop)
		t->slot_rows = map_mmap(t->skel->maps.slot_procs, &t->slot_rows_len);
	if (!t->proc_slot || !t->sc || !t->io || !t->moves || !t->files || !t->rows ||
	    (!cfg->serve && !cfg->snoop && !t->slot_rows)) {
		report_failure("map the BPF counters", -errno);
		return -1;
	}
	t->events = ring_buffer__new(bpf_map__fd(cfg->snoop ? t->skel->maps.block_events
						       : t->skel->maps.proc_events),
				     on_event, ctx, NULL);
	if (!t->events || (cfg->on_name && ring_buffer__add(t->events,
							    bpf_map__fd(t->skel->maps.name_events),
							    cfg->on_name, ctx)) ||
	    map_trace(t, cfg, ctx) || map_stacks(t, cfg, ctx)) {
		report_failure("create the event ring buffer", -errno);
		return -1;
	}
	return 0;
}

struct tracer *tracer_open(const struct tracer_config *cfg, tracer_event_fn on_event, void *ctx)
{
	struct tracer *t = calloc(1, sizeof(*t));
	double t_load, t_attach;
	int err;

	if (!t) {
		fprintf(stderr, "iotrace: out of memory\n");
		return NULL;
	}
	verbose_libbpf = cfg->verbose;
	libbpf_set_print(libbpf_print);
	if (size_tracer(t, cfg))
		goto fail;
	t_load = now_ms();
	if (load(t, cfg) || map_counters(t, cfg, on_event, ctx))
		goto fail;
	if (cfg->serve || cfg->top)
		/* serve's and top's own syscalls are not the machine's workload. */
		tracer_exclude(t, getpid());
	t_attach = now_ms();
	err = iotrace_bpf__attach(t->skel) ?: (t->skel2 ? iotrace_bpf__attach(t->skel2) : 0);
	if (err) {
		report_failure("attach the BPF programs", err);
		goto fail;
	}
	if (attach_hooks(t)) {
		report_missing(t);
		goto fail;
	}
	attach_sweep(t);
	t->load_ms = t_attach - t_load;
	t->attach_ms = now_ms() - t_attach;
	if (cfg->verbose)
		fprintf(stderr, "iotrace: BPF open+load %.1f ms, attach %.1f ms, maps %.1f MiB\n",
			t->load_ms, t->attach_ms, tracer_map_bytes(t, NULL) / 1048576.0);
	return t;
fail:
	tracer_close(t);
	return NULL;
}

void tracer_detach(struct tracer *t)
{
	iotrace_bpf__detach(t->skel);
	if (t->skel2)
		iotrace_bpf__detach(t->skel2);
}

void tracer_close(struct tracer *t)
{
	if (!t)
		return;
	ring_buffer__free(t->events);
	map_munmap(t->proc_slot, t->proc_slot_len);
	map_munmap(t->sc, t->sc_len);
	map_munmap(t->io, t->io_len);
	map_munmap(t->moves, t->moves_len);
	free(t->scratch);
	tracer_free_live_rows(t);
	map_munmap(t->files, t->files_len);
	map_munmap(t->rows, t->rows_len);
	map_munmap(t->slot_rows, t->slot_rows_len);
	unmap_trace(t);
	iotrace_bpf__destroy(t->skel2);
	iotrace_bpf__destroy(t->skel);
	free(t);
}
