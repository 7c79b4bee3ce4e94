// SPDX-License-Identifier: GPL-2.0
/* iotrace: the whole I/O story of a command. Option parsing and dispatch only. */
#include <argp.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <unistd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "report/cells.h"
#include "report/report.h"
#include "run.h"
#include "snoop.h"
#include "top.h"
#include "info.h"
#include "containers.h"
#include "args.h"
#include "util/crash.h"
#include "util/output.h"
#include "util/util.h"
#include "compare.h"
#include "serve.h"
#include "model/fields.h"
#include "collect/stacks.h"
#include "version.h" /* $(OUTPUT)'s: the Makefile writes it */

const char *argp_program_version = "iotrace " IOTRACE_VERSION;
const char *argp_program_bug_address = "the project's issue tracker";

static const char doc[] =
	"iotrace -- every syscall of a command and its children, counted exactly in the "
	"kernel, with read/write sizes and latencies.\n"
	"\v"
	"EXAMPLES:\n"
	"  sudo iotrace -- ./workloads/tr2u a b < in > out\n"
	"        syscall profile of tr2u; the report goes to stderr, out is untouched\n"
	"  sudo iotrace -o report.txt -- make -j2\n"
	"        every process make starts, one section each (a list above 8 processes)\n"
	"  sudo iotrace --json -o run.json -- sh -c 'cat f | wc -l'\n"
	"        the same numbers as JSON (schema in docs/json.md)\n"
	"  sudo iotrace --no-time -- ./workloads/copy -b 1 in out\n"
	"        counts, errors and sizes only: the cheapest trace\n"
	"  sudo iotrace --prom-file /var/lib/node_exporter/textfile/job.prom -- ./job\n"
	"        also the totals as Prometheus metrics, for node_exporter's textfile collector\n"
	"  sudo iotrace serve --listen 127.0.0.1:9435 --comm\n"
	"        every process, counted by cgroup and name, on /metrics (iotrace serve --help)\n"
	"  sudo iotrace -p 1234\n"
	"        attach to a running process and its future children until it exits or Ctrl-C\n"
	"  sudo iotrace --sync -- cp big /mnt/usb/\n"
	"        flush at the end, so the writeback of what cp wrote is charged to cp\n"
	"  sudo iotrace snoop [-p PID] [-c CGROUP] [-d DISK] [-Q] [-j] [DURATION]\n"
	"        block I/O requests live, one line each (iotrace snoop --help)\n"
	"  sudo iotrace top [-d SECS] [-n COUNT] [-b] [-j] [-c CGROUP] [-o SORT]\n"
	"        the machine's I/O live, by process and by file (iotrace top --help)\n"
	"  sudo iotrace compare --drop-caches --repeat 3 -- 'CMD A' 'CMD B'\n"
	"        variants side by side, medians of interleaved runs (iotrace compare --help)\n"
	"  sudo iotrace info\n"
	"        how this kernel is traced: the hook each feature takes here, or why it is n/a\n"
	"  iotrace fields\n"
	"        every number the reports carry: JSON key, text column, metric, unit, meaning\n"
	"\n"
	"The exit status is the command's; 128+N if a signal N killed it; 126/127 if it could "
	"not be run; 1 if iotrace itself failed.";

static const char args_doc[] = "[--] CMD [ARGS...]";

enum { OPT_MAX_PROCS = 0x100, OPT_JSON, OPT_SYNC, OPT_PROM_FILE, OPT_FILES, OPT_WIDE,
       OPT_TIME_ALL, OPT_TRACE, OPT_TRACE_MIN, OPT_TRACE_INTERVAL, OPT_TRACE_MAX, OPT_STACKS,
       OPT_STACKS_BY, OPT_STACKS_UNWIND, OPT_FILES_BY };

/* --trace's defaults: calls of 1 ms or more, counters every 10 ms, 4 million events. */
#define TRACE_MIN_NS 1000000ULL
#define TRACE_INTERVAL_NS 10000000ULL
#define TRACE_MAX_EVENTS 4000000ULL

/* Rows of each process's files table by default (--files). */
#define DEFAULT_FILES 10

