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
 * Histogram layouts (bpf/buckets.h): log2 (HIST_BUCKETS; 40 buckets reach 2^39 - 1: 512 GiB
 * for sizes) for sizes and the per-file rows; log-linear (FINE_BUCKETS, 8 per power of two)
 * for the latencies of syscalls, block requests and io_uring requests.
 */
#include "buckets.h"

/*
 * Sampled timing (the default): each CPU's counters of a (process, syscall) time its first
 * SAMPLE_WARMUP calls, then each call with probability 1/period, the period doubling with
 * the calls (2 from SAMPLE_WARMUP, 4 from twice that...) up to SAMPLE_PERIOD
 * (time_this_call, bpf/syscalls.bpf.c).
 */
#define SAMPLE_WARMUP 1000
#define SAMPLE_PERIOD 64

/*
 * Live processes (serve: labels) with counters of their own, at most; a slot is recycled
 * when its process exits. Slot 0 means "not traced". A slot costs no memory of its own:
 * its counters live in per-CPU caches and, when evicted from them, in totals that grow
 * with the (slot, syscall) pairs used (see sc_cache in maps.bpf.h).
 */
#define MAX_SLOTS 16384
#define SLOT_BITS 14
/* Slot shared by every process that arrived while all slots were busy. */
#define OVERFLOW_SLOT 1
/* Set in a proc_slot entry until the task's first execve: nothing before it is counted. */
#define SLOT_PENDING 0x8000
/* serve: a process outside every -c cgroup (the PENDING bit makes all hooks skip it). */
#define SLOT_NONE 0xFFFF
/* serve: at most this many -c cgroups. */
#define MAX_CGROUP_FILTERS 8

/*
 * Structs the programs re-type with bpf_rdonly_cast (UNTRUSTED in maps.bpf.h), the one
 * list of them: the enum below, the loader's names (user/kernel/tracer_load.c) and the
 * build's list of ids to record (Makefile, which reads this line) all come from it.
 */
#define KERNEL_CAST_STRUCTS(X)                                                                     \
	X(address_space) X(file) X(folio) X(inode) X(io_kiocb) X(kiocb) X(task_struct)           \
	X(vm_area_struct) X(mm_struct) X(readahead_control) X(vm_fault) X(pt_regs)

#define KT_ENUM_ENTRY(name) KT_##name,
enum kernel_cast_type { KERNEL_CAST_STRUCTS(KT_ENUM_ENTRY) KERNEL_CAST_TYPES };

/*
 * The kfuncs the full build calls. The "by id" build of it (KFUNC_BY_ID, bpf/maps.bpf.h)
 * calls them as if they were helpers numbered KFUNC_CALL_BASE + KFN_name, and the loader
 * turns each such call into a call of the kfunc's id in the kernel's BTF, recorded at build
 * time (user/kernel/by_id.c): libbpf then has no extern to look up in the kernel's BTF.
 */
#define KFUNCS(X) X(bpf_rdonly_cast) X(bpf_iter_task_vma_new) X(bpf_iter_task_vma_next)           \
	X(bpf_iter_task_vma_destroy)
#define KFN_ENUM_ENTRY(name) KFN_##name,
enum kfunc_number { KFUNCS(KFN_ENUM_ENTRY) NR_KFUNCS };
#define KFUNC_CALL_BASE 0x7f1b0000

#define COMM_LEN 16

/* serve: what a slot stands for; comm is all zeros unless --comm. */
struct label_key {
	__u64 cgroup; /* cgroup v2 id: the -c cgroup containing the process, or its own */
	char comm[COMM_LEN];
};
#define ARGS_LEN 256

/*
 * The catalogue of the syscalls iotrace knows, one row each, named as strace names them:
 * the kernel side takes its enums from it (enum io_kind, the ledger's FILE_OPS),
 * user/model/syscall_table.c every other fact of a row, for every stage. A new syscall is
 * a row here and its hook. Each row is a call of the macro its kind names (x: passed on):
 *   RW(x, name, dir, req)          read/write family (an io_kind and a ledger row; fd: arg 1):
 *                                  dir READ or WRITE, req: enum io_request_arg
 *   COPY(x, name, req, fd, fd2)    a copy between two files: an io_kind, the source's ledger
 *                                  row (fd) and the destination's, name_dst (fd2)
 *   OP(x, name, family, fd, sync)  another call with a ledger row (fd: enum fd_arg); sync:
 *                                  one of the story's sync calls
 *   CALL(x, name, family, sync)    a call without one
 * Families: RW, SYNC, OPEN, CLOSE, MAP, FILE (other calls on a file), URING, NAMING
 * (renames, links, unlinks: bpf/names.bpf.c names files again), PROC (the process
 * tree's and the loader's). The ledger's ops keep this order: the read/write family's
 * before FOP_fsync (bpf/syscalls.bpf.c counts their results as bytes by that order).
 */
#define SYSCALL_CATALOGUE(RW, COPY, OP, CALL, x)                                                   \
	RW(x, read, READ, REQ_ARG3) RW(x, write, WRITE, REQ_ARG3)                                  \
	RW(x, pread64, READ, REQ_ARG3) RW(x, pwrite64, WRITE, REQ_ARG3)                            \
	RW(x, readv, READ, REQ_IOVEC) RW(x, writev, WRITE, REQ_IOVEC)                              \
	RW(x, preadv, READ, REQ_IOVEC) RW(x, pwritev, WRITE, REQ_IOVEC)                            \
	RW(x, preadv2, READ, REQ_IOVEC) RW(x, pwritev2, WRITE, REQ_IOVEC)                          \
	/* sendfile(out_fd, in_fd, ...): the source is the second argument */                    \
	COPY(x, sendfile, REQ_ARG4, FD_ARG2, FD_ARG1)                                              \
	COPY(x, copy_file_range, REQ_ARG5, FD_ARG1, FD_ARG3)                                       \
	COPY(x, splice, REQ_ARG5, FD_ARG1, FD_ARG3)                                                \
	OP(x, fsync, SYNC, FD_ARG1, 1) OP(x, fdatasync, SYNC, FD_ARG1, 1)                          \
	OP(x, sync_file_range, SYNC, FD_ARG1, 1)                                                   \
	CALL(x, sync, SYNC, 1) CALL(x, syncfs, SYNC, 1)                                            \
	/* writes a mapping back: on the timeline with the syncs, not one of the story's */       \
	CALL(x, msync, SYNC, 0)                                                                    \
	OP(x, fallocate, FILE, FD_ARG1, 0) OP(x, ftruncate, FILE, FD_ARG1, 0)                      \
	OP(x, open, OPEN, FD_RET, 0) OP(x, openat, OPEN, FD_RET, 0)                                \
	OP(x, openat2, OPEN, FD_RET, 0) OP(x, creat, OPEN, FD_RET, 0)                              \
	OP(x, close, CLOSE, FD_ENTER, 0)                                                           \
	/* mmap(addr, len, prot, flags, fd, off) */                                                \
	OP(x, mmap, MAP, FD_ARG5, 0)                                                               \
	OP(x, lseek, FILE, FD_ARG1, 0) OP(x, getdents64, FILE, FD_ARG1, 0)                         \
	OP(x, fadvise64, FILE, FD_ARG1, 0) OP(x, readahead, FILE, FD_ARG1, 0)                      \
	CALL(x, io_uring_enter, URING, 0)                                                          \
	CALL(x, rename, NAMING, 0) CALL(x, renameat, NAMING, 0) CALL(x, renameat2, NAMING, 0)      \
	CALL(x, link, NAMING, 0) CALL(x, linkat, NAMING, 0)                                        \
	CALL(x, unlink, NAMING, 0) CALL(x, unlinkat, NAMING, 0)                                    \
	CALL(x, execve, PROC, 0) CALL(x, execveat, PROC, 0) CALL(x, rt_sigreturn, PROC, 0)         \
	CALL(x, fork, PROC, 0) CALL(x, vfork, PROC, 0) CALL(x, clone, PROC, 0)                     \
	CALL(x, clone3, PROC, 0)
