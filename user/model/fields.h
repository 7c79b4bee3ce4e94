/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every number iotrace reports, declared once: its C member (also its JSON key), text column,
 * Prometheus metric and unit. The X-macro lists below make both the members of the model's
 * structs (records.h) and the tables the renderers walk (fields.c), so a new number is one line
 * here, and `grep NAME user/model/fields.h` finds all its names. docs/ describe every field
 * (tests/test_fields.py checks that against `iotrace fields`).
 *
 * X(member, text column, Prometheus metric, label, label value, unit, flags, description)
 *   column: COL(header, width) in a text table, or NOCOL;
 *   metric: NULL when it is not exported; label/value: one label that splits the family
 *           (op="read"), NULL for none;
 *   flags:  enum field_flags.
 */
#ifndef IOTRACE_FIELDS_H
#define IOTRACE_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A syscall's row (strace -c's columns). */
#define SYSCALL_FIELDS(X)                                                                          \
	X(calls, COL("calls", 9), "iotrace_syscalls_total", NULL, NULL, "calls", 0,                \
	  "Syscalls that returned, counted as strace -c counts them")                              \
	X(errors, COL("errors", 9), "iotrace_syscall_errors_total", NULL, NULL, "calls", 0,        \
	  "Syscalls that returned an error (-4095..-1)")                                           \
	X(total_ns, COL("seconds", 11), "iotrace_syscall_seconds_total", NULL, NULL, "ns", 0,      \
	  "Time spent in the syscalls, sys_enter to sys_exit: measured with --time-all, "          \
	  "estimated when sampled (each timed call weighted by the calls it stands for); null "    \
	  "without timing")                                                                        \
	X(timed_calls, NOCOL, "iotrace_syscall_timed_calls_total", NULL, NULL, "calls", 0,         \
	  "Calls whose time was measured (every one with --time-all)")

/* A read/write-family syscall's sizes (the histograms are IO_HISTS). */
#define IO_FIELDS(X)                                                                               \
	X(calls, COL("calls", 9), NULL, NULL, NULL, "calls", 0, "Calls that returned")             \
	X(errors, COL("errors", 7), NULL, NULL, NULL, "calls", 0, "Calls that returned an error")  \
	X(requested_bytes, COL("req bytes", 12),                                                   \
	  "iotrace_syscall_requested_bytes_total", NULL, NULL,                                     \
	  "bytes", 0, "Bytes asked for (count argument or iovec sum) by calls whose request "      \
	  "could be read")                                                                         \
	X(unknown_request_calls, NOCOL, NULL, NULL, NULL, "calls", 0,                              \
	  "Calls whose iovec array was too long or unreadable: not in requested_bytes")            \
	X(transferred_bytes, COL("xfer bytes", 12), NULL, NULL, NULL, "bytes", 0,                  \
	  "Bytes returned by successful calls")

/* One syscall on one file: a row of the per-file ledger (its histogram is latency_ns). */
#define FILE_IO_FIELDS(X)                                                                          \
	X(calls, NOCOL, NULL, NULL, NULL, "calls", 0, "Calls on the file that returned")           \
	X(errors, NOCOL, NULL, NULL, NULL, "calls", 0, "Calls on the file that failed")            \
	X(requested_bytes, NOCOL, NULL, NULL, NULL, "bytes", 0,                                    \
	  "Bytes asked for by read/write-family calls on the file")                                \
	X(transferred_bytes, NOCOL, NULL, NULL, NULL, "bytes", 0,                                  \
	  "Bytes through the file by successful read/write-family calls (a copy counts on "        \
	  "both: out of the source, into the destination)")                                        \
	X(total_ns, NOCOL, NULL, NULL, NULL, "ns", 0, "Time of the calls on the file (estimated "  \
	  "from the timed ones, by their weight, when sampled)")                                   \
	X(timed_calls, NOCOL, NULL, NULL, NULL, "calls", 0, "Calls on the file that were timed")

