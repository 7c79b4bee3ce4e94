/* SPDX-License-Identifier: GPL-2.0 */
/* Syscall names (from libseccomp) and the read/write family iotrace sizes. */
#ifndef IOTRACE_SYSCALL_TABLE_H
#define IOTRACE_SYSCALL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "iotrace.h"

struct io_kind_info {
	const char *name;  /* syscall name, as strace prints it */
	int request_arg;   /* enum io_request_arg */
};

extern const struct io_kind_info io_kinds[];

/* What a syscall does to a file, for the per-file table's columns. */
enum file_op_class { FOC_READ = 1, FOC_WRITE, FOC_SYNC, FOC_OPEN, FOC_CLOSE, FOC_MAP, FOC_OTHER };

/* The per-file ledger's syscalls (enum file_op, FILE_OPS in iotrace.h). */
struct file_op_info {
	const char *name;    /* the syscall, as strace names it (JSON key) */
	int fd_arg;          /* enum fd_arg: where its fd is */
	int fd2_arg, fd2_op; /* a copy's destination: its fd and the op it counts under */
	int cls;             /* enum file_op_class */
	bool uring;          /* an io_uring opcode's row (name: the opcode), not a syscall's */
};

extern const struct file_op_info file_ops[FILE_OPS_END];

/* io_uring opcodes (URING_OPS in iotrace.h): liburing's name without IORING_OP_. */
struct uring_op_info {
	const char *name; /* NULL past the opcodes this build knows */
	int kind;         /* enum uring_kind */
	int file_op;      /* the ledger's op for it on its file (FOP_uring_NAME), or 0 */
};

extern const struct uring_op_info uring_ops[MAX_URING_OPS];

/* An opcode's name ("READ"), or "OP_<n>" for one this build does not know (in buf). */
const char *uring_op_name(uint32_t op, char *buf, size_t len);
/* Whether an opcode may post several CQEs (its multishot variant). */
bool uring_op_multishot(uint32_t op);
/* Whether an opcode moves data: its results are bytes. */
bool uring_op_has_bytes(uint32_t op);

/*
 * The I/O syscalls the timeline and the stacks show: the read/write family (rw 1: reads,
 * 2: writes, 3: copies, both), sync calls, opens and io_uring_enter (rw 0), each known to
 * this kernel's table once.
 */
void for_each_io_call(void (*fn)(int nr, int rw, void *ctx), void *ctx);

/* Resolves the names above to numbers; call once before the lookups below. */
int syscall_table_init(void);
/* Name of a syscall number; never NULL ("syscall_N" when unknown). */
const char *syscall_name(uint32_t nr);
/* Number of a syscall by name, or -1. */
int syscall_nr(const char *name);
/* Syscall number of an io kind, or -1 when this kernel's table lacks it. */
int io_kind_nr(int kind);
/* Syscall number of a file op (the copies' _dst ops: -1), or -1 when the kernel lacks it. */
int file_op_nr(int op);

#endif
