/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a report goes: a file named on the command line, opened before the command runs
 * and written after; or standard output. Every failure is one line on stderr
 * ("iotrace: writing PATH: reason"), and a caller that gets -1 exits non-zero.
 */
#ifndef IOTRACE_OUTPUT_H
#define IOTRACE_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

struct output {
	const char *path; /* NULL: standard output, or standard error (f) */
	FILE *f;
	int fd;        /* f's file (a regular file's stream has none of its own: fileno fails) */
	bool created;  /* iotrace made the file: removed when there is no report for it */
	bool truncate; /* a regular file that was there: emptied when the report starts */
};

/*
 * Opens path for a report (close-on-exec, nothing truncated yet): a regular file, new or
 * not, a terminal, a pipe, a character device; a block device or a directory is refused.
 * path NULL or "-": standard output. -1 after one line on stderr.
 */
int output_open(struct output *o, const char *path);
/* The report starts: a regular file that was there is emptied now. */
void output_start(struct output *o);
/* No report after all (the command could not run): a file iotrace made is removed. */
void output_abandon(struct output *o);
/* Flushes (a report written a piece at a time); -1 after one line on a write error. */
int output_flush(struct output *o);
/* Flushes and closes (standard output is flushed only); -1 after one line on a write error. */
int output_close(struct output *o);
/*
 * For a path iotrace replaces whole (rename over it: --prom-file): -1 with why set when
 * something other than a regular file is there (a device, a directory, a symbolic link),
 * which it must not replace.
 */
int output_replaceable(const char *path, char *why, size_t len);

/*
 * Descriptors 0, 1 and 2 that iotrace was started without are held on /dev/null,
 * close-on-exec: no file iotrace opens takes their number (its own messages would go into
 * it, and so would the command's), and the command still starts without them.
 */
void output_hold_std_fds(void);

#endif
