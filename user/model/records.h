/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a run measured, as plain records independent of BPF and of any output format. Readers
 * (kernel/) fill their raw parts; the model (model.c, files.c, uring.c) sums them and derives
 * every computed number once, the members marked "derived"; renderers only format them.
 */
#ifndef IOTRACE_RECORDS_H
#define IOTRACE_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "iotrace.h"
#include "fields.h"
#include "hist.h"
#include "util/container.h"
#include "util/disks.h"
#include "util/residency.h"
#include "kernel_report.h"

/* One syscall's totals in a profile (only syscalls that were called are kept). */
struct sc_row {
	uint32_t nr;
	SYSCALL_FIELDS(FIELD_MEMBER)
	/* derived */
	uint64_t avg_ns;   /* total_ns / calls */
	double time_share; /* total_ns / the profile's total_ns */
};

/* The read/write-family numbers of one syscall, summed over CPUs. */
struct io_summary {
	IO_FIELDS(FIELD_MEMBER)
	uint64_t size_min, size_max; /* valid when some call succeeded */
	uint64_t lat_min, lat_max;   /* valid when some call was timed */
	__u64 size_hist[HIST_BUCKETS];
	__u64 lat_hist[FINE_BUCKETS];
	/* derived */
	struct hist_summary size_bytes, latency_ns;
};

struct profile {
	struct sc_row *rows;
	size_t nrows;
	struct io_summary *io[IO_KINDS]; /* NULL: that syscall was not called */
	/* derived */
	uint64_t calls, errors, total_ns, timed_calls, avg_ns;
};

/* Page-cache numbers of a file, or of several summed (every member adds up). */
struct page_cache_view {
	PAGE_CACHE_FIELDS(FIELD_MEMBER)
	uint64_t ra_windows[RA_KINDS];
	uint64_t ra_window_pages[RA_KINDS];
	/* Of readahead_window_added_pages, those the reads that started the windows asked for. */
	uint64_t ra_requested_pages;
	bool unused_exact; /* no page-bitmap chunk was lost */
};

/* Files summed: a process's, a run's, a label's. */
struct page_cache_sum {
	struct page_cache_view v;
	__u64 window_hist[HIST_BUCKETS]; /* readahead window sizes in pages */
	uint64_t files;                  /* how many files were summed */
};

/* A file's page bitmaps (chunks with their numbers), until the model counts them. */
struct page_bits {
	struct page_chunk {
		uint64_t chunk; /* page index >> CHUNK_SHIFT */
		struct chunk_bits bits;
	} *chunks;
	size_t n;
};

struct residency_view {
	RESIDENCY_FIELDS(FIELD_MEMBER)
};

struct load_view {
	FILE_LOAD_FIELDS(FIELD_MEMBER)
};

/* One syscall on one file (a ledger row), summed over the entries the file had. */
struct file_io {
	uint32_t op; /* enum file_op */
	FILE_IO_FIELDS(FIELD_MEMBER)
	struct sparse_hist lat; /* latency of the timed calls (file_io_latency) */
};

/*
 * A renamed file's syscalls under one of its names (the name strace -yy shows them under):
 * the calls of its ledger entries of that name (file_stat.name_id), summed.
 */
struct file_name_io {
	uint64_t name_id;  /* 0: not known */
	const char *name;  /* its path (derived at the end: the names table's) */
	struct name_calls {
		uint32_t op; /* enum file_op */
		uint64_t calls, errors, requested_bytes, transferred_bytes;
	} *rows;
	size_t nrows;
};

/* Block I/O for one file on one disk and operation. */
struct file_block {
	uint32_t disk, op;
	struct block_stat_view {
		BLOCK_FIELDS(FIELD_MEMBER)
	} c;
	struct sparse_hist size, lat, qlat;
};

