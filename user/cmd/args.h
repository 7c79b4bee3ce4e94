/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every subcommand's command line shares: its parse (argp, errors named after the
 * subcommand) and the values checked the same way wherever they are taken. A bad value is
 * one line on stderr and exit 1 (argp_failure), as for every option.
 */
#ifndef IOTRACE_ARGS_H
#define IOTRACE_ARGS_H

#include <argp.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* One subcommand's options and operands: how it is called, and its parser. */
struct subcommand {
	const char *name; /* "iotrace snoop": how its error lines start */
	const struct argp_option *options;
	argp_parser_t parse;
	const char *operands; /* "[DURATION]", or NULL */
	const char *doc;
	unsigned flags; /* argp_parse's (ARGP_IN_ORDER) */
};

/*
 * An option that only stores: a bool set on or off, or its argument kept as it is (a
 * const char *). A table of them, ended by { 0 }, declares such options of a subcommand
 * once each; offset is the member's in the subcommand's options (offsetof, nested members
 * too).
 */
enum stored_as { STORE_ON = 1, STORE_OFF, STORE_ARG };
struct stored_opt {
	int key;
	enum stored_as as;
	size_t offset;
};
/* Stores key's value into input when table has it; false when it does not. */
bool stored_opt_set(const struct stored_opt *table, int key, char *arg, void *input);

/* Parses argv (argv[0] is the subcommand's word, renamed) into input, or exits. */
void subcommand_parse(const struct subcommand *cmd, int argc, char **argv, void *input);
/* A process id (-p, containers' PID...): 1..INT_MAX. */
pid_t pid_arg(struct argp_state *state, const char *arg);
/* A count of opt ("--max-procs"): 1..max. */
unsigned long count_arg(struct argp_state *state, const char *opt, const char *arg,
			unsigned long max);
/* A file's path for opt ("--trace"): not empty. */
char *path_arg(struct argp_state *state, const char *opt, char *arg);
/* An operand given to a subcommand that takes options only. */
void no_operands(struct argp_state *state, const char *subcommand, const char *arg);

#endif
