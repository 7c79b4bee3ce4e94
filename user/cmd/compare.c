// SPDX-License-Identifier: GPL-2.0
/*
 * iotrace compare: run each variant under run mode (this same binary, --json), interleaved
 * A B A B ..., and put the medians side by side. Each run is a full run-mode report, so
 * the table carries exactly the numbers `iotrace --json -- CMD` gives.
 */
#include <argp.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cjson/cJSON.h>
#include "args.h"
#include "compare.h"
#include "report/cells.h"
#include "report/compare_table.h"
#include "util/output.h"
#include "util/util.h"

struct compare_opts {
	bool drop_caches;
	bool json;
	int repeat;
	const char *output;
	const char *labels[MAX_VARIANTS];
	int nlabels;
	char **commands;
	int ncommands;
};

static const char doc[] =
	"iotrace compare -- run command variants under iotrace, interleaved, and compare them "
	"side by side (medians over --repeat runs).\n"
	"\v"
	"Each CMD is one shell command line (run with /bin/sh -c, output discarded).\n"
	"\n"
	"EXAMPLES:\n"
	"  sudo iotrace compare --drop-caches --repeat 3 -l normal -l sequential \\\n"
	"       -- './workloads/read-file -n 64m f' './workloads/read-file -s -n 64m f'\n"
	"  sudo iotrace compare --json -o cmp.json -- './workloads/tr2u a b < in' "
	"'./workloads/tr2b a b < in'\n";