#define CATALOGUE_NONE(...)

/* The read/write family, whose sizes and latencies get histograms: IO_read... */
#define IO_KIND_RW(x, name, ...) IO_##name,
enum io_kind {
	IO_NONE = 0,
	SYSCALL_CATALOGUE(IO_KIND_RW, IO_KIND_RW, CATALOGUE_NONE, CATALOGUE_NONE, 0)
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
	__u64 total_ns; /* time of the calls: measured, or estimated (timed ones by their weight) */
	__u64 timed;    /* calls timed (all of them with --time-all; a sample by default) */
};

/*
 * The counters of a (slot, syscall) and of a (slot, I/O kind) are kept, while in use, in
 * small per-CPU caches of rows tagged by that key ([cpu][row] arrays): each CPU increments
 * its own rows, plainly (see syscalls.bpf.c), as it did in its own [cpu][slot] region
 * before, but a slot no longer needs a region on every CPU. A row taken for another key is
 * first added, with atomics, to the key's totals (sc_totals, io_totals: hashes that grow
 * with the keys used). The loader sums totals and rows; to take a dead slot's rows it sets
 * their tag to CACHE_CLAIMED, and a CPU that finds a row claimed counts into the totals.
 */
/*
 * Rows per CPU, powers of two. A short process uses ~30 (slot, syscall) rows, and the rows of
 * those before it stay until the loader takes them (<= 10 ms later, when their exits wake
 * it): with 256 rows nearly every syscall of a new process moved an earlier one's row into
 * the totals (a hash insert, ~250 ns); 1,024 took 30% off sys_exit's time per short process
 * (docs/startup.md, "Short processes: a larger syscall cache, ...").
 */
#define SC_CACHE_ROWS 1024
#define IO_CACHE_ROWS 32
/* The row of a CPU's cache of rows rows that tag hashes to (multiplicative hashing). */
#define CACHE_ROW(cpu, tag, rows) \
	((cpu) * (rows) + ((__u32)((__u32)(tag) * 2654435761u) >> 16) % (rows))
#define CACHE_CLAIMED 0xffffffffu

/*
 * A slot's marks (the slot_marks map; bpf/counters.bpf.c): a bit per key (syscall, I/O
 * kind) that has totals (moved: sc_totals, io_totals) and that took a cache row (seen:
 * where its rows may be). Set by the programs with atomic ors, read and cleared by the
 * loader when it takes the slot.
 */
struct slot_marks {
	__u64 sc_moved[MAX_SYSCALLS / 64];
	__u64 sc_seen[MAX_SYSCALLS / 64];
	__u32 io_moved, io_seen;
};
/* A row's tag: the key plus one (0: an empty row). */
#define SC_TAG(slot, nr) ((((slot) << 9) | (nr)) + 1)
#define IO_TAG(slot, kind) ((((slot) << 4) | (kind)) + 1)
#define TAG_SLOT_SC(tag) (((tag) - 1) >> 9)
#define TAG_SLOT_IO(tag) (((tag) - 1) >> 4)
/*
 * The I/O cache's row of a tag: a slot's kinds in 13 consecutive rows (each its own), the
 * next slot's 13 rows on. Slots are taken lowest first, so the few processes alive at once
 * (a shell and the short processes it starts one after another) have near slots, whose
 * first kinds (read, write, pread64, pwrite64) never share a row for slots up to 4 apart.
 * Hashed (CACHE_ROW), a shell's and its children's tags met in one row once in two
 * children, and each such move put a 2.8 KiB value in io_totals (docs/startup.md).
 */
#define IO_SLOT_ROWS 13 /* the read/write family's kinds: a row each */
#define IO_CACHE_ROW(cpu, tag)                                                                      \
	((cpu) * IO_CACHE_ROWS +                                                                   \
	 (TAG_SLOT_IO(tag) * IO_SLOT_ROWS + (((tag) - 1) & 15) + IO_CACHE_ROWS - 1) % IO_CACHE_ROWS)

struct io_stat {
	__u64 requested;       /* bytes asked for by calls whose request could be read */
	__u64 transferred;     /* bytes returned by successful calls */
	__u64 unknown_request; /* calls whose iovec array was too long or unreadable */
	__u64 size_min_plus1;  /* smallest successful transfer + 1 (0: none yet) */
	__u64 size_max;
	__u64 lat_min_plus1; /* smallest latency in ns + 1 (0: none timed yet) */
	__u64 lat_max;
	__u64 size_hist[HIST_BUCKETS]; /* successful calls by bytes transferred */
	__u64 lat_hist[FINE_BUCKETS];  /* calls by latency in ns (timed ones by their weight) */
};

/*
 * Per thread: which file each recently used fd was, for the ledger (see thread_io). The
 * struct file alone says it: two fds sharing a slot with one file are one file. But a freed
 * struct file's address comes back for the next open, often on the same fd, and ext4 gives
 * a deleted file's inode number to the next file: so the inode's number and generation are
 * checked too (a new file in a reused struct file on a reused inode number: the 20 files of
 * docs/files.md's "What a file is").
 */
