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
};

static char *names[MAX_SYSCALLS];
static int kind_nr[IO_KINDS];

int syscall_table_init(void)
{
	for (uint32_t nr = 0; nr < MAX_SYSCALLS; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);

		if (!name && asprintf(&name, "syscall_%u", nr) < 0)
			return -1;
		names[nr] = name;
	}
	free(names[SYSCALL_OTHER]);
	names[SYSCALL_OTHER] = strdup("syscall_other");
	for (int k = 1; k < IO_KINDS; k++)
		kind_nr[k] = syscall_nr(io_kinds[k].name);
	return names[SYSCALL_OTHER] ? 0 : -1;
}

const char *syscall_name(uint32_t nr)
{
	return names[nr < MAX_SYSCALLS ? nr : SYSCALL_OTHER];
}

int syscall_nr(const char *name)
{
	int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);

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
