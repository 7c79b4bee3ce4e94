/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOTRACE_OPTIONS_H
#define IOTRACE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct options {
	char **command; /* NULL-terminated argv of CMD, or NULL with -p */
	pid_t pid;      /* -p */
	const char *output;
	bool json;
	bool timing;
	bool time_all; /* --time-all: time every call, not a sample */
	bool hist;
	bool summary_only;
	bool verbose;
	bool sync; /* --sync */
	const char *user; /* -u: run CMD as this user */
	const char *prom_file; /* --prom-file: Prometheus text format, written atomically */
	uint32_t max_procs;
	uint32_t files; /* --files: rows of each process's files table; 0 = all */
	bool wide;      /* --wide: every column of the files table */
	bool files_by_path; /* --files-by path (the default): a path's files in one row */
	const char *trace;          /* --trace FILE: the timeline (docs/trace.md) */
	uint64_t trace_min_ns;      /* --trace-min: calls that took at least this */
	uint64_t trace_interval_ns; /* --trace-interval: counter samples */
	uint64_t trace_max_events;  /* --trace-max-events */
	bool trace_options_given;   /* one of the three above: they need --trace */
	const char *stacks;         /* --stacks FILE: folded stacks (docs/stacks.md) */
	int stacks_by;              /* --stacks-by: enum stacks_by, or -1 (by time if timed) */
	int stacks_unwind;          /* --stacks-unwind: enum stacks_mode (fp by default) */
};

#endif