#define FD_CACHE 4
struct fd_cache {
	__u64 file;  /* the struct file the fd pointed to */
	__u64 ino;   /* its inode's number ... */
	__u32 igen;  /* ... and generation */
	__u32 idx;   /* its ledger entry (file_stats index) */
	__u32 gen;   /* the entry's gen then: a recycled entry has another */
	__u32 names; /* names_epoch then: a rename since may have renamed the file */
};

/*
 * One thread's syscall state, from sys_enter to sys_exit, in an array indexed by
 * tid & mask and tagged by tid (tids equal modulo its size take turns).
 */
struct thread_io {
	__u32 tid;
	__u32 nr;       /* the syscall in flight (sys_enter) */
	__u64 start_ns; /* its start, when timed */
	__u32 close_idx, close_gen; /* close(): its file's entry + 1, resolved at sys_enter */
	/* Sampled timing (time_this_call): busy calls to skip before the next timed one (0:
	 * none seen yet), the thread's xorshift state, the weight of the call in flight, and
	 * whether it was left untimed on purpose. */
	__u32 countdown, rng;
	__u32 weight, skipped;
	/*
	 * The call sys_exit is counting on its files. Passed through this map value rather
	 * than registers: the verifier forgets what it knew of them, so it checks the per-file
	 * code once instead of once for each path of sys_exit that leads there.
	 */
	__s64 ret;
	__u64 lat_ns; /* 0: not timed */
	__u64 req;    /* bytes asked for, REQ_UNKNOWN when not known */
	/* --trace: the call's start, the files it used, block requests it started (flows). */
	__u64 trace_start_ns;
	struct trace_file {
		__u64 ino;
		__u32 dev, igen;
	} trace_files[2];
	__u32 linked;
	/*
	 * Sampled timing: the syscalls (numbers + 1, 0: none) this thread last found at the
	 * full period; while its countdown runs their calls skip the cache row (time_this_call).
	 */
	__u16 full_nr[2];
	/*
	 * --stacks (frame pointers): a recent call's user registers, the word on top of its
	 * stack, and the stack they gave; the same registers and word again are the same
	 * stack (a loop's calls), which is then not walked again. Two, by the syscall's
	 * number: a loop alternating read and write keeps both.
	 */
	struct stack_cache {
		__u64 ip, sp, top, leaf;
		__s64 id;
	} stk[2];
	struct fd_cache fds[FD_CACHE]; /* direct-mapped by fd */
};

/* Drop and collision counters, one array in .bss, printed in every report. */
/* X(enum suffix, name in JSON's "drops" and Prometheus' reason label, what was lost) */
#define DROP_LIST(X)                                                                               \
	X(RINGBUF, ringbuf_events, "process events the ring buffer had no room for")               \
	X(SLOTS, overflow_processes, "processes that shared the overflow slot")                    \
	X(UNTIMED, untimed_calls, "sys_exit without a matching sys_enter timestamp")               \
	X(FILES, files, "events of (process, file) pairs beyond the ledger's entries")             \
	X(CHUNKS, page_chunks, "2 MiB page-bitmap chunks that did not fit: unused readahead "      \
	  "inexact")                                                                               \
	X(PATHS, paths, "file names the name ring buffer had no room for")                         \
	X(FILE_ROWS, file_rows, "file syscalls not counted per file: the row table was full")      \
	X(BLOCK_INFLIGHT, block_inflight, "block requests started when the in-flight table "       \
	  "was full")                                                                              \
	X(BLOCK_KEYS, block_keys, "completions of (process, disk, op) beyond the stats table")     \
	X(BLOCK_EVENTS, block_events, "snoop events the ring buffer had no room for")              \
	X(BLOCK_UNSEEN, block_completions_unseen, "completions the kernel skipped (nested in "     \
	  "an IRQ), counted late")                                                                 \
	X(FILE_BLOCKS, file_blocks, "completions not counted per file: the table was full")        \
	X(URING_INFLIGHT, uring_inflight, "io_uring requests submitted when the in-flight table "  \
	  "was full: no latency, not told inline or async")                                        \
	X(URING_KEYS, uring_keys, "io_uring events of (process, opcode) beyond the stats table")   \
	X(URING_OVERFLOW, uring_cq_overflows, "io_uring completions that overflowed the "          \
	  "completion ring: not matched to their request (counted in flight)")                     \
	X(TRACE, trace_events, "--trace events the trace ring buffer had no room for")             \
	X(STACKS, stacks, "--stacks calls whose stack was not recorded (a table or the ring "     \
	  "buffer full, or the stack unreadable)")                                                 \
	X(TOTALS, cache_totals, "counts of cache rows moved out that the totals tables had "     \
	  "no room for")                                                                           \
	X(NESTED, nested_runs, "hook runs the kernel skipped because the same program was "        \
	  "already running on that CPU (an interrupt nested in it, or another task preempted "     \
	  "in it where the kernel runs it preemptibly): each may be a call not counted; read "     \
	  "from the programs' recursion_misses, never written by them")
#define DROP_ENUM_ENTRY(suffix, name, help) DROP_##suffix,
enum drop_counter { DROP_LIST(DROP_ENUM_ENTRY) DROP_COUNTERS };

enum proc_event_kind {
	EV_FORK = 1,
	EV_EXEC,
	EV_EXIT,
	EV_COMM,
	EV_LABEL, /* serve: a new label; ts_ns carries its cgroup id, so its path is read now */
	EV_LEDGER_FULL, /* the ledger's entries passed half the table: take idle ones now */
	EV_FOUND, /* top: a process running before top, given a slot at its first syscall */
};

/*
 * A process event of the proc_events ring buffer. In run mode and top it is a notice: what a
 * process in a slot of its own is and did stays in slot_procs and its counters until the
 * loader takes them, so a notice lost (the buffer full while the loader is starved of CPU)
 * loses nothing; the loader reads the table (docs/design.md, "Notices and the slot table").
 */
struct iot_proc_event {
	__u32 kind;
	__u32 pid;  /* tgid */
	__u32 ppid; /* tgid of the real parent */
	__u32 slot;
	__u64 ts_ns;     /* CLOCK_MONOTONIC; the cgroup id for EV_LABEL */
	__u64 cgroup;    /* top (EV_FORK, EV_FOUND, EV_EXEC): its group's cgroup id (0: none) */
	__s32 exit_code; /* wait(2)-style status for EV_EXIT */
	__u32 args_len;  /* bytes of args[] used (EV_EXEC of a process without a row) */
	char comm[COMM_LEN];
};

