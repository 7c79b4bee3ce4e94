// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "collect/collect.h"
#include "run.h"
#include "model/names.h"
#include "spawn.h"
#include "collect/stacks.h"
#include "report/cells.h"
#include "report/trace.h"
#include "kernel/tracer.h"
#include "util/pidinfo.h"

struct session {
	const struct options *opt;
	struct tracer *tracer;
	struct collector *coll;
	struct child child;
	sigset_t old_mask;
	int sig_fd, epoll_fd, pid_fd;
	pid_t root;
	int interrupts;
	bool done;
	struct run_result *r;
	struct trace_writer *trace; /* --trace, or NULL */
	struct stacks *stacks;      /* --stacks, or NULL */
	uint64_t next_sample;       /* --trace: when the counter tracks are sampled next */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- the tracer's events: the collector's, and with --trace the timeline's ---- */

struct pending_ctx {
	struct stacks *stacks;
	uint32_t pid;
};

static void add_pending(uint32_t nr, const struct stack_pending *p, void *ctx)
{
	struct pending_ctx *c = ctx;

	stacks_add_pending(c->stacks, c->pid, nr, p);
}

/* --stacks: a process leaves its slot (it exited, or the run ends). */
static void stack_slot_done(uint32_t pid, uint32_t slot, void *ctx)
{
	struct session *s = ctx;
	struct pending_ctx c = { s->stacks, pid };

	tracer_stack_slot(s->tracer, slot, add_pending, &c);
}

/* A process leaves its slot (exited, or the run ends): what the kernel kept per slot. */
static void slot_retired(uint32_t pid, uint32_t slot, void *ctx)
{
	struct session *s = ctx;
	uint64_t v[TRACE_COUNTERS];

	if (s->trace) {
		tracer_trace_counters(s->tracer, slot, v, true);
		trace_counters(s->trace, pid, v);
	}
	if (s->stacks)
		stack_slot_done(pid, slot, s);
}

static int on_proc_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;

	if (s->trace && size >= sizeof(struct iot_proc_event))
		trace_on_proc(s->trace, data);
	return collector_on_event(s->coll, data, size);
}

static int on_stack(void *ctx, void *data, size_t size)
{
	return stacks_on_event(((struct session *)ctx)->stacks, data, size);
}

static int on_name(void *ctx, void *data, size_t size)
{
	return collector_on_name(((struct session *)ctx)->coll, data, size);
}

/* The trace's ring: file names (in order with the events naming them) and events. */
static int on_trace(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	uint32_t kind;

	if (size < sizeof(kind))
		return 0;
	memcpy(&kind, data, sizeof(kind));
	if (kind == TE_NAME)
		return collector_on_name(s->coll, data, size);
	return trace_on_event(s->trace, data, size);
}

static void sample_live(uint32_t pid, uint32_t slot, void *ctx)
{
	struct session *s = ctx;
	uint64_t v[TRACE_COUNTERS];

	tracer_trace_counters(s->tracer, slot, v, false);
	trace_counters(s->trace, pid, v);
}

/* --trace: the counter tracks, every --trace-interval. */
static void sample_counters(struct session *s, uint64_t now)
{
	if (!s->trace || now < s->next_sample)
		return;
	collector_for_each_live(s->coll, sample_live, s);
	trace_sample(s->trace, now);
	s->next_sample = now + s->opt->trace_interval_ns;
}

/* Signals iotrace handles itself through a signalfd, so that none is lost mid-loop. */
static int setup_signals(struct session *s)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	if (sigprocmask(SIG_BLOCK, &mask, &s->old_mask))
		return -1;
	s->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return s->sig_fd < 0 ? -1 : 0;
}

static int setup_epoll(struct session *s)
{
	struct epoll_event ev = { .events = EPOLLIN };

	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epoll_fd < 0)
		return -1;
	ev.data.fd = s->sig_fd;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->sig_fd, &ev))
		return -1;
	ev.data.fd = tracer_events_fd(s->tracer);
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return -1;
	if (s->pid_fd >= 0) {
		ev.data.fd = s->pid_fd;
		if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->pid_fd, &ev))
			return -1;
	}
	return 0;
}

static void reap(struct session *s)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == s->root) {
			s->r->exit_known = true;
			s->r->exit_status = status;
		}
	}
	/* As a subreaper, iotrace inherits orphaned descendants: ECHILD means all are gone. */
	if (pid < 0 && errno == ECHILD)
		s->done = true;
}

