// SPDX-License-Identifier: GPL-2.0
/*
 * Opening the object of the build this kernel takes, configured, and loading it: in one
 * thread, or in two over the same maps ("Loading in two threads" below). -v's verifier
 * statistics per program. tracer_load.c calls it and says what failed.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sched.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "tracer_impl.h"
#include "iotrace_noiter.skel.h"
#include "iotrace_nokfunc.skel.h"
#include "iotrace_compat.skel.h"
#include "iotrace_byid.skel.h"
#include "by_id.h"

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

/*
 * IOTRACE_VERIFIER_LOG=PROG:FILE (for developers, docs/startup.md "What the verifier walks
 * more than once"): PROG's whole verifier log (level 2, every instruction of the walk with
 * its registers) into FILE, for scripts/verifier_walk.py. Loads in one thread. The buffer
 * is reserved, not touched: a log takes only the pages it fills.
 */
#define WALK_LOG_SIZE (256u << 20)

struct walk_log {
	char *buf;
	const char *file;
};

/* Sets PROG's log; -ECANCELED (said here, in one line) when the setting names no program. */
static int walk_log_set(struct iotrace_bpf *s, struct walk_log *w)
{
	const char *spec = getenv("IOTRACE_VERIFIER_LOG"), *colon;
	struct bpf_program *prog = NULL;
	size_t len;

	if (!spec)
		return 0;
	colon = strchr(spec, ':');
	len = colon ? (size_t)(colon - spec) : 0;
	for (int i = 0; colon && colon[1] && i < s->skeleton->prog_cnt; i++) {
		const char *name = bpf_program__name(*s->skeleton->progs[i].prog);

		if (strlen(name) == len && !strncmp(name, spec, len))
			prog = *s->skeleton->progs[i].prog;
	}
	if (!prog || !bpf_program__autoload(prog)) {
		fprintf(stderr, "iotrace: IOTRACE_VERIFIER_LOG: '%s' is not PROG:FILE with PROG a "
			"program this run loads\n", spec);
		return -ECANCELED;
	}
	w->buf = mmap(NULL, WALK_LOG_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (w->buf == MAP_FAILED) {
		w->buf = NULL;
		fprintf(stderr, "iotrace: IOTRACE_VERIFIER_LOG: %s\n", strerror(errno));
		return -ECANCELED;
	}
	w->file = colon + 1;
	bpf_program__set_log_level(prog, 2 | 4);
	bpf_program__set_log_buf(prog, w->buf, WALK_LOG_SIZE);
	return 0;
}

/* Writes the log (also of a load that failed: that is when it is wanted most). */
static int walk_log_write(struct walk_log *w)
{
	FILE *f;
	int err = 0;

	if (!w->buf)
		return 0;
	f = fopen(w->file, "w");
	if (!f || fputs(w->buf, f) == EOF)
		err = -errno;
	if (f && fclose(f) && !err)
		err = -errno;
	if (err)
		fprintf(stderr, "iotrace: IOTRACE_VERIFIER_LOG: %s: %s\n", w->file, strerror(-err));
	munmap(w->buf, WALK_LOG_SIZE);
	w->buf = NULL;
	return err ? -ECANCELED : 0;
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
	if (!err && b == BUILD_FULL && by_id_on())
		s->skeleton->data = iotrace_byid_bpf__elf_bytes(&s->skeleton->data_sz);
	else if (!err && b == BUILD_NOITER)
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
 * loads again in one thread, for the one-line error and -v's log. Only with two CPUs to
 * run on (two_threads).
 */

/*
 * The verifier's work per program, instructions processed (`iotrace -v`, the full build on
 * 6.18, 2026-11-27); a program not named counts 1,000. Only the split depends on it: wrong
 * figures make one thread finish later, nothing else.
 */
static const struct {
	const char *prog;
	unsigned int cost;
} verifier_costs[] = {
	{ "handle_sys_exit", 9380 }, { "handle_sched_process_exec", 4516 },
	{ "handle_sys_enter", 3856 }, { "handle_mm_filemap_get_pages", 4625 },
	{ "handle_block_rq_complete", 2889 }, { "handle_mm_filemap_add_to_page_cache", 2192 },
	{ "handle_mm_filemap_map_pages", 2183 }, { "handle_mm_filemap_fault", 2052 },
	{ "handle_block_rq_insert", 2163 }, { "handle_block_rq_issue", 2145 },
	{ "handle_block_io_start", 2108 }, { "handle_io_uring_complete", 1818 },
	{ "handle_page_cache_ra_unbounded", 1511 }, { "handle_page_cache_ra_order", 1303 },
	{ "sweep_block_inflight", 1156 }, { "handle_writeback_dirty_folio", 1060 },
	{ "handle_sched_process_fork", 955 }, { "handle_iomap_dio_rw_begin", 932 },
	{ "handle_page_cache_sync_ra", 882 }, { "handle_page_cache_async_ra", 882 },
	{ "handle_sched_process_exit", 311 }, { "handle_task_rename", 174 },
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
	unsigned long cost[sk->prog_cnt];
	int side[sk->prog_cnt], given = 0;

	for (int i = 0; i < sk->prog_cnt; i++)
		cost[i] = bpf_program__autoload(*sk->progs[i].prog)
				  ? verifier_cost(*sk->progs[i].prog) : 0;
	split_by_cost(cost, sk->prog_cnt, side);
	for (int i = 0; i < sk->prog_cnt; i++) {
		to_b[i] = side[i] == 1;
		if (to_b[i]) {
			bpf_program__set_autoload(*sk->progs[i].prog, false);
			given++;
		}
	}
	return given;
}

/*
 * Whether the maps exist (state 1), or the first instance failed before they did (-1);
 * whether the second thread made its half of the maps made beforehand (premade).
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state, premade, second_done;
	int mapping; /* a thread took the mapping of the counters (load_steps.map) */
	const struct bpf_map *exclude; /* serve, top: proc_slot, where iotrace is left out */
} maps_sync = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, NULL };