/*
 * EV_EXEC of a process in the overflow slot, which has no row in slot_procs: the event is
 * the only place its command line is kept.
 */
struct iot_exec_event {
	struct iot_proc_event e;
	char args[ARGS_LEN]; /* NUL-separated argv */
};

/* A slot's process, kept in slot_procs from its fork until the loader frees the slot. */
enum slot_state {
	SP_FREE = 0, /* no process (the loader freed it), or its row is being written */
	SP_LIVE,
	SP_EXITED, /* its last thread exited: exit_code and end_ns are final */
};

struct slot_proc {
	__u32 seq;       /* odd while the kernel writes the row (a seqcount) */
	__u32 state;     /* enum slot_state */
	__u32 pid;       /* tgid */
	__u32 ppid;      /* tgid of the real parent at fork */
	__s32 exit_code; /* wait(2)-style status, SP_EXITED */
	__u32 args_len;  /* bytes of args[] used; a child that has not exec'd has its parent's */
	__u64 start_ns, end_ns; /* CLOCK_MONOTONIC: fork (or attach) and exit */
	/* top: its group's cgroup id (0: none); run mode: its own, at fork, exec and exit */
	__u64 cgroup;
	__u32 mnt_ns, pid_ns; /* run mode: its namespaces' inode numbers at fork and exec */
	/* top with -c or --container: its own cgroup id at fork and exec (its container's) */
	__u64 own_cgroup;
	char comm[COMM_LEN];
	char args[ARGS_LEN];    /* NUL-separated argv, cut at ARGS_LEN */
};

struct sc_cache_row {
	__u32 tag; /* SC_TAG, 0 (empty) or CACHE_CLAIMED */
	__u32 pad;
	struct syscall_stat st;
};

/*
 * A row's words in groups of IO_GROUP_WORDS: bit g of `used` is set once a word of group g
 * may have become non-zero (a short process touches a handful of its 351 words), so that
 * moving the row into the totals reads only those groups.
 */
#define IO_GROUP_WORDS 16
#define IO_GROUPS ((sizeof(struct io_stat) / 8 + IO_GROUP_WORDS - 1) / IO_GROUP_WORDS)
#define IO_GROUP_OF(word) ((word) / IO_GROUP_WORDS)
#define IO_SIZE_WORD0 (__builtin_offsetof(struct io_stat, size_hist) / 8)
#define IO_LAT_WORD0 (__builtin_offsetof(struct io_stat, lat_hist) / 8)

struct io_cache_row {
	__u32 tag;  /* IO_TAG, 0 or CACHE_CLAIMED */
	__u32 used; /* the groups of st's words that may not be zero (bit g: group g) */
	struct io_stat st;
};

_Static_assert(sizeof(struct syscall_stat) == 32, "syscall_stat layout");
_Static_assert(sizeof(struct sc_cache_row) == 40, "sc_cache_row layout");
_Static_assert(IO_GROUPS <= 32, "an io_cache_row's groups fit its used mask");
_Static_assert(MAX_SLOTS == 1 << SLOT_BITS && SLOT_BITS + 9 < 32, "tags fit 32 bits");
_Static_assert(IO_KINDS <= 16, "an I/O kind fits its tag's 4 bits");
_Static_assert(IO_KINDS - 1 <= IO_SLOT_ROWS && IO_SLOT_ROWS <= IO_CACHE_ROWS,
	       "a slot's I/O kinds each have a row of their own (IO_CACHE_ROW)");
_Static_assert(sizeof(struct io_stat) == 8 * (7 + HIST_BUCKETS + FINE_BUCKETS), "io_stat layout");
_Static_assert(sizeof(struct thread_io) == 192 + 32 * FD_CACHE, "thread_io layout");
_Static_assert(sizeof(struct iot_proc_event) == 40 + COMM_LEN, "proc_event layout");
_Static_assert(sizeof(struct iot_exec_event) == 40 + COMM_LEN + ARGS_LEN, "exec_event layout");
_Static_assert(sizeof(struct slot_proc) == 64 + COMM_LEN + ARGS_LEN, "slot_proc layout");

/* ---- the per-file ledger (bpf/ledger.bpf.c) ---- */

#define MAX_FILES 8192       /* (owner, file) entries in the kernel at once */
#define MAX_FILE_ROWS (4 * MAX_FILES) /* (entry, syscall) rows; a recycled entry keeps its */
#define MAX_NAMED 16384      /* files whose current name the kernel side remembers */
#define MAX_CHUNKS 65536
#define NAME_BUF 768         /* a path's names, leaf first, NUL-terminated each */
#define NAME_PART_MAX 256    /* NAME_MAX + 1 */
#define NAME_MASK 1023       /* a part's offset as the verifier bounds it: >= NAME_BUF */
#define NAME_SLACK (NAME_MASK + 1 - NAME_BUF) /* room so that any masked offset fits */

/*
 * Syscalls counted per (process, file): the catalogue's rows that have a ledger row, then
 * io_uring's opcodes on their files; the loader resolves their numbers (file_op_of) and
 * where each finds its file descriptor (fd_arg). A copy between two files counts on both:
 * the source under its name, the destination under NAME_dst (fd2_arg, fd2_op), reported
 * under the syscall's name too.
 */
#define FOP_OF_RW(X, name, ...) X(name)
#define FOP_OF_COPY(X, name, ...) X(name) X(name##_dst)
#define URING_FILE_OPS(X)                                                                          \
	X(uring_READV) X(uring_WRITEV) X(uring_FSYNC) X(uring_READ_FIXED) X(uring_WRITE_FIXED)     \
	X(uring_SYNC_FILE_RANGE) X(uring_SENDMSG) X(uring_RECVMSG) X(uring_FALLOCATE)              \
	X(uring_READ) X(uring_WRITE) X(uring_FADVISE) X(uring_SEND) X(uring_RECV) X(uring_SPLICE)  \
	X(uring_TEE) X(uring_SEND_ZC) X(uring_SENDMSG_ZC) X(uring_READ_MULTISHOT)                  \
	X(uring_FTRUNCATE) X(uring_RECV_ZC) X(uring_READV_FIXED) X(uring_WRITEV_FIXED)
#define FILE_OPS(X)                                                                                \
	SYSCALL_CATALOGUE(FOP_OF_RW, FOP_OF_COPY, FOP_OF_RW, CATALOGUE_NONE, X) URING_FILE_OPS(X)
