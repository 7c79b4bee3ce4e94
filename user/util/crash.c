// SPDX-License-Identifier: GPL-2.0
/* A crash's stack on stderr, as perf's sighandler_dump_stack does (crash.h). */
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "util/crash.h"

#define CRASH_FRAMES 64

static void on_crash(int sig)
{
	static const char head[] = "iotrace: crashed (SIG";
	static const char tail[] = "); its stack, for a report (addr2line -f -e iotrace OFFSET):\n";
	void *frames[CRASH_FRAMES];
	const char *name = sigabbrev_np(sig);
	int n = backtrace(frames, CRASH_FRAMES);

	/* write(2) only: the heap may be what broke */
	if (write(STDERR_FILENO, head, sizeof(head) - 1) < 0 ||
	    write(STDERR_FILENO, name ?: "?", name ? strlen(name) : 1) < 0 ||
	    write(STDERR_FILENO, tail, sizeof(tail) - 1) < 0)
		n = 0;
	backtrace_symbols_fd(frames, n, STDERR_FILENO);
	/* SA_RESETHAND made the action the default again: the signal ends the process */
	raise(sig);
}

void crash_report_install(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct sigaction sa = { .sa_handler = on_crash, .sa_flags = SA_RESETHAND | SA_NODEFER };
	void *frame;

	backtrace(&frame, 1); /* loads libgcc's unwinder now, not inside the handler */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
