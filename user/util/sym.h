/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbols and unwinding with elfutils' libdw (libdwfl): the names of the code at a file
 * offset of an ELF file, inlined frames included, and a DWARF-mode sample's stack unwound
 * from its registers and stack bytes with the files' call-frame information.
 */
#ifndef IOTRACE_SYM_H
#define IOTRACE_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "iotrace.h"

struct sym;

struct sym *sym_new(void);
void sym_free(struct sym *y);

#define SYM_MAX_INLINE 8

/*
 * The frames of the code at file offset off of the ELF file at path: the function, then
 * the calls inlined into it down to the one at off (outermost first); "[unknown] (FILE)"
 * without a symbol. return_address: off is a return address (the call is just before it).
 * Returns how many names were put in names (valid until sym_free), 1 at least.
 */
int sym_frames(struct sym *y, const char *path, uint64_t off, bool return_address,
	       const char *names[SYM_MAX_INLINE]);

/* An executable file mapping of a process, with its file's path (NULL: unknown). */
struct sym_map {
	uint64_t start, end, offset; /* offset: of start in the file, in bytes */
	const char *path;
};

/* A process's address space for unwinding: its mappings' files reported to libdwfl. */
struct sym_space;
struct sym_space *sym_space_new(const struct sym_map *maps, size_t n);
void sym_space_free(struct sym_space *sp);
/*
 * The return addresses of a DWARF sample, innermost first: pcs[0] the call's own address,
 * then each caller's (a return address: the call is just before it). Returns how many.
 */
int sym_space_unwind(struct sym_space *sp, const struct stack_sample *s, uint64_t *pcs,
		     int max);

#endif