#define FOP_ENUM_ENTRY(name) FOP_##name,
enum file_op { FOP_NONE = 0, FILE_OPS(FOP_ENUM_ENTRY) FILE_OPS_END };
/* The read/write family's reading ops (FOP_read, FOP_pread64...), in the catalogue's order. */
#define READ_FOP_RW(x, name, dir, req) READ_FOP_##dir(name)
#define READ_FOP_READ(name) FOP_##name,
#define READ_FOP_WRITE(name)
#define READ_FILE_OPS                                                                              \
	SYSCALL_CATALOGUE(READ_FOP_RW, CATALOGUE_NONE, CATALOGUE_NONE, CATALOGUE_NONE, 0)
/* Rows per entry: a power of two (indexes are masked), room for every op. */
#define FILE_OP_SLOTS 64
_Static_assert(FILE_OPS_END <= FILE_OP_SLOTS, "file ops fit the rows of an entry");

/*
 * Not a row: the syscalls that rename, link or unlink a file (the catalogue's NAMING
 * family), whose sys_exit names the files they touched again (bpf/names.bpf.c).
 */
#define FOP_NAMING (FILE_OP_SLOTS - 1)
_Static_assert(FILE_OPS_END <= FOP_NAMING, "file ops leave room for FOP_NAMING");

/* Where a file op finds its fd: an argument, its return value (opens), or sys_enter (close). */
enum fd_arg { FD_NONE = 0, FD_ARG1, FD_ARG2, FD_ARG3, FD_ARG5, FD_RET, FD_ENTER };

/* One syscall's numbers on one (owner, file). */
struct file_row {
	__u64 calls;
	__u64 errors;
	__u64 requested;   /* bytes asked for (read/write family) */
	__u64 transferred; /* bytes moved by successful calls, on this file's side */
	__u64 total_ns;    /* time of the calls (timed ones by their weight, as syscall_stat) */
	__u64 timed;       /* calls timed */
	/* 32-bit log2 buckets: rows are many, and the loader reads them as the run goes on. */
	__u32 lat_hist[HIST_BUCKETS];
};

/* What kind of file a name belongs to. */
enum file_kind {
	FK_FILE = 0, FK_DIR, FK_PIPE, FK_FIFO, FK_SOCKET, FK_CHR, FK_BLK, FK_LINK, FK_ANON, FK_MEMFD,
	FK_KINDS,
};

/*
 * A file's name as the kernel side saw it (an event of the name_events ring buffer): when a
 * ledger entry starts, and again when the file was renamed since.
 */
struct file_name {
	__u32 record;  /* TE_NAME: the trace ring buffer tells its records by their first __u32 */
	__u32 counted; /* igen is the ledger's count of files with the number, not a generation */
	__u64 name_id; /* this name (its leaf and parent directory), as ledger entries note it */
	__u64 ino;     /* the ledger's key of the file: dev, ino, igen */
	__u32 dev;
	__u32 igen;
	__u32 kind;    /* enum file_kind */
	__u32 deleted; /* no link left (i_nlink 0) */
	__u32 rdev;    /* device number of a character or block device (kernel dev_t) */
	__u16 sock_family, sock_type;
	__u16 sock_protocol;
	__u16 nparts;    /* names in buf, leaf first */
	__u32 truncated; /* deeper or longer than buf: the top of the path is missing */
	__u32 from_alias; /* no struct file at hand: one of the inode's names (hard links) */
	__u32 again;      /* sent at a rename, link or unlink: the file's newest name */
	__u32 gen;        /* the inode's own generation (the key's may count reuses on it) */
	__u32 pad;
	char buf[NAME_BUF + NAME_PART_MAX + NAME_SLACK]; /* the slack never sent */
};

/* ---- page cache and readahead (bpf/pagecache.bpf.c) ---- */

/* The used/readahead page bitmaps come in chunks of 512 pages (2 MiB of 4 KiB pages). */
#define CHUNK_SHIFT 9
#define CHUNK_WORDS ((1 << CHUNK_SHIFT) / 64)

/* How a readahead window was started (see docs/page-cache.md). */
enum ra_kind {
	RA_SYNC = 0,    /* page_cache_sync_ra: a read missed */
	RA_ASYNC,       /* page_cache_async_ra: a read reached the PG_readahead marker */
	RA_MMAP,        /* window without a sync/async request: mmap read-around */
	RA_FORCED_SYNC, /* sync miss served unbounded: FADV_RANDOM, readahead off, small random read */
	RA_FORCED,      /* unbounded with no read: FADV_WILLNEED, readahead(2), MADV_WILLNEED */
	RA_KINDS,
};

/* Access advice seen on the file (bit set). */
enum advice_bit {
	ADVICE_NORMAL = 1,
	ADVICE_SEQUENTIAL = 2,
	ADVICE_RANDOM = 4,
	ADVICE_DIRECT = 8,
};

/*
 * The owner of a per-file or per-disk record: in run mode the process's tgid; in serve mode
 * the label's slot (serve counts labels, not processes). 0: nobody traced.
 */
struct file_key {
	__u32 owner;
	__u32 dev; /* kernel dev_t: MAJOR << 20 | MINOR */
	__u64 ino;
	/*
	 * The inode's generation: a freed inode number given to a new file has another. On a
	 * filesystem without generations (0), the ledger's count of the files it saw get the
	 * number (bpf/names.bpf.c, inode_instance).
	 */
	__u32 igen;
	__u32 closed; /* 0 in file_index; 1 in an entry its file's rename ended (names.bpf.c) */
};

/*
 * How a process loaded a file as code (docs/run-mode.md, "What the run worked on, what it
 * loaded"): what the kernel saw, not what the path says.
 */
enum load_bit {
	LOAD_MAPPED_EXEC = 1, /* mmap of one of its fds with PROT_EXEC (the dynamic loader) */
	LOAD_EXECED = 2,      /* the program an execve ran, or its ELF interpreter */
};

/* A 2 MiB chunk of a (process, file)'s page bitmaps (pagecache.bpf.c). */
struct chunk_bits {
	__u64 ra[CHUNK_WORDS];   /* brought in by this process's readahead */
	__u64 used[CHUNK_WORDS]; /* requested by a read, faulted or offered to fault-around */
};

