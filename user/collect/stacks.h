/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where (--stacks FILE): the user-space stacks of I/O syscalls gathered from the kernel
 * (bpf/stacks.bpf.c: frame-pointer aggregates, or DWARF samples unwound here with libdw),
 * symbolized, and written as folded stacks ("comm;main;f;g;read 1234"), the format
 * flamegraph.pl, speedscope and Perfetto read; each process's top call sites go to the
 * report. docs/stacks.md.
 */
#ifndef IOTRACE_STACKS_H
#define IOTRACE_STACKS_H

#include <stdint.h>
#include <linux/types.h>
#include "iotrace.h"
#include "model/model.h"

struct stacks;

/* A file's path by its ledger key, or NULL. */
typedef const char *(*stacks_name_fn)(void *ctx, uint32_t dev, uint64_t ino, uint32_t igen);

/* What the folded file's numbers are: calls, bytes or time (ns) per stack. */
enum stacks_by { STACKS_BY_CALLS = 0, STACKS_BY_BYTES, STACKS_BY_TIME };

struct stacks *stacks_new(int mode, int by, stacks_name_fn name_of, void *ctx);
void stacks_free(struct stacks *s);
/* A record of the stack ring buffer (struct stack_maps, struct stack_sample). */
int stacks_on_event(struct stacks *s, const void *data, size_t size);
/* Frame-pointer mode, at the end: one (process, syscall, stack) aggregate. */
void stacks_add_fp(struct stacks *s, const struct stack_key *k, const struct stack_val *v,
		   const __u64 *ips, int depth);
/* DWARF mode: what a process's syscall did after its last sample (to that sample's stack). */
void stacks_add_pending(struct stacks *s, uint32_t pid, uint32_t nr,
			const struct stack_pending *p);
/*
 * Symbolizes every stack, writes the folded file at path, and puts each process's top call
 * sites in r->procs[].sites and the summary in r->stacks. 0, or -1 (a line printed).
 */
int stacks_finish(struct stacks *s, struct run_result *r, const char *path);

#endif