/* The per-file table's numbers (FILE_SUMMARY_FIELDS): derived from the rows above. */
#define FILE_SUMMARY_MEMBER(name, ...) uint64_t name;
#define FILE_SUMMARY_NONE UINT64_MAX /* hit%, p99: nothing to take them from */
struct file_summary {
	FILE_SUMMARY_FIELDS(FILE_SUMMARY_MEMBER)
	uint64_t opens, closes, maps;
};

/* One kernel ledger entry as read: raw counters, page bitmaps and syscall rows. */
struct ledger_entry {
	uint32_t idx; /* its index in the kernel's table (file_stats) */
	struct file_stat st;
	struct page_bits bits;
	bool chunks_lost;
	struct ledger_row {
		uint32_t op;
		struct file_row row;
	} *rows;
	size_t nrows;
};

/* One file in the ledger of one process: every layer, syscall to disk. */
struct file_record {
	struct file_key key;    /* owner, dev, ino (the owner of the metadata rows: 0) */
	uint32_t kind;          /* enum file_kind, or FK_METADATA */
	uint32_t advice;        /* enum advice_bit, OR of all seen */
	uint64_t added_folios;
	/*
	 * Its name as /proc/PID/fd shows it, or NULL; earlier names of a renamed file, each
	 * NUL-terminated, an empty one last, or NULL. Both are the run's names table's
	 * (run_result.names), but a row of several files' (versions) owns its other_names.
	 * Names are bytes as recorded: renderers escape them.
	 */
	const char *path;
	const char *other_names;
	const char *name; /* the path alone, without " (deleted)" (what --files-by path folds by) */
	bool deleted;
	bool chunks_lost;       /* some chunk of some file did not fit: counts inexact */
	bool final;             /* its process exited: nothing more comes */
	uint32_t versions;      /* --files-by path: the files of one path in this row (0: one) */
	struct page_bits bits;  /* raw, freed once counted (file_finish) */
	struct file_io *io;
	struct file_block *blocks;
	uint32_t nio, nblocks;
	/*
	 * The name its syscalls were made under (that of its first entry with syscalls), and
	 * once a second name came, its calls by name (entries of each name summed; derived at
	 * the end: only when some name differs from path).
	 */
	uint32_t nby_name;
	uint64_t name_id;
	struct file_name_io *by_name;
	const char *residency_missing; /* NULL, or why residency is unknown */
	const char *residency_partial; /* NULL, or why only resident pages and size are known */
	struct residency_view res;
	uint32_t loaded;       /* enum load_bit: how its process loaded it as code, OR of all */
	struct load_view load; /* the loader's reads of it, summed over its entries */
	/* derived */
	struct page_cache_view pc; /* summed over its entries; unused readahead at the end */
	struct file_summary sum;
};
/*
 * Asks for f's lines ahead of their use: the run's files are merged from every process's
 * records of them (the run's libc from each of 10,000 processes), far apart in memory, and
 * a merge waited on each record's first read (docs/performance.md, "The report of a large
 * run").
 */
static inline void file_record_prefetch(const struct file_record *f)
{
	for (size_t off = 0; off < sizeof(*f); off += 64)
		__builtin_prefetch((const char *)f + off);
}

/* A row of block I/O that belongs to no file: journal, metadata, swap (kind of its record). */
#define FK_METADATA FK_KINDS
/* The other I/O's row of files of untraced processes (its ino; kind FK_METADATA too). */
#define OTHER_FILES_INO 1

/* Block I/O of one (process, disk, operation). */
struct block_record {
	struct block_key key;
	struct block_stat st; /* raw kernel counters */
	enum hist_layout lat_layout; /* of st.lat_hist, qlat_hist: fine, log2 for a file's */
	/* derived */
	struct block_view {
		BLOCK_FIELDS(FIELD_MEMBER)
#define BLOCK_TEXT_MEMBER(name, ...) uint64_t name;
		BLOCK_TEXT_FIELDS(BLOCK_TEXT_MEMBER)
		struct hist_summary size, lat, qlat;
	} v;
};