/* A ledger entry: one (owner, file). */
struct file_stat {
	struct file_key key;
	__u32 gen;   /* bumped by the loader when it recycles the entry, and at a rename's end */
	__u32 epoch; /* ledger_epoch when the entry was last touched */
	__u64 name_id; /* the name its syscalls were made under (file_name.name_id); 0: none yet */
	__u32 row[FILE_OP_SLOTS]; /* file_rows index + 1 of each op's row; 0: none yet */
	__u64 dirtied_pages;   /* pages this process dirtied in the file (writeback_dirty_folio) */
	__u64 requested_pages; /* pages asked for by buffered reads (page-cache lookups) */
	__u64 miss_pages;      /* requested pages the read had to add to the cache */
	__u64 added_pages;     /* every page this process added to the cache for the file */
	__u64 added_folios;
	__u64 ra_pages;        /* added pages that fell in one of its readahead windows */
	__u64 ra_requested_pages; /* ... of which the read that started the window asked for */
	__u64 ra_windows[RA_KINDS];
	__u64 ra_window_pages[RA_KINDS];
	__u64 ra_fallbacks; /* large-folio windows redone page by page (not new windows) */
	__u64 faults;       /* mm_filemap_fault: page faults that reached the page cache */
	__u64 map_pages;    /* pages offered to fault-around (mm_filemap_map_pages) */
	__u64 direct_reads, direct_read_bytes;   /* O_DIRECT via iomap: bypass the cache */
	__u64 direct_writes, direct_write_bytes;
	__u64 i_size;
	__u32 advice;  /* enum advice_bit, OR of all seen */
	__u32 add_gen; /* bumped by every add: invalidates threads' cached "used" ranges */
	__u32 loaded;  /* enum load_bit: how the process mapped the file as code, OR of all */
	__u32 load_pad;
	/* Read-family calls and bytes before its first executable mapping: the loader's. */
	__u64 load_read_calls, load_read_bytes;
	__u64 chunk_end; /* 1 + the highest page-bitmap chunk made for this entry */
	__u64 window_hist[HIST_BUCKETS]; /* readahead window sizes in pages */
	/*
	 * The page bitmap of the file's first chunk (its first 2 MiB: most files whole), here
	 * rather than in page_bits: a process's first touch of a file then makes no hash
	 * entry, and its faults and reads find the bits with no hash look-up. Zeroed with the
	 * entry when the loader recycles it.
	 */
	struct chunk_bits chunk0;
};

struct chunk_key {
	__u32 file; /* index into file_stats */
	__u32 pad;
	__u64 chunk; /* page index >> CHUNK_SHIFT */
};

/* A file, without an owner: (dev, ino, generation). */
struct path_key {
	__u32 dev;
	__u32 igen;
	__u64 ino;
};

_Static_assert(sizeof(struct file_key) == 24, "file_key layout");
_Static_assert(FILE_OPS_END <= FILE_OP_SLOTS, "file ops fit their slots");
_Static_assert(sizeof(struct chunk_bits) == 128, "chunk_bits layout");

/* ---- io_uring (bpf/uring.bpf.c) ---- */

#define MAX_URING_OPS 64        /* opcodes (IORING_OP_LAST is 63 on 6.18) */
#define MAX_URING_KEYS 1024     /* (owner, opcode) pairs */
#define MAX_URING_INFLIGHT 16384

/* What an opcode does to its file: its bytes count as read or written, or it syncs. */
enum uring_kind { UK_NONE = 0, UK_READ, UK_WRITE, UK_SYNC, UK_FILE };

/*
 * io_uring opcodes in their uapi order (enum io_uring_op; the numbers are ABI), named as
 * liburing names them without IORING_OP_, with their kind. Per-file rows: uring_NAME ops.
 */
#define URING_OPS(X)                                                                               \
	X(NOP, NONE) X(READV, READ) X(WRITEV, WRITE) X(FSYNC, SYNC) X(READ_FIXED, READ)             \
	X(WRITE_FIXED, WRITE) X(POLL_ADD, NONE) X(POLL_REMOVE, NONE) X(SYNC_FILE_RANGE, SYNC)      \
	X(SENDMSG, WRITE) X(RECVMSG, READ) X(TIMEOUT, NONE) X(TIMEOUT_REMOVE, NONE)                \
	X(ACCEPT, NONE) X(ASYNC_CANCEL, NONE) X(LINK_TIMEOUT, NONE) X(CONNECT, NONE)               \
	X(FALLOCATE, FILE) X(OPENAT, NONE) X(CLOSE, NONE) X(FILES_UPDATE, NONE) X(STATX, NONE)     \
	X(READ, READ) X(WRITE, WRITE) X(FADVISE, FILE) X(MADVISE, NONE) X(SEND, WRITE)             \
	X(RECV, READ) X(OPENAT2, NONE) X(EPOLL_CTL, NONE) X(SPLICE, WRITE)                         \
	X(PROVIDE_BUFFERS, NONE) X(REMOVE_BUFFERS, NONE) X(TEE, WRITE) X(SHUTDOWN, NONE)           \
	X(RENAMEAT, NONE) X(UNLINKAT, NONE) X(MKDIRAT, NONE) X(SYMLINKAT, NONE) X(LINKAT, NONE)   \
	X(MSG_RING, NONE) X(FSETXATTR, NONE) X(SETXATTR, NONE) X(FGETXATTR, NONE)                  \
	X(GETXATTR, NONE) X(SOCKET, NONE) X(URING_CMD, NONE) X(SEND_ZC, WRITE)                     \
	X(SENDMSG_ZC, WRITE) X(READ_MULTISHOT, READ) X(WAITID, NONE) X(FUTEX_WAIT, NONE)           \
	X(FUTEX_WAKE, NONE) X(FUTEX_WAITV, NONE) X(FIXED_FD_INSTALL, NONE) X(FTRUNCATE, FILE)      \
	X(BIND, NONE) X(LISTEN, NONE) X(RECV_ZC, READ) X(EPOLL_WAIT, NONE) X(READV_FIXED, READ)    \
	X(WRITEV_FIXED, WRITE) X(PIPE, NONE)
#define UOP_ENUM_ENTRY(name, kind) UOP_##name,
enum uring_op { URING_OPS(UOP_ENUM_ENTRY) URING_OPS_KNOWN };
_Static_assert(URING_OPS_KNOWN == 63 && URING_OPS_KNOWN <= MAX_URING_OPS, "io_uring opcodes");

/* How a request ran, told at its first completion. */
enum uring_how { URING_INLINE = 0, URING_ASYNC, URING_POLL, URING_HOWS };

struct uring_key {
	__u32 owner; /* the ring owner's tgid (a label slot in serve) */
	__u32 op;    /* opcode */
};