static const struct option_row options[] = {
	OPTION_STORING(STORE_ARG, offsetof(struct options, output), "output", 'o', "FILE", 0,
		       "Write the report to FILE instead of stderr", 0),
	OPTION_STORING(STORE_ON, offsetof(struct options, json), "json", OPT_JSON, NULL, 0,
		       "Report as one JSON document", 0),
	OPTION_STORING(STORE_OFF, offsetof(struct options, timing), "no-time", 'T', NULL, 0,
		       "Do not time calls (counts, errors and sizes stay exact)", 0),
	OPTION_STORING(STORE_ON, offsetof(struct options, time_all), "time-all", OPT_TIME_ALL, NULL,
		       0,
		       "Time every call (default: each syscall of a process until 1,000 were "
		       "timed, then one in 2, 4 ... 64 as its calls double; totals are estimated "
		       "from them)", 0),
	OPTION_STORING(STORE_OFF, offsetof(struct options, hist), "no-hist", 'H', NULL, 0,
		       "Leave the size and latency histograms out of the text", 0),
	OPTION_STORING(STORE_ON, offsetof(struct options, summary_only), "summary", 's', NULL, 0,
		       "Only the first screen: the run's totals, top files and processes", 0),
	OPTION("pid", 'p', "PID", 0, "Attach to a running process (and its future children)", 0),
	OPTION_STORING(STORE_ARG, offsetof(struct options, user), "user", 'u', "USER", 0,
		       "Run CMD as USER (uid, gid and groups), like strace -u", 0),
	OPTION("max-procs", OPT_MAX_PROCS, "N", 0,
	       "Live processes with their own counters, at most (default 16382; more share one)",
	       0),
	OPTION_STORING(STORE_ON, offsetof(struct options, sync), "sync", OPT_SYNC, NULL, 0,
		       "When the command ends, flush dirty data (sync) before the report, so its "
		       "writeback is counted", 0),
	OPTION("prom-file", OPT_PROM_FILE, "PATH", 0,
	       "Also write the totals in Prometheus text format to PATH, atomically (for "
	       "node_exporter's textfile collector; metrics in docs/prometheus.md)", 0),
	OPTION("files", OPT_FILES, "N|all", 0,
	       "Rows of each process's files table (default 10; all: every file, mapped ones too)",
	       0),
	OPTION_STORING(STORE_ON, offsetof(struct options, wide), "wide", OPT_WIDE, NULL, 0,
		       "Every column of the files table, exact numbers, and each file's details",
		       0),
	OPTION("files-by", OPT_FILES_BY, "path|file", 0,
	       "A row of the files table per path, its files folded (\"config (6 versions)\"; the "
	       "default), or per file", 0),
	OPTION("trace", OPT_TRACE, "FILE", 0,
	       "Also write a timeline of the run to FILE (Trace Event Format: Perfetto UI, "
	       "chrome://tracing, speedscope; docs/trace.md); every call is timed", 0),
	OPTION("trace-min", OPT_TRACE_MIN, "DURATION", 0,
	       "Calls in the timeline: those that took at least DURATION (default 1ms; 0: all)", 0),
	OPTION("trace-interval", OPT_TRACE_INTERVAL, "DURATION", 0,
	       "Counter tracks sampled every DURATION (default 10ms)", 0),
	OPTION("trace-max-events", OPT_TRACE_MAX, "N", 0,
	       "At most N events in the timeline (default 4000000); beyond, it says it was "
	       "truncated", 0),
	OPTION("stacks", OPT_STACKS, "FILE", 0,
	       "Also write the user-space call stacks of the I/O syscalls to FILE, as folded "
	       "stacks (flamegraph.pl, speedscope; docs/stacks.md), and each process's top call "
	       "sites", 0),
	OPTION("stacks-by", OPT_STACKS_BY, "calls|bytes|time", 0,
	       "What the folded stacks count (default time, or calls with --no-time)", 0),
	OPTION("stacks-unwind", OPT_STACKS_UNWIND, "fp|dwarf", 0,
	       "How stacks are unwound: frame pointers (default), or DWARF call-frame information "
	       "for code built without them (each syscall's first 1024 calls, then 1 in 64)", 0),
	OPTION_STORING(STORE_ON, offsetof(struct options, verbose), "verbose", 'v', NULL, 0,
		       "Show libbpf's log, including the verifier output", 0),
	{},
};

