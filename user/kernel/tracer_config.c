// SPDX-License-Identifier: GPL-2.0
/*
 * The programs' configuration before they load (tracer_load.c calls it): map sizes, the
 * read-only data the verifier sees as constants (syscall numbers, the ledger's operations,
 * sampling, filters), which programs load for each subcommand.
 */
#include <unistd.h>
#include <bpf/libbpf.h>
#include "model/syscall_table.h"
#include "tracer_impl.h"

/*
 * Per-thread syscall states (struct thread_io): threads whose tids are equal modulo this
 * take turns in one, which costs them their fd cache and, when timed, a timestamp.
 */
#define INFLIGHT_MAX (1U << 14)

static uint32_t round_up_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

int tracer_config_add_cgroup(struct tracer_config *cfg, uint64_t id, uint32_t level)
{
	for (uint32_t i = 0; i < cfg->ncgroups; i++)
		if (cfg->cgroup_id[i] == id)
			return 0; /* named twice (a name and its ID) */
	if (cfg->ncgroups == MAX_CGROUP_FILTERS)
		return -1;
	cfg->cgroup_id[cfg->ncgroups] = id;
	cfg->cgroup_level[cfg->ncgroups++] = level;
	return 0;
}

/* Snoop needs the block programs and the dirtier hook only. */
static void configure_snoop(struct iotrace_bpf *s, const struct tracer_config *cfg)
{
	struct bpf_program *keep[] = {
		s->progs.handle_writeback_dirty_folio, s->progs.handle_writeback_dirty_page,
		s->progs.handle_block_io_start,
		s->progs.handle_block_rq_insert, s->progs.handle_block_rq_issue,
		s->progs.handle_block_rq_complete, s->progs.handle_block_rq_merge,
		s->progs.sweep_block_inflight,
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
}

/* The ledger's syscalls and where each finds its fds (FILE_OPS in iotrace.h). */
static void configure_file_ops(struct iotrace_bpf *s)
{
	for (int op = 1; op < FILE_OPS_END; op++) {
		int nr = file_op_nr(op);

		if (nr >= 0)
			s->rodata->file_op_of[nr] = op;
		s->rodata->fd_arg[op] = file_op_info(op).fd_arg;
		s->rodata->fd2_arg[op] = file_op_info(op).fd2_arg;
		s->rodata->fd2_op[op] = file_op_info(op).fd2_op;
	}
	/* Renames, links and unlinks: no row, their sys_exit names files again (names.bpf.c). */
	size_t rows;
	const struct syscall_info *row = syscall_catalogue(&rows);

	for (size_t i = 0; i < rows; i++) {
		int nr = syscall_row_nr(i);

		if (row[i].family == SF_NAMING && nr >= 0)
			s->rodata->file_op_of[nr] = FOP_NAMING;
	}
	s->rodata->nr_rename = syscall_row_nr(SC_rename);
	s->rodata->nr_renameat = syscall_row_nr(SC_renameat);
	s->rodata->nr_renameat2 = syscall_row_nr(SC_renameat2);
	for (int op = 0; op < MAX_URING_OPS; op++)
		s->rodata->uring_file_op[op] = uring_ops[op].file_op;
	for (int op = 0; op < MAX_URING_OPS; op++)
		s->rodata->uring_multishot_op[op] = uring_op_multishot(op);
}

void tracer_configure(struct tracer *t, const struct tracer_config *cfg)
{
	struct iotrace_bpf *s = t->skel;
	uint32_t inflight = t->pid_max < INFLIGHT_MAX ? t->pid_max : INFLIGHT_MAX;

	inflight = round_up_pow2(inflight);
	bpf_map__set_max_entries(s->maps.proc_slot, (t->pid_max + 3) / 4);
	/* Counters' memory follows the CPUs and the keys used, not the slots (counters.bpf.c). */
	bpf_map__set_max_entries(s->maps.sc_cache, t->ncpus * SC_CACHE_ROWS);
	bpf_map__set_max_entries(s->maps.io_cache, t->ncpus * IO_CACHE_ROWS);
	bpf_map__set_max_entries(s->maps.cache_moves, t->ncpus);
	bpf_map__set_max_entries(s->maps.inflight, inflight);
	/* Rows come back as bits, but in the compat build through this queue (ledger.bpf.c). */
	if (t->build != BUILD_COMPAT)
		bpf_map__set_max_entries(s->maps.free_rows_queue, 1);
	s->rodata->inflight_mask = inflight - 1;
	s->rodata->nr_slots = t->nr_slots;
	s->rodata->timing = cfg->timing;
	/* --trace times every call: a slow one must not be missed. */
	s->rodata->sample_period = cfg->timing && !cfg->time_all && !cfg->trace ? SAMPLE_PERIOD : 0;
	s->rodata->nr_execve = syscall_row_nr(SC_execve);
	s->rodata->nr_execveat = syscall_row_nr(SC_execveat);
	s->rodata->nr_rt_sigreturn = syscall_row_nr(SC_rt_sigreturn);
	s->rodata->nr_fork = syscall_row_nr(SC_fork);
	s->rodata->nr_vfork = syscall_row_nr(SC_vfork);
	s->rodata->nr_clone = syscall_row_nr(SC_clone);
	s->rodata->nr_clone3 = syscall_row_nr(SC_clone3);
	for (int k = 1; k < IO_KINDS; k++) {
		int nr = io_kind_nr(k);

		if (nr >= 0)
			s->rodata->io_kind_of[nr] = k;
		s->rodata->io_request_arg[k] = io_kind_info(k)->request_arg;
	}
	configure_file_ops(s);
	/* Slot 0 means untraced and 1 is the overflow slot; slots past nr_slots don't exist. */
	for (uint32_t slot = 0; slot < MAX_SLOTS; slot++)
		if (slot <= OVERFLOW_SLOT || slot >= t->nr_slots)
			s->bss->slot_used[slot / 64] |= 1ULL << (slot % 64);
	/* The sweep is an iterator of block_inflight, attached once loaded (attach_sweep). */
	bpf_program__set_autoattach(s->progs.sweep_block_inflight, false);
	/* Without timing nothing needs sys_enter: calls are counted when they return. */
	if (!cfg->timing)
		bpf_program__set_autoload(s->progs.handle_sys_enter, false);
	if (!cfg->serve) /* labels are serve's */
		bpf_map__set_max_entries(s->maps.label_slots, 1);
	/* The slot table is run mode's and top's (their loaders' copy of who each slot is). */
	bpf_map__set_max_entries(s->maps.slot_procs, cfg->serve || cfg->snoop ? 1 : t->nr_slots);
	s->rodata->top = cfg->top;
	if (cfg->serve) {
		/* serve counts labels, never files: no names to follow. */
		bpf_program__set_autoload(s->progs.handle_inode_set_ctime_to_ts, false);
		bpf_program__set_autoload(s->progs.handle_ctime_ns_xchg, false);
		bpf_program__set_autoload(s->progs.handle_ctime_xchg_skip, false);
	}
	if (cfg->serve || cfg->top) {
		s->rodata->serve = cfg->serve;
		s->rodata->label_comm = cfg->label_comm;
	}
	if (cfg->serve || cfg->top || cfg->snoop) {
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
	if (!cfg->on_name) /* names are run mode's */
		bpf_map__set_max_entries(s->maps.name_events, sysconf(_SC_PAGESIZE));
	configure_trace(t, cfg);
	configure_stacks(t, cfg);
}
