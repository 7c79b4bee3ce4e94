/* SPDX-License-Identifier: GPL-2.0 */
/* Renderers: read a run_result, write text or JSON; never touch BPF. */
#ifndef IOTRACE_REPORT_H
#define IOTRACE_REPORT_H

#include <stdio.h>
#include "model/model.h"
#include "model/options.h"

void report_text(FILE *out, const struct run_result *r, const struct options *o);
/* A process's files table under title (report_files.c). */
void report_files(FILE *out, const char *title, const struct proc_record *p,
		  const struct options *o);
/* The run's files, every process's of a path in one row, the first limit (by bytes). */
void report_run_files(FILE *out, const struct run_result *r, size_t limit);
/* The first screen: the command, each layer's totals, top files and processes. */
void report_story(FILE *out, const struct run_result *r, const struct options *o);
/* Processes one line each (the detail of the many), from ranked[from]. */
void report_process_list(FILE *out, const struct run_result *r, size_t from);
int report_json(FILE *out, const struct run_result *r);
/* Prometheus text format, labelled by comm, written atomically to path; -1 with errno. */
int report_prom_file(const char *path, const struct run_result *r);
/* "exit 3", "killed by SIGKILL", or "exit unknown". */
void format_exit(char *buf, size_t len, bool known, int status);

#endif
