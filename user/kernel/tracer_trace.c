// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline's part of the libbpf layer (--trace; bpf/trace.bpf.c): which syscalls it
 * shows, the size of its ring buffer, and its per-slot counters.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "model/syscall_table.h"
#include "tracer_impl.h"

/* The ring of trace events: at ~100 bytes an event, 320,000 events between two drains. */
#define TRACE_RING_BYTES (32u << 20)

static void mark(int nr, int rw, void *ctx)
{
	struct iotrace_bpf *s = ctx;

	s->rodata->trace_nr[nr] = 1;
	s->rodata->trace_rw[nr] = rw;
}

void configure_trace(struct tracer *t, const struct tracer_config *cfg)
{
	struct iotrace_bpf *s = t->skel;

	if (!cfg->trace) {
		bpf_map__set_max_entries(s->maps.trace_events, sysconf(_SC_PAGESIZE));
		return;
	}
	s->rodata->trace = true;
	s->rodata->trace_min_ns = cfg->trace_min_ns;
	s->rodata->trace_wake_bytes = TRACE_RING_BYTES / 4;
	bpf_map__set_max_entries(s->maps.trace_events, TRACE_RING_BYTES);
	bpf_map__set_max_entries(s->maps.trace_counters, t->nr_slots);
	bpf_map__set_max_entries(s->maps.trace_named, 16384);
	/* Names go through the trace's ring then, in order with the events naming them. */
	bpf_map__set_max_entries(s->maps.name_events, sysconf(_SC_PAGESIZE));
	for_each_io_call(mark, s);
}

int map_trace(struct tracer *t, const struct tracer_config *cfg, void *ctx)
{
	if (!cfg->trace)
		return 0;
	t->trace_ctr = map_mmap(t->skel->maps.trace_counters, &t->trace_ctr_len);
	if (!t->trace_ctr)
		return -errno;
	return ring_buffer__add(t->events, bpf_map__fd(t->skel->maps.trace_events), cfg->on_trace,
				ctx);
}

void unmap_trace(struct tracer *t)
{
	map_munmap(t->trace_ctr, t->trace_ctr_len);
	t->trace_ctr = NULL;
}

void tracer_trace_counters(struct tracer *t, uint32_t slot, uint64_t out[TRACE_COUNTERS],
			   bool take)
{
	uint64_t *c = t->trace_ctr && slot < t->nr_slots ? &t->trace_ctr[slot * TRACE_COUNTERS]
							 : NULL;

	for (int i = 0; i < TRACE_COUNTERS; i++) {
		out[i] = c ? __atomic_load_n(&c[i], __ATOMIC_RELAXED) : 0;
		/* The slot's process is gone: only its late writeback could still add, and the
		 * slot is not reused before the loader frees it. */
		if (c && take)
			__atomic_fetch_sub(&c[i], out[i], __ATOMIC_RELAXED);
	}
}

struct unseen_walk {
	tracer_request_fn fn;
	void *ctx;
};

static bool visit_unseen(const struct block_rq_info *info, void *ctx)
{
	struct unseen_walk *w = ctx;

	w->fn(info, w->ctx);
	return false;
}

void tracer_unseen_requests(struct tracer *t, tracer_request_fn fn, void *ctx)
{
	struct unseen_walk w = { fn, ctx };

	tracer_for_each_inflight(t, visit_unseen, &w);
}
