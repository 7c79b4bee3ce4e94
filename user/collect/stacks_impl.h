/* SPDX-License-Identifier: GPL-2.0 */
/* The stacks' insides, shared by stacks.c (gathering) and stacks_out.c (output). */
#ifndef IOTRACE_STACKS_IMPL_H
#define IOTRACE_STACKS_IMPL_H

#include "stacks.h"
#include "util/sym.h"

/* One stack of one (process, syscall): its frames and what its calls add up to. */
struct stack_agg {
	uint32_t pid, nr, exec_id, depth;
	uint64_t *pcs; /* innermost first: pcs[0] the call's own address, then return addresses */
	uint64_t calls, bytes, time_ns;
};

/* A process's executable mappings in one exec (the last sent). */
struct stack_space {
	uint32_t pid, exec_id;
	struct stack_vma *vmas;
	size_t nvmas;
	char **paths; /* the files of vmas, when read from /proc/PID/maps (else NULL) */
	struct sym_space *unwinder; /* DWARF mode, built from vmas when first needed */
};

/* The aggregate a process's syscall's calls since its last sample go to (DWARF mode). */
struct stack_last {
	uint32_t pid, nr;
	size_t agg;
};

struct stacks {
	int mode, by;
	stacks_name_fn name_of;
	void *ctx;
	struct stack_space *spaces;
	size_t nspaces;
	struct stack_agg *aggs;
	size_t naggs;
	struct agg_slot *index; /* aggs by (pid, nr, exec_id, frames): stacks.c */
	struct stack_last *last;
	size_t nlast;
	uint64_t samples;
	struct sym *sym;
};

/* The mappings of (pid, exec_id), or NULL. */
struct stack_space *stacks_space(struct stacks *s, uint32_t pid, uint32_t exec_id);
/* The path of the file of one of sp's mappings, or NULL. */
const char *stacks_vma_path(struct stacks *s, const struct stack_space *sp,
			    const struct stack_vma *v);

#endif
