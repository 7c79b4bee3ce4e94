/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run mode's process table and ledger (the engine's, engine.h): process events and
 * harvested slots become proc_records; at the end whatever the kernel still holds is read
 * and everything moves into a run_result. Never prints.
 */
#ifndef IOTRACE_COLLECT_H
#define IOTRACE_COLLECT_H

#include <sys/types.h>
#include "model/model.h"
#include "kernel/tracer.h"

struct collector;
struct names;

/* A collector whose files are named from names (the engine's table); NULL out of memory. */
struct collector *collector_new(struct names *names);
/* Binds the tracer once it is open, before any event is polled; -ENOMEM on failure. */
int collector_start(struct collector *c, struct tracer *t);
void collector_free(struct collector *c);
/*
 * A process leaves its slot (it exited, or the run ends): fn(pid, slot) runs before the
 * slot is given back, while what the kernel keeps per slot is still the process's.
 */
typedef void (*collector_retire_fn)(uint32_t pid, uint32_t slot, void *ctx);
void collector_on_retire(struct collector *c, collector_retire_fn fn, void *ctx);
/*
 * Record for a process iotrace started or attached to itself, and its row in the kernel's
 * slot table: before tracer_watch.
 */
int collector_add_root(struct collector *c, pid_t pid, pid_t ppid, uint32_t slot,
		       const char *comm, const char *args, uint64_t start_ns);
/*
 * Regularly while the run goes on, after a new ledger epoch and the events read: the slot
 * table read again when notices were lost; entries of files not used lately and, now and
 * then, the per-file block records leave the kernel for the process records.
 */
int collector_tick(struct collector *c); /* returns ms until the next tick */
/* The processes still alive with their own slot (--trace samples their counters). */
typedef void (*collector_live_fn)(uint32_t pid, uint32_t slot, void *ctx);
void collector_for_each_live(struct collector *c, collector_live_fn fn, void *ctx);
/* One struct iot_proc_event (EV_LEDGER_FULL is the engine's). */
int collector_on_event(void *ctx, void *data, size_t size);
/*
 * Harvests what is still in the kernel and moves every record into r, with each process's
 * container; nothing is resolved or derived (the engine does it once its sinks are done
 * and the tracer is closed: collect_resolve_files, model_derive). The collector keeps
 * nothing.
 */
int collector_finish(struct collector *c, struct run_result *r);
/*
 * Every process's files named (r->names) and their residency read, now, at the end; the
 * engine calls it after closing the tracer, so that the programs' mapped maps (~30 MiB in
 * a 50,000-file run) are gone before the residency memo (~10 MB there) is made. -ENOMEM
 * when a name could not be kept.
 */
int collect_resolve_files(struct run_result *r);

#endif