/* Histograms: X(member, text unit, metric, unit, description). */
#define IO_HISTS(X)                                                                                \
	X(size_bytes, "B", "iotrace_syscall_io_bytes", "bytes",                                    \
	  "Bytes transferred per successful call")                                                 \
	X(latency_ns, "usecs", "iotrace_syscall_latency_seconds", "ns",                            \
	  "Latency per call, enter to exit (null without timing)")

/* Page cache of one (process, file), or summed over files. */
#define PAGE_CACHE_FIELDS(X)                                                                       \
	X(requested_pages, COL("requested", 9),                                                    \
	  "iotrace_page_cache_requested_pages_total", NULL, NULL,                                  \
	  "pages", 0, "Pages asked for by buffered reads (page-cache lookups)")                    \
	X(hit_pages, COL("hits", 9), "iotrace_page_cache_hits_total", NULL, NULL, "pages", 0,      \
	  "Requested pages found in the page cache: requested_pages - miss_pages")                 \
	X(miss_pages, COL("misses", 9), "iotrace_page_cache_misses_total", NULL, NULL, "pages", 0, \
	  "Requested pages the read had to add to the cache")                                      \
	X(added_pages, NOCOL, "iotrace_page_cache_added_pages_total", NULL, NULL, "pages", 0,      \
	  "Pages this process added to the page cache for the file")                               \
	X(readahead_pages, COL("readahead", 9), "iotrace_readahead_ahead_pages_total", NULL, NULL, \
	  "pages", 0, "Pages read ahead of any request: added inside a readahead window, "         \
	  "minus those the read that opened the window asked for")                                 \
	X(readahead_window_added_pages, NOCOL, NULL, NULL, NULL, "pages", 0,                       \
	  "Pages added inside this process's readahead windows")                                   \
	X(unused_readahead_pages, COL("unused", 9), "iotrace_readahead_unused_pages", NULL, NULL,  \
	  "pages", FIELD_GAUGE | FIELD_NEEDS_EXACT_BITMAPS,                                        \
	  "Pages read ahead and never requested by this process (page bitmaps; "                   \
	  "null when they overflowed)")                                                            \
	X(dirtied_pages, NOCOL, "iotrace_page_cache_dirtied_pages_total", NULL, NULL, "pages", 0,  \
	  "Pages this process dirtied in the file (writeback_dirty_folio): its writes "            \
	  "that writeback will carry to the disk")                                                 \
	X(readahead_fallbacks, NOCOL, NULL, NULL, NULL, "windows", 0,                              \
	  "Large-folio windows redone page by page (not new windows)")                             \
	X(faults, NOCOL, "iotrace_page_cache_faults_total", NULL, NULL, "faults", 0,               \
	  "Page faults that reached the page cache (mm_filemap_fault)")                            \
	X(fault_around_pages, NOCOL, "iotrace_page_cache_fault_around_pages_total", NULL,          \
	  NULL, "pages", 0, "Pages offered to fault-around (mm_filemap_map_pages)")                \
	X(direct_reads, NOCOL, "iotrace_direct_io_calls_total", "op", "read", "calls",             \
	  FIELD_NEEDS_DIRECT_HOOK,                                                                 \
	  "O_DIRECT reads (iomap), which bypass the cache")                                        \
	X(direct_read_bytes, NOCOL, "iotrace_direct_io_bytes_total", "op", "read", "bytes",        \
	  FIELD_NEEDS_DIRECT_HOOK,                                                                 \
	  "Bytes asked for by O_DIRECT reads")                                                     \
	X(direct_writes, NOCOL, "iotrace_direct_io_calls_total", "op", "write", "calls",           \
	  FIELD_NEEDS_DIRECT_HOOK,                                                                 \
	  "O_DIRECT writes (iomap)")                                                               \
	X(direct_write_bytes, NOCOL, "iotrace_direct_io_bytes_total", "op", "write",               \
	  "bytes", FIELD_NEEDS_DIRECT_HOOK, "Bytes asked for by O_DIRECT writes")