struct uring_stat {
	__u64 ops;         /* requests submitted, and refused at submission */
	__u64 sqpoll_ops;  /* ... submitted by the ring's SQPOLL thread */
	__u64 completions; /* CQEs (a multishot request posts several) */
	__u64 errors;      /* CQEs with a negative result */
	__u64 res_bytes;   /* sum of the positive results: bytes for data opcodes */
	__u64 ran[URING_HOWS]; /* requests by how they ran, at their first CQE */
	__u64 unseen;      /* requests whose CQE was never matched (a recycled request) */
	__u64 latency_sum_ns;  /* submission to first CQE, summed */
	__u64 lat_hist[FINE_BUCKETS];
};

/* A request in flight, keyed by its struct io_kiocb. */
struct uring_req {
	__u64 start_ns;
	__u32 owner;
	__u32 tgid;  /* the ring owner's process (its ledger) */
	__u8 op;
	__u8 how;    /* enum uring_how */
	__u8 seen;   /* a CQE came (multishot: more may come) */
	__u8 pad;
	__u32 tid;   /* the submitting thread (--trace) */
};

_Static_assert(sizeof(struct uring_stat) == 8 * (10 + FINE_BUCKETS), "uring_stat layout");
_Static_assert(sizeof(struct uring_req) == 24, "uring_req layout");

/* ---- block I/O (bpf/block.bpf.c) ---- */

#define MAX_BLOCK_KEYS 1024
#define MAX_BLOCK_INFLIGHT 16384

enum block_op { BOP_READ = 0, BOP_WRITE, BOP_FLUSH, BOP_DISCARD, BOP_OTHER, BLOCK_OPS };

/* How a request was charged. */
enum block_charge { CHARGE_NONE = 0, CHARGE_SUBMITTER, CHARGE_DIRTIER };

struct block_key {
	__u32 owner; /* as in file_key; 0: not charged to a traced process (or label) */
	__u32 dev;  /* disk, kernel dev_t */
	__u32 op;   /* enum block_op */
	__u32 pad;
};

/* What completed requests add up to, per (owner, disk, op) and per file alike. */
#define BLOCK_COUNTS                                                                               \
	__u64 requests;                                                                            \
	__u64 bytes;                                                                               \
	__u64 errors;                                                                              \
	__u64 sync, readahead, meta, fua, preflush; /* requests with these flags */                \
	__u64 writeback;  /* requests charged through the pages' dirtier */                        \
	__u64 writeback_bytes; /* ... and their bytes */                                           \
	__u64 sequential; /* requests that began where the previous one (same key) ended */        \
	__u64 next_sector;                                                                         \
	__u64 lat_ns, qlat_ns;         /* sums */                                                  \
	__u64 size_hist[HIST_BUCKETS]; /* bytes per request */

struct block_stat {
	BLOCK_COUNTS
	__u64 lat_hist[FINE_BUCKETS];  /* issued -> completed, ns */
	__u64 qlat_hist[FINE_BUCKETS]; /* queued (started) -> completed, ns */
};

/* Per file: the same counts, with log2 latency buckets (the files are many). */
struct file_block_stat {
	BLOCK_COUNTS
	__u64 lat_hist[HIST_BUCKETS];
	__u64 qlat_hist[HIST_BUCKETS];
};

/*
 * Block I/O of one (owner, file, disk, op); ino 0 is I/O of no file (journal, metadata,
 * swap). epoch: the loader reads one generation while the kernel fills the other.
 */
#define MAX_FILE_BLOCKS 8192
struct file_block_key {
	__u32 owner;
	__u32 fdev; /* the file's filesystem (s_dev), 0 with ino 0 */
	__u64 ino;
	__u32 igen;
	__u32 disk; /* kernel dev_t of the disk */
	__u16 op;   /* enum block_op */
	__u16 epoch;
	__u32 pad;
};

/* A started request, until it completes (block_inflight, keyed by struct request *). */
struct block_rq_info {
	__u64 start_ns, issue_ns;
	__u64 sector;
	__u64 cgroup;
	__u64 ino;  /* the file the request is charged to (its first page's, or O_DIRECT's) */
	__u32 fdev; /* ... and its filesystem, and the inode's generation */
	__u32 igen;
	__u32 tgid, dev;
	__u32 charge, flags;
	/*
	 * The kernel's own start of this request (rq->start_time_ns) when last seen: the struct
	 * reused for a later request has a later one (0: the kernel keeps no time stamps).
	 */
	__u64 born_ns;
	__u32 bytes; /* done so far and still to do, as of its last issue */
	__u32 op; /* enum block_op */
	__u32 via; /* enum submit_thread: which kind of thread of the process submitted it */
	__u32 sys_tid;      /* --trace: the thread whose syscall started it, and that call's */
	__u64 sys_start_ns; /* start (0: started outside a syscall of a traced thread) */
	/* Completed before the request ended: a flush sequence's data step, partial completions. */
	__u32 done_bytes;
	__u32 io_started; /* started by block_io_start (6.1: block_getrq): a new life began there */
	__u32 taken;      /* set (atomically) by the one program that counts the request */
	__u32 pad;
	char comm[COMM_LEN];
};

/* The thread of a process that submitted a block request: its own, or io_uring's. */
enum submit_thread { VIA_TASK = 0, VIA_IOWQ, VIA_SQPOLL };

/* One completed request, for iotrace snoop. */
struct block_event {
	__u64 ts_ns;
	__u64 sector;
	__u64 qlat_ns; /* 0 when the start was not seen */
	__u64 lat_ns;  /* 0 when the issue was not seen */
	__u64 ino;     /* file of the first page, 0 if unknown */
	__u64 cgroup;  /* the charged process's own cgroup v2 id, 0 if unknown */
	__u32 tgid;
	__u32 dev;
	__u32 bytes;
	__u32 op;
	__u32 flags; /* raw cmd_flags */
	__u32 charge;
	__s32 error;
	__u32 late; /* its completion was skipped (see block.md): seen later, no latencies */
	__u32 via;  /* enum submit_thread */
	__u32 pad;
	char comm[COMM_LEN];
};

/* ---- the timeline (--trace; bpf/trace.bpf.c, user/report/trace.c) ---- */

/* What a record of the trace ring buffer is: its first __u32. */
enum trace_kind {
	TE_SYSCALL = 1, /* struct trace_syscall */
	TE_UNLINKED,    /* struct trace_unlinked */
	TE_BLOCK,       /* struct trace_block */
	TE_URING,       /* struct trace_uring */
	TE_THREAD,      /* struct trace_thread */
	TE_NAME,        /* struct file_name: with --trace, names share this ring (ordered) */
};