static void on_signal(struct session *s)
{
	struct signalfd_siginfo si;

	while (read(s->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			reap(s);
			continue;
		}
		if (++s->interrupts > 1 || !s->child.pid) {
			/* Second interrupt, or -p mode: stop now and report what we have. */
			s->r->partial = s->child.pid != 0;
			s->r->stop_signal = si.ssi_signo;
			s->done = true;
			return;
		}
		/* A terminal's signal already reached the command's process group; kill(1)'s didn't. */
		if (si.ssi_code != SI_KERNEL)
			kill(s->root, si.ssi_signo);
	}
}

/*
 * Process events that did not wake us (bpf/proc.bpf.c, submit_event) are collected at
 * least this often.
 */
#define RUN_POLL_MS 50

static int event_loop(struct session *s)
{
	struct epoll_event evs[4];
	uint64_t next_tick = now_ns() + RUN_POLL_MS * 1000000ULL;

	while (!s->done) {
		uint64_t due = s->trace && s->next_sample < next_tick ? s->next_sample : next_tick;
		int wait = due > now_ns() && !collector_wants_tick(s->coll)
				   ? (due - now_ns()) / 1000000 + 1 : 0;
		int n = epoll_wait(s->epoll_fd, evs, 4, wait < RUN_POLL_MS ? wait : RUN_POLL_MS);
		/*
		 * Kept before the tick, which makes calls of its own. A stop and SIGCONT (Ctrl-Z,
		 * fg) make epoll_wait fail with EINTR even with every signal blocked (signal(7)).
		 */
		int err = n < 0 ? errno : 0;

		if (now_ns() >= next_tick || collector_wants_tick(s->coll))
			next_tick = now_ns() + collector_tick(s->coll) * 1000000ULL;
		if (err == EINTR)
			continue;
		if (err) {
			errno = err;
			return -1;
		}
		if (n == 0)
			tracer_poll_events(s->tracer);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == s->sig_fd)
				on_signal(s);
			else if (evs[i].data.fd == s->pid_fd)
				s->done = true;
			else
				tracer_poll_events(s->tracer);
		}
		/* After the events: the interval's block requests are in its counters. */
		sample_counters(s, now_ns());
	}
	return 0;
}

/* Starts CMD so that tracing begins exactly at its execve. Returns 0 or an exit status. */
static int start_command(struct session *s)
{
	const struct options *o = s->opt;
	char shown[NAME_TEXT_MAX], why[NAME_TEXT_MAX + 64];
	uint32_t slot;
	int err;

	if (spawn_prepare(&s->child, o->command, &s->old_mask)) {
		fprintf(stderr, "iotrace: fork: %s\n", strerror(errno));
		return 1;
	}
	s->root = s->child.pid;
	slot = tracer_claim_slot(s->tracer);
	if (!slot ||
	    collector_add_root(s->coll, s->root, getpid(), slot, basename(s->child.path), NULL,
			       now_ns()) ||
	    tracer_watch(s->tracer, s->root, slot, true)) {
		fprintf(stderr, "iotrace: cannot register pid %d for tracing\n", s->root);
		kill(s->root, SIGKILL);
		waitpid(s->root, NULL, 0);
		return 1;
	}
	if (s->trace)
		trace_process(s->trace, s->root, basename(s->child.path));
	err = spawn_release(&s->child);
	if (err) {
		fprintf(stderr, "iotrace: cannot execute %s: %s\n",
			name_cell(s->child.path, 0, shown, sizeof(shown)),
			spawn_error(s->child.path, err, why, sizeof(why)));
		waitpid(s->root, NULL, 0);
		return err == ENOENT ? 127 : 126;
	}
	return 0;
}

static int attach_pid(struct session *s)
{
	char comm[COMM_LEN + 1] = "", stat[512], args[ARGS_LEN + 1] = "", shown[NAME_TEXT_MAX];
	int ppid = 0, n;
	uint32_t slot;
	char *p;

	s->pid_fd = syscall(SYS_pidfd_open, s->opt->pid, 0);
	if (s->pid_fd < 0) {
		fprintf(stderr, "iotrace: no process %d: %s\n", s->opt->pid, strerror(errno));
		return 1;
	}
	if (pid_read_file(s->opt->pid, "stat", stat, sizeof(stat)) > 0) {
		p = strrchr(stat, ')');
		if (p)
			sscanf(p + 1, " %*c %d", &ppid);
	}
	/* The kernel ends the name with a newline; the name itself may hold one. */
	n = pid_read_file(s->opt->pid, "comm", comm, sizeof(comm));
	if (n > 0 && comm[n - 1] == '\n')
		comm[n - 1] = '\0';
	n = pid_read_file(s->opt->pid, "cmdline", args, sizeof(args));
	for (int i = 0; i < n - 1; i++)
		if (!args[i])
			args[i] = ' ';
	s->root = s->opt->pid;
	slot = tracer_claim_slot(s->tracer);
	if (!slot || collector_add_root(s->coll, s->root, ppid, slot, comm, args, now_ns()) ||
	    tracer_watch(s->tracer, s->root, slot, false)) {
		fprintf(stderr, "iotrace: cannot register pid %d for tracing\n", s->root);
		return 1;
	}
	if (s->trace)
		trace_process(s->trace, s->root, comm);
	fprintf(stderr, "iotrace: attached to pid %d (%s); Ctrl-C to stop\n", s->root,
		name_cell(comm, 0, shown, sizeof(shown)));
	return 0;
}

