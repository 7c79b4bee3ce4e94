// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer's life: configure, load (with CO-RE), map, attach, detach, close. It sets up the
 * parts (tracer_hooks.c switches off what this kernel lacks, tracer_trace.c and
 * tracer_stacks.c size and map theirs), which, like it, use tracer.c's helpers.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "by_id.h"
#include "kbtf.h"
#include "model/syscall_table.h"
#include "tracer_impl.h"

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


/* Before loading again: the warnings of the load that failed are not the new one's. */
static void forget_warnings(void)
{
	last_libbpf_warning[0] = core_miss[0] = '\0';
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
 * On the kernel it was built on (the minimal BTF fits and nothing was probed), the full
 * build loads as its by-id build (by_id.h): libbpf then parses no kernel BTF.
 * IOTRACE_FULL_BTF=1 (CO-RE against the kernel's BTF) or IOTRACE_BY_ID=0 turns it off.
 * With may false, or when libbpf refuses the handlers, the usual way (again).
 */
static void use_by_id(struct tracer *t, const struct tracer_config *cfg, bool may)
{
	const char *env = getenv("IOTRACE_BY_ID");

	may = may && t->build == BUILD_FULL && !(env && !strcmp(env, "0"));
	if (!may || !by_id_begin(&kbtf_cut)) {
		by_id_end();
		return;
	}
	if (cfg->verbose)
		fprintf(stderr, "iotrace: attach targets and kfuncs by the ids recorded at build "
			"time: libbpf parses no kernel BTF\n");
}

/*
 * Asks the kernel's BTF what it has (~10 ms to parse), picks the build and every event's way,
 * and loads: the kernel it was built on skips the asking and takes the full build and every
 * tracepoint, unless that load fails.
 */
static int load(struct tracer *t, const struct tracer_config *cfg, const struct load_steps *steps)
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
	use_by_id(t, cfg, btf_fd >= 0 && !ix);
	err = refuse_stacks(t, cfg) ?: tracer_load_objects(t, cfg, btf_path, ids, ix, steps);
	if (err && err != -ECANCELED && !ix && err != -EPERM && err != -EACCES && err != -ENOTSUP) {
		/* Not quite the kernel it was built on: ask its BTF, choose again, retry. */
		tracer_unload_objects(t, steps);
		use_by_id(t, cfg, false);
		btf = btf__load_vmlinux_btf();
		ix = btf_index_new(btf);
		t->probed = ix != NULL;
		t->build = choose_build(ix, &t->build_why);
		err = refuse_stacks(t, cfg) ?: tracer_load_objects(t, cfg, btf_path, ids, ix, steps);
	}
	if (!err && by_id_on()) /* said once it loaded so (not after a retry the usual way) */
		snprintf(t->core + strlen(t->core), sizeof(t->core) - strlen(t->core),
			 "; attach targets and kfuncs by their ids recorded then");
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

/* What map_counters maps; everything it set undone (tracer_close, a load retried). */
static void unmap_counters(struct tracer *t)
{
	ring_buffer__free(t->events);
	t->events = NULL;
	map_munmap(t->proc_slot, t->proc_slot_len);
	map_munmap(t->sc, t->sc_len);
	map_munmap(t->io, t->io_len);
	map_munmap(t->moves, t->moves_len);
	map_munmap(t->marks, t->marks_len);
	map_munmap(t->files, t->files_len);
	map_munmap(t->rows, t->rows_len);
	map_munmap(t->slot_rows, t->slot_rows_len);
	t->proc_slot = NULL;
	t->sc = NULL;
	t->io = NULL;
	t->moves = NULL;
	t->marks = NULL;
	t->files = NULL;
	t->rows = NULL;
	t->slot_rows = NULL;
	unmap_trace(t);
	t->mapped = false;
}

/*
 * The counters user space reads in place, and the ring buffer of events: 0, or what failed
 * in *what (nothing is left mapped then).
 */
static int map_counters(struct tracer *t, const struct tracer_config *cfg,
			tracer_event_fn on_event, void *ctx, const char **what)
{
	int err;

	t->proc_slot = map_mmap(t->skel->maps.proc_slot, &t->proc_slot_len);
	t->sc = map_mmap(t->skel->maps.sc_cache, &t->sc_len);
	t->io = map_mmap(t->skel->maps.io_cache, &t->io_len);
	t->moves = map_mmap(t->skel->maps.cache_moves, &t->moves_len);
	t->marks = map_mmap(t->skel->maps.slot_marks, &t->marks_len);
	t->files = map_mmap(t->skel->maps.file_stats, &t->files_len);
	t->rows = map_mmap(t->skel->maps.file_rows, &t->rows_len);
	if (!cfg->serve && !cfg->snoop)
		t->slot_rows = map_mmap(t->skel->maps.slot_procs, &t->slot_rows_len);
	*what = "map the BPF counters";
	if (!t->proc_slot || !t->sc || !t->io || !t->moves || !t->marks || !t->files || !t->rows ||
	    (!cfg->serve && !cfg->snoop && !t->slot_rows))
		goto fail;
	*what = "create the event ring buffer";
	t->events = ring_buffer__new(bpf_map__fd(cfg->snoop ? t->skel->maps.block_events
						       : t->skel->maps.proc_events),
				     on_event, ctx, NULL);
	if (!t->events || (cfg->on_name && ring_buffer__add(t->events,
							    bpf_map__fd(t->skel->maps.name_events),
							    cfg->on_name, ctx)) ||
	    map_trace(t, cfg, ctx) || map_stacks(t, cfg, ctx))
		goto fail;
	t->mapped = true;
	return 0;
fail:
	err = errno ? -errno : -ENOMEM;
	unmap_counters(t);
	return err;
}

/* map_counters as a step of loading: by the first loader thread done (tracer_objects.c). */
struct map_args {
	const struct tracer_config *cfg;
	tracer_event_fn on_event;
	void *ctx;
};

static int map_step(struct tracer *t, void *arg)
{
	const struct map_args *a = arg;
	const char *what;

	return map_counters(t, a->cfg, a->on_event, a->ctx, &what);
}

struct tracer *tracer_open(const struct tracer_config *cfg, tracer_event_fn on_event, void *ctx)
{
	struct tracer *t = calloc(1, sizeof(*t));
	struct map_args args = { cfg, on_event, ctx };
	double t_load, t_attach;
	const char *what;
	int err;

	if (!t) {
		fprintf(stderr, "iotrace: out of memory\n");
		return NULL;
	}
	verbose_libbpf = cfg->verbose;
	libbpf_set_print(libbpf_print);
	if (size_tracer(t, cfg))
		goto fail;
	t_load = tracer_now_ms();
	if (load(t, cfg, &(struct load_steps){ forget_warnings, map_step, unmap_counters, &args }))
		goto fail;
	if (!t->mapped && (err = map_counters(t, cfg, on_event, ctx, &what))) {
		report_failure(what, err);
		goto fail;
	}
	if (cfg->serve || cfg->top)
		/* serve's and top's own syscalls are not the machine's workload. */
		tracer_exclude(t, getpid());
	t_attach = tracer_now_ms();
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
	t->attach_ms = tracer_now_ms() - t_attach;
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
	unmap_counters(t);
	free(t->scratch);
	tracer_free_live_rows(t);
	iotrace_bpf__destroy(t->skel2);
	iotrace_bpf__destroy(t->skel);
	free(t);
}
