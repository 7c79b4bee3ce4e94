/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The JSON report's texts, printed one object at a time into one buffer kept for the whole
 * report (json_print.c).
 */
#ifndef IOTRACE_JSON_PRINT_H
#define IOTRACE_JSON_PRINT_H

#include <stdio.h>
#include <cjson/cJSON.h>

/* Prints item's JSON text to out; -1 when it could not be made. */
int json_put(FILE *out, cJSON *item);
/* Prints obj without its closing brace (the caller adds members and closes it), frees it. */
int json_put_open(FILE *out, cJSON *obj);
/* The report is out: the buffer is given back. */
void json_print_done(void);

#endif
