/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace document (--trace FILE) that the timeline's events (trace.h) go in: made, started,
 * its counter tracks sampled as the run goes, ended by trace_finish() or removed. Written as
 * it goes, in the Trace Event Format's JSON object form. What it holds: docs/trace.md.
 */
#ifndef IOTRACE_TRACE_OUT_H
#define IOTRACE_TRACE_OUT_H

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
/* A process's counter values now (cumulative, enum trace_counter). */
void trace_counters(struct trace_writer *w, uint32_t pid, const uint64_t v[TRACE_COUNTERS]);
/* Writes each process's counter tracks for the interval that ends now. */
void trace_sample(struct trace_writer *w, uint64_t now_ns);
/* Closes and removes the file of a run that never started. */
void trace_abort(struct trace_writer *w);

#endif
