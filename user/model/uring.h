/* SPDX-License-Identifier: GPL-2.0 */
/* io_uring records in the model: merged, summed by opcode, derived (uring.c). */
#ifndef IOTRACE_URING_H
#define IOTRACE_URING_H

#include "records.h"

/* Adds src's counters into dst (same opcode, or any when summing). */
void uring_record_add(struct uring_record *dst, const struct uring_record *src);
/* The derived view (bytes, percentages, quantiles) from the raw counters. */
void uring_record_derive(struct uring_record *r);
/*
 * Adds rec into list[] under the record of its opcode (keyed by op alone, owner 0), creating
 * it; -1 out of memory.
 */
int uring_add_by_op(struct uring_record **list, size_t *n, const struct uring_record *rec);
/* Sorts records by opcode and derives each. */
void uring_finish(struct uring_record *list, size_t n);
/* Whether a field has no value for this record (bytes of an opcode that moves none). */
bool uring_field_unknown(const struct field *f, const struct uring_record *r);

#endif
