// SPDX-License-Identifier: GPL-2.0
/*
 * Syscall numbers and names come from libseccomp's tables for x86_64, so no number is
 * typed by hand; numbers it does not know print as "syscall_N".
 */
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "iotrace.h"
#include "syscall_table.h"

const struct io_kind_info io_kinds[IO_KINDS] = {
	[IO_READ] = { "read", REQ_ARG3 },
	[IO_WRITE] = { "write", REQ_ARG3 },
	[IO_PREAD64] = { "pread64", REQ_ARG3 },
	[IO_PWRITE64] = { "pwrite64", REQ_ARG3 },
	[IO_READV] = { "readv", REQ_IOVEC },
	[IO_WRITEV] = { "writev", REQ_IOVEC },
	[IO_PREADV] = { "preadv", REQ_IOVEC },
	[IO_PWRITEV] = { "pwritev", REQ_IOVEC },
	[IO_PREADV2] = { "preadv2", REQ_IOVEC },
	[IO_PWRITEV2] = { "pwritev2", REQ_IOVEC },
	[IO_SENDFILE] = { "sendfile", REQ_ARG4 },
	[IO_COPY_FILE_RANGE] = { "copy_file_range", REQ_ARG5 },
	[IO_SPLICE] = { "splice", REQ_ARG5 },
};

/* Reads and writes name their side; a copy's destination side is the NAME_dst op. */
const struct file_op_info file_ops[FILE_OPS_END] = {
	[FOP_read] = { "read", FD_ARG1, 0, 0, FOC_READ },
	[FOP_write] = { "write", FD_ARG1, 0, 0, FOC_WRITE },
	[FOP_pread64] = { "pread64", FD_ARG1, 0, 0, FOC_READ },
	[FOP_pwrite64] = { "pwrite64", FD_ARG1, 0, 0, FOC_WRITE },
	[FOP_readv] = { "readv", FD_ARG1, 0, 0, FOC_READ },
	[FOP_writev] = { "writev", FD_ARG1, 0, 0, FOC_WRITE },
	[FOP_preadv] = { "preadv", FD_ARG1, 0, 0, FOC_READ },
	[FOP_pwritev] = { "pwritev", FD_ARG1, 0, 0, FOC_WRITE },
	[FOP_preadv2] = { "preadv2", FD_ARG1, 0, 0, FOC_READ },
	[FOP_pwritev2] = { "pwritev2", FD_ARG1, 0, 0, FOC_WRITE },
	/* sendfile(out_fd, in_fd, ...): the source is the second argument. */
	[FOP_sendfile] = { "sendfile", FD_ARG2, FD_ARG1, FOP_sendfile_dst, FOC_READ },
	[FOP_sendfile_dst] = { "sendfile", FD_NONE, 0, 0, FOC_WRITE },
	[FOP_copy_file_range] = { "copy_file_range", FD_ARG1, FD_ARG3, FOP_copy_file_range_dst,
				  FOC_READ },
	[FOP_copy_file_range_dst] = { "copy_file_range", FD_NONE, 0, 0, FOC_WRITE },
	[FOP_splice] = { "splice", FD_ARG1, FD_ARG3, FOP_splice_dst, FOC_READ },
	[FOP_splice_dst] = { "splice", FD_NONE, 0, 0, FOC_WRITE },
	[FOP_fsync] = { "fsync", FD_ARG1, 0, 0, FOC_SYNC },
	[FOP_fdatasync] = { "fdatasync", FD_ARG1, 0, 0, FOC_SYNC },
	[FOP_sync_file_range] = { "sync_file_range", FD_ARG1, 0, 0, FOC_SYNC },
	[FOP_fallocate] = { "fallocate", FD_ARG1, 0, 0, FOC_OTHER },
	[FOP_ftruncate] = { "ftruncate", FD_ARG1, 0, 0, FOC_OTHER },
	[FOP_open] = { "open", FD_RET, 0, 0, FOC_OPEN },
	[FOP_openat] = { "openat", FD_RET, 0, 0, FOC_OPEN },
	[FOP_openat2] = { "openat2", FD_RET, 0, 0, FOC_OPEN },
	[FOP_creat] = { "creat", FD_RET, 0, 0, FOC_OPEN },
	[FOP_close] = { "close", FD_ENTER, 0, 0, FOC_CLOSE },
	/* mmap(addr, len, prot, flags, fd, off) */
	[FOP_mmap] = { "mmap", FD_ARG5, 0, 0, FOC_MAP },
	[FOP_lseek] = { "lseek", FD_ARG1, 0, 0, FOC_OTHER },
	[FOP_getdents64] = { "getdents64", FD_ARG1, 0, 0, FOC_OTHER },
	[FOP_fadvise64] = { "fadvise64", FD_ARG1, 0, 0, FOC_OTHER },
	[FOP_readahead] = { "readahead", FD_ARG1, 0, 0, FOC_OTHER },
	/* io_uring requests on their file, one call per CQE (bpf/uring.bpf.c). */
#define URING_FOP(name, cls) [FOP_uring_##name] = { #name, FD_NONE, 0, 0, cls, true }
	URING_FOP(READV, FOC_READ), URING_FOP(WRITEV, FOC_WRITE), URING_FOP(FSYNC, FOC_SYNC),
	URING_FOP(READ_FIXED, FOC_READ), URING_FOP(WRITE_FIXED, FOC_WRITE),
	URING_FOP(SYNC_FILE_RANGE, FOC_SYNC), URING_FOP(SENDMSG, FOC_WRITE),
	URING_FOP(RECVMSG, FOC_READ), URING_FOP(FALLOCATE, FOC_OTHER), URING_FOP(READ, FOC_READ),
	URING_FOP(WRITE, FOC_WRITE), URING_FOP(FADVISE, FOC_OTHER), URING_FOP(SEND, FOC_WRITE),
	URING_FOP(RECV, FOC_READ), URING_FOP(SPLICE, FOC_WRITE), URING_FOP(TEE, FOC_WRITE),
	URING_FOP(SEND_ZC, FOC_WRITE), URING_FOP(SENDMSG_ZC, FOC_WRITE),
	URING_FOP(READ_MULTISHOT, FOC_READ), URING_FOP(FTRUNCATE, FOC_OTHER),
	URING_FOP(RECV_ZC, FOC_READ), URING_FOP(READV_FIXED, FOC_READ),
	URING_FOP(WRITEV_FIXED, FOC_WRITE),
};

