// SPDX-License-Identifier: GPL-2.0
/* Kernel side of iotrace: the only file that talks to libbpf. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <time.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "iotrace.skel.h"
#include "hist.h"
#include "kbtf.h"
#include "syscall_table.h"
#include "tracer.h"

#define BTF_PATH "/sys/kernel/btf/vmlinux"
#define NOTES_PATH "/sys/kernel/notes"
/* Enough timestamps that tids collide only on machines with pid_max above it. */
#define INFLIGHT_MAX (1U << 16)

static bool verbose_libbpf;
static char last_libbpf_warning[512]; /* the first warning of a failure */

/* Keeps libbpf quiet unless -v, but remembers its last warning for our one-line error. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	va_list copy;

	if (verbose_libbpf) {
		va_copy(copy, args);
		vfprintf(stderr, fmt, copy);
		va_end(copy);
	}
	/* The first warning names the failing program; later ones only repeat the failure. */
	if (level == LIBBPF_WARN && !last_libbpf_warning[0]) {
		vsnprintf(last_libbpf_warning, sizeof(last_libbpf_warning), fmt, args);
		last_libbpf_warning[strcspn(last_libbpf_warning, "\n")] = '\0';
	}
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
	fprintf(stderr, "iotrace: failed to %s: %s%s%s%s\n", what, strerror(err),
		last_libbpf_warning[0] ? " (" : "", last_libbpf_warning,
		last_libbpf_warning[0] ? ")" : "");
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

static uint32_t round_up_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static void *map_mmap(struct bpf_map *map, size_t *len)
{
	size_t page = sysconf(_SC_PAGESIZE);
	size_t bytes = (size_t)bpf_map__value_size(map) * bpf_map__max_entries(map);
	void *p;

	*len = (bytes + page - 1) / page * page;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	return p == MAP_FAILED ? NULL : p;
}

/* serve: labels (cgroup, comm) at once; ~21 KiB of counters per label and CPU. */
#define SERVE_SLOTS 256

static uint32_t default_slots(uint32_t ncpus)
{
	/* Counters cost ncpus * slots * ~21 KiB of kernel memory; keep it near 6 MiB. */
	uint32_t slots = 256 / (ncpus ? ncpus : 1);

	if (slots > DEFAULT_SLOTS)
		slots = DEFAULT_SLOTS;
	return slots < 8 ? 8 : slots;
}

/* Tracepoints the page-cache programs need; a kernel without one gets "n/a" for them. */
static const char *const page_cache_tps[] = {
	"page_cache_sync_ra", "page_cache_async_ra", "page_cache_ra_order",
	"page_cache_ra_unbounded", "mm_filemap_add_to_page_cache", "mm_filemap_get_pages",
	"mm_filemap_fault", "mm_filemap_map_pages",
};

