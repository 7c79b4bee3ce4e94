/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The JSON report's texts, printed one object at a time into one buffer kept for the whole
 * report (json_print.c).
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
void json_arena_begin(void);
void json_arena_end(void);
void json_arena_pause(bool pause);
/* Frees item's tree: from the arena, or with cJSON_Delete. */
void json_free(cJSON *item);

/* Prints item's JSON text to out; -1 when it could not be made. */
int json_put(FILE *out, cJSON *item);
/* Prints obj without its closing brace (the caller adds members and closes it), frees it. */
int json_put_open(FILE *out, cJSON *obj);
/* The report is out: the buffer is given back. */
void json_print_done(void);

#endif
