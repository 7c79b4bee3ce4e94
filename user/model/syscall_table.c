// SPDX-License-Identifier: GPL-2.0
/*
 * The syscall catalogue's rows (bpf/iotrace.h) with their names' numbers. Syscall numbers
 * and names come from libseccomp's tables for the machine's architecture, so no number is
 * typed by hand; numbers it does not know print as "syscall_N".
 */
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "iotrace.h"
#include "syscall_table.h"

#define ROW_RW(x, name, dir, req)                                                                  \
	[SC_##name] = { #name, SF_RW, SD_##dir, false, FOP_##name, IO_##name, req, FD_ARG1, 0, 0 },
#define ROW_COPY(x, name, req, fd, fd2)                                                            \
	[SC_##name] = { #name, SF_RW, SD_COPY, false, FOP_##name, IO_##name, req, fd, fd2,         \
			FOP_##name##_dst },
#define ROW_OP(x, name, fam, fd, sync)                                                             \
	[SC_##name] = { #name, SF_##fam, SD_NONE, sync, FOP_##name, IO_NONE, 0, fd, 0, 0 },
#define ROW_CALL(x, name, fam, sync)                                                               \
	[SC_##name] = { #name, SF_##fam, SD_NONE, sync, FOP_NONE, IO_NONE, 0, FD_NONE, 0, 0 },

/* The rows of bpf/iotrace.h's SYSCALL_CATALOGUE, by enum syscall_row. */
static const struct syscall_info catalogue[SYSCALL_ROWS] = {
	SYSCALL_CATALOGUE(ROW_RW, ROW_COPY, ROW_OP, ROW_CALL, 0)
};

#define CATALOGUE_ROWS (sizeof(catalogue) / sizeof(catalogue[0]))

const struct syscall_info *syscall_catalogue(size_t *n)
{
	*n = CATALOGUE_ROWS;
	return catalogue;
}

const struct syscall_info *io_kind_info(int kind)
{
	for (size_t i = 0; kind != IO_NONE && i < CATALOGUE_ROWS; i++)
		if (catalogue[i].io_kind == kind)
			return &catalogue[i];
	return NULL;
}

int syscall_row_nr(int row)
{
	return row >= 0 && row < SYSCALL_ROWS ? syscall_nr(catalogue[row].name) : -1;
}

/* Whether the first len bytes of name are a catalogued call's with a ledger row. */
static bool file_call_named(const char *name, size_t len)
{
	for (size_t i = 0; i < CATALOGUE_ROWS; i++)
		if (catalogue[i].file_op != FOP_NONE && strlen(catalogue[i].name) == len &&
		    !strncmp(name, catalogue[i].name, len))
			return true;
	return false;
}

bool syscall_wrapper_name(const char *name)
{
	size_t len = strlen(name);

	/* open64, lseek64: the C library's large-file names of the same wrappers. */
	return file_call_named(name, len) ||
	       (len > 2 && !strcmp(name + len - 2, "64") && file_call_named(name, len - 2));
}

const char *io_kind_name(int kind)
{
	const struct syscall_info *s = io_kind_info(kind);

	return s ? s->name : "?";
}

bool direction_reads(int direction)
{
	return direction == SD_READ || direction == SD_COPY;
}

bool direction_writes(int direction)
{
	return direction == SD_WRITE || direction == SD_COPY;
}

static int op_class(const struct syscall_info *s)
{
	switch (s->family) {
	case SF_RW:
		return direction_reads(s->direction) ? FOC_READ : FOC_WRITE;
	case SF_SYNC:
		return FOC_SYNC;
	case SF_OPEN:
		return FOC_OPEN;
	case SF_CLOSE:
		return FOC_CLOSE;
	case SF_MAP:
		return FOC_MAP;
	default:
		return FOC_OTHER;
	}
}

static int uring_class(int kind)
{
	return kind == UK_READ ? FOC_READ : kind == UK_WRITE ? FOC_WRITE
					    : kind == UK_SYNC ? FOC_SYNC : FOC_OTHER;
}

/* Reads and writes name their side; a copy's destination side is the NAME_dst op. */
static struct file_op_info describe_op(int op)
{
	struct file_op_info f = { .name = "?", .cls = FOC_OTHER };

	for (size_t i = 0; op != FOP_NONE && i < CATALOGUE_ROWS; i++) {
		const struct syscall_info *s = &catalogue[i];

		if (s->file_op == op)
			return (struct file_op_info){ s->name, s->fd_arg, s->fd2_arg, s->fd2_op,
						      op_class(s), false };
		if (s->fd2_op == op)
			return (struct file_op_info){ s->name, FD_NONE, 0, 0, FOC_WRITE, false };
	}
	/* io_uring requests on their file, one call per CQE (bpf/uring.bpf.c). */
	for (int u = 0; op != FOP_NONE && u < MAX_URING_OPS; u++)
		if (uring_ops[u].name && uring_ops[u].file_op == op)
			return (struct file_op_info){ uring_ops[u].name, FD_NONE, 0, 0,
						      uring_class(uring_ops[u].kind), true };
	return f;
}

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
	for (size_t i = 0; i < CATALOGUE_ROWS; i++) {
		const struct syscall_info *s = &catalogue[i];
		int nr = syscall_nr(s->name);
		/* read, pread64, readv...: read; the write side: write; copies: both. */
		int rw = direction_reads(s->direction) | direction_writes(s->direction) << 1;

		if (s->family != SF_RW && s->family != SF_SYNC && s->family != SF_OPEN &&
		    s->family != SF_URING)
			continue;
		if (nr >= 0 && nr < MAX_SYSCALLS)
			fn(nr, rw, ctx);
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
/* Each ledger op described once at init: top and the model ask for every row they read. */
static struct file_op_info op_info[FILE_OPS_END];
static bool op_info_ready;
static const struct syscall_info *info_of_nr[MAX_SYSCALLS];

#define FOP_NAME_ENTRY(name) #name,
static const char *const fop_names[FILE_OPS_END] = { "", FILE_OPS(FOP_NAME_ENTRY) };

static int catalogue_slip(const char *what, const char *name)
{
	fprintf(stderr, "iotrace: internal error: the syscall catalogue and bpf/iotrace.h "
		"disagree on %s %s\n", what, name);
	return -1;
}

/* Whether ledger op fop is named name with suffix (checked against FILE_OPS' names). */
static bool fop_named(int fop, const char *prefix, const char *name, const char *suffix)
{
	char want[64];

	snprintf(want, sizeof(want), "%s%s%s", prefix, name, suffix);
	return fop > FOP_NONE && fop < FILE_OPS_END && !strcmp(fop_names[fop], want);
}

/*
 * Each value of the kernel's enums (enum io_kind, FILE_OPS) is described once, under its
 * name; the read/write family's ops come before FOP_fsync (bpf/syscalls.bpf.c counts their
 * results as bytes by that order).
 */
static int check_catalogue(void)
{
	int fop_seen[FILE_OPS_END] = {}, kind_seen[IO_KINDS] = {};

	for (size_t i = 0; i < CATALOGUE_ROWS; i++) {
		const struct syscall_info *s = &catalogue[i];

		if (s->io_kind != IO_NONE && (s->io_kind >= IO_KINDS || kind_seen[s->io_kind]++))
			return catalogue_slip("io_kind", s->name);
		if (s->file_op != FOP_NONE && (!fop_named(s->file_op, "", s->name, "") ||
					       fop_seen[s->file_op]++))
			return catalogue_slip("ledger op", s->name);
		if (s->fd2_op != FOP_NONE && (!fop_named(s->fd2_op, "", s->name, "_dst") ||
					      fop_seen[s->fd2_op]++))
			return catalogue_slip("ledger op", s->name);
		if (s->file_op != FOP_NONE && (s->family == SF_RW) != (s->file_op < FOP_fsync))
			return catalogue_slip("the order of ledger op", s->name);
	}
	for (int u = 0; u < MAX_URING_OPS; u++) {
		int fop = uring_ops[u].file_op;

		if (fop && (!fop_named(fop, "uring_", uring_ops[u].name, "") || fop_seen[fop]++))
			return catalogue_slip("io_uring op", uring_ops[u].name);
	}
	for (int k = 1; k < IO_KINDS; k++) {
		char num[16];

		snprintf(num, sizeof(num), "%d", k);
		if (kind_seen[k] != 1)
			return catalogue_slip("io_kind", num);
	}
	for (int op = 1; op < FILE_OPS_END; op++)
		if (fop_seen[op] != 1)
			return catalogue_slip("ledger op", fop_names[op]);
	return 0;
}

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
	if (check_catalogue())
		return -1;
	for (int op = 0; op < FILE_OPS_END; op++)
		op_info[op] = describe_op(op);
	op_info_ready = true;
	for (size_t i = 0; i < CATALOGUE_ROWS; i++) {
		int nr = syscall_nr(catalogue[i].name);

		if (nr >= 0)
			info_of_nr[nr] = &catalogue[i];
		if (catalogue[i].io_kind != IO_NONE)
			kind_nr[catalogue[i].io_kind] = nr;
	}
	return names[SYSCALL_OTHER] ? 0 : -1;
}

struct file_op_info file_op_info(int op)
{
	if (op_info_ready && op >= 0 && op < FILE_OPS_END)
		return op_info[op];
	return describe_op(op);
}

const struct syscall_info *syscall_info_of(uint32_t nr)
{
	return nr < MAX_SYSCALLS ? info_of_nr[nr] : NULL;
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
	struct file_op_info f = file_op_info(op);

	if (op <= 0 || op >= FILE_OPS_END || f.fd_arg == FD_NONE)
		return -1;
	return syscall_nr(f.name);
}