/* A traced call (the read/write family, sync calls, opens) that took trace_min_ns or more. */
struct trace_syscall {
	__u32 kind, tid;
	__u32 tgid, nr;
	__u64 start_ns, dur_ns;
	__s64 ret;
	struct trace_file files[2]; /* its file, and a copy's destination (ino 0: none) */
	__u32 linked; /* block requests it started: flows to them */
	__u32 pad;
};

/* A call that started block requests but was under trace_min_ns: no flows to them. */
struct trace_unlinked {
	__u32 kind, tid;
	__u64 start_ns;
	__u32 linked, pad;
};

/* A block request's flags, the kernel's REQ_* bits made portable. */
enum trace_block_flag {
	TBF_SYNC = 1, TBF_READAHEAD = 2, TBF_META = 4, TBF_FUA = 8, TBF_PREFLUSH = 16,
};

/* A completed block request (late: its completion was skipped, seen when found later). */
struct trace_block {
	__u32 kind, tgid; /* charged to (0: other I/O) */
	__u32 dev, op;
	__u64 sector;
	__u32 bytes, flags; /* enum trace_block_flag bits */
	__u32 charge, via;
	__s32 error;
	__u32 late;
	__u64 start_ns, issue_ns, done_ns;
	struct trace_file file;
	__u32 sys_tid, pad;
	__u64 sys_start_ns;
};

/* An io_uring request's first completion. */
struct trace_uring {
	__u32 kind, tgid;
	__u32 tid, op; /* submitting thread, opcode */
	__u64 submit_ns, done_ns;
	__s32 res;
	__u32 how;
};

/* Per slot, what the timeline's counter tracks sample (trace_counters, mmapped). */
enum trace_counter {
	TC_SYS_READ = 0, /* bytes read by the read family (and a copy's source side) */
	TC_SYS_WRITE,    /* bytes written by the write family (and a copy's destination) */
	TC_PAGES_ADDED,  /* pages the process added to the page cache */
	TC_PAGES_DIRTIED,
	TRACE_COUNTERS,
};

/* A thread's name, before its first syscall in the trace. */
struct trace_thread {
	__u32 kind, tid;
	__u32 tgid, pad;
	char comm[COMM_LEN];
};

_Static_assert(sizeof(struct trace_syscall) == 80, "trace_syscall layout");
_Static_assert(sizeof(struct trace_block) == 104, "trace_block layout");
_Static_assert(sizeof(struct trace_uring) == 40, "trace_uring layout");

/* ---- where: the user-space stacks of I/O syscalls (--stacks; bpf/stacks.bpf.c) ---- */

enum stacks_mode { STACKS_OFF = 0, STACKS_FP, STACKS_DWARF };

#define MAX_STACK_DEPTH 64     /* frames of a frame-pointer stack */
#define MAX_STACK_KEYS 65536   /* (process, syscall, stack) aggregates */
#define MAX_STACK_IDS 16384    /* distinct frame-pointer stacks */
#define STACK_DWARF_BYTES 8192 /* user stack copied per DWARF sample (perf's default) */
#define STACK_DWARF_WARMUP 1024 /* DWARF: each (process, syscall)'s first calls all sampled */
#define STACK_DWARF_PERIOD 64  /* ... then one in this many on average */
#define MAX_STACK_VMAS 256     /* executable file mappings of a process sent at once */

/* Frame-pointer mode: calls, bytes and time per (process, syscall, stack). */
struct stack_key {
	__u32 tgid;
	__u32 nr;
	__s64 stackid; /* its frames' hash, in stack_traces */
	__u64 leaf;    /* the caller of a frameless syscall wrapper (the word on top of the
			* stack, when it returns into executable code and the walk skipped it), or 0 */
	__u32 exec_id; /* the process's exec (task->self_exec_id): its mappings */
	__u32 pad;
};

struct stack_val {
	__u64 calls, bytes, time_ns;
};

/* A frame-pointer stack's return addresses, innermost first (stack_traces). */
struct stack_ips {
	__u64 ips[MAX_STACK_DEPTH];
	__u64 depth;
};

/* DWARF mode, per (slot, syscall): what the calls since the last sample add up to. */
struct stack_pending {
	__u64 calls, bytes, time_ns;
	__u64 sampled; /* samples taken: the first STACK_DWARF_WARMUP calls all are */
};

/* What a record of the stack_events ring buffer is: its first __u32. */
enum stack_event_kind {
	SE_MAPS = 1,  /* struct stack_maps */
	SE_SAMPLE,    /* struct stack_sample */
	SE_MAPS_PROC, /* struct stack_maps without vmas: read /proc/PID/maps (no VMA iterator) */
};

/* An executable file mapping of a process: [start, end) maps its file from pgoff pages. */
struct stack_vma {
	__u64 start, end, pgoff;
	__u64 ino;
	__u32 dev, igen; /* the ledger's file key: dev, ino, generation */
};

/* A process's executable file mappings, sent when they changed (mm->map_count). */
struct stack_maps {
	__u32 kind, tgid;
	__u32 n, exec_id; /* task->self_exec_id: an exec starts new mappings */
	struct stack_vma vmas[MAX_STACK_VMAS];
};

/*
 * DWARF register numbers, as libdw unwinds with them: x86-64's; arm64's x0-x30 and sp,
 * then the pc (no DWARF number of its own: given to libdw apart). DW_SP, DW_PC: the stack
 * pointer and pc on either.
 */
#if defined(__TARGET_ARCH_arm64) || defined(__aarch64__)
enum { DW_SP = 31, DW_PC, DW_REGS };
#else
enum { DW_RAX = 0, DW_RDX, DW_RCX, DW_RBX, DW_RSI, DW_RDI, DW_RBP, DW_RSP, DW_R8, DW_R9,
       DW_R10, DW_R11, DW_R12, DW_R13, DW_R14, DW_R15, DW_RIP, DW_REGS };
enum { DW_SP = DW_RSP, DW_PC = DW_RIP };
#endif

/* DWARF mode: a sampled call's user registers and the top of its user stack. */
struct stack_sample {
	__u32 kind, tgid;
	__u32 tid, nr;
	__u64 calls, bytes, time_ns; /* itself and the calls of its syscall since the last one */
	__u64 regs[DW_REGS];
	__u32 size, pad; /* stack bytes copied from regs[DW_SP] */
	__u8 stack[STACK_DWARF_BYTES];
};

_Static_assert(sizeof(struct stack_key) == 32, "stack_key layout");
_Static_assert(sizeof(struct stack_vma) == 40, "stack_vma layout");

#endif /* IOTRACE_H */