static void close_session(struct session *s)
{
	spawn_cleanup(&s->child);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	if (s->sig_fd >= 0)
		close(s->sig_fd);
	if (s->pid_fd >= 0)
		close(s->pid_fd);
	trace_abort(s->trace); /* a run that ended early: no timeline, no stacks */
	if (s->stacks)
		unlink(s->opt->stacks);
	stacks_free(s->stacks);
	tracer_close(s->tracer);
	collector_free(s->coll);
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
}

/*
 * A file's name for --trace and --stacks: the collector's names while the run goes on, the
 * run result's once it is made (a trace's last requests are written after that).
 */
static const char *file_name_of(void *ctx, uint32_t dev, uint64_t ino, uint32_t igen)
{
	struct session *s = ctx;
	struct path_key key = { .dev = dev, .ino = ino, .igen = igen };

	if (!s->r->names)
		return collector_file_name(s->coll, dev, ino, igen);
	return names_lookup(s->r->names, &key);
}

/* --stacks: the file is made now, so that a bad path fails before the command runs. */
static int open_stacks(struct session *s, struct tracer_config *cfg)
{
	const struct options *o = s->opt;
	char shown[NAME_TEXT_MAX];
	int fd;

	if (!o->stacks)
		return 0;
	fd = open(o->stacks, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "iotrace: cannot write the stacks %s: %s\n",
			name_cell(o->stacks, 0, shown, sizeof(shown)), strerror(errno));
		return -1;
	}
	close(fd);
	s->stacks = stacks_new(o->stacks_unwind,
			       o->stacks_by >= 0 ? o->stacks_by
			       : o->timing ? STACKS_BY_TIME : STACKS_BY_CALLS,
			       file_name_of, s);
	if (!s->stacks) {
		fprintf(stderr, "iotrace: out of memory\n");
		return -1;
	}
	cfg->stacks = o->stacks_unwind;
	cfg->on_stack = on_stack;
	s->r->stacks_path = o->stacks;
	return 0;
}

static void add_fp_stack(const struct stack_key *k, const struct stack_val *v, const __u64 *ips,
			 int depth, void *ctx)
{
	stacks_add_fp(ctx, k, v, ips, depth);
}

/*
 * --stacks, once the programs are detached: what the kernel still holds (the processes
 * still alive are done as the collector retires them, slot_retired).
 */
static void finish_stack_events(struct session *s)
{
	if (!s->stacks)
		return;
	if (s->opt->stacks_unwind == STACKS_FP)
		tracer_read_stacks(s->tracer, add_fp_stack, s->stacks);
}

static int finish_stacks(struct session *s, struct run_result *r)
{
	int err;

	if (!s->stacks)
		return 0;
	err = stacks_finish(s->stacks, r, s->opt->stacks);
	stacks_free(s->stacks);
	s->stacks = NULL;
	return err;
}

/* --trace: the file is made before anything runs, so that a bad path fails first. */
static int open_trace(struct session *s, struct tracer_config *cfg)
{
	struct trace_options to = {
		.path = s->opt->trace, .min_ns = s->opt->trace_min_ns,
		.interval_ns = s->opt->trace_interval_ns, .max_events = s->opt->trace_max_events,
		.name_of = file_name_of, .name_ctx = s,
	};

	if (!s->opt->trace)
		return 0;
	s->trace = trace_open(&to);
	if (!s->trace)
		return -1;
	cfg->trace = true;
	cfg->trace_min_ns = s->opt->trace_min_ns;
	cfg->on_trace = on_trace;
	s->r->trace_path = s->opt->trace;
	return 0;
}

static void trace_unseen_request(const struct block_rq_info *info, void *ctx)
{
	struct session *s = ctx;

	trace_unseen(s->trace, info, now_ns());
}

