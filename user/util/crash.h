/* SPDX-License-Identifier: GPL-2.0 */
/* What iotrace says when it crashes: the signal and its own call stack, on stderr. */
#ifndef IOTRACE_CRASH_H
#define IOTRACE_CRASH_H

/*
 * On SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT: one line naming the signal, then the
 * stack's frames as "iotrace(+0xOFFSET)" (addr2line -f -e iotrace 0xOFFSET names them),
 * then the default action (a core, if enabled; exit status 128 + signal).
 */
void crash_report_install(void);

#endif
