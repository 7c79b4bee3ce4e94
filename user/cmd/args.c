// SPDX-License-Identifier: GPL-2.0
/* The command line's shared pieces (args.h). */
#include <limits.h>
#include "args.h"
#include "util/util.h"

void subcommand_parse(const struct subcommand *cmd, int argc, char **argv, void *input)
{
	const struct argp argp = { cmd->options, cmd->parse, cmd->operands, cmd->doc,
				   NULL, NULL, NULL };

	argv[0] = (char *)cmd->name;
	argp_parse(&argp, argc, argv, cmd->flags, NULL, input);
}

bool stored_opt_set(const struct stored_opt *table, int key, char *arg, void *input)
{
	for (const struct stored_opt *t = table; t->as; t++) {
		char *member = (char *)input + t->offset;

		if (t->key != key)
			continue;
		if (t->as == STORE_ARG)
			*(const char **)member = arg;
		else
			*(bool *)member = t->as == STORE_ON;
		return true;
	}
	return false;
}

pid_t pid_arg(struct argp_state *state, const char *arg)
{
	unsigned long v;

	if (parse_uint(arg, INT_MAX, &v))
		argp_failure(state, 1, 0, "invalid pid '%s': expected a positive integer", arg);
	return (pid_t)v;
}

unsigned long count_arg(struct argp_state *state, const char *opt, const char *arg,
			unsigned long max)
{
	unsigned long v;

	if (parse_uint(arg, max, &v))
		argp_failure(state, 1, 0, "invalid %s '%s': expected 1..%lu", opt, arg, max);
	return v;
}

char *path_arg(struct argp_state *state, const char *opt, char *arg)
{
	if (!*arg)
		argp_failure(state, 1, 0, "%s needs a path", opt);
	return arg;
}

void no_operands(struct argp_state *state, const char *subcommand, const char *arg)
{
	argp_failure(state, 1, 0, "unexpected argument '%s' (%s takes options only)", arg,
		     subcommand);
}