/* Options that make sense alone but not together. */
static void check_options(struct argp_state *state, const struct options *o)
{
	if (o->command && o->pid)
		argp_failure(state, 1, 0, "give either -p PID or a command, not both");
	if (o->user && o->pid)
		argp_failure(state, 1, 0, "-u applies to a command iotrace starts, not to -p");
	if (!o->command && !o->pid)
		argp_failure(state, 1, 0,
			     "no command given (usage: iotrace [OPTIONS] -- CMD [ARGS...])");
	if (o->time_all && !o->timing)
		argp_failure(state, 1, 0, "--time-all and --no-time contradict each other");
	if (o->trace && !o->timing)
		argp_failure(state, 1, 0, "--trace times every call: it contradicts --no-time");
	if ((o->stacks_by >= 0 || o->stacks_unwind != STACKS_FP) && !o->stacks)
		argp_failure(state, 1, 0, "--stacks-by and --stacks-unwind need --stacks FILE");
	if (o->trace_options_given && !o->trace)
		argp_failure(state, 1, 0, "--trace-min, --trace-interval and --trace-max-events "
					  "need --trace FILE");
	if (o->stacks_by == STACKS_BY_TIME && !o->timing)
		argp_failure(state, 1, 0, "--stacks-by time needs timing: it contradicts --no-time");
}

/* --trace-min, --trace-interval: a duration with its unit. */
static uint64_t duration_arg(struct argp_state *state, const char *opt, const char *arg,
			     bool zero_ok)
{
	uint64_t ns;

	if (parse_duration_ns(arg, 3600ULL * 1000000000ULL, &ns) || (!zero_ok && !ns))
		argp_failure(state, 1, 0, "invalid %s '%s': expected a duration such as 1ms, "
					  "250us or 2s%s", opt, arg, zero_ok ? ", or 0" : "");
	return ns;
}

/* --stacks-by, --stacks-unwind: a word of a list. */
static int word_arg(struct argp_state *state, const char *opt, const char *arg,
		    const char *const *words, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(arg, words[i]))
			return i;
	argp_failure(state, 1, 0, "invalid %s '%s': expected %s%s%s", opt, arg, words[0],
		     n > 2 ? ", " : " or ", n > 2 ? "bytes or time" : words[1]);
	return 0;
}

