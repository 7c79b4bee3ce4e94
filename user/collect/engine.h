/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run mode's engine: the tracer, the process table and ledger (collect.c), the file names
 * and the optional sinks (--trace's timeline, --stacks) behind one handle. It takes every
 * kernel event and every tick itself, answers every name look-up from its one table, and at
 * the end finishes each sink before the model is derived, once. The command above it
 * (cmd/run.c) only starts or attaches to the processes, waits on engine_events_fd(), and
 * says what happened to them. Never prints but one line per failure.
 */
#ifndef IOTRACE_ENGINE_H
#define IOTRACE_ENGINE_H

#include <stdbool.h>
#include <sys/types.h>
#include "model/model.h"
#include "model/options.h"

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
 * or the wait timed out), then the timeline's counters sampled when due.
 */
void engine_read_events(struct engine *e, bool ready);
/* The command iotrace started ended with this wait status. */
void engine_command_exited(struct engine *e, int status);
/* A signal stopped the run (partial: the command was still running). */
void engine_stopped(struct engine *e, int signo, bool partial);
/*
 * The run is over: --sync, the last block requests, the programs detached, every record the
 * kernel still holds harvested, the timeline and the stacks finished, then model_derive once.
 * When memory ran out one line says so, and the result shows what it holds.
 */
void engine_finish(struct engine *e);

#endif
