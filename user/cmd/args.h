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
	const struct option_row *options;
	argp_parser_t parse;
	const char *operands; /* "[DURATION]"; NULL or "": options only, an operand refused */
	const char *doc;
	unsigned flags; /* argp_parse's (ARGP_IN_ORDER) */
};

/*
 * A subcommand's option, declared once: its argp row and, for an option that only stores,
 * how: a bool set on or off, or its argument kept as it is (a const char *), at offset in
 * the subcommand's options (offsetof, nested members too). A table of them ends with {}.
 */
enum stored_as { STORE_NOT, STORE_ON, STORE_OFF, STORE_ARG };
struct option_row {
	struct argp_option argp;
	enum stored_as as;
	size_t offset;
};
/* An option the subcommand's parser takes itself: argp's fields. */
#define OPTION(...) { { __VA_ARGS__ }, STORE_NOT, 0 }
/* An option that only stores (as, at offset): then argp's fields. */
#define OPTION_STORING(as, offset, ...) { { __VA_ARGS__ }, as, offset }
/* Stores key's value into input when table has it as storing; false when it does not. */
bool option_stored(const struct option_row *table, int key, char *arg, void *input);

/* Parses argv (argv[0] is the subcommand's word, renamed) into input, or exits. */
void subcommand_parse(const struct subcommand *cmd, int argc, char **argv, void *input);
/* A process id (-p, containers' PID...): 1..INT_MAX. */
pid_t pid_arg(struct argp_state *state, const char *arg);
/* A count of opt ("--max-procs"): 1..max. */
unsigned long count_arg(struct argp_state *state, const char *opt, const char *arg,
			unsigned long max);
/* A file's path for opt ("--trace"): not empty. */
char *path_arg(struct argp_state *state, const char *opt, char *arg);

#endif