/* --trace, --stacks and their options (ARGP_ERR_UNKNOWN for any other key). */
static error_t parse_trace_opt(int key, char *arg, struct argp_state *state, struct options *o)
{
	static const char *const by[] = { "calls", "bytes", "time" };
	static const char *const unwind[] = { "fp", "dwarf" };
	unsigned long v;

	switch (key) {
	case OPT_STACKS:
		o->stacks = path_arg(state, "--stacks", arg);
		break;
	case OPT_STACKS_BY:
		o->stacks_by = word_arg(state, "--stacks-by", arg, by, 3);
		break;
	case OPT_STACKS_UNWIND:
		o->stacks_unwind = STACKS_FP + word_arg(state, "--stacks-unwind", arg, unwind, 2);
		break;
	case OPT_TRACE:
		o->trace = path_arg(state, "--trace", arg);
		break;
	case OPT_TRACE_MIN:
		o->trace_min_ns = duration_arg(state, "--trace-min", arg, true);
		o->trace_options_given = true;
		break;
	case OPT_TRACE_INTERVAL:
		o->trace_interval_ns = duration_arg(state, "--trace-interval", arg, false);
		o->trace_options_given = true;
		break;
	case OPT_TRACE_MAX:
		o->trace_options_given = true;
		if (parse_uint(arg, UINT32_MAX, &v))
			argp_failure(state, 1, 0, "invalid --trace-max-events '%s': expected a count",
				     arg);
		o->trace_max_events = v;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct options *o = state->input;
	unsigned long v;

	if (option_stored(options, key, arg, o))
		return 0;
	switch (key) {
	case OPT_PROM_FILE:
		o->prom_file = path_arg(state, "--prom-file", arg);
		break;
	case OPT_FILES:
		if (!strcmp(arg, "all"))
			o->files = 0;
		else if (parse_uint(arg, UINT32_MAX, &v))
			argp_failure(state, 1, 0, "invalid --files '%s': expected a count or all",
				     arg);
		else
			o->files = (uint32_t)v;
		break;
	case OPT_FILES_BY:
		if (strcmp(arg, "path") && strcmp(arg, "file"))
			argp_failure(state, 1, 0, "invalid --files-by '%s': expected path or file",
				     arg);
		o->files_by_path = !strcmp(arg, "path");
		break;
	case 'p':
		o->pid = pid_arg(state, arg);
		break;
	case OPT_MAX_PROCS:
		o->max_procs = (uint32_t)count_arg(state, "--max-procs", arg, MAX_SLOTS - 2);
		break;
	case ARGP_KEY_ARG:
		/* The first operand starts the command: its own options are not ours. */
		o->command = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		check_options(state, o);
		break;
	default:
		return parse_trace_opt(key, arg, state, o);
	}
	return 0;
}

/*
 * --prom-file replaces the file at its path (a temporary file renamed over it): its
 * directory must take the temporary file, and what is there must be a regular file. Both
 * checked before the command runs.
 */
static int prom_file_check(const char *path)
{
	char *copy = strdup(path);
	const char *dir = copy ? dirname(copy) : ".";
	int err = access(dir, W_OK | X_OK);
	char a[NAME_TEXT_MAX], b[NAME_TEXT_MAX], why[160];

	if (err)
		fprintf(stderr, "iotrace: cannot write %s: directory %s: %s\n",
			name_cell(path, 0, a, sizeof(a)), name_cell(dir, 0, b, sizeof(b)),
			strerror(errno));
	else if ((err = output_replaceable(path, why, sizeof(why))))
		fprintf(stderr, "iotrace: --prom-file %s: %s\n", name_cell(path, 0, a, sizeof(a)),
			why);
	free(copy);
	return err;
}

/* The report in the form asked for; the text one gets its presentation choices alone. */
static void write_report(FILE *f, const struct run_result *r, const struct options *o)
{
	const struct text_choices c = { .hist = o->hist, .summary_only = o->summary_only,
					.files = o->files, .wide = o->wide };

	if (o->json)
		report_json(f, r);
	else
		report_text(f, r, &c);
}

int main(int argc, char **argv)
{
	struct options o = { .timing = true, .hist = true, .files = DEFAULT_FILES,
			     .files_by_path = true,
			     .trace_min_ns = TRACE_MIN_NS, .trace_interval_ns = TRACE_INTERVAL_NS,
			     .trace_max_events = TRACE_MAX_EVENTS, .stacks_by = -1,
			     .stacks_unwind = STACKS_FP };
	const struct subcommand run = { "iotrace", options, parse_opt, args_doc, doc, ARGP_IN_ORDER };
	struct run_result r;
	struct output out = { .f = stderr };
	char exit[64];
	char shown[NAME_TEXT_MAX];
	int status, killed;

	crash_report_install();

	argp_err_exit_status = 1;
	output_hold_std_fds();
	if (argc > 1 && !strcmp(argv[1], "info"))
		return info_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "containers"))
		return containers_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "snoop"))
		return snoop_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "top"))
		return top_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "compare"))
		return compare_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "serve"))
		return serve_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "fields")) {
		if (argc > 2) {
			fprintf(stderr, "iotrace: fields: unexpected argument '%s' (fields takes "
					"none)\n", name_cell(argv[2], 0, shown, sizeof(shown)));
			return 1;
		}
		errno = 0;
		fields_print(stdout);
		return output_close(&(struct output){ .f = stdout }) ? 1 : 0;
	}
	/* argp names the program by argv[0]; error lines should start with "iotrace: ". */
	subcommand_parse(&run, argc, argv, &o);
	/* Every output checked before the command starts; -o's file emptied only for a report. */
	if (o.output && output_open(&out, o.output))
		return 1;
	if (o.prom_file && prom_file_check(o.prom_file)) {
		output_abandon(&out);
		return 1;
	}
	status = run_trace(&o, &r);
	if (status) {
		output_abandon(&out);
		return status;
	}
	output_start(&out);
	if ((killed = run_killed_status(&r)) >= 0) {
		format_exit(exit, sizeof(exit), true, killed);
		fprintf(stderr, "iotrace: %s %s\n",
			o.command ? name_cell(o.command[0], 0, shown, sizeof(shown)) : "process",
			exit);
	}
	write_report(out.f, &r, &o);
	status = run_outputs_failed(&r) ? 1 : run_exit_code(&r);
	/* Checked again: what is at the path may have changed while the command ran. */
	if (o.prom_file && prom_file_check(o.prom_file))
		status = 1;
	else if (o.prom_file && report_prom_file(o.prom_file, &r)) {
		fprintf(stderr, "iotrace: writing %s: %s\n",
			name_cell(o.prom_file, 0, shown, sizeof(shown)), strerror(errno));
		status = 1;
	}
	if (output_close(&out))
		status = 1;
	/*
	 * The run's model is not freed one allocation at a time: the kernel takes it back at
	 * exit, and a run of 20,000 processes spent 80 ms freeing it after its report was out
	 * (docs/performance.md, "The report of a large run").
	 */
	return status;
}