/* Readahead windows by how they started (enum ra_kind): X(kind, description). */
#define RA_KIND_FIELDS(X)                                                                          \
	X(sync, "page_cache_sync_ra: a read missed")                                               \
	X(async, "page_cache_async_ra: a read reached the PG_readahead marker")                    \
	X(mmap, "a window without a sync/async request: mmap read-around")                         \
	X(forced_sync, "a sync miss served unbounded: FADV_RANDOM, readahead off, small "          \
	  "random read")                                                                           \
	X(forced, "unbounded with no read: FADV_WILLNEED, readahead(2), MADV_WILLNEED")

/* What is in the page cache of a file now (cachestat), at the end of the run. */
#define RESIDENCY_FIELDS(X)                                                                        \
	X(resident_pages, COL("resident", 9), NULL, NULL, NULL, "pages", 0,                        \
	  "Pages of the file in the page cache at the end (cachestat; = fincore)")                 \
	X(dirty_pages, NOCOL, NULL, NULL, NULL, "pages", 0, "Dirty pages at the end")              \
	X(writeback_pages, NOCOL, NULL, NULL, NULL, "pages", 0,                                    \
	  "Pages under writeback at the end")                                                      \
	X(evicted_pages, NOCOL, NULL, NULL, NULL, "pages", 0,                                      \
	  "Pages evicted from the cache (cachestat's nr_evicted)")                                 \
	X(recently_evicted_pages, NOCOL, NULL, NULL, NULL, "pages", 0,                             \
	  "Evicted pages that would still be in a larger cache (cachestat)")                       \
	X(size_bytes, NOCOL, NULL, NULL, NULL, "bytes", 0, "Size of the file at the end")

/*
 * Code a process loaded from a file (docs/run-mode.md, "What the run worked on, what it
 * loaded"): the reads that came before it first mapped the file executable.
 */
#define FILE_LOAD_FIELDS(X)                                                                        \
	X(loader_read_calls, NOCOL, NULL, NULL, NULL, "calls", 0,                                  \
	  "Read-family calls on the file before the process first mapped it executable: the "      \
	  "dynamic loader reading its ELF headers (0 when never mapped so)")                        \
	X(loader_read_bytes, NOCOL, NULL, NULL, NULL, "bytes", 0, "Bytes those calls read")

/* Block I/O of one (process, disk, operation). */
#define BLOCK_FIELDS(X)                                                                            \
	X(requests, COL("requests", 9), "iotrace_block_io_requests_total", NULL, NULL,             \
	  "requests", 0,                                                                           \
	  "Block requests completed")                                                              \
	X(bytes, COL("bytes", 13), "iotrace_block_io_bytes_total", NULL, NULL, "bytes", 0,         \
	  "Bytes of the completed requests")                                                       \
	X(errors, NOCOL, "iotrace_block_io_errors_total", NULL, NULL, "requests", 0,               \
	  "Requests completed with an error")                                                      \
	X(sync, NOCOL, NULL, NULL, NULL, "requests", 0, "Requests with REQ_SYNC")                  \
	X(readahead, NOCOL, NULL, NULL, NULL, "requests", 0, "Requests with REQ_RAHEAD")           \
	X(meta, NOCOL, NULL, NULL, NULL, "requests", 0, "Requests with REQ_META")                  \
	X(fua, NOCOL, NULL, NULL, NULL, "requests", 0, "Requests with REQ_FUA")                    \
	X(preflush, NOCOL, NULL, NULL, NULL, "requests", 0, "Requests with REQ_PREFLUSH")          \
	X(writeback, NOCOL, "iotrace_block_io_writeback_requests_total", NULL, NULL,               \
	  "requests", 0, "Requests charged through the pages' dirtier (writeback)")                \
	X(sequential, NOCOL, NULL, NULL, NULL, "requests", 0,                                      \
	  "Requests that began where the previous one (same key) ended")                           \
	X(latency_sum_ns, NOCOL, NULL, NULL, NULL, "ns", 0, "Sum of issue-to-completion times")    \
	X(queue_latency_sum_ns, NOCOL, NULL, NULL, NULL, "ns", 0,                                  \
	  "Sum of start(queued)-to-completion times")

