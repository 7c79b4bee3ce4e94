/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model: the records of a run (records.h) summed, and every computed number derived once
 * (model_derive, the members marked "derived" there), before any renderer runs; the sums of
 * one kind of record it is made of (sums.h).
 */
#ifndef IOTRACE_MODEL_H
#define IOTRACE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "records.h"
#include "sums.h"

/* Everything derived in r (quantiles, sums, views), once, before any renderer runs. */
int model_derive(struct run_result *r);
void run_result_free(struct run_result *r);
/*
 * The status iotrace ends with: the command's own (128 + the signal that ended it), 128 +
 * the signal that stopped a run cut short, or 0 (-p's process still running).
 */
int run_exit_code(const struct run_result *r);
/* The command's wait status when a signal ended it, else -1. */
int run_killed_status(const struct run_result *r);
/* Whether a file of the run (--trace, --stacks) could not be written (a line said why). */
bool run_outputs_failed(const struct run_result *r);

#endif /* IOTRACE_MODEL_H */
