// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer's kernel programs: one file per concern, built as this one translation unit.
 * Not objects linked by `bpftool gen object`: libbpf 1.1's static linker cannot link two
 * objects that both call the bpf_rdonly_cast kfunc ("failed to resolve size of underlying
 * type"), and the syscall, page-cache and block programs all walk kernel pointers with it
 * (UNTRUSTED in maps.bpf.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "maps.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Never attached: the loader's signal that every map exists. Loaded first (the first
 * section of the object) by the instance that creates the maps while a second instance
 * waits to reuse them and load the other half of the programs in parallel
 * (user/kernel/tracer_objects.c, "Loading in two threads").
 */
SEC("socket")
int maps_ready(void *ctx)
{
	return 0;
}

#include "task.bpf.c"      /* the current task, found without a helper call */
#include "proc.bpf.c"      /* process tree, slots, serve's labels */
#include "trace.bpf.c"     /* --trace: the timeline's events */
#include "names.bpf.c"     /* what a file is and is called; renames followed */
#include "ledger.bpf.c"    /* per-file entries and rows; fds to files */
#include "stacks.bpf.c"    /* --stacks: user-space stacks of I/O syscalls */
#include "counters.bpf.c"  /* per-CPU caches of the syscall and I/O counters, and totals */
#include "syscalls.bpf.c"  /* syscall counters; syscalls counted per file */
#include "pagecache.bpf.c" /* page cache and readahead per (process, file) */
#include "block.bpf.c"     /* block I/O per process, disk and file */
#include "uring.bpf.c"     /* io_uring requests per process, opcode and file */
#include "fallbacks.bpf.c" /* the same events on kernels without some tracepoints */
