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

#endif /* IOTRACE_MODEL_H */