/* IOTRACE_DISABLE_TRACEPOINTS=a,b pretends those are missing (tests, or to bisect a bug). */
static bool disabled_by_env(const char *tp)
{
	const char *list = getenv("IOTRACE_DISABLE_TRACEPOINTS");
	size_t len = strlen(tp);

	for (const char *p = list; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (!strncmp(p, tp, len) && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

static bool kernel_has_tracepoint(const struct btf *vmlinux, const char *tp, const char **why)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	*why = "not in this kernel";
	if (disabled_by_env(tp))
		*why = "disabled by IOTRACE_DISABLE_TRACEPOINTS";
	else if (!vmlinux || btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) >= 0)
		return true; /* without BTF at hand, assume present: a failed load will tell */
	return false;
}

/* Switches off the programs whose tracepoint this kernel lacks, saying why. */
static void probe_hooks(struct tracer *t, bool full)
{
	static char pc_reason[160], dio_reason[160];
	struct iotrace_bpf *s = t->skel;
	/* Parsing vmlinux BTF costs ~12 ms: only after a failed load, or for the env list. */
	struct btf *vmlinux = full ? btf__load_vmlinux_btf() : NULL;
	struct bpf_program *pc_progs[] = {
		s->progs.handle_page_cache_sync_ra, s->progs.handle_page_cache_async_ra,
		s->progs.handle_page_cache_ra_order, s->progs.handle_page_cache_ra_unbounded,
		s->progs.handle_mm_filemap_add_to_page_cache, s->progs.handle_mm_filemap_get_pages,
		s->progs.handle_mm_filemap_fault, s->progs.handle_mm_filemap_map_pages,
	};

	const char *why;

	for (size_t i = 0; i < sizeof(page_cache_tps) / sizeof(page_cache_tps[0]); i++) {
		if (kernel_has_tracepoint(vmlinux, page_cache_tps[i], &why))
			continue;
		snprintf(pc_reason, sizeof(pc_reason), "tracepoint %s %s", page_cache_tps[i], why);
		t->page_cache_missing = pc_reason;
	}
	if (t->page_cache_missing)
		for (size_t i = 0; i < sizeof(pc_progs) / sizeof(pc_progs[0]); i++)
			bpf_program__set_autoload(pc_progs[i], false);
	if (!kernel_has_tracepoint(vmlinux, "iomap_dio_rw_begin", &why)) {
		snprintf(dio_reason, sizeof(dio_reason), "tracepoint iomap_dio_rw_begin %s", why);
		t->direct_io_missing = dio_reason;
		bpf_program__set_autoload(s->progs.handle_iomap_dio_rw_begin, false);
	}
	btf__free(vmlinux);
}

/* Snoop needs the block programs and the dirtier hook only. */
static void configure_snoop(struct iotrace_bpf *s, const struct tracer_config *cfg)
{
	struct bpf_program *keep[] = {
		s->progs.handle_writeback_dirty_folio, s->progs.handle_block_io_start,
		s->progs.handle_block_rq_insert, s->progs.handle_block_rq_issue,
		s->progs.handle_block_rq_complete,
	};
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, s->obj) {
		bool wanted = false;

		for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
			wanted = wanted || prog == keep[i];
		bpf_program__set_autoload(prog, wanted);
	}
	s->rodata->snoop = true;
	s->rodata->snoop_tgid = cfg->snoop_tgid;
	s->rodata->snoop_dev = cfg->snoop_dev;
	s->rodata->snoop_cgroup = cfg->snoop_cgroup;
}

static void configure(struct tracer *t, const struct tracer_config *cfg)
{
	struct iotrace_bpf *s = t->skel;
	uint32_t inflight = t->pid_max < INFLIGHT_MAX ? t->pid_max : INFLIGHT_MAX;

	inflight = round_up_pow2(inflight);
	bpf_map__set_max_entries(s->maps.proc_slot, (t->pid_max + 3) / 4);
	bpf_map__set_max_entries(s->maps.syscall_stats, t->ncpus * t->nr_slots * MAX_SYSCALLS);
	bpf_map__set_max_entries(s->maps.io_stats, t->ncpus * t->nr_slots * IO_KINDS);
	bpf_map__set_max_entries(s->maps.inflight, inflight);
	s->rodata->inflight_mask = inflight - 1;
	s->rodata->nr_slots = t->nr_slots;
	s->rodata->timing = cfg->timing;
	s->rodata->nr_execve = syscall_nr("execve");
	s->rodata->nr_execveat = syscall_nr("execveat");
	s->rodata->nr_rt_sigreturn = syscall_nr("rt_sigreturn");
	s->rodata->nr_fork = syscall_nr("fork");
	s->rodata->nr_vfork = syscall_nr("vfork");
	s->rodata->nr_clone = syscall_nr("clone");
	s->rodata->nr_clone3 = syscall_nr("clone3");
	for (int k = 1; k < IO_KINDS; k++) {
		int nr = io_kind_nr(k);

		if (nr >= 0)
			s->rodata->io_kind_of[nr] = k;
		s->rodata->io_request_arg[k] = io_kinds[k].request_arg;
	}
	/* Slot 0 means untraced and 1 is the overflow slot; slots past nr_slots don't exist. */
	for (uint32_t slot = 0; slot < MAX_SLOTS; slot++)
		if (slot <= OVERFLOW_SLOT || slot >= t->nr_slots)
			s->bss->slot_used[slot / 64] |= 1ULL << (slot % 64);
	/* Without timing nothing needs sys_enter: calls are counted when they return. */
	if (!cfg->timing)
		bpf_program__set_autoload(s->progs.handle_sys_enter, false);
	if (cfg->serve) {
		s->rodata->serve = true;
		s->rodata->label_comm = cfg->label_comm;
		s->rodata->nr_cgroup_filters = cfg->ncgroups;
		for (uint32_t i = 0; i < cfg->ncgroups && i < MAX_CGROUP_FILTERS; i++) {
			s->rodata->cgroup_filter_id[i] = cfg->cgroup_id[i];
			s->rodata->cgroup_filter_level[i] = cfg->cgroup_level[i];
		}
	}
	if (cfg->snoop)
		configure_snoop(s, cfg);
	else
		bpf_map__set_max_entries(s->maps.block_events, sysconf(_SC_PAGESIZE));
}