static const struct option_row options[] = {
	OPTION_STORING(STORE_ON, offsetof(struct compare_opts, drop_caches), "drop-caches", 'D',
		       NULL, 0, "sync and drop the page cache before every run", 0),
	OPTION("repeat", 'n', "N", 0, "Runs per variant (default 1)", 0),
	OPTION("label", 'l', "NAME", 0, "Name of the next variant (repeat in order)", 0),
	OPTION_STORING(STORE_ON, offsetof(struct compare_opts, json), "json", 'j', NULL, 0,
		       "Print one JSON document with every run", 0),
	OPTION_STORING(STORE_ARG, offsetof(struct compare_opts, output), "output", 'o', "FILE", 0,
		       "Write the result to FILE instead of stdout", 0),
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct compare_opts *o = state->input;

	if (option_stored(options, key, arg, o))
		return 0;
	switch (key) {
	case 'n':
		o->repeat = count_arg(state, "--repeat", arg, 1000);
		break;
	case 'l':
		if (o->nlabels == MAX_VARIANTS)
			argp_failure(state, 1, 0, "at most %d variants", MAX_VARIANTS);
		o->labels[o->nlabels++] = arg;
		break;
	case ARGP_KEY_ARGS:
		o->commands = state->argv + state->next;
		o->ncommands = state->argc - state->next;
		break;
	case ARGP_KEY_END:
		if (o->ncommands < 1)
			argp_failure(state, 1, 0, "no commands (usage: iotrace compare [OPTIONS] -- "
						  "'CMD A' 'CMD B' ...)");
		if (o->ncommands > MAX_VARIANTS)
			argp_failure(state, 1, 0, "at most %d variants", MAX_VARIANTS);
		if (o->nlabels > o->ncommands)
			argp_failure(state, 1, 0, "%d labels for %d commands", o->nlabels,
				     o->ncommands);
		for (int i = 0; i < o->ncommands; i++)
			if (!*o->commands[i])
				argp_failure(state, 1, 0, "command %d is empty", i + 1);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- running ---- */

static int drop_caches(void)
{
	int fd;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "3", 1) != 1) {
		fprintf(stderr, "iotrace: cannot drop the page cache: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Runs `iotrace --json -o TMP -- /bin/sh -c CMD`; returns the parsed report or NULL. */
static cJSON *run_variant(const char *cmd)
{
	char tmpl[] = "/tmp/iotrace-compare-XXXXXX", *text = NULL;
	int fd = mkostemp(tmpl, O_CLOEXEC), status, devnull;
	cJSON *report = NULL;
	long len;
	FILE *f;
	pid_t pid;

	if (fd < 0)
		return NULL;
	close(fd);
	pid = fork();
	if (pid == 0) {
		/* Close-on-exec: the variant's command gets 0 and 1, not this one too. */
		devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
		execl("/proc/self/exe", "iotrace", "--json", "-o", tmpl, "--", "/bin/sh", "-c", cmd,
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		goto out;
	f = fopen(tmpl, "re");
	if (!f)
		goto out;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = len > 0 ? calloc(1, len + 1) : NULL;
	if (text && fread(text, 1, len, f) == (size_t)len)
		report = cJSON_Parse(text);
	fclose(f);
out:
	free(text);
	unlink(tmpl);
	return report;
}

/* How a run ended, as its report says: "0", "3", "SIGKILL" ("?" when it does not say). */
static void run_exit(const cJSON *run, char *buf, size_t len)
{
	const cJSON *e = cJSON_GetObjectItem(run, "exit");
	const cJSON *code = cJSON_GetObjectItem(e, "code"), *sig = cJSON_GetObjectItem(e, "signal_name");

	if (cJSON_IsNumber(code))
		snprintf(buf, len, "%d", code->valueint);
	else if (cJSON_IsString(sig))
		snprintf(buf, len, "SIG%s", sig->valuestring);
	else
		snprintf(buf, len, "?");
}

/*
 * The variant's exits, each way once ("0/3"), for the table; -1 after one line on stderr
 * when a run did not exit 0: its numbers are those of a failed run.
 */
static int note_exits(struct compare_variant *v, int k, int repeat)
{
	char one[32], shown[NAME_TEXT_MAX];
	int failed = 0, len = 0;

	v->exits[0] = '\0';
	for (int i = 0; i < repeat; i++) {
		run_exit(v->runs[i], one, sizeof(one));
		failed += strcmp(one, "0") != 0;
		if (!strstr(v->exits, one) && len < (int)sizeof(v->exits))
			len += snprintf(v->exits + len, sizeof(v->exits) - len, "%s%s", len ? "/" : "",
					one);
	}
	if (!failed)
		return 0;
	fprintf(stderr, "iotrace: variant %d (%s) did not exit 0 in %d of %d run%s (exit %s)\n",
		k + 1, name_cell(v->command, 0, shown, sizeof(shown)), failed, repeat,
		repeat == 1 ? "" : "s", v->exits);
	return -1;
}

/* Interleaved A B A B ..., so drift in the machine's state hits every variant alike. */
static int run_all(const struct compare_opts *o, struct compare_variant *v)
{
	char shown[NAME_TEXT_MAX];

	for (int i = 0; i < o->repeat; i++) {
		for (int k = 0; k < o->ncommands; k++) {
			if (o->drop_caches && drop_caches())
				return 1;
			v[k].runs[i] = run_variant(v[k].command);
			if (!v[k].runs[i]) {
				fprintf(stderr, "iotrace: variant %d (%s): run %d gave no report\n",
					k + 1, name_cell(v[k].command, 0, shown, sizeof(shown)),
					i + 1);
				return 1;
			}
		}
	}
	return 0;
}

int compare_main(int argc, char **argv)
{
	struct compare_opts o = { .repeat = 1 };
	const struct subcommand cmd = { "iotrace compare", options, parse_opt,
					"-- 'CMD A' ['CMD B' ...]", doc, 0 };
	struct compare_variant v[MAX_VARIANTS] = { 0 };
	struct comparison c = { .v = v };
	struct output out;
	bool failed = false;
	int status;

	subcommand_parse(&cmd, argc, argv, &o);
	/* Checked before any variant runs; emptied only for a result. */
	if (output_open(&out, o.output))
		return 1;
	c.n = o.ncommands;
	c.repeat = o.repeat;
	c.drop_caches = o.drop_caches;
	for (int k = 0; k < c.n; k++) {
		v[k].command = o.commands[k];
		if (k < o.nlabels)
			snprintf(v[k].label, sizeof(v[k].label), "%.63s", o.labels[k]);
		v[k].runs = calloc(o.repeat, sizeof(*v[k].runs));
	}
	compare_label(v, c.n);
	status = run_all(&o, v);
	if (status) {
		output_abandon(&out);
	} else {
		/* A variant that failed is shown (its exit row) and said: exit 1 after the table. */
		for (int k = 0; k < c.n; k++)
			failed |= note_exits(&v[k], k, o.repeat) != 0;
		compare_find_files(&c);
		output_start(&out);
		if (o.json)
			compare_print_json(out.f, &c);
		else
			compare_print_table(out.f, &c);
	}
	for (int k = 0; k < c.n; k++) {
		for (int i = 0; i < o.repeat; i++)
			cJSON_Delete(v[k].runs[i]);
		free(v[k].runs);
	}
	compare_free_files(&c);
	if (output_close(&out))
		status = 1;
	return status || failed ? 1 : 0;
}
