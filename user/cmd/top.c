// SPDX-License-Identifier: GPL-2.0
/*
 * iotrace top: the machine's I/O live, by process (or cgroup) and by file, refreshed every
 * -d seconds: full screen (ncurses), text blocks (-b) or NDJSON (-j). Every process is traced
 * as run mode traces a command (tracer_config.top), by the one engine (collect/engine.h)
 * with top's refresh policy: the counters are the kernel's, read in place at each refresh,
 * nothing streams per I/O.
 */
#include <argp.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include "args.h"
#include "top.h"
#include "collect/engine.h"
#include "report/top_out.h"
#include "filters.h"
#include "util/cgroup.h"
#include "util/output.h"
#include "util/util.h"

struct top_opts {
	struct tracer_config cfg;
	struct cgroup_ref cgroups[MAX_CGROUP_FILTERS];
	double delay;
	long count; /* intervals; 0: until quit */
	bool batch, json;
	struct top_view_opts view;
	const char *cpu_file; /* --cpu-stats: top's own CPU time per refresh, at the end */
};

static const char doc[] =
	"iotrace top -- the machine's I/O live, by process and by file\v"
	"Every -d seconds: the machine's totals per layer (syscalls, page cache, disks, "
	"io_uring), then the processes (or cgroups) ranked by a column, then the busiest files. "
	"Columns: READ/s WRITE/s (read/write-family syscalls), HIT% (page-cache hits), DREAD/s "
	"DWRITE/s (disk; writeback charged to the process that dirtied the pages), IO% (time in "
	"I/O syscalls), URING/s (io_uring requests). Sort keys: pid, name, read, write, hit, "
	"dread, dwrite, io, uring.\n\n"
	"Keys on the full screen: < > change the sort column, r reverse it, f the files pane, "
	"p or space pause, / filter by name (Enter ends, empty clears), q quit.\n\n"
	"EXAMPLES:\n"
	"  sudo iotrace top\n"
	"  sudo iotrace top -b -n 5 -o dwrite     five text blocks, biggest disk writers first\n"
	"  sudo iotrace top -j -d 10 -c system.slice   NDJSON every 10 s, one cgroup\n"
	"  sudo iotrace top --group container      a row per container (and the host)\n"
	"Fields and JSON keys: docs/top.md, docs/json.md (iotrace fields).";

enum { OPT_COMM = 0x100, OPT_GROUP, OPT_CONTAINER, OPT_NO_TIME, OPT_MAX_PROCS, OPT_CPU };

static const struct option_row options[] = {
	OPTION("delay", 'd', "SECS", 0, "Seconds between refreshes (default 1)", 0),
	OPTION("iterations", 'n', "COUNT", 0,
	       "Refreshes before exiting (default: until q or Ctrl-C)", 0),
	OPTION_STORING(STORE_ON, offsetof(struct top_opts, batch), "batch", 'b', NULL, 0,
		       "One text block per refresh, for logs (as top -b)", 0),
	OPTION_STORING(STORE_ON, offsetof(struct top_opts, json), "json", 'j', NULL, 0,
		       "One JSON object per refresh, one a line (NDJSON)", 0),
	OPTION("cgroup", 'c', "CGROUP", 0, "Only processes in this cgroup v2 (or below); up to 8",
	       0),
	OPTION("container", OPT_CONTAINER, "NAME|ID", 0,
	       "Only this container's processes (its name, the start of its ID, or a pod's UID; "
	       "iotrace containers lists them); with -c, up to 8 in all", 0),
	OPTION("group", OPT_GROUP, "BY", 0,
	       "Rows by 'process' (default), 'cgroup', 'container' or 'pod'", 0),
	OPTION_STORING(STORE_ON, offsetof(struct top_opts, view.by_comm), "comm", OPT_COMM, NULL, 0,
		       "Rows by process name (with --group: the group and name)", 0),
	OPTION("sort", 'o', "KEY", 0, "Sort column: pid name read write hit dread dwrite io uring",
	       0),
	OPTION_STORING(STORE_OFF, offsetof(struct top_opts, cfg.timing), "no-time", OPT_NO_TIME,
		       NULL, 0, "Do not time syscalls (IO% is n/a): cheaper", 0),
	OPTION("max-procs", OPT_MAX_PROCS, "N", 0, "Processes with their own counters at once", 0),
	OPTION_STORING(STORE_ON, offsetof(struct top_opts, cfg.verbose), "verbose", 'v', NULL, 0,
		       "libbpf's log and the verifier's output on failure", 0),
	OPTION_STORING(STORE_ARG, offsetof(struct top_opts, cpu_file), "cpu-stats", OPT_CPU, "FILE",
		       OPTION_HIDDEN, "top's own CPU use, written at exit", 0),
	{},
};