/* Structs the programs pass to bpf_rdonly_cast, by enum kernel_cast_type (bpf/iotrace.h). */
#define KT_NAME_ENTRY(name) [KT_##name] = #name,
static const char *const cast_types[KERNEL_CAST_TYPES] = { KERNEL_CAST_STRUCTS(KT_NAME_ENTRY) };

/*
 * CO-RE against the minimal BTF cut from this very kernel at build time (user/kbtf.h) when
 * it is that kernel: libbpf then searches a few dozen types instead of the kernel's ~127k
 * once per struct (~18 ms). Otherwise, or with IOTRACE_FULL_BTF=1, the kernel's own BTF.
 * Returns the minimal BTF's descriptor and sets ids[] to the kernel's ids of cast_types,
 * or returns -1.
 */
static int choose_core_btf(const struct tracer_config *cfg, char *path, size_t len,
			   uint32_t ids[KERNEL_CAST_TYPES])
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

static int open_and_load(struct tracer *t, const struct tracer_config *cfg, bool full_probe)
{
	uint32_t ids[KERNEL_CAST_TYPES] = { 0 };
	char path[64];
	int btf_fd = choose_core_btf(cfg, path, sizeof(path), ids), err;
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf_fd >= 0 ? path : NULL);

	t->skel = iotrace_bpf__open_opts(&opts);
	if (!t->skel) {
		err = -errno;
		goto out;
	}
	configure(t, cfg);
	/* The minimal BTF renumbers types: bpf_rdonly_cast needs the kernel's (maps.bpf.h). */
	memcpy((void *)t->skel->rodata->kernel_type_id, ids, sizeof(ids));
	probe_hooks(t, full_probe);
	err = iotrace_bpf__load(t->skel);
out:
	if (btf_fd >= 0)
		close(btf_fd);
	return err;
}

void tracer_exclude(struct tracer *t, pid_t tgid)
{
	if ((uint32_t)tgid < t->pid_max)
		t->proc_slot[tgid] = SLOT_NONE;
}

