/* SPDX-License-Identifier: GPL-2.0 */
/* Log2 histograms as the kernel side fills them (see HIST_BUCKETS in iotrace.h). */
#ifndef IOTRACE_HIST_H
#define IOTRACE_HIST_H

#include <stdint.h>
#include <stdio.h>

/* Inclusive bounds of bucket b: [0,0], [1,1], [2,3], [4,7], ... */
uint64_t hist_bucket_lo(int b);
uint64_t hist_bucket_hi(int b);
uint64_t hist_total(const uint64_t *hist);
/* The bucket holding v (as the kernel side's log2_bucket()). */
int hist_bucket_of(uint64_t v);
/*
 * Value at quantile q (0..1): the bucket holding that rank, interpolated linearly
 * inside it and clamped to the observed [min, max], so uniform data reads exactly.
 */
uint64_t hist_quantile(const uint64_t *hist, double q, uint64_t min, uint64_t max);
/* bcc print_log2_hist style: "lo -> hi : count |****|", empty edges trimmed. */
void hist_print(FILE *out, const uint64_t *hist, const char *unit);

#endif
