/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `iotrace compare` puts side by side: numbers taken from each run's run-mode report
 * (whole run, and per file named on the command lines), their medians, the labels of the
 * variants, and the table and JSON that show them. compare.c runs the variants.
 */
#ifndef IOTRACE_COMPARE_TABLE_H
#define IOTRACE_COMPARE_TABLE_H

#include <stdbool.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#define MAX_VARIANTS 32
#define MAX_NAMED_FILES 8
#define LABEL_MAX 18

struct compare_variant {
	const char *command;
	char label[64]; /* up to LABEL_MAX columns when derived */
	cJSON **runs; /* one run-mode report per repeat */
	char exits[64]; /* how its runs ended, each way once: "0", "3", "0/SIGKILL" */
};

struct comparison {
	struct compare_variant *v;
	int n;
	int repeat;
	bool drop_caches;
	char *files[MAX_NAMED_FILES]; /* absolute paths of the files named on the commands */
	int nfiles;
};

/*
 * Labels of the variants without one (compare_commands.c): the words in which the commands differ ("-s", "-r",
 * "(none)" for the command without any), or A, B, C ... when those are not distinct or do
 * not fit a column. The table's legend gives every command in full.
 */
void compare_label(struct compare_variant *v, int n);
/* The regular files named as arguments on the commands (not the programs), as they are now. */
void compare_find_files(struct comparison *c);
void compare_print_table(FILE *out, const struct comparison *c);
/* Prints {"variants": [...]} and takes the runs: they are freed with the document. */
void compare_print_json(FILE *out, struct comparison *c);
void compare_free_files(struct comparison *c);

#endif