int tracer_open(struct tracer *t, const struct tracer_config *cfg, tracer_event_fn on_event,
		void *ctx)
{
	int err;

	memset(t, 0, sizeof(*t));
	verbose_libbpf = cfg->verbose;
	libbpf_set_print(libbpf_print);
	if (access(BTF_PATH, R_OK)) {
		fprintf(stderr, "iotrace: kernel BTF not found at %s (needs CONFIG_DEBUG_INFO_BTF)\n",
			BTF_PATH);
		return -1;
	}
	if (syscall_table_init()) {
		fprintf(stderr, "iotrace: out of memory building the syscall table\n");
		return -1;
	}
	t->pid_max = read_pid_max();
	err = libbpf_num_possible_cpus();
	if (err <= 0) {
		report_failure("count possible CPUs", err);
		return -1;
	}
	t->ncpus = err;
	t->nr_slots = cfg->max_procs ? cfg->max_procs + OVERFLOW_SLOT + 1
		      : cfg->serve ? SERVE_SLOTS : default_slots(t->ncpus);
	if (t->nr_slots > MAX_SLOTS) {
		fprintf(stderr, "iotrace: --max-procs is at most %d\n", MAX_SLOTS - 2);
		return -1;
	}
	double t_load = now_ms(), t_attach;

	err = open_and_load(t, cfg, false);
	/* A kernel without some tracepoint fails the load: find which, switch them off, retry. */
	if (err && err != -EPERM && err != -EACCES) {
		iotrace_bpf__destroy(t->skel);
		t->skel = NULL;
		last_libbpf_warning[0] = '\0';
		err = open_and_load(t, cfg, true);
	}
	if (err) {
		report_failure(t->skel ? "load the BPF programs" : "open the BPF object", err);
		goto fail;
	}
	t->proc_slot = map_mmap(t->skel->maps.proc_slot, &t->proc_slot_len);
	t->sc = map_mmap(t->skel->maps.syscall_stats, &t->sc_len);
	t->io = map_mmap(t->skel->maps.io_stats, &t->io_len);
	t->files = map_mmap(t->skel->maps.file_stats, &t->files_len);
	if (!t->proc_slot || !t->sc || !t->io || !t->files) {
		err = -errno;
		report_failure("map the BPF counters", err);
		goto fail;
	}
	t->events = ring_buffer__new(bpf_map__fd(cfg->snoop ? t->skel->maps.block_events
						       : t->skel->maps.proc_events),
				     on_event, ctx, NULL);
	if (!t->events) {
		err = -errno;
		report_failure("create the event ring buffer", err);
		goto fail;
	}
	if (cfg->serve)
		tracer_exclude(t, getpid()); /* serve's own syscalls are not the machine's workload */
	t_attach = now_ms();
	err = iotrace_bpf__attach(t->skel);
	if (err) {
		report_failure("attach the BPF programs", err);
		goto fail;
	}
	if (cfg->verbose)
		fprintf(stderr, "iotrace: BPF open+load %.1f ms, attach %.1f ms\n",
			t_attach - t_load, now_ms() - t_attach);
	return 0;
fail:
	tracer_close(t);
	return -1;
}


int tracer_for_each_label(struct tracer *t,
			  void (*fn)(const struct label_key *key, uint32_t slot, void *ctx), void *ctx)
{
	int fd = bpf_map__fd(t->skel->maps.label_slots);
	struct label_key key, next;
	void *prev = NULL;
	uint32_t slot;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &slot))
			fn(&key, slot, ctx);
	}
	return 0;
}

/* Calls fn on every request in the kernel's in-flight table until fn returns true. */
static void for_each_inflight(struct tracer *t,
			      bool (*fn)(const struct block_rq_info *info, void *ctx), void *ctx)
{
	int fd = bpf_map__fd(t->skel->maps.block_inflight);
	struct block_rq_info info;
	__u64 key, next;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &info) && fn(&info, ctx))
			return;
	}
}

static bool is_charged(const struct block_rq_info *info, void *found)
{
	*(bool *)found = info->charge != CHARGE_NONE;
	return *(bool *)found;
}

static bool traced_block_io_in_flight(struct tracer *t)
{
	bool found = false;

	for_each_inflight(t, is_charged, &found);
	return found;
}

struct stale_count {
	uint64_t before_ns, count;
};

static bool count_stale(const struct block_rq_info *info, void *ctx)
{
	struct stale_count *c = ctx;

	c->count += info->start_ns < c->before_ns;
	return false;
}

uint64_t tracer_count_stale_block(struct tracer *t, uint64_t now_ns, uint64_t age_ns)
{
	struct stale_count c = { .before_ns = now_ns - age_ns };

	for_each_inflight(t, count_stale, &c);
	return c.count;
}

