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
