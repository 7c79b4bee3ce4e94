/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iotrace top's collection step: every process on the machine is traced as run mode traces a
 * command's (tracer_config.top); at each refresh the kernel's counters are read in place and
 * what each process, file and disk did since the last one is handed on as a struct
 * top_sample (model/top.h). Nothing streams per event: the counters are the kernel's, and
 * only process events (fork, exec, exit) and new files' names come as events.
 */
#ifndef IOTRACE_TOP_COLLECT_H
#define IOTRACE_TOP_COLLECT_H

#include <stddef.h>
#include "util/cgroup.h"
#include "model/top.h"
#include "kernel/tracer.h"

struct top_collector;

struct top_collector *top_collector_new(void);
/*
 * The tracer's callbacks: process events (tracer_open's on_event) and file names
 * (tracer_config.on_name), with the collector as their ctx.
 */
int top_on_event(void *ctx, void *data, size_t size);
int top_on_name(void *ctx, void *data, size_t size);
/*
 * Once the tracer is open (its -c cgroups name the groups of the processes in them); the
 * first interval starts now. -1 out of memory.
 */
int top_collector_start(struct top_collector *c, struct tracer *t,
			const struct cgroup_ref *cgroups, uint32_t ncgroups);
/*
 * Between refreshes, every few tens of milliseconds: process events read, the ledger's idle
 * entries taken (their counts kept for the interval). Returns the milliseconds until the
 * next tick.
 */
int top_tick(struct top_collector *c);
/* Whether the kernel asked for a tick now (its ledger is filling). */
bool top_wants_tick(const struct top_collector *c);
/*
 * The interval since the last call (or the start): what every process, file and disk did,
 * into out (top_sample_free it); -1 out of memory (out empty).
 */
int top_collect(struct top_collector *c, struct top_sample *out);
void top_collector_free(struct top_collector *c);

#endif