void tracer_wait_block_idle(struct tracer *t, int max_ms)
{
	for (int ms = 0; ms < max_ms && traced_block_io_in_flight(t); ms++)
		usleep(1000);
}

void tracer_detach(struct tracer *t)
{
	iotrace_bpf__detach(t->skel);
}

void tracer_close(struct tracer *t)
{
	ring_buffer__free(t->events);
	if (t->proc_slot)
		munmap(t->proc_slot, t->proc_slot_len);
	if (t->sc)
		munmap(t->sc, t->sc_len);
	if (t->io)
		munmap(t->io, t->io_len);
	if (t->files)
		munmap(t->files, t->files_len);
	iotrace_bpf__destroy(t->skel);
	memset(t, 0, sizeof(*t));
}

uint32_t tracer_claim_slot(struct tracer *t)
{
	for (uint32_t w = 0; w < MAX_SLOTS / 64; w++) {
		__u64 *word = &t->skel->bss->slot_used[w];
		__u64 used = __atomic_load_n(word, __ATOMIC_RELAXED);

		while (used != ~0ULL) {
			__u64 bit = ~used & (used + 1);

			used = __atomic_fetch_or(word, bit, __ATOMIC_SEQ_CST);
			if (!(used & bit))
				return w * 64 + __builtin_ctzll(bit);
		}
	}
	return 0;
}

int tracer_watch(struct tracer *t, pid_t tgid, uint32_t slot, bool pending)
{
	if (tgid <= 0 || (uint32_t)tgid >= t->pid_max)
		return -1;
	__atomic_store_n(&t->proc_slot[tgid], (uint16_t)(slot | (pending ? SLOT_PENDING : 0)),
			 __ATOMIC_SEQ_CST);
	return 0;
}

static void add_io_stat(struct io_summary *dst, const struct io_stat *src)
{
	struct io_summary one = {
		.requested = src->requested,
		.transferred = src->transferred,
		.unknown_request = src->unknown_request,
		.size_min = src->size_min_plus1 ? src->size_min_plus1 - 1 : 0,
		.size_max = src->size_max,
		.lat_min = src->lat_min_plus1 ? src->lat_min_plus1 - 1 : 0,
		.lat_max = src->lat_max,
	};

	memcpy(one.size_hist, src->size_hist, sizeof(one.size_hist));
	memcpy(one.lat_hist, src->lat_hist, sizeof(one.lat_hist));
	dense_add_io(dst, &one);
}

int tracer_harvest(struct tracer *t, uint32_t slot, struct profile *out)
{
	struct dense_profile *d = &t->scratch;

	dense_reset(d);
	tracer_add_slot(t, slot, d, true);
	dense_finish_io(d);
	return dense_to_profile(d, out);
}

void tracer_add_slot(struct tracer *t, uint32_t slot, struct dense_profile *d, bool take)
{
	for (uint32_t cpu = 0; cpu < t->ncpus; cpu++) {
		size_t base = (size_t)(cpu * t->nr_slots + slot);
		struct syscall_stat *sc = &t->sc[base * MAX_SYSCALLS];
		struct io_stat *io = &t->io[base * IO_KINDS];

		for (int nr = 0; nr < MAX_SYSCALLS; nr++) {
			d->sc[nr].calls += sc[nr].calls;
			d->sc[nr].errors += sc[nr].errors;
			d->sc[nr].total_ns += sc[nr].total_ns;
		}
		for (int k = 1; k < IO_KINDS; k++)
			add_io_stat(&d->io[k], &io[k]);
		if (!take)
			continue;
		memset(sc, 0, MAX_SYSCALLS * sizeof(*sc));
		memset(io, 0, IO_KINDS * sizeof(*io));
	}
}

void tracer_release_slot(struct tracer *t, uint32_t slot)
{
	if (slot <= OVERFLOW_SLOT || slot >= t->nr_slots)
		return;
	__atomic_fetch_and(&t->skel->bss->slot_used[slot / 64], ~(1ULL << (slot % 64)),
			   __ATOMIC_SEQ_CST);
}

