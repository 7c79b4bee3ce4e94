/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace writer's insides, shared by trace.c (events, flows) and
 * trace_out.c (the JSON document, counter tracks, names, the end).
 */
#ifndef IOTRACE_TRACE_OUT_IMPL_H
#define IOTRACE_TRACE_OUT_IMPL_H

#include <stdio.h>
#include "trace_out.h"

/* Counter tracks of a process: the kernel's (enum trace_counter), then block bytes. */
enum { CT_BLOCK_READ = TRACE_COUNTERS, CT_BLOCK_WRITE, COUNTER_TRACKS };

struct trace_proc {
	uint32_t pid;
	char comm[COMM_LEN];
	uint64_t now[COUNTER_TRACKS], last[COUNTER_TRACKS]; /* cumulative; at the last sample */
	bool shown; /* its last sample had a value: a zero ends the tracks */
};

/* A syscall that block requests started in: its flows, once its own event says how. */
enum link_state { LINK_PENDING = 0, LINK_DRAWN, LINK_NONE };
struct trace_link {
	uint32_t tid;
	uint64_t start_ns;
	int state;
	int64_t remaining; /* requests still to come (known once the call's event came) */
	struct trace_block *waiting; /* requests that completed before the call's event */
	size_t nwaiting;
};

struct trace_writer {
	struct trace_options o;
	FILE *f;
	uint64_t origin_ns, last_sample_ns, seq;
	struct trace_stats st;
	struct trace_proc *procs;
	size_t nprocs;
	struct trace_link *links;
	size_t nlinks;
	uint32_t disks[32]; /* kernel dev_t of each disk track, by pseudo-pid order */
	size_t ndisks;
	bool data_call[MAX_SYSCALLS]; /* the read/write family: its result is bytes */
};

/* Pseudo-pid of a disk's track (a process named "disk NAME" in the viewer). */
#define DISK_PID_BASE 2000000000u

/* Room for n more events (counted as not written, and the trace truncated, when none). */
bool out_room(struct trace_writer *w, unsigned n);
/* Starts an event: {"ph":"X","name":NAME,"pid":P,"tid":T,"ts":... (no closing brace). */
void out_begin(struct trace_writer *w, char ph, const char *name, uint32_t pid, uint32_t tid,
	       uint64_t ts_ns);
/* ,"KEY":"escaped" */
void out_str(struct trace_writer *w, const char *key, const char *s);
/* "args":{"KEY":"escaped"}} : an event's only argument, and its end. */
void out_only_arg(struct trace_writer *w, const char *key, const char *s);
/* A duration in µs with ns precision ("12.345"). */
void out_us(FILE *f, uint64_t ns);
/* A flow's id between a call and its requests ("bind_id"). */
uint64_t flow_id(uint32_t tid, uint64_t start_ns);
struct trace_proc *trace_proc_of(struct trace_writer *w, uint32_t pid);
/*
 * The document's end: the last samples, names, lifetimes and the metadata; closes the file
 * and frees the writer. Returns 0, or -1 (one line printed) when the file could not be
 * written. trace_finish() calls it once the events are all out.
 */
int trace_end(struct trace_writer *w, const struct run_result *r, uint64_t end_ns,
	      uint64_t lost, struct trace_stats *out);

#endif
