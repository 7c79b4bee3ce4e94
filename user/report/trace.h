/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The timeline (--trace FILE): the kernel's trace events (bpf/trace.bpf.c) and the process
 * events, written as the run goes in the Trace Event Format (the JSON object form), which
 * Perfetto UI, chrome://tracing and speedscope open, into the document of trace_out.h. What
 * it holds: docs/trace.md.
 */
#ifndef IOTRACE_TRACE_H
#define IOTRACE_TRACE_H

#include <stdint.h>
#include "iotrace.h"
#include "model/model.h"
#include "trace_out.h"

/* A record of the trace ring buffer other than TE_NAME. */
int trace_on_event(struct trace_writer *w, const void *data, size_t size);
/* fork, exec, exit, comm changes: instants and names. */
void trace_on_proc(struct trace_writer *w, const struct iot_proc_event *e);
/* At the end: a request whose completion the kernel skipped (late, without latency). */
void trace_unseen(struct trace_writer *w, const struct block_rq_info *info, uint64_t now_ns);
/*
 * The requests still waiting for their call's event (without flows), then the document's end
 * (trace_end); closes the file. Returns 0, or -1 (one line printed) when the file could not
 * be written.
 */
int trace_finish(struct trace_writer *w, const struct run_result *r, uint64_t end_ns,
		 uint64_t lost, struct trace_stats *out);

#endif
