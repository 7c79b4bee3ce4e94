/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The timeline (--trace FILE): the kernel's trace events (bpf/trace.bpf.c) and the process
 * events, written as the run goes in the Trace Event Format (the JSON object form), which
 * Perfetto UI, chrome://tracing and speedscope open. What it holds: docs/trace.md.
 */
#ifndef IOTRACE_TRACE_H
#define IOTRACE_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "iotrace.h"
#include "model/model.h"

struct trace_writer;

/* A file's name as the report shows it, or NULL (ino 0: none). */
typedef const char *(*trace_name_fn)(void *ctx, uint32_t dev, uint64_t ino, uint32_t igen);

struct trace_options {
	const char *path;
	uint64_t min_ns;      /* --trace-min */
	uint64_t interval_ns; /* --trace-interval: counter samples */
	uint64_t max_events;  /* --trace-max-events */
	trace_name_fn name_of;
	void *name_ctx;
};

/* Creates the file (prints one line and returns NULL when it cannot). */
struct trace_writer *trace_open(const struct trace_options *o);
/* Timestamps are written relative to origin_ns (CLOCK_MONOTONIC). */
void trace_start(struct trace_writer *w, uint64_t origin_ns);
/* A process iotrace registered itself (the command, or -p's process). */
void trace_process(struct trace_writer *w, uint32_t pid, const char *comm);
/* A record of the trace ring buffer other than TE_NAME. */
int trace_on_event(struct trace_writer *w, const void *data, size_t size);
/* fork, exec, exit, comm changes: instants and names. */
void trace_on_proc(struct trace_writer *w, const struct iot_proc_event *e);
/* A process's counter values now (cumulative, enum trace_counter). */
void trace_counters(struct trace_writer *w, uint32_t pid, const uint64_t v[TRACE_COUNTERS]);
/* Writes each process's counter tracks for the interval that ends now. */
void trace_sample(struct trace_writer *w, uint64_t now_ns);
/* At the end: a request whose completion the kernel skipped (late, without latency). */
void trace_unseen(struct trace_writer *w, const struct block_rq_info *info, uint64_t now_ns);
/*
 * Names, lifetimes, the last samples and the metadata; closes the file. Returns 0, or -1
 * (one line printed) when the file could not be written.
 */
int trace_finish(struct trace_writer *w, const struct run_result *r, uint64_t end_ns,
		 uint64_t lost, struct trace_stats *out);
/* Closes and removes the file of a run that never started. */
void trace_abort(struct trace_writer *w);

#endif
