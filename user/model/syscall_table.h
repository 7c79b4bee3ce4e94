/* SPDX-License-Identifier: GPL-2.0 */
/* Syscall names (from libseccomp) and the read/write family iotrace sizes. */
#ifndef IOTRACE_SYSCALL_TABLE_H
#define IOTRACE_SYSCALL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "iotrace.h"

/*
 * The catalogue of the syscalls iotrace knows: one row each (SYSCALL_CATALOGUE in
 * bpf/iotrace.h, whose enums, io_kind and the ledger's ops, come from the same rows), read
 * by every stage (the loader's rodata, the model's sums, the story, top, compare, the
 * timeline and the stacks). Adding a syscall is a row there and its hook in bpf/.
 */
enum syscall_family {
	SF_RW = 1, /* the read/write family: sizes and latency histograms (an io_kind) */
	SF_SYNC,   /* writes a file's or the system's dirty data back */
	SF_OPEN,
	SF_CLOSE,
	SF_MAP,    /* mmap */
	SF_FILE,   /* other calls on a file's descriptor (lseek, fallocate...) */
	SF_URING,  /* io_uring_enter */
	SF_NAMING, /* renames, links, unlinks: no row, names files again (bpf/names.bpf.c) */
	SF_PROC,   /* the process tree's and the loader's: exec, fork, clone, rt_sigreturn */
};

/* A row of the catalogue by its syscall's name: SC_read, SC_execve... */
#define SC_ROW(x, name, ...) SC_##name,
enum syscall_row { SYSCALL_CATALOGUE(SC_ROW, SC_ROW, SC_ROW, SC_ROW, 0) SYSCALL_ROWS };

/* Which way the bytes go: a copy (sendfile, copy_file_range, splice) reads and writes. */
enum syscall_direction { SD_NONE = 0, SD_READ, SD_WRITE, SD_COPY };

struct syscall_info {
	const char *name; /* as strace prints it */
	int family;       /* enum syscall_family */
	int direction;    /* enum syscall_direction */
	bool sync;        /* a sync call of the story's sync_calls */
	int file_op;      /* enum file_op: its ledger row (FOP_NONE: none) */
	int io_kind;      /* enum io_kind (IO_NONE: not sized) */
	int request_arg;  /* enum io_request_arg: how it states the bytes it asks for */
	int fd_arg;       /* enum fd_arg: where its fd is */
	int fd2_arg, fd2_op; /* a copy's destination: its fd and the ledger op it counts under */
};

/* The catalogue's rows (no init needed), *n of them, by enum syscall_row. */
const struct syscall_info *syscall_catalogue(size_t *n);
/* The number of a row's syscall (SC_execve) on this machine, or -1. */
int syscall_row_nr(int row);
/*
 * Whether a function of that name is the C library's wrapper of a catalogued call on a file
 * (read, pread64, open64, lseek64): a frame that only passes the call on to the kernel.
 */
bool syscall_wrapper_name(const char *name);
/* The catalogue's row of a syscall number, or NULL (after syscall_table_init). */
const struct syscall_info *syscall_info_of(uint32_t nr);
/* The row of an io_kind (IO_read...), or NULL. */
const struct syscall_info *io_kind_info(int kind);
/* The syscall name of an io_kind ("?" for none). */
const char *io_kind_name(int kind);
/* Whether the bytes of a direction count as read, as written. */
bool direction_reads(int direction);
bool direction_writes(int direction);

/* What a syscall does to a file, for the per-file table's columns. */
enum file_op_class { FOC_READ = 1, FOC_WRITE, FOC_SYNC, FOC_OPEN, FOC_CLOSE, FOC_MAP, FOC_OTHER };

/* A ledger op (enum file_op, FILE_OPS in iotrace.h) as the catalogue describes it. */
struct file_op_info {
	const char *name;    /* the syscall, as strace names it (JSON key); "?" unknown */
	int fd_arg;          /* enum fd_arg: where its fd is */
	int fd2_arg, fd2_op; /* a copy's destination: its fd and the op it counts under */
	int cls;             /* enum file_op_class */
	bool uring;          /* an io_uring opcode's row (name: the opcode), not a syscall's */
};

/* The description of a ledger op (a copy's NAME_dst op: the syscall's name, FD_NONE). */
struct file_op_info file_op_info(int op);

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
 * 2: writes, 3: copies, both), the sync family, opens and io_uring_enter (rw 0), each known
 * to this kernel's table once.
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