static void set_maps_state(int state)
{
	pthread_mutex_lock(&maps_sync.lock);
	if (!maps_sync.state)
		__atomic_store_n(&maps_sync.state, state, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&maps_sync.cond);
	pthread_mutex_unlock(&maps_sync.lock);
}

static void set_premade(void)
{
	pthread_mutex_lock(&maps_sync.lock);
	__atomic_store_n(&maps_sync.premade, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&maps_sync.cond);
	pthread_mutex_unlock(&maps_sync.lock);
}

/*
 * Until *flag is set, spinning (SPIN_MS at most, yielding to anything else that would run):
 * a thread asleep on a condition or in a join took 1-3 ms to run again once woken on this
 * VM's idle CPU, each time ~2% of the start-up. Not longer: under a CPU quota (a
 * container's cpu.max) the spinning would take the other thread's time.
 */
#define SPIN_MS 5

static void spin_until(const int *flag)
{
	double until = tracer_now_ms() + SPIN_MS;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE) && tracer_now_ms() < until)
		sched_yield();
}

/* Until the maps exist or cannot (maps), or the second half is made; the maps' state. */
static int wait_sync(bool maps)
{
	const int *flag = maps ? &maps_sync.state : &maps_sync.premade;

	spin_until(flag);
	pthread_mutex_lock(&maps_sync.lock);
	while (!*flag)
		pthread_cond_wait(&maps_sync.cond, &maps_sync.lock);
	pthread_mutex_unlock(&maps_sync.lock);
	return maps_sync.state;
}

/*
 * After a thread's load: the hooks of the programs it loaded attached, and the counters
 * mapped by whichever thread gets here first (a failure there is left to tracer_open,
 * which maps them again and says why).
 */
static void after_load(struct tracer *t, struct iotrace_bpf *s, const struct load_steps *steps)
{
	attach_own_hooks(t, s);
	if (!__atomic_exchange_n(&maps_sync.mapping, 1, __ATOMIC_ACQ_REL))
		steps->map(t, steps->arg);
}

/* libbpf calls it right before loading maps_ready: after creating and filling every map. */
static int on_maps_ready(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long cookie)
{
	if (strcmp(bpf_program__name(prog), "maps_ready"))
		return 0;
	if (maps_sync.exclude) {
		/* serve's and top's own calls left out before any program is attached (each
		 * thread attaches its own as soon as loaded): tracer_exclude, by the map. */
		uint16_t word[4] = { 0 };
		uint32_t pid = getpid(), key = pid / 4;

		word[pid % 4] = SLOT_NONE;
		bpf_map_update_elem(bpf_map__fd(maps_sync.exclude), &key, word, BPF_ANY);
	}
	set_maps_state(1);
	return 0;
}