bool tracer_slot_in_use(struct tracer *t, uint32_t slot)
{
	uint64_t word = __atomic_load_n(&t->skel->bss->slot_used[slot / 64], __ATOMIC_SEQ_CST);

	return slot > OVERFLOW_SLOT && slot < t->nr_slots && (word >> (slot % 64)) & 1;
}

void tracer_read_drops(struct tracer *t, uint64_t *drops)
{
	for (int i = 0; i < DROP_COUNTERS; i++)
		drops[i] = __atomic_load_n(&t->skel->bss->drops[i], __ATOMIC_SEQ_CST);
	drops[DROP_BLOCK_UNSEEN] += t->unseen_swept;
}

/* Adds one page-bitmap chunk's readahead pages, used and unused, to a file record. */
static void add_chunk(struct file_record *rec, const struct chunk_bits *bits)
{
	for (int w = 0; w < CHUNK_WORDS; w++) {
		rec->unused_ra_pages += __builtin_popcountll(bits->ra[w] & ~bits->used[w]);
		rec->used_ra_pages += __builtin_popcountll(bits->ra[w] & bits->used[w]);
	}
}

/* Adds each page-bitmap chunk's readahead pages, used and unused, to its file record. */
static void count_unused(struct tracer *t, struct file_record *recs, uint32_t n)
{
	int fd = bpf_map__fd(t->skel->maps.page_bits);
	struct chunk_key key, next;
	struct chunk_bits bits;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.file < n && !bpf_map_lookup_elem(fd, &key, &bits))
			add_chunk(&recs[key.file], &bits);
	}
}

/* "dir/sub/name" from the leaf-first dentry names the kernel side recorded. */
static char *join_path(const struct path_parts *pp)
{
	size_t len = 1;
	char *path;

	for (uint32_t i = 0; i < pp->nparts && i < PATH_PARTS; i++)
		len += strnlen(pp->part[i], PART_LEN) + 1;
	path = calloc(1, len);
	for (int i = (int)(pp->nparts < PATH_PARTS ? pp->nparts : PATH_PARTS) - 1; path && i >= 0;
	     i--) {
		strncat(path, pp->part[i], PART_LEN);
		if (i)
			strcat(path, "/");
	}
	return path;
}

/* The path recorded for a file entry ("dir/name" below its mount), or NULL. */
static char *recorded_path(int paths_fd, const struct file_key *key)
{
	struct path_key pk = { .dev = key->dev, .ino = key->ino };
	struct path_parts pp;

	if (bpf_map_lookup_elem(paths_fd, &pk, &pp) || !pp.nparts || pp.truncated)
		return NULL;
	return join_path(&pp);
}

int tracer_take_files(struct tracer *t, uint32_t tgid, struct file_record **out, size_t *n)
{
	uint32_t count = t->files ? t->skel->bss->nr_files : 0;
	int index_fd, bits_fd, paths_fd, free_fd;
	struct file_record *recs = NULL, *grown;

	*out = NULL;
	*n = 0;
	if (!count || !tgid)
		return 0;
	if (count > MAX_FILES)
		count = MAX_FILES;
	index_fd = bpf_map__fd(t->skel->maps.file_index);
	bits_fd = bpf_map__fd(t->skel->maps.page_bits);
	paths_fd = bpf_map__fd(t->skel->maps.file_paths);
	free_fd = bpf_map__fd(t->skel->maps.free_files);
	for (uint32_t i = 0; i < count; i++) {
		struct file_stat *st = &t->files[i];
		struct file_key key = st->key;
		struct file_record *r;

		if (st->key.tgid != tgid)
			continue;
		grown = realloc(recs, (*n + 1) * sizeof(*recs));
		if (!grown)
			break; /* left in the kernel: collected at the end */
		recs = grown;
		r = &recs[(*n)++];
		memset(r, 0, sizeof(*r));
		r->st = *st;
		r->unused_exact = !t->skel->bss->drops[DROP_CHUNKS];
		r->path = recorded_path(paths_fd, &key);
		/* The chunks of this entry, read and freed. */
		for (__u64 c = 0; c < st->chunk_end; c++) {
			struct chunk_key ck = { .file = i, .chunk = c };
			struct chunk_bits bits;

			if (bpf_map_lookup_elem(bits_fd, &ck, &bits))
				continue;
			add_chunk(r, &bits);
			bpf_map_delete_elem(bits_fd, &ck);
		}
		/* The process is gone, so nothing writes the entry any more: give it back. */
		bpf_map_delete_elem(index_fd, &key);
		memset(st, 0, sizeof(*st));
		bpf_map_update_elem(free_fd, NULL, &i, BPF_ANY);
	}
	*out = recs;
	return 0;
}