static long positive(const char *arg, const char *what, struct argp_state *state)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0)
		argp_failure(state, 1, 0, "invalid %s '%s': expected a positive integer", what, arg);
	return v;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct top_opts *o = state->input;
	char *end;

	if (option_stored(options, key, arg, o))
		return 0;
	switch (key) {
	case 'd':
		o->delay = strtod(arg, &end);
		if (end == arg || *end || !isfinite(o->delay) || o->delay < 0.1 || o->delay > 3600)
			argp_failure(state, 1, 0, "invalid -d '%s': expected seconds, 0.1 to 3600",
				     arg);
		break;
	case 'n':
		o->count = positive(arg, "-n", state);
		break;
	case 'c':
	case OPT_CONTAINER:
		filter_add(state, &o->cfg, o->cgroups, key == OPT_CONTAINER, arg);
		break;
	case OPT_GROUP:
		if (top_group_of(arg) < 0)
			argp_failure(state, 1, 0,
				     "invalid --group '%s': process, cgroup, container or pod", arg);
		o->view.group = top_group_of(arg);
		break;
	case 'o':
		if (top_sort_of(arg) < 0)
			argp_failure(state, 1, 0, "unknown sort key '%s': one of %s", arg,
				     top_sort_list());
		o->view.sort = top_sort_of(arg);
		break;
	case OPT_MAX_PROCS:
		o->cfg.max_procs = count_arg(state, "--max-procs", arg, MAX_SLOTS - 2);
		break;
	case ARGP_KEY_END:
		if (o->batch && o->json)
			argp_failure(state, 1, 0, "-b and -j: choose one");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

struct top_session {
	struct top_opts *o;
	struct engine *engine;
	struct top_view latest; /* the last refresh's view */
	bool have_view;
	struct top_status st;
	char filter[64];
	int sig_fd;
	long refreshes;
	double collect_cpu; /* seconds of CPU in the refreshes themselves */
	double loop_cpu;    /* CPU time when the loop started (after the load) */
	uint64_t loop_ms;   /* ... and its time */
	struct output cpu_out; /* --cpu-stats's file */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int screen_width(void)
{
	struct winsize ws;

	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col >= 80)
		return ws.ws_col > 400 ? 400 : ws.ws_col;
	return 80;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* One interval: collected, made a view, shown. */
static int refresh(struct top_session *s)
{
	struct timespec now;
	double cpu = cpu_seconds();

	if (s->have_view)
		top_view_free(&s->latest);
	s->o->view.filter = s->filter;
	s->have_view = !engine_refresh(s->engine, &s->o->view, &s->latest);
	if (!s->have_view)
		return -1;
	clock_gettime(CLOCK_REALTIME, &now);
	errno = 0;
	if (s->o->json && top_print_json(stdout, &s->latest,
					 (uint64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000)) {
		fprintf(stderr, "iotrace: top: out of memory writing JSON\n");
		return -1;
	}
	if (s->o->batch)
		top_print_text(stdout, &s->latest, screen_width(), isatty(STDOUT_FILENO) ? 20 : 50);
	else if (!s->o->json && !s->st.paused)
		top_screen_draw(&s->latest, &s->st);
	/* Each refresh reaches its reader now, or the write error ends top. */
	if ((s->o->json || s->o->batch) && output_flush(&(struct output){ .f = stdout }))
		return -1;
	s->refreshes++;
	s->collect_cpu += cpu_seconds() - cpu;
	return 0;
}

static bool signalled(struct top_session *s)
{
	struct signalfd_siginfo si;

	return read(s->sig_fd, &si, sizeof(si)) == sizeof(si);
}

/* Keys on the full screen; true when q was pressed. */
static bool keys(struct top_session *s, int ms)
{
	enum top_key k = top_screen_key(ms, &s->o->view, &s->st, s->filter, sizeof(s->filter));

	if (k == TOP_KEY_QUIT)
		return true;
	if (k == TOP_KEY_REDRAW && s->have_view) {
		top_view_resort(&s->latest, &s->o->view);
		top_screen_draw(&s->latest, &s->st);
	}
	return false;
}

static int top_loop(struct top_session *s)
{
	bool screen = !s->o->batch && !s->o->json;
	uint64_t next = mono_ms() + (uint64_t)(s->o->delay * 1000);

	for (;;) {
		uint64_t now = mono_ms();
		int wait = now >= next ? 0 : (int)(next - now);
		int tick = engine_wait_ms(s->engine);

		if (tick < wait)
			wait = tick;
		if (screen ? keys(s, wait) : poll(&(struct pollfd){ s->sig_fd, POLLIN, 0 }, 1, wait) < 0)
			return 0;
		if (signalled(s))
			return 0;
		if (mono_ms() < next) {
			engine_tick(s->engine);
			continue;
		}
		if (refresh(s))
			return -1;
		if (s->o->count && s->refreshes >= s->o->count)
			return 0;
		next += (uint64_t)(s->o->delay * 1000);
		if (next < mono_ms())
			next = mono_ms() + (uint64_t)(s->o->delay * 1000);
	}
}

static int open_signals(struct top_session *s)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	s->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return s->sig_fd < 0 ? -1 : 0;
}

/* --cpu-stats, at the end, into the file opened at the start; -1 on a write error. */
static int write_cpu_stats(struct top_session *s)
{
	output_start(&s->cpu_out);
	fprintf(s->cpu_out.f,
		"{\"refreshes\":%ld,\"cpu_s\":%.6f,\"refresh_cpu_s\":%.6f,\"loop_cpu_s\":%.6f,"
		"\"loop_s\":%.3f}\n",
		s->refreshes, cpu_seconds(), s->collect_cpu, cpu_seconds() - s->loop_cpu,
		(mono_ms() - s->loop_ms) / 1e3);
	return output_close(&s->cpu_out);
}

static int top_run(struct top_session *s)
{
	bool screen = !s->o->batch && !s->o->json;
	int err;

	if (open_signals(s)) {
		fprintf(stderr, "iotrace: top: signalfd: %s\n", strerror(errno));
		return 1;
	}
	if (screen && top_screen_open())
		return 1;
	s->engine = engine_open_top(&s->o->cfg, s->o->cgroups);
	if (!s->engine) {
		if (screen)
			top_screen_close();
		return 1;
	}
	s->loop_cpu = cpu_seconds();
	s->loop_ms = mono_ms();
	err = top_loop(s);
	if (screen)
		top_screen_close();
	if (s->o->cpu_file && write_cpu_stats(s))
		err = -1;
	if (s->have_view)
		top_view_free(&s->latest);
	engine_close(s->engine);
	return err ? 1 : 0;
}

int top_main(int argc, char **argv)
{
	struct top_opts o = {
		.cfg = { .top = true, .timing = true },
		.delay = 1,
		.view = { .sort = TOP_SORT_IO },
	};
	const struct subcommand cmd = { "iotrace top", options, parse_opt, NULL, doc, 0 };
	struct top_session s = { .o = &o, .sig_fd = -1 };
	int rc;

	subcommand_parse(&cmd, argc, argv, &o);
	if (!o.batch && !o.json && (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))) {
		fprintf(stderr, "iotrace: top: not a terminal; use -b (text) or -j (JSON)\n");
		return 1;
	}
	/* Every output checked before anything is loaded. */
	if (o.cpu_file && output_open(&s.cpu_out, o.cpu_file))
		return 1;
	rc = top_run(&s);
	if (s.sig_fd >= 0)
		close(s.sig_fd);
	return rc;
}