/*
 * Whether to load in two threads: a handler for maps_ready and two CPUs to run on. Not
 * gated on the machine's load: the second instance parses no kernel BTF and creates no map
 * (by_id.c, tracer_premake.c), so its own cost is its open (~4 ms), and paired runs on a
 * 2-CPU host (2026-11-28, 21 each) gave two threads against one x0.68 of the start-up idle,
 * x1.01-1.08 beside one or two CPU hogs, x0.73 beside four. The last minute's load average,
 * used before, kept one thread for minutes after any work had ended. IOTRACE_LOAD_THREADS=1
 * or 2 decides instead. Says why not with -v.
 */
static bool two_threads(const struct tracer_config *cfg)
{
	static int handler = -2;
	const char *forced = getenv("IOTRACE_LOAD_THREADS"), *why = NULL;
	cpu_set_t cpus;

	if (forced && strcmp(forced, "2"))
		why = "IOTRACE_LOAD_THREADS is not 2";
	else if (getenv("IOTRACE_VERIFIER_LOG"))
		why = "IOTRACE_VERIFIER_LOG is set";
	else if (sched_getaffinity(0, sizeof(cpus), &cpus) || CPU_COUNT(&cpus) < 2)
		why = "one CPU to run on";
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
	struct tracer *t;
	const struct load_steps *steps;
	const bool *mine, *attach;
	struct premake *premake;
	bool verbose;
	struct iotrace_bpf *s;
	char (*logs)[STATS_LOG_SIZE];
	int err;
	double open_ms, btf_ms, wait_ms, load_ms; /* its steps, for -v */
};

static void load_second(struct second_half *h)
{
	struct bpf_object_skeleton *sk;
	struct bpf_map *mine, *theirs;
	double t0, t1, t2, t3;
	int err;

	/* Its half of the largest maps first, while the first thread makes the other half. */
	tracer_premake_half(h->premake, 1);
	set_premade();
	t0 = tracer_now_ms();
	h->s = open_build(h->build, h->opts);
	if (!h->s) {
		h->err = -errno;
		return;
	}
	sk = h->s->skeleton;
	for (int i = 0; i < sk->prog_cnt; i++) {
		bpf_program__set_autoload(*sk->progs[i].prog, h->mine[i]);
		bpf_program__set_autoattach(*sk->progs[i].prog, h->attach[i]);
	}
	if (h->verbose)
		h->logs = verifier_stats(h->s);
	t1 = tracer_now_ms();
	/* The kernel's BTF (its tracepoints' ids, the kfuncs), parsed now by setting a
	 * program's own target, while the first instance creates the maps; not needed by
	 * the by-id build. */
	for (int i = 0; i < sk->prog_cnt && !by_id_on(); i++) {
		const char *sec = bpf_program__section_name(*sk->progs[i].prog);

		if (h->mine[i] && !strncmp(sec, "tp_btf/", 7)) {
			bpf_program__set_attach_target(*sk->progs[i].prog, 0, sec + 7);
			break;
		}
	}
	t2 = tracer_now_ms();
	err = wait_sync(true);
	t3 = tracer_now_ms();
	h->open_ms = t1 - t0;
	h->btf_ms = t2 - t1;
	h->wait_ms = t3 - t2;
	if (err < 0) {
		h->err = -ECANCELED;
		return;
	}
	/* Same object, same maps in the same order. */
	for (mine = bpf_object__next_map(h->s->obj, NULL),
	     theirs = bpf_object__next_map(h->t->skel->obj, NULL);
	     mine && theirs && !h->err; mine = bpf_object__next_map(h->s->obj, mine),
	     theirs = bpf_object__next_map(h->t->skel->obj, theirs))
		h->err = bpf_map__fd(theirs) >= 0 ? bpf_map__reuse_fd(mine, bpf_map__fd(theirs))
						  : bpf_map__set_autocreate(mine, false);
	h->err = h->err ?: iotrace_bpf__load(h->s);
	h->load_ms = tracer_now_ms() - t3;
	if (!h->err)
		after_load(h->t, h->s, h->steps);
}

