// SPDX-License-Identifier: GPL-2.0
/* The command line's shared pieces (args.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "util/util.h"

/* The last row of a table: all zero. */
static bool last_row(const struct option_row *r)
{
	return !r->argp.name && !r->argp.key && !r->argp.doc;
}

void subcommand_parse(const struct subcommand *cmd, int argc, char **argv, void *input)
{
	/* A subcommand that takes options only: its operands are left by argp, then refused. */
	bool options_only = !cmd->operands || !*cmd->operands;
	const char *word = strchr(cmd->name, ' '); /* "iotrace top": "top" */
	int first = argc;
	size_t n = 0;

	while (!last_row(&cmd->options[n]))
		n++;
	/* argp takes its own rows, one after another: the table's, copied. */
	struct argp_option rows[n + 1];
	const struct argp argp = { rows, cmd->parse, cmd->operands, cmd->doc, NULL, NULL, NULL };

	for (size_t i = 0; i < n; i++)
		rows[i] = cmd->options[i].argp;
	rows[n] = (struct argp_option){ 0 };
	argv[0] = (char *)cmd->name;
	argp_parse(&argp, argc, argv, cmd->flags | (options_only ? ARGP_NO_ARGS : 0),
		   options_only ? &first : NULL, input);
	if (options_only && first < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (%s takes options only)\n", cmd->name,
			argv[first], word ? word + 1 : cmd->name);
		exit(1);
	}
}

bool option_stored(const struct option_row *table, int key, char *arg, void *input)
{
	for (const struct option_row *r = table; !last_row(r); r++) {
		char *member = (char *)input + r->offset;

		if (r->argp.key != key || r->as == STORE_NOT)
			continue;
		if (r->as == STORE_ARG)
			*(const char **)member = arg;
		else
			*(bool *)member = r->as == STORE_ON;
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

