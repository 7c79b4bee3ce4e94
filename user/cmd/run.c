// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "collect/engine.h"
#include "run.h"
#include "spawn.h"
#include "report/cells.h"
#include "util/pidinfo.h"

struct session {
	const struct options *opt;
	struct engine *engine; /* the tracer, the records, the sinks: everything below */
	struct child child;
	sigset_t old_mask;
	int sig_fd, epoll_fd, pid_fd;
	pid_t root;
	int interrupts;
	bool done;
};

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
	ev.data.fd = engine_events_fd(s->engine);
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
		if (pid == s->root)
			engine_command_exited(s->engine, status);
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
			engine_stopped(s->engine, si.ssi_signo, s->child.pid != 0);
			s->done = true;
			return;
		}
		/* A terminal's signal already reached the command's process group; kill(1)'s didn't. */
		if (si.ssi_code != SI_KERNEL)
			kill(s->root, si.ssi_signo);
	}
}

static int event_loop(struct session *s)
{
	struct epoll_event evs[4];

	while (!s->done) {
		int n = epoll_wait(s->epoll_fd, evs, 4, engine_wait_ms(s->engine));
		/*
		 * Kept before the tick, which makes calls of its own. A stop and SIGCONT (Ctrl-Z,
		 * fg) make epoll_wait fail with EINTR even with every signal blocked (signal(7)).
		 */
		int err = n < 0 ? errno : 0;
		bool events = n == 0; /* a wait that timed out reads the events too */

		engine_tick(s->engine);
		if (err == EINTR)
			continue;
		if (err) {
			errno = err;
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == s->sig_fd)
				on_signal(s);
			else if (evs[i].data.fd == s->pid_fd)
				s->done = true;
			else
				events = true;
		}
		engine_read_events(s->engine, events);
	}
	return 0;
}

/*
 * Forks CMD's process before the programs load: it waits for start_command. A process of a
 * few MiB forks and later execs faster than one with the tens of MiB of counters mapped
 * (their page tables are copied, then torn down): ~1.5 ms of the start-up. Returns 0 or 1.
 */
static int fork_command(struct session *s)
{
	if (spawn_prepare(&s->child, s->opt->command, &s->old_mask)) {
		fprintf(stderr, "iotrace: fork: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

/* Starts CMD so that tracing begins exactly at its execve. Returns 0 or an exit status. */
static int start_command(struct session *s)
{
	char shown[NAME_TEXT_MAX], why[NAME_TEXT_MAX + 64];
	int err;

	s->root = s->child.pid;
	if (engine_add_root(s->engine, s->root, getpid(), basename(s->child.path), NULL, true)) {
		fprintf(stderr, "iotrace: cannot register pid %d for tracing\n", s->root);
		kill(s->root, SIGKILL);
		waitpid(s->root, NULL, 0);
		return 1;
	}
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
	if (engine_add_root(s->engine, s->root, ppid, comm, args, false)) {
		fprintf(stderr, "iotrace: cannot register pid %d for tracing\n", s->root);
		return 1;
	}
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
	engine_close(s->engine);
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
}

int run_trace(const struct options *o, struct run_result *r)
{
	struct session s = {
		.opt = o, .sig_fd = -1, .epoll_fd = -1, .pid_fd = -1,
		.child = { .go_fd = -1, .error_fd = -1 },
	};
	char why[128];
	int status;

	/* -p: a process that can still make calls, or one line before anything is loaded. */
	if (!o->command && pid_refusal(o->pid, true, why, sizeof(why))) {
		fprintf(stderr, "iotrace: %s\n", why);
		return 1;
	}
	if (o->command && (status = spawn_resolve(o->command[0], &s.child.path)))
		return status;
	if (o->user && spawn_set_user(&s.child, o->user)) {
		spawn_cleanup(&s.child);
		return 1;
	}
	if (setup_signals(&s) || (o->command && fork_command(&s)) ||
	    !(s.engine = engine_open(o, r))) {
		close_session(&s);
		return 1;
	}
	/* Orphaned descendants come to us, so waiting for ECHILD waits for all of them. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	engine_start(s.engine);
	status = o->command ? start_command(&s) : attach_pid(&s);
	if (!status && setup_epoll(&s)) {
		fprintf(stderr, "iotrace: epoll: %s\n", strerror(errno));
		status = 1;
	}
	if (!status && event_loop(&s)) {
		fprintf(stderr, "iotrace: event loop: %s\n", strerror(errno));
		status = 1;
	}
	if (!status)
		engine_finish(s.engine);
	close_session(&s);
	return status;
}
