/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one collection engine of run, top and serve: the tracer, the file names and the
 * optional sinks (--trace's timeline, --stacks) behind one handle, with a refresh policy per
 * subcommand. It takes every kernel event and every tick itself and answers every name
 * look-up from its one table. Run mode: the process table and ledger of collect.c, and at
 * the end each sink finished before the model is derived, once. top: each refresh the
 * interval's differences of the live processes (top_collect.c) made a view. serve: each
 * scrape the labels' cumulative counters (serve_scrape.c). The commands above it (cmd/run.c,
 * top.c, serve.c) only start or attach to processes, wait on engine_events_fd() or their
 * timers, and choose the renderer. Never prints but one line per failure.
 */
#ifndef IOTRACE_ENGINE_H
#define IOTRACE_ENGINE_H

#include <stdbool.h>
#include <sys/types.h>
#include "kernel/tracer.h"
#include "model/model.h"
#include "model/options.h"
#include "model/top.h"
#include "util/cgroup.h"

struct prom_report;

struct engine;

/*
 * Makes --trace's and --stacks' files (so that a bad path fails first), loads and attaches
 * the programs; r is the result the run fills. Prints one line and returns NULL on failure.
 */
struct engine *engine_open(const struct options *o, struct run_result *r);
/* Closes everything; a run never finished leaves no timeline and no stacks file. */
void engine_close(struct engine *e);
/* Readable when the kernel has events for the engine (for the caller's epoll). */
int engine_events_fd(struct engine *e);
/* The run's clock starts now (the timeline's origin, the wall time). */
void engine_start(struct engine *e);
/*
 * A process iotrace started (pending: nothing counted before its execve) or attached to (-p):
 * its slot, its record and the kernel's row. -1 when it cannot be traced.
 */
int engine_add_root(struct engine *e, pid_t pid, pid_t ppid, const char *comm, const char *args,
		    bool pending);
/* How long the caller may wait for events before engine_tick() wants to run (ms, 0: now). */
int engine_wait_ms(struct engine *e);
/* After each wait: the ledger's and the slot table's regular work, when it is due. */
void engine_tick(struct engine *e);
/*
 * After each wait, past the tick: the kernel's events read when ready (the fd was readable,
 * or the wait timed out), then the timeline's counters sampled when due. Negative when the
 * events could not be read (errno says why).
 */
int engine_read_events(struct engine *e, bool ready);
/* The command iotrace started ended with this wait status. */
void engine_command_exited(struct engine *e, int status);
/* A signal stopped the run (partial: the command was still running). */
void engine_stopped(struct engine *e, int signo, bool partial);
/*
 * The run is over: --sync, the last block requests, the programs detached, every record the
 * kernel still holds harvested, the timeline and the stacks finished, the tracer closed, then
 * the files' names and residency read (collect_resolve_files) and model_derive once.
 * When memory ran out one line says so, and the result shows what it holds.
 */
void engine_finish(struct engine *e);

/*
 * top: every process on the machine (cfg->top; cgroups: cfg's -c filters, which name their
 * groups), loaded and attached, the running containers asked their names. Between refreshes
 * the caller waits engine_wait_ms() and calls engine_tick(). Prints one line and returns NULL
 * on failure.
 */
struct engine *engine_open_top(const struct tracer_config *cfg, const struct cgroup_ref *cgroups);
/*
 * top: the interval since the last refresh (or the start) made a view sorted and filtered
 * by o (top_view_free it); -1 with one line printed when out of memory.
 */
int engine_refresh(struct engine *e, const struct top_view_opts *o, struct top_view *out);
/*
 * serve: every process counted under its label (cfg->serve; cgroups: cfg's -c filters).
 * The caller reads the events (new labels) with engine_read_events() when
 * engine_events_fd() is readable; scrapes may come from another thread, one at a time.
 * Prints one line and returns NULL on failure.
 */
struct engine *engine_open_serve(const struct tracer_config *cfg,
				 const struct cgroup_ref *cgroups);
/*
 * serve: every label's counters, page cache and block I/O, read now, for a renderer;
 * valid until engine_scrape_done(). NULL out of memory.
 */
const struct prom_report *engine_scrape(struct engine *e);
void engine_scrape_done(struct engine *e);

#endif
