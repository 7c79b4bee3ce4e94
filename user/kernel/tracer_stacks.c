// SPDX-License-Identifier: GPL-2.0
/*
 * The stacks' part of the libbpf layer (--stacks; bpf/stacks.bpf.c): which syscalls, the
 * sizes of their maps and ring buffer, and their readers.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "model/syscall_table.h"
#include "tracer_impl.h"

/* DWARF samples are ~8.3 KiB each: the ring holds ~4,000 between two drains. */
#define STACK_RING_DWARF (32u << 20)
#define STACK_RING_FP (4u << 20) /* mappings only */

static void mark(int nr, int rw, void *ctx)
{
	struct tracer *t = ctx;

	t->skel->rodata->stack_nr[nr] = 1;
	if (t->nstack_nrs < MAX_SYSCALLS)
		t->stack_nrs[t->nstack_nrs++] = nr;
}

void configure_stacks(struct tracer *t, const struct tracer_config *cfg)
{
	struct iotrace_bpf *s = t->skel;
	bool dwarf = cfg->stacks == STACKS_DWARF;

	if (!cfg->stacks) {
		bpf_map__set_max_entries(s->maps.stack_events, sysconf(_SC_PAGESIZE));
		return;
	}
	s->rodata->stacks = cfg->stacks;
	t->nstack_nrs = 0;
	for_each_io_call(mark, t);
	bpf_map__set_max_entries(s->maps.stack_events, dwarf ? STACK_RING_DWARF : STACK_RING_FP);
	bpf_map__set_max_entries(s->maps.stack_maps_sent, t->nr_slots);
	if (dwarf) {
		bpf_map__set_max_entries(s->maps.stack_pending, 1 << 16);
	} else {
		bpf_map__set_max_entries(s->maps.stack_traces, MAX_STACK_IDS);
		bpf_map__set_max_entries(s->maps.stack_counts, MAX_STACK_KEYS);
	}
}

int map_stacks(struct tracer *t, const struct tracer_config *cfg, void *ctx)
{
	if (!cfg->stacks)
		return 0;
	return ring_buffer__add(t->events, bpf_map__fd(t->skel->maps.stack_events),
				cfg->on_stack, ctx);
}

void tracer_stack_slot(struct tracer *t, uint32_t slot, tracer_pending_fn fn, void *ctx)
{
	uint64_t zero = 0;

	if (slot >= t->nr_slots)
		return;
	/* The next process in this slot sends its own mappings. */
	bpf_map_update_elem(bpf_map__fd(t->skel->maps.stack_maps_sent), &slot, &zero, BPF_ANY);
	/* The slot's process is gone (or the programs detached): nothing adds meanwhile. */
	for (uint32_t i = 0; t->skel->rodata->stacks == STACKS_DWARF && i < t->nstack_nrs; i++) {
		uint32_t key = SC_TAG(slot, t->stack_nrs[i]);
		int fd = bpf_map__fd(t->skel->maps.stack_pending);
		struct stack_pending got;

		if (bpf_map_lookup_elem(fd, &key, &got))
			continue;
		bpf_map_delete_elem(fd, &key);
		if (got.calls)
			fn(t->stack_nrs[i], &got, ctx);
	}
}

struct stack_walk {
	struct tracer *t;
	tracer_stack_fn fn;
	void *ctx;
};

static bool visit_stack(const void *key, const void *value, void *ctx)
{
	const struct stack_key *k = key;
	struct stack_walk *w = ctx;
	struct stack_ips st = { .depth = 0 };
	__u64 id = k->stackid;

	if (bpf_map_lookup_elem(bpf_map__fd(w->t->skel->maps.stack_traces), &id, &st) ||
	    st.depth > MAX_STACK_DEPTH)
		st.depth = 0;
	w->fn(k, value, st.ips, st.depth, w->ctx);
	return false;
}

int tracer_read_stacks(struct tracer *t, tracer_stack_fn fn, void *ctx)
{
	struct stack_walk w = { t, fn, ctx };

	return MAP_WALK(t, stack_counts, visit_stack, &w);
}
