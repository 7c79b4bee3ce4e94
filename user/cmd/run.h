/* SPDX-License-Identifier: GPL-2.0 */
/* Run mode: trace CMD (or -p PID) and its descendants until they are all gone. */
#ifndef IOTRACE_RUN_H
#define IOTRACE_RUN_H

#include "model/model.h"
#include "options.h"

/*
 * Returns 0 with r filled, or the exit status iotrace should end with after a failure
 * that has already been reported on stderr (127/126 for a command that cannot run).
 */
int run_trace(const struct options *o, struct run_result *r);

#endif
