/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Structures shared by the kernel programs (bpf/) and the loader (user/).
 * Fixed-size fields only, no pointers, no includes: both sides see the same
 * layout, checked by the _Static_asserts below.
 */
#ifndef IOTRACE_H
#define IOTRACE_H

/* x86_64 syscall numbers are below 512; other ids (x32, bogus) count as SYSCALL_OTHER. */
#define MAX_SYSCALLS 512
#define SYSCALL_OTHER (MAX_SYSCALLS - 1)

/*
 * Log2 buckets: bucket 0 holds the value 0, bucket k (k >= 1) holds [2^(k-1), 2^k - 1].
 * 40 buckets reach 2^39 - 1: 512 GiB for sizes, 9 minutes for nanosecond latencies.
 */
#define HIST_BUCKETS 40

/* Per-process slots are recycled when a process exits; slot 0 means "not traced". */
#define DEFAULT_SLOTS 128
#define MAX_SLOTS 4096
/* Slot shared by every process that arrived while all slots were busy. */
#define OVERFLOW_SLOT 1
/* Set in a proc_slot entry until the task's first execve: nothing before it is counted. */
#define SLOT_PENDING 0x8000

#define COMM_LEN 16
#define ARGS_LEN 256

/* The read/write family, whose sizes and latencies get histograms. */
enum io_kind {
	IO_NONE = 0,
	IO_READ,
	IO_WRITE,
	IO_PREAD64,
	IO_PWRITE64,
	IO_READV,
	IO_WRITEV,
	IO_PREADV,
	IO_PWRITEV,
	IO_PREADV2,
	IO_PWRITEV2,
	IO_SENDFILE,
	IO_COPY_FILE_RANGE,
	IO_SPLICE,
	IO_KINDS,
};

/* How a call states the bytes it asks for (from its arguments). */
enum io_request_arg {
	REQ_ARG3 = 0, /* count/len in the 3rd argument (rdx) */
	REQ_IOVEC,    /* iovec array in arg 2, count in arg 3 */
	REQ_ARG4,     /* sendfile: count in the 4th argument (r10) */
	REQ_ARG5,     /* copy_file_range, splice: len in the 5th argument (r8) */
};

struct syscall_stat {
	__u64 calls;
	__u64 errors;
	__u64 total_ns;
};

struct io_stat {
	__u64 requested;       /* bytes asked for by calls whose request could be read */
	__u64 transferred;     /* bytes returned by successful calls */
	__u64 unknown_request; /* calls whose iovec array was too long or unreadable */
	__u64 size_min_plus1;  /* smallest successful transfer + 1 (0: none yet) */
	__u64 size_max;
	__u64 lat_min_plus1; /* smallest latency in ns + 1 (0: none timed yet) */
	__u64 lat_max;
	__u64 size_hist[HIST_BUCKETS]; /* successful calls by bytes transferred */
	__u64 lat_hist[HIST_BUCKETS];  /* timed calls by latency in ns */
};

/* In-flight syscall of one thread, kept from sys_enter to sys_exit. */
struct inflight {
	__u32 tid; /* tag: the slot is shared by tids equal modulo its size */
	__u32 nr;
	__u64 start_ns;
};

/* Drop and collision counters, one array in .bss, printed in every report. */
enum drop_counter {
	DROP_RINGBUF,       /* process events the ring buffer had no room for */
	DROP_SLOTS,         /* processes that shared the overflow slot */
	DROP_UNTIMED,       /* sys_exit without a matching sys_enter timestamp */
	DROP_COUNTERS,
};

enum proc_event_kind {
	EV_FORK = 1,
	EV_EXEC,
	EV_EXIT,
	EV_COMM,
};

struct iot_proc_event {
	__u32 kind;
	__u32 pid;  /* tgid */
	__u32 ppid; /* tgid of the real parent */
	__u32 slot;
	__u64 ts_ns;
	__s32 exit_code; /* wait(2)-style status for EV_EXIT */
	__u32 args_len;  /* bytes of args[] used (EV_EXEC), NUL-separated argv */
	char comm[COMM_LEN];
	char args[ARGS_LEN];
};

_Static_assert(sizeof(struct syscall_stat) == 24, "syscall_stat layout");
_Static_assert(sizeof(struct io_stat) == 8 * (7 + 2 * HIST_BUCKETS), "io_stat layout");
_Static_assert(sizeof(struct inflight) == 16, "inflight layout");
_Static_assert(sizeof(struct iot_proc_event) == 32 + COMM_LEN + ARGS_LEN, "proc_event layout");

#endif /* IOTRACE_H */
