/* SPDX-License-Identifier: GPL-2.0 */
/* Syscall names (from libseccomp) and the read/write family iotrace sizes. */
#ifndef IOTRACE_SYSCALL_TABLE_H
#define IOTRACE_SYSCALL_TABLE_H

#include <stdint.h>

struct io_kind_info {
	const char *name;  /* syscall name, as strace prints it */
	int request_arg;   /* enum io_request_arg */
};

extern const struct io_kind_info io_kinds[];

/* Resolves the names above to numbers; call once before the lookups below. */
int syscall_table_init(void);
/* Name of a syscall number; never NULL ("syscall_N" when unknown). */
const char *syscall_name(uint32_t nr);
/* Number of a syscall by name, or -1. */
int syscall_nr(const char *name);
/* Syscall number of an io kind, or -1 when this kernel's table lacks it. */
int io_kind_nr(int kind);

#endif
