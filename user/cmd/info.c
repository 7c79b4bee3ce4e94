// SPDX-License-Identifier: GPL-2.0
/*
 * iotrace info: what this kernel offers and how iotrace traces it here (like bpftrace
 * --info): the kernel, its BTF, the build of the programs it loads, and for each feature
 * the hooks it takes or why it is n/a. It loads and attaches what a run would (nothing is
 * counted meanwhile: no process is traced), then detaches.
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "args.h"
#include "info.h"
#include "kernel/tracer.h"
#include "report/report_kernel.h"
#include "util/output.h"

struct info_opts {
	bool json;
	bool verbose;
};

static const char doc[] =
	"iotrace info -- how iotrace traces this kernel: its build of the programs, and the hook "
	"each feature takes here (a tracepoint, fentry/fexit on the function behind it, a kprobe) "
	"or why it is n/a.\n"
	"\v"
	"The run's JSON report carries the same under \"kernel\" (docs/kernels.md).";

static const struct option_row options[] = {
	OPTION_STORING(STORE_ON, offsetof(struct info_opts, json), "json", 'j', NULL, 0,
		       "One JSON document", 0),
	OPTION_STORING(STORE_ON, offsetof(struct info_opts, verbose), "verbose", 'v', NULL, 0,
		       "Show libbpf's log", 0),
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct info_opts *o = state->input;

	if (option_stored(options, key, arg, o))
		return 0;
	switch (key) {
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int ignore_event(void *ctx, void *data, size_t size)
{
	return 0;
}

int info_main(int argc, char **argv)
{
	struct info_opts o = { 0 };
	const struct subcommand cmd = { "iotrace info", options, parse_opt, "", doc, 0 };
	/* A run's hooks: timed, with files; and the kernel's BTF asked even if it is the one
	 * iotrace was built on, so the answer says what it has. */
	struct tracer_config cfg = { .timing = true, .probe_all = true };
	struct kernel_report k;
	struct tracer *t;
	char *text;

	subcommand_parse(&cmd, argc, argv, &o);
	cfg.verbose = o.verbose;
	t = tracer_open(&cfg, ignore_event, NULL);
	if (!t)
		return 1;
	tracer_detach(t);
	tracer_describe(t, &k);
	tracer_close(t);
	errno = 0;
	if (!o.json) {
		kernel_report_text(stdout, &k);
		return output_close(&(struct output){ .f = stdout }) ? 1 : 0;
	}
	text = cJSON_Print(kernel_report_json(&k));
	if (!text) {
		fprintf(stderr, "iotrace: out of memory\n");
		return 1;
	}
	puts(text);
	free(text);
	return output_close(&(struct output){ .f = stdout }) ? 1 : 0;
}