/*
 * A disk's block I/O in the columns of /sys/block/DISK/stat (the kernel's
 * Documentation/block/stat.rst, whose field numbers the meanings give), summed over the
 * traced processes and the other I/O, so that one can be held beside the other (model.c,
 * disk_stats_of). The merges, in-flight and busy-time fields have no counterpart here.
 */
#define DISK_STAT_FIELDS(X)                                                                        \
	X(read_ios, COL("reads", 7), NULL, NULL, NULL, "requests", 0,                              \
	  "Field 1 (read I/Os): read requests completed")                                          \
	X(read_sectors, COL("sectors", 9), NULL, NULL, NULL, "sectors", 0,                         \
	  "Field 3 (read sectors): 512-byte sectors read")                                         \
	X(read_ticks_ms, COL("ms", 6), NULL, NULL, NULL, "ms", 0,                                  \
	  "Field 4 (read ticks): the read requests' times from start to completion, summed")       \
	X(write_ios, COL("writes", 7), NULL, NULL, NULL, "requests", 0,                            \
	  "Field 5 (write I/Os): write requests completed, write-zeroes and secure erase "         \
	  "included")                                                                              \
	X(write_sectors, COL("sectors", 9), NULL, NULL, NULL, "sectors", 0,                        \
	  "Field 7 (write sectors): 512-byte sectors written")                                     \
	X(write_ticks_ms, COL("ms", 6), NULL, NULL, NULL, "ms", 0,                                 \
	  "Field 8 (write ticks): the write requests' times, summed")                              \
	X(discard_ios, COL("discards", 8), NULL, NULL, NULL, "requests", 0,                        \
	  "Field 12 (discard I/Os): discard requests completed")                                   \
	X(discard_sectors, COL("sectors", 9), NULL, NULL, NULL, "sectors", 0,                      \
	  "Field 14 (discard sectors): 512-byte sectors discarded")                                \
	X(discard_ticks_ms, COL("ms", 6), NULL, NULL, NULL, "ms", 0,                               \
	  "Field 15 (discard ticks): the discard requests' times, summed")                         \
	X(flush_ios, COL("flushes", 7), NULL, NULL, NULL, "requests", 0,                           \
	  "Field 16 (flush I/Os): flush requests completed")                                       \
	X(flush_ticks_ms, COL("ms", 6), NULL, NULL, NULL, "ms", 0,                                 \
	  "Field 17 (flush ticks): the flush requests' times, summed")

/* Text-only numbers the model derives for the block table. */
#define BLOCK_TEXT_FIELDS(X)                                                                       \
	X(avg_bytes, "avg B", "bytes", "bytes / requests")                                         \
	X(sequential_pct, "seq%", "%", "100 * sequential / requests")

#define BLOCK_HISTS(X)                                                                             \
	X(size_bytes, "B", "iotrace_block_io_size_bytes", "bytes", "Bytes per request")            \
	X(latency_ns, "us", "iotrace_block_io_latency_seconds", "ns",                              \
	  "Request latency, issue to completion")                                                  \
	X(queue_latency_ns, "q us", "iotrace_block_io_queue_latency_seconds", "ns",                \
	  "Request latency, start (queued) to completion")