static void *load_second_half(void *arg)
{
	load_second(arg);
	__atomic_store_n(&maps_sync.second_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Opens t->skel configured and loads it with a second instance in a second thread; 1 when
 * it should load in one (nothing given to the second), 0 when loaded, or the error.
 */
static int load_in_two(struct tracer *t, const struct tracer_config *cfg,
		       const struct bpf_object_open_opts *opts, const uint32_t *ids,
		       const struct btf_index *btf, const struct load_steps *steps)
{
	struct premake premake;
	struct second_half h = { .build = t->build, .opts = opts, .verbose = cfg->verbose,
				 .premake = &premake };
	char (*logs)[STATS_LOG_SIZE] = NULL;
	pthread_t thread;
	int err = open_configured(t, cfg, opts, ids, btf), n, given, premade = 0;

	if (err)
		return err;
	n = t->skel->skeleton->prog_cnt;
	bool to_b[n], attach[n];

	for (int i = 0; i < n; i++)
		attach[i] = bpf_program__autoattach(*t->skel->skeleton->progs[i].prog);
	given = split_programs(t->skel, to_b);
	if (!given)
		return 1;
	h.t = t;
	h.steps = steps;
	h.mine = to_b;
	h.attach = attach;
	maps_sync.state = 0;
	maps_sync.premade = maps_sync.second_done = maps_sync.mapping = 0;
	maps_sync.exclude = cfg->serve || cfg->top ? t->skel->maps.proc_slot : NULL;
	bpf_program__set_autoload(t->skel->progs.maps_ready, true);
	if (cfg->verbose)
		logs = verifier_stats(t->skel);
	tracer_premake_plan(t->skel->obj, &premake);
	err = -pthread_create(&thread, NULL, load_second_half, &h);
	if (!err) {
		tracer_premake_half(&premake, 0); /* the second thread makes the other */
		wait_sync(false);
		premade = tracer_premake_adopt(&premake);
		err = iotrace_bpf__load(t->skel);
		set_maps_state(err ? -1 : 1); /* failed before the maps, or loaded: let it go on */
		if (!err)
			after_load(t, t->skel, steps);
		spin_until(&maps_sync.second_done); /* woken from a join, ~1 ms later here */
		pthread_join(thread, NULL);
		t->skel2 = h.s;
		err = err ?: h.err;
	}
	if (!err && cfg->verbose) {
		print_verifier_stats(t->skel, logs, t->skel2, h.logs);
		fprintf(stderr, "iotrace: second thread: %d of %d programs; open %.1f ms, kernel BTF "
			"%.1f ms, waited for the maps %.1f ms, load %.1f ms; %d maps made beforehand\n",
			given, given + loaded_by(t->skel), h.open_ms, h.btf_ms, h.wait_ms, h.load_ms,
			premade);
	}
	free(logs);
	free(h.logs);
	return err;
}

void tracer_unload_objects(struct tracer *t, const struct load_steps *steps)
{
	steps->unmap(t);
	iotrace_bpf__destroy(t->skel2);
	iotrace_bpf__destroy(t->skel);
	t->skel = t->skel2 = NULL;
	steps->forget_warnings();
}

int tracer_load_objects(struct tracer *t, const struct tracer_config *cfg, const char *btf_path,
			const uint32_t *ids, const struct btf_index *btf,
			const struct load_steps *steps)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf_path);
	char (*logs)[STATS_LOG_SIZE];
	int err;

	if (two_threads(cfg)) {
		err = load_in_two(t, cfg, &opts, ids, btf, steps);
		/* An id the by-id build did not record (by_id.c) fails the same way in one
		 * thread: the caller loads the usual way instead (tracer_load.c). */
		bool unrecorded = err == -ESRCH && by_id_on();

		if (!err)
			return 0;
		if (err < 0 && cfg->verbose)
			fprintf(stderr, "iotrace: loading in two threads failed (%s); %s\n",
				strerror(-err), unrecorded ? "not by ids again" : "again in one");
		tracer_unload_objects(t, steps);
		if (unrecorded)
			return err;
	}
	err = open_configured(t, cfg, &opts, ids, btf);
	if (!err && getenv("IOTRACE_VERIFIER_LOG")) {
		struct walk_log w = {};

		err = walk_log_set(t->skel, &w);
		err = err ?: iotrace_bpf__load(t->skel);
		return walk_log_write(&w) ?: err;
	}
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