/* One disk's block I/O in /sys/block/DISK/stat's columns (DISK_STAT_FIELDS). */
struct disk_stat_view {
	uint32_t dev; /* kernel dev_t */
	DISK_STAT_FIELDS(FIELD_MEMBER)
};

/* io_uring requests of one (process, opcode) (or of a label's, or summed). */
struct uring_record {
	struct uring_key key;
	struct uring_stat st; /* raw kernel counters */
	uint64_t in_flight;   /* requests still waiting for a completion at the end */
	/* derived */
	struct uring_view {
		URING_FIELDS(FIELD_MEMBER)
#define URING_TEXT_MEMBER(name, ...) uint64_t name;
		URING_TEXT_FIELDS(URING_TEXT_MEMBER)
		struct hist_summary lat;
	} v;
};

/* The run's story of a process or of the run (STORY_FIELDS; derived: story.c). */
struct io_story {
	STORY_FIELDS(FIELD_MEMBER)
};

struct proc_record {
	uint32_t pid;
	uint32_t ppid;
	char comm[COMM_LEN];
	char *args;          /* argv joined by spaces, or NULL */
	uint64_t start_ns;   /* CLOCK_MONOTONIC of fork/exec, 0 when unseen */
	uint64_t end_ns;     /* CLOCK_MONOTONIC of exit, 0 when unseen */
	bool exit_seen;
	int exit_status;     /* wait(2) status when exit_seen */
	bool overflow;       /* counted in the shared overflow slot, not here */
	uint32_t slot;       /* live kernel slot, 0 once harvested */
	uint64_t cgroup;     /* its cgroup v2 id at its last fork, exec or exit; 0: unknown */
	uint32_t container;  /* run_result.containers[container - 1]; 0: in none (the host) */
	uint32_t mnt_ns, pid_ns; /* its namespaces' inode numbers at its last fork or exec; 0 */
	struct profile prof;
	struct file_record *files;
	size_t nfiles;
	struct block_record *blocks;
	size_t nblocks;
	struct uring_record *urings; /* by opcode */
	size_t nurings;
	struct stack_site *sites; /* --stacks: its top call sites, by the folded file's weight */
	size_t nsites;
	__u64 window_hist[HIST_BUCKETS]; /* readahead window sizes of its files' entries */
	struct file_index *file_index;   /* (dev, ino) -> files[] (files.c) */
	/* derived */
	struct io_story story;    /* its layers' totals */
	struct page_cache_sum pc; /* its files summed */
	/*
	 * The rows its files are reported in: files[] one by one, or with --files-by path the
	 * files of one path folded into one row (merged[], versions > 1).
	 */
	struct file_record **rows;
	size_t nrows;
	struct file_record *merged;
	size_t nmerged;
};

/* What a --trace file holds (report/trace.c): events, and those it could not hold. */
struct trace_stats {
	TRACE_FIELDS(FIELD_MEMBER) /* truncated (in JSON): not_written > 0 */
};

/* --stacks: a process's call site (its innermost frames outside the C library). */
struct stack_site {
	char *syscall;
	char *where; /* "reader_a ← middle ← main" */
	STACK_SITE_FIELDS(FIELD_MEMBER)
};

/* --stacks: what the folded file holds. */
struct stacks_summary {
	const char *mode; /* "frame pointers", "dwarf" */
	const char *by;   /* "calls", "bytes", "time" */
	STACKS_FIELDS(FIELD_MEMBER)
};

/*
 * What the run did with a file (docs/run-mode.md, "What the run worked on, what it
 * loaded"): worked on it, or loaded it to run (code; the C library's start-up files).
 */
enum file_use {
	FU_DATA = 0,
	FU_CODE,
	FU_STARTUP,
	FU_INHERITED, /* a process's row only: no call of its own, faults on another's mapping */
};

