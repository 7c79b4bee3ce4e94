// SPDX-License-Identifier: GPL-2.0
/*
 * A DWARF-mode sample's stack unwound with libdwfl (sym.h): the process's executable file
 * mappings reported as modules at their load bias, the sample's registers as the initial
 * frame, its copied stack bytes as the only memory; each frame's return address is found
 * with the files' call-frame information (.eh_frame, .debug_frame), as perf's libdw
 * unwinder does.
 */
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include "sym.h"

struct sym_space {
	Dwfl *dwfl;
	bool attached;
	const struct stack_sample *cur; /* the sample being unwound */
	uint64_t *pcs;
	int n, max;
};

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* The load bias of a mapping: its address minus the address the file gives its offset. */
static int load_bias(const char *path, uint64_t start, uint64_t offset, uint64_t *bias)
{
	Dwfl *probe = dwfl_begin(&proc_callbacks);
	Dwfl_Module *mod = probe ? dwfl_report_elf(probe, path, path, -1, 0, true) : NULL;
	Dwarf_Addr b;
	Elf *elf = mod ? dwfl_module_getelf(mod, &b) : NULL;
	size_t phnum;
	int err = -1;

	if (elf && !elf_getphdrnum(elf, &phnum)) {
		for (size_t i = 0; i < phnum && err; i++) {
			GElf_Phdr mem, *ph = gelf_getphdr(elf, i, &mem);

			if (ph && ph->p_type == PT_LOAD && offset >= ph->p_offset &&
			    offset < ph->p_offset + ph->p_filesz) {
				*bias = start - (ph->p_vaddr + (offset - ph->p_offset));
				err = 0;
			}
		}
	}
	if (probe)
		dwfl_end(probe);
	return err;
}

struct sym_space *sym_space_new(const struct sym_map *maps, size_t n)
{
	struct sym_space *sp = calloc(1, sizeof(*sp));

	if (!sp || !(sp->dwfl = dwfl_begin(&proc_callbacks))) {
		free(sp);
		return NULL;
	}
	dwfl_report_begin(sp->dwfl);
	for (size_t i = 0; i < n; i++) {
		uint64_t bias;
		bool seen = false;

		/* A file's first mapping places it; its others are the same module. */
		for (size_t k = 0; k < i && !seen; k++)
			seen = maps[k].path && maps[i].path && !strcmp(maps[k].path, maps[i].path);
		if (seen || !maps[i].path || load_bias(maps[i].path, maps[i].start, maps[i].offset,
						      &bias))
			continue;
		dwfl_report_elf(sp->dwfl, maps[i].path, maps[i].path, -1, bias, true);
	}
	dwfl_report_end(sp->dwfl, NULL, NULL);
	return sp;
}

void sym_space_free(struct sym_space *sp)
{
	if (!sp)
		return;
	dwfl_end(sp->dwfl);
	free(sp);
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct sym_space *sp = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = sp;
	return sp->cur->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

/* Memory is the copied stack only: a read elsewhere ends the unwinding. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct stack_sample *s = ((struct sym_space *)arg)->cur;
	uint64_t sp = s->regs[DW_SP];

	if (addr < sp || addr + sizeof(*result) > sp + s->size)
		return false;
	memcpy(result, &s->stack[addr - sp], sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct stack_sample *s = ((struct sym_space *)arg)->cur;
	Dwarf_Word regs[DW_REGS];

	for (int i = 0; i < DW_REGS; i++)
		regs[i] = s->regs[i];
	/* arm64's pc has no DWARF number: set apart (x86-64's is register 16, the last). */
	if (DW_PC == DW_SP + 1) {
		dwfl_thread_state_register_pc(thread, regs[DW_PC]);
		return dwfl_thread_state_registers(thread, 0, DW_PC, regs);
	}
	return dwfl_thread_state_registers(thread, 0, DW_REGS, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct sym_space *sp = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	sp->pcs[sp->n++] = pc;
	return sp->n < sp->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int sym_space_unwind(struct sym_space *sp, const struct stack_sample *s, uint64_t *pcs,
		     int max)
{
	sp->cur = s;
	sp->pcs = pcs;
	sp->n = 0;
	sp->max = max;
	if (!sp->attached) {
		if (!dwfl_attach_state(sp->dwfl, NULL, s->tid ? s->tid : 1, &thread_callbacks, sp))
			goto only_pc;
		sp->attached = true;
	}
	/* Ends with -1 at the bottom of the stack or where the unwinding cannot go on. */
	dwfl_getthread_frames(sp->dwfl, s->tid ? s->tid : 1, on_frame, sp);
only_pc:
	if (!sp->n && max)
		pcs[sp->n++] = s->regs[DW_PC];
	return sp->n;
}