/* io_uring requests of one (process, opcode) (bpf/uring.bpf.c). */
#define URING_FIELDS(X)                                                                            \
	X(ops, COL("ops", 9), "iotrace_io_uring_ops_total", NULL, NULL, "requests", 0,             \
	  "Requests submitted (and refused at submission)")                                        \
	X(completions, NOCOL, "iotrace_io_uring_completions_total", NULL, NULL, "CQEs", 0,         \
	  "Completions (CQEs) posted; a multishot request posts several")                          \
	X(errors, COL("errors", 7), "iotrace_io_uring_errors_total", NULL, NULL, "CQEs", 0,        \
	  "Completions with a negative result")                                                    \
	X(bytes, COL("bytes", 13), "iotrace_io_uring_bytes_total", NULL, NULL, "bytes",            \
	  FIELD_URING_DATA, "Bytes moved: the positive results of the completions of a data "      \
	  "opcode (null for the others)")                                                          \
	X(inline_ops, NOCOL, "iotrace_io_uring_requests_total", "how", "inline", "requests", 0,    \
	  "Requests by how they ran, told at their first completion: inline, in the thread that "  \
	  "submitted them")                                                                        \
	X(async_ops, NOCOL, "iotrace_io_uring_requests_total", "how", "async", "requests", 0,      \
	  "Requests punted to an io-wq worker (IOSQE_ASYNC, or work that would block)")            \
	X(poll_ops, NOCOL, "iotrace_io_uring_requests_total", "how", "poll", "requests", 0,        \
	  "Requests that waited for readiness (poll) before they ran")                             \
	X(sqpoll_ops, NOCOL, "iotrace_io_uring_sqpoll_ops_total", NULL, NULL, "requests", 0,       \
	  "Requests submitted by the ring's SQPOLL thread")                                        \
	X(in_flight, NOCOL, "iotrace_io_uring_in_flight", NULL, NULL, "requests", FIELD_GAUGE,     \
	  "Requests without their completion at the end (armed multishot requests included)")      \
	X(unseen, NOCOL, NULL, NULL, NULL, "requests", 0,                                          \
	  "Requests whose completion was never matched to them (completion ring overflow)")        \
	X(latency_sum_ns, NOCOL, NULL, NULL, NULL, "ns", 0,                                        \
	  "Submission to first completion, summed")

/* Text-only numbers the model derives for the io_uring table. */
#define URING_TEXT_FIELDS(X)                                                                       \
	X(async_pct, "async%", "%", "100 * (async_ops + poll_ops) / requests completed")           \
	X(sqpoll_pct, "sqpoll%", "%", "100 * sqpoll_ops / ops")

#define URING_HISTS(X)                                                                             \
	X(latency_ns, "usecs", "iotrace_io_uring_latency_seconds", "ns",                           \
	  "Request latency, submission to first completion")

/* What a --trace file holds (docs/trace.md): JSON "trace" and the text report's trace line. */
#define TRACE_FIELDS(X)                                                                            \
	X(events, NOCOL, NULL, NULL, NULL, "events", 0, "Events written in the trace file")        \
	X(syscalls, NOCOL, NULL, NULL, NULL, "calls", 0,                                           \
	  "Calls shown: those of the traced syscalls that took --trace-min or more")               \
	X(block_requests, NOCOL, NULL, NULL, NULL, "requests", 0,                                  \
	  "Block requests shown (every one the report counts)")                                    \
	X(io_uring_requests, NOCOL, NULL, NULL, NULL, "requests", 0,                               \
	  "io_uring requests shown, submission to first completion")                              \
	X(flows, NOCOL, NULL, NULL, NULL, "flows", 0,                                              \
	  "Arrows from a call to a block request it started")                                      \
	X(lost_events, NOCOL, NULL, NULL, NULL, "events", 0,                                       \
	  "Events the trace's ring buffer had no room for (drops.trace_events)")                  \
	X(not_written, NOCOL, NULL, NULL, NULL, "events", 0,                                       \
	  "Events left out beyond --trace-max-events (then truncated is true)")

/* --stacks (docs/stacks.md): a process's call site, and the run's stacks. */
#define STACK_SITE_FIELDS(X)                                                                       \
	X(calls, NOCOL, NULL, NULL, NULL, "calls", 0, "Calls made from the call site")             \
	X(bytes, NOCOL, NULL, NULL, NULL, "bytes", 0, "Bytes they moved (read/write family)")      \
	X(time_ns, NOCOL, NULL, NULL, NULL, "ns", 0,                                               \
	  "Their time (estimated from the timed calls when sampled)")