/*
 * --trace, once the programs are detached and their last events read: the requests whose
 * completion the kernel skipped (the counters of processes still alive (-p) come as the
 * collector retires them, slot_retired), then, with the run's records, names, lifetimes
 * and metadata.
 */
static void finish_trace_events(struct session *s)
{
	if (!s->trace)
		return;
	tracer_unseen_requests(s->tracer, trace_unseen_request, s);
}

static int finish_trace(struct session *s, struct run_result *r)
{
	int err;

	if (!s->trace)
		return 0;
	err = trace_finish(s->trace, r, now_ns(), r->drops[DROP_TRACE], &r->trace);
	s->trace = NULL;
	return err;
}

/* The tracer and the collector its events go to; prints one line and returns -1 on failure. */
static int open_tracing(struct session *s, const struct tracer_config *cfg)
{
	s->coll = collector_new();
	if (!s->coll) {
		fprintf(stderr, "iotrace: out of memory\n");
		return -1;
	}
	s->tracer = tracer_open(cfg, on_proc_event, s);
	if (!s->tracer)
		return -1;
	if (collector_start(s->coll, s->tracer)) {
		fprintf(stderr, "iotrace: out of memory\n");
		return -1;
	}
	if (s->trace || s->stacks)
		collector_on_retire(s->coll, slot_retired, s);
	return 0;
}

/* What the result says of the run before it starts: the command, its options, its cwd. */
static void begin_result(struct run_result *r, const struct options *o)
{
	memset(r, 0, sizeof(*r));
	r->command = o->command;
	r->timing = o->timing;
	r->files_by_path = o->files_by_path;
	r->cwd = pid_cwd(o->command ? 0 : o->pid);
}

int run_trace(const struct options *o, struct run_result *r)
{
	struct tracer_config cfg = {
		.timing = o->timing, .time_all = o->time_all, .verbose = o->verbose,
		.max_procs = o->max_procs,
		.on_name = on_name,
	};
	struct session s = {
		.opt = o, .r = r, .sig_fd = -1, .epoll_fd = -1, .pid_fd = -1,
		.child = { .go_fd = -1, .error_fd = -1 },
	};
	uint64_t start;
	char why[128];
	int status;

	/* -p: a process that can still make calls, or one line before anything is loaded. */
	if (!o->command && pid_refusal(o->pid, true, why, sizeof(why))) {
		fprintf(stderr, "iotrace: %s\n", why);
		return 1;
	}
	begin_result(r, o);
	if (o->command && (status = spawn_resolve(o->command[0], &s.child.path)))
		return status;
	if (o->user && spawn_set_user(&s.child, o->user)) {
		spawn_cleanup(&s.child);
		return 1;
	}
	if (setup_signals(&s) || open_trace(&s, &cfg) || open_stacks(&s, &cfg) ||
	    open_tracing(&s, &cfg)) {
		close_session(&s);
		return 1;
	}
	/* Orphaned descendants come to us, so waiting for ECHILD waits for all of them. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	start = now_ns();
	if (s.trace) {
		trace_start(s.trace, start);
		s.next_sample = start + o->trace_interval_ns;
	}
	status = o->command ? start_command(&s) : attach_pid(&s);
	if (!status && setup_epoll(&s)) {
		fprintf(stderr, "iotrace: epoll: %s\n", strerror(errno));
		status = 1;
	}
	if (!status && event_loop(&s)) {
		fprintf(stderr, "iotrace: event loop: %s\n", strerror(errno));
		status = 1;
	}
	if (status) {
		close_session(&s);
		return status;
	}
	r->wall_ns = now_ns() - start;
	if (o->sync) {
		/* Write back what the command left dirty while still attached, so it is charged. */
		sync();
		r->synced = true;
	}
	/* Requests the processes started may complete after they exit: let them finish. */
	tracer_wait_block_idle(s.tracer, 200);
	/* Stop counting, then read the last events and whatever the kernel still holds. */
	tracer_detach(s.tracer);
	tracer_poll_events(s.tracer);
	finish_trace_events(&s);
	finish_stack_events(&s);
	if (collector_finish(s.coll, r))
		fprintf(stderr, "iotrace: out of memory: some processes are missing\n");
	if (!o->command) {
		struct proc_record *root = &r->procs[0];

		r->exit_known = root->exit_seen;
		r->exit_status = root->exit_status;
	}
	r->trace_failed = finish_trace(&s, r) != 0;
	r->stacks_failed = finish_stacks(&s, r) != 0;
	close_session(&s);
	return 0;
}