/* The ledger's row of an opcode on its file: uring_NAME for the opcodes that use one. */
#define UFOP_NONE(name) 0
#define UFOP_READ(name) FOP_uring_##name
#define UFOP_WRITE(name) FOP_uring_##name
#define UFOP_SYNC(name) FOP_uring_##name
#define UFOP_FILE(name) FOP_uring_##name
#define URING_OP_ENTRY(name, kind) [UOP_##name] = { #name, UK_##kind, UFOP_##kind(name) },
const struct uring_op_info uring_ops[MAX_URING_OPS] = { URING_OPS(URING_OP_ENTRY) };

const char *uring_op_name(uint32_t op, char *buf, size_t len)
{
	if (op < MAX_URING_OPS && uring_ops[op].name)
		return uring_ops[op].name;
	snprintf(buf, len, "OP_%u", op);
	return buf;
}

void for_each_io_call(void (*fn)(int nr, int rw, void *ctx), void *ctx)
{
	static const char *const others[] = {
		"fsync", "fdatasync", "sync_file_range", "sync", "syncfs", "msync",
		"open", "openat", "openat2", "creat", "io_uring_enter",
	};

	for (int k = 1; k < IO_KINDS; k++) {
		/* read, pread64, readv...: read; the same with "write": write; copies: both. */
		const char *name = io_kinds[k].name;
		int nr = syscall_nr(name);

		if (nr >= 0 && nr < MAX_SYSCALLS)
			fn(nr, strstr(name, "read") ? 1 : strstr(name, "write") ? 2 : 3, ctx);
	}
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		int nr = syscall_nr(others[i]);

		if (nr >= 0 && nr < MAX_SYSCALLS)
			fn(nr, 0, ctx);
	}
}

bool uring_op_multishot(uint32_t op)
{
	static const char *const multishot[] = { "POLL_ADD", "ACCEPT", "RECV", "RECVMSG",
						 "READ_MULTISHOT", "RECV_ZC", "TIMEOUT" };

	for (size_t i = 0; op < MAX_URING_OPS && uring_ops[op].name &&
			   i < sizeof(multishot) / sizeof(multishot[0]); i++)
		if (!strcmp(uring_ops[op].name, multishot[i]))
			return true;
	return false;
}

bool uring_op_has_bytes(uint32_t op)
{
	return op < MAX_URING_OPS && (uring_ops[op].kind == UK_READ || uring_ops[op].kind == UK_WRITE);
}

static char *names[MAX_SYSCALLS];
static int kind_nr[IO_KINDS];

int syscall_table_init(void)
{
	for (uint32_t nr = 0; nr < MAX_SYSCALLS; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);

		if (!name && asprintf(&name, "syscall_%u", nr) < 0)
			return -1;
		names[nr] = name;
	}
	free(names[SYSCALL_OTHER]);
	names[SYSCALL_OTHER] = strdup("syscall_other");
	for (int k = 1; k < IO_KINDS; k++)
		kind_nr[k] = syscall_nr(io_kinds[k].name);
	/* Each io_uring ledger op is described, under its opcode's name (a build-time slip). */
	for (int op = 0; op < MAX_URING_OPS; op++) {
		int fop = uring_ops[op].file_op;

		if (fop && (!file_ops[fop].uring || strcmp(file_ops[fop].name, uring_ops[op].name))) {
			fprintf(stderr, "iotrace: internal error: io_uring op %s has no ledger row\n",
				uring_ops[op].name);
			return -1;
		}
	}
	return names[SYSCALL_OTHER] ? 0 : -1;
}

const char *syscall_name(uint32_t nr)
{
	return names[nr < MAX_SYSCALLS ? nr : SYSCALL_OTHER];
}

int syscall_nr(const char *name)
{
	int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, name);

	return nr >= 0 && nr < SYSCALL_OTHER ? nr : -1;
}

int io_kind_nr(int kind)
{
	return kind > 0 && kind < IO_KINDS ? kind_nr[kind] : -1;
}

int file_op_nr(int op)
{
	if (op <= 0 || op >= FILE_OPS_END || file_ops[op].fd_arg == FD_NONE)
		return -1;
	return syscall_nr(file_ops[op].name);
}