#define STACKS_FIELDS(X)                                                                           \
	X(stacks, NOCOL, NULL, NULL, NULL, "stacks", 0, "Distinct stacks in the folded file")      \
	X(stack_calls, NOCOL, NULL, NULL, NULL, "calls", 0,                                        \
	  "Calls the folded file holds (with --stacks-by calls, its numbers add up to this)")     \
	X(lost_calls, NOCOL, NULL, NULL, NULL, "calls", 0,                                         \
	  "Calls whose stack was not recorded (drops.stacks)")                                     \
	X(samples, NOCOL, NULL, NULL, NULL, "samples", 0,                                          \
	  "DWARF mode: sampled calls whose stacks were unwound")                                   \
	X(max_depth, NOCOL, NULL, NULL, NULL, "frames", 0, "Frames of the deepest stack")          \
	X(unknown_frames, NOCOL, NULL, NULL, NULL, "frames", 0,                                    \
	  "Frames no symbol was found for ([unknown])")

/*
 * The run's story (docs/run-mode.md, "The first screen"): each layer's totals of a process,
 * or of the run (every process's summed); JSON "story" of a process and of the totals.
 */
#define STORY_FIELDS(X)                                                                            \
	X(calls, NOCOL, NULL, NULL, NULL, "calls", 0, "Syscalls that returned")                    \
	X(errors, NOCOL, NULL, NULL, NULL, "calls", 0, "Syscalls that returned an error")         \
	X(syscall_ns, NOCOL, NULL, NULL, NULL, "ns", FIELD_NEEDS_TIMING,                           \
	  "Time in every syscall (null without timing)")                                          \
	X(read_calls, NOCOL, NULL, NULL, NULL, "calls", 0,                                         \
	  "Read-family calls (read, pread64, readv, preadv, preadv2; copies' source side)")       \
	X(read_bytes, NOCOL, NULL, NULL, NULL, "bytes", 0,                                         \
	  "Bytes they returned: files, pipes, sockets alike")                                     \
	X(write_calls, NOCOL, NULL, NULL, NULL, "calls", 0,                                        \
	  "Write-family calls (write, pwrite64, writev, ...; copies' destination side)")          \
	X(write_bytes, NOCOL, NULL, NULL, NULL, "bytes", 0, "Bytes they wrote")                    \
	X(sync_calls, NOCOL, NULL, NULL, NULL, "calls", 0,                                         \
	  "fsync, fdatasync, sync_file_range, sync and syncfs calls")                             \
	X(io_ns, NOCOL, NULL, NULL, NULL, "ns", FIELD_NEEDS_TIMING,                                \
	  "I/O time: time in the read/write family and the sync calls (null without timing)")     \
	X(requested_pages, NOCOL, NULL, NULL, NULL, "pages", FIELD_NEEDS_PAGE_CACHE,               \
	  "Pages asked of the page cache by buffered reads (page_cache.requested_pages)")         \
	X(hit_pages, NOCOL, NULL, NULL, NULL, "pages", FIELD_NEEDS_PAGE_CACHE,                     \
	  "Of those, found in the cache (page_cache.hit_pages)")                                  \
	X(readahead_pages, NOCOL, NULL, NULL, NULL, "pages", FIELD_NEEDS_PAGE_CACHE,               \
	  "Pages read ahead of any request (page_cache.readahead_pages)")                         \
	X(unused_readahead_pages, NOCOL, NULL, NULL, NULL, "pages",                                \
	  FIELD_NEEDS_PAGE_CACHE | FIELD_NEEDS_EXACT_BITMAPS,                                      \
	  "Pages read ahead and never requested (page_cache.unused_readahead_pages)")             \
	X(disk_read_bytes, NOCOL, NULL, NULL, NULL, "bytes", 0,                                    \
	  "Block I/O read for the processes (block.read.bytes)")                                  \
	X(disk_write_bytes, NOCOL, NULL, NULL, NULL, "bytes", 0,                                   \
	  "Block I/O written, writeback charged to the pages' dirtier included "                  \
	  "(block.write.bytes)")                                                                   \
	X(disk_requests, NOCOL, NULL, NULL, NULL, "requests", 0,                                   \
	  "Block requests of every operation (block.*.requests summed)")                          \
	X(disk_p99_ns, NOCOL, NULL, NULL, NULL, "ns", FIELD_NEEDS_REQUESTS,                        \
	  "99th percentile of their latency, issue to completion (null without requests)")        \
	X(uring_ops, NOCOL, NULL, NULL, NULL, "requests", 0, "io_uring requests submitted")        \
	X(uring_bytes, NOCOL, NULL, NULL, NULL, "bytes", 0, "Bytes io_uring data opcodes moved")