int tracer_collect_files(struct tracer *t, struct file_record **out, size_t *n)
{
	uint32_t count = t->skel->bss->nr_files;
	int paths_fd = bpf_map__fd(t->skel->maps.file_paths);
	struct file_record *recs;

	*out = NULL;
	*n = 0;
	if (count > MAX_FILES)
		count = MAX_FILES;
	recs = calloc(count ? count : 1, sizeof(*recs));
	if (!recs)
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		recs[i].st = t->files[i];
		recs[i].unused_exact = !t->skel->bss->drops[DROP_CHUNKS];
		recs[i].path = recorded_path(paths_fd, &recs[i].st.key);
	}
	count_unused(t, recs, count);
	*out = recs;
	*n = count;
	return 0;
}

/*
 * Requests of traced processes still in the in-flight table after they exited and the
 * block layer went idle completed unseen (the kernel skips a tp_btf program nested in
 * itself): count them, without latencies, and say how many.
 */
struct sweep {
	struct tracer *t;
	struct block_record *recs;
	size_t *n;
};

static bool sweep_one(const struct block_rq_info *info, void *ctx)
{
	struct sweep *sw = ctx;
	struct block_record *recs = sw->recs;
	struct block_key k = { .tgid = info->tgid, .dev = info->dev, .op = info->op };
	size_t i;

	if (info->charge == CHARGE_NONE)
		return false;
	for (i = 0; i < *sw->n; i++)
		if (!memcmp(&recs[i].key, &k, sizeof(k)))
			break;
	if (i == *sw->n) {
		if (*sw->n == MAX_BLOCK_KEYS)
			return false;
		memset(&recs[i], 0, sizeof(recs[i]));
		recs[i].key = k;
		(*sw->n)++;
	}
	recs[i].st.requests++;
	recs[i].st.bytes += info->bytes;
	recs[i].st.size_hist[hist_bucket_of(info->bytes)]++;
	sw->t->unseen_swept++;
	return false;
}

static void sweep_unseen(struct tracer *t, struct block_record *recs, size_t *n)
{
	struct sweep sw = { .t = t, .recs = recs, .n = n };

	for_each_inflight(t, sweep_one, &sw);
}

int tracer_collect_blocks(struct tracer *t, struct block_record **out, size_t *n,
			  bool end_of_run)
{
	int fd = bpf_map__fd(t->skel->maps.block_stats);
	struct block_key key, next;
	struct block_record *recs = calloc(MAX_BLOCK_KEYS, sizeof(*recs));
	void *prev = NULL;
	size_t count = 0;

	*out = recs;
	*n = 0;
	if (!recs)
		return -1;
	while (count < MAX_BLOCK_KEYS && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &recs[count].st))
			continue;
		recs[count++].key = key;
	}
	*n = count;
	if (end_of_run)
		sweep_unseen(t, recs, n);
	return 0;
}

int tracer_events_fd(struct tracer *t)
{
	return ring_buffer__epoll_fd(t->events);
}

int tracer_poll_events(struct tracer *t)
{
	return ring_buffer__consume(t->events);
}
