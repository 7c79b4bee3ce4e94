/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a run did with each of its files (docs/run-mode.md, "What the run worked on, what it
 * loaded"): worked on it, or loaded it to run.
 */
#ifndef IOTRACE_FILE_USE_H
#define IOTRACE_FILE_USE_H

#include "records.h"

/*
 * How process p used its file f: FU_CODE when p mapped it executable, or the kernel did at
 * exec, and p read no more of it than before that and wrote none; FU_STARTUP for one of the
 * C library's start-up files (by path) that p only read or mapped and was not given on its
 * command line (relative words taken from cwd, the command's working directory); FU_INHERITED when p made no call on it (it only faulted on a mapping its
 * parent made before the fork, or the kernel made at exec); else FU_DATA. f->sum derived.
 */
enum file_use file_use_by(const struct file_record *f, const struct proc_record *p,
			  const char *cwd);
/* The run's use, one more process's added: data first, then code, then start-up files. */
enum file_use file_use_add(enum file_use run, enum file_use one);
/* "data", "code", "startup". */
const char *file_use_name(enum file_use u);
/*
 * Where the program a process exec'd (f: its record, LOAD_EXECED) is installed: the
 * directory above its bin/ or sbin/ ("/root/.pyenv/versions/3.11.7" for .../bin/python3);
 * malloc'ed, or NULL.
 */
char *file_install_prefix(const struct file_record *f);
/*
 * A file of the system's that the run only read, outside the command's working directory
 * cwd (or NULL): under the directories of installed software and its configuration (/usr,
 * /etc, /opt ...), or of an installation the run ran a program of (prefixes[n]: a Python
 * of pyenv's, a Go toolchain), unless that holds cwd or lies in it.
 */
bool file_of_system(const struct file_record *f, const char *cwd, char *const *prefixes,
		    size_t n);

#endif