/*
 * iotrace top (docs/top.md): what a process, a cgroup, a file or the whole machine did in one
 * interval. Counted: X(member = JSON key, unit, description). Shown, per second or as a
 * share: X(member = JSON key, column, width, format, unit, description), formats 'r' bytes
 * per second, 'p' percent, 'o' operations per second; a double, TOP_NONE when it has no
 * value (no lookup, no request).
 */
#define TOP_COUNT_FIELDS(X)                                                                        \
	X(read_bytes, "bytes", "Bytes read by read-family syscalls (read, pread64, readv, "        \
	  "preadv, preadv2; the source side of sendfile, copy_file_range, splice)")                \
	X(write_bytes, "bytes", "Bytes written by write-family syscalls (write, pwrite64, "       \
	  "writev, pwritev, pwritev2; the destination side of copies)")                            \
	X(read_calls, "calls", "Read-family calls that returned")                                  \
	X(write_calls, "calls", "Write-family calls that returned")                                \
	X(io_ns, "ns", "Time in I/O syscalls: the read/write family, fsync, fdatasync, "           \
	  "sync_file_range, opens, io_uring_enter (files: the calls on the file); estimated from "  \
	  "the timed calls when sampled")                                                          \
	X(requested_pages, "pages", "Pages asked for by buffered reads (page-cache lookups)")      \
	X(miss_pages, "pages", "Requested pages the read had to add to the cache")                 \
	X(disk_reads, "requests", "Block read requests completed")                                 \
	X(disk_read_bytes, "bytes", "Bytes of those read requests")                                \
	X(disk_writes, "requests", "Block write requests completed, writeback included")           \
	X(disk_write_bytes, "bytes", "Bytes of those write requests: a process's or a file's "     \
	  "include the writeback of the pages the process dirtied")                                \
	X(disk_writeback_bytes, "bytes", "Of disk_write_bytes, those written back by the kernel's " \
	  "flusher and charged to the process that dirtied the pages")                             \
	X(io_uring_ops, "requests", "io_uring requests submitted (a file's: completions)")

#define TOP_RATE_FIELDS(X)                                                                         \
	X(read_bytes_per_sec, "READ/s", 7, 'r', "bytes/s", "read_bytes per second")                \
	X(write_bytes_per_sec, "WRITE/s", 7, 'r', "bytes/s", "write_bytes per second")             \
	X(hit_pct, "HIT%", 5, 'p', "%", "Page-cache hits: 100 * (requested_pages - miss_pages) / " \
	  "requested_pages; null with no lookup")                                                  \
	X(disk_read_bytes_per_sec, "DREAD/s", 7, 'r', "bytes/s", "disk_read_bytes per second")     \
	X(disk_write_bytes_per_sec, "DWRITE/s", 9, 'r', "bytes/s", "disk_write_bytes per second "  \
	  "(writeback charged to the dirtier)")                                                    \
	X(io_time_pct, "IO%", 5, 'p', "%", "io_ns as a percent of the interval; a process's "      \
	  "threads add up, so it may pass 100")                                                    \
	X(io_uring_ops_per_sec, "URING/s", 7, 'o', "ops/s", "io_uring_ops per second")

