/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The JSON report's texts, printed one object at a time into one buffer kept for the whole
 * report, the processes and their files by a printer thread (json_print.c).
 */
#ifndef IOTRACE_JSON_PRINT_H
#define IOTRACE_JSON_PRINT_H

#include <stdbool.h>
#include <stdio.h>
#include <cjson/cJSON.h>

/*
 * While the report is written (begin to end), cJSON's nodes come from an arena: json_free
 * gives back a tree and everything allocated after its root, so trees are freed in the
 * reverse order of their making. A tree kept beyond that is built paused (from malloc).
 */
void json_arena_begin(FILE *out);
/* Everything posted is written; the arenas, the printer and the print buffer given back. */
void json_arena_end(void);
void json_arena_pause(bool pause);
/* Frees item's tree: from the arena, or with cJSON_Delete. */
void json_free(cJSON *item);

/* Prints item's JSON text to out; -1 when it could not be made. */
int json_put(FILE *out, cJSON *item);
/* Prints obj without its closing brace (the caller adds members and closes it), frees it. */
int json_put_open(FILE *out, cJSON *obj);

/*
 * The pipeline of the processes and their files (and of the run's files): json_pipe_build,
 * then the tree built,
 * then json_pipe_put posts it (before, then the tree, open as json_put_open's, are written
 * by the printer thread, and the tree freed). Nothing else writes to out and no json_put
 * runs until json_pipe_drain. Each returns the printer's error, if any (then nothing more
 * is written).
 */
int json_pipe_build(void);
int json_pipe_put(const char *before, cJSON *tree, bool open);
int json_pipe_drain(void);

#endif
