/* SPDX-License-Identifier: GPL-2.0 */
/*
 * top's refresh policy in the engine (engine.c, which owns the tracer, the events, the ticks
 * and the name table): every process on the machine is traced as run mode traces a command's
 * (tracer_config.top); at each refresh the kernel's counters are read in place and what each
 * process, file and disk did since the last one is handed on as a struct top_sample
 * (model/top.h). Nothing streams per event: the counters are the kernel's, and only process
 * events (fork, exec, exit) and new files' names come as events.
 */
#ifndef IOTRACE_TOP_COLLECT_H
#define IOTRACE_TOP_COLLECT_H

#include <stddef.h>
#include "util/cgroup.h"
#include "model/names.h"
#include "model/top.h"
#include "kernel/tracer.h"

struct top_collector;

struct top_collector *top_collector_new(void);
/* A process event (the engine's, but EV_LEDGER_FULL), with the collector as ctx. */
int top_on_event(void *ctx, void *data, size_t size);
/*
 * Once the tracer is open (its -c cgroups name the groups of the processes in them); the
 * first interval starts now. -1 out of memory.
 */
int top_collector_start(struct top_collector *c, struct tracer *t,
			const struct cgroup_ref *cgroups, uint32_t ncgroups);
/*
 * Between refreshes, after the engine's tracer_tick and events: the slot table read again
 * when notices were lost, the ledger's idle entries taken (their counts kept for the
 * interval). Returns the milliseconds until the next tick.
 */
int top_tick(struct top_collector *c);
/*
 * The interval since the last call (or the start): what every process, file and disk did,
 * into out (top_sample_free it), its files named from names; -1 out of memory (out empty).
 */
int top_collect(struct top_collector *c, struct names *names, struct top_sample *out);
void top_collector_free(struct top_collector *c);

#endif