/* The machine's disks in top's header, each and all: X(member, unit, description). */
#define TOP_DISK_FIELDS(X)                                                                         \
	X(read_iops, "requests/s", "disk_reads per second")                                        \
	X(write_iops, "requests/s", "disk_writes per second")                                      \
	X(read_p99_ns, "ns", "99th percentile of the read requests' latency, issue to completion, " \
	  "in the interval; null without requests")                                                \
	X(write_p99_ns, "ns", "The same for write requests")                                       \
	X(writeback_bytes_per_sec, "bytes/s", "disk_writeback_bytes per second")

#define COL(header, width) header, width
#define NOCOL NULL, 0

/*
 * The per-file table of the text report (derived: model.c, file_summary_of): X(member,
 * column, width, format, description). Formats: 'n' count, 'b' bytes, 't' time (ns),
 * 'p' percent, 'P' pages shown as bytes.
 */
#define FILE_SUMMARY_FIELDS(X)                                                                     \
	X(read_calls, "calls", 6, 'n', "Read-family calls on the file (read, pread64, readv, "     \
	  "preadv, preadv2; the source side of sendfile, copy_file_range, splice)")                \
	X(read_bytes, "bytes", 6, 'b', "Bytes they read")                                          \
	X(write_calls, "calls", 6, 'n', "Write-family calls (the destination side of copies "      \
	  "too)")                                                                                  \
	X(write_bytes, "bytes", 6, 'b', "Bytes they wrote")                                        \
	X(sync_calls, "sync", 4, 'n', "fsync, fdatasync and sync_file_range calls")                \
	X(io_ns, "time", 6, 't', "Time of the file's timed syscalls")                              \
	X(hit_pct, "hit%", 4, 'p', "Requested pages found in the page cache, percent")             \
	X(readahead_pages, "all", 5, 'P', "Pages read ahead of any request (as bytes)")            \
	X(unused_readahead_pages, "unused", 6, 'P', "Readahead never requested (as bytes)")        \
	X(block_read_bytes, "read", 6, 'b', "Block I/O read for the file")                         \
	X(block_write_bytes, "write", 6, 'b', "Block I/O written for the file (writeback "         \
	  "included)")                                                                             \
	X(block_p99_ns, "p99", 5, 't', "99th percentile of its block requests' latency")

/* Members of the model's structs, from the lists above. */
#define FIELD_MEMBER(name, ...) uint64_t name;

enum field_flags {
	FIELD_GAUGE = 1,               /* a Prometheus gauge rather than a counter */
	FIELD_NEEDS_DIRECT_HOOK = 2,   /* unknown without the O_DIRECT tracepoint */
	FIELD_NEEDS_EXACT_BITMAPS = 4, /* unknown when page-bitmap chunks were lost */
	FIELD_URING_DATA = 8,          /* only for io_uring opcodes that move data */
	FIELD_NEEDS_TIMING = 16,       /* unknown without timing (--no-time) */
	FIELD_NEEDS_PAGE_CACHE = 32,   /* unknown without the page-cache hooks */
	FIELD_NEEDS_REQUESTS = 64,     /* unknown (a quantile of nothing) without requests */
};

struct field {
	const char *name;        /* C member and JSON key */
	const char *column;      /* text table header, or NULL */
	int width;               /* of the text column */
	const char *metric;      /* Prometheus family, or NULL */
	const char *label, *value; /* one label splitting the family, or NULL */
	const char *unit;
	const char *help;
	size_t offset;           /* of the uint64_t member in its struct */
	unsigned int flags;      /* enum field_flags */
};

struct field_table {
	const char *group; /* "page_cache", "block", ... */
	const struct field *f;
	size_t n;
};

extern const struct field_table syscall_fields, io_fields, file_io_fields, page_cache_fields,
	residency_fields, file_load_fields, block_fields, disk_stat_fields, uring_fields, trace_fields,
	stack_site_fields, stacks_fields, story_fields;

/* The uint64_t a field names in a record of its table's struct. */
static inline uint64_t field_get(const struct field *f, const void *rec)
{
	return *(const uint64_t *)((const char *)rec + f->offset);
}

/* Every field of every table, with its names and description (`iotrace fields`). */
void fields_print(FILE *out);

#endif