/* A file of the run: the processes' rows of one path (or file) in one, and who used it. */
struct run_file {
	/*
	 * Its row: the one process's own when a single process used it (a copy took 0.6 KiB
	 * and its rows' histograms each: 45 MiB for tar's 50,000 files), else merged.
	 */
	const struct file_record *f;
	struct file_record *merged; /* the rows summed, owned (file_record_free), or NULL */
	enum file_use use;
	bool system;          /* read only, a file of the system's (/usr, /etc ...): shown last */
	struct file_user {
		uint32_t pid;
		uint64_t bytes; /* its read_bytes + write_bytes on the file */
		double share;   /* of the file's bytes (of its calls when it moved none) */
	} *users;
	size_t nusers;
};

/* A container (or a pod) some of the run's processes were in (collect/collect_containers.c). */
struct run_container {
	struct container_info info; /* what its cgroup's path and its runtime say */
	char *cgroup;               /* the cgroup path of its first process (owned) */
	uint32_t procs;             /* processes in it */
};

struct run_result {
	char **command;
	uint64_t wall_ns;
	bool exit_known;
	int exit_status; /* wait(2) status of CMD (or of the -p process, when known) */
	bool partial;    /* iotrace was interrupted before the traced processes ended */
	int stop_signal; /* the signal (SIGINT, SIGTERM) that made iotrace stop early, or 0 */
	bool timing;
	bool files_by_path; /* --files-by path: a process's files of one path in one row */
	char *cwd;          /* the command's working directory (owned), or NULL */
	bool sampled; /* timing by the sampling rule (SAMPLE_WARMUP, SAMPLE_PERIOD), not every call */
	struct proc_record *procs;
	size_t nprocs;
	struct run_container *containers; /* by first process; a process's is procs[].container */
	size_t ncontainers;
	uint32_t host_procs; /* processes in no container (a known cgroup) */
	/* processes whose cgroup was gone before its path was read: container not known */
	uint32_t unknown_procs;
	struct profile overflow;  /* processes beyond the slot limit, merged */
	bool overflow_used;
	struct profile totals;
	uint64_t drops[DROP_COUNTERS];
	uint32_t nr_slots;
	const char *page_cache_missing; /* NULL, or why page-cache hooks are not attached */
	const char *direct_io_missing;  /* NULL, or why O_DIRECT hooks are not attached */
	const char *uring_missing;      /* NULL, or why io_uring hooks are not attached */
	struct kernel_report *kernel;   /* how the kernel was traced (kernel_report.h), or NULL */
	struct block_record *other_blocks; /* I/O not charged to a traced process */
	size_t nother_blocks;
	struct proc_record other_files; /* ... by file: metadata per disk, others' files */
	struct names *names; /* every file's names (names.h) */
	struct disk_table disks; /* the block devices' names as the run ended (collect/) */
	bool synced; /* --sync flushed dirty data before the report */
	const char *trace_path;   /* --trace FILE, or NULL */
	struct trace_stats trace; /* what it holds (trace.h) */
	bool trace_failed;        /* it could not be written (a line said why) */
	const char *stacks_path;  /* --stacks FILE, or NULL */
	struct stacks_summary stacks;
	bool stacks_failed;
	/* derived */
	struct page_cache_sum pc; /* every process's files */
	struct uring_record *uring_totals; /* every process's, by opcode */
	size_t nuring_totals;
	struct io_story story;  /* every process's layers summed (disk p99: of all requests) */
	struct run_file *files; /* every process's files by path (or file), by bytes */
	size_t nfiles;
	/*
	 * The first screen's files: the indexes into files[] of those the run worked on, its
	 * own first (files[].system last), each part by bytes; and what it loaded, in one.
	 */
	size_t *worked, nworked;
	struct run_loaded {
		size_t files, procs;
		uint64_t read_calls, read_bytes, faults, block_read_bytes;
	} loaded;
	size_t *ranked; /* indexes of procs[] by I/O time (by bytes without timing) */
};

#endif /* IOTRACE_RECORDS_H */
