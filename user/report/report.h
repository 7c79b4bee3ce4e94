/* SPDX-License-Identifier: GPL-2.0 */
/* Renderers: read a run_result, write text or JSON; never touch BPF. */
#ifndef IOTRACE_REPORT_H
#define IOTRACE_REPORT_H

#include <stdio.h>
#include "model/model.h"

/*
 * What the text report shows: the presentation choices of the command line (cmd/ fills them
 * from its options); everything else, timing included, comes from the report itself.
 */
struct text_choices {
	bool hist;         /* the totals' histograms */
	bool summary_only; /* -s: the first screen only */
	uint32_t files;    /* --files: rows of each process's files table; 0 = all */
	bool wide;         /* --wide: every column of the files table */
};

void report_text(FILE *out, const struct run_result *r, const struct text_choices *c);
/* A process's files table under title (report_files.c), of the run r. */
void report_files(FILE *out, const char *title, const struct proc_record *p,
		  const struct run_result *r, const struct text_choices *c);
/* The run's files, every process's of a path in one row, the first limit (by bytes). */
void report_run_files(FILE *out, const struct run_result *r, size_t limit);
/* The first screen: the command, each layer's totals, top files and processes. */
void report_story(FILE *out, const struct run_result *r);
/* Processes one line each (the detail of the many), from ranked[from]. */
void report_process_list(FILE *out, const struct run_result *r, size_t from);
int report_json(FILE *out, const struct run_result *r);
/* Prometheus text format, labelled by comm, written atomically to path; -1 with errno. */
int report_prom_file(const char *path, const struct run_result *r);

#endif
