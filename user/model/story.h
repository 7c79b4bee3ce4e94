/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run's story (story.c): per process and per run, each layer's totals (STORY_FIELDS);
 * the processes ranked by I/O; the run's files, every process's of one path in one row.
 */
#ifndef IOTRACE_STORY_H
#define IOTRACE_STORY_H

#include "records.h"

/* A story field with nothing to take it from (disk_p99_ns without requests). */
#define STORY_NONE UINT64_MAX

/* r->story, each process's story, r->ranked and r->files; -1 out of memory. */
int story_derive(struct run_result *r);
void story_free(struct run_result *r);
/* What processes and files are ranked by: I/O time, or bytes without timing. */
uint64_t story_rank_key(const struct io_story *s, bool timing);
/* Why a story field has no value (then null, "n/a"), or NULL; pc: the same process's or run's. */
const char *story_field_unknown(const struct field *f, const struct io_story *s,
				const struct page_cache_view *pc, const struct run_result *r);

#endif
