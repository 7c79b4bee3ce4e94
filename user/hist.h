/* SPDX-License-Identifier: GPL-2.0 */
/* Log2 histograms as the kernel side fills them (see HIST_BUCKETS in iotrace.h). */
#ifndef IOTRACE_HIST_H
#define IOTRACE_HIST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

/* One histogram's count, extremes and quantiles (hist_summary_of). */
struct hist_summary {
	uint64_t count;
	bool minmax_known; /* the kernel kept the extremes (syscall sizes and latencies) */
	uint64_t min, max; /* valid when count and minmax_known */
	uint64_t p50, p99; /* valid when count */
};

/* A histogram with its non-empty buckets only (per-file rows, which have few). */
struct sparse_hist {
	uint32_t n;
	struct hist_bin {
		uint32_t b;
		uint64_t count;
	} *bins; /* by bucket */
};

/* Adds a dense histogram into s; -1 out of memory. */
int sparse_hist_add(struct sparse_hist *s, const __u64 *dense);
/* s as a dense histogram (dense must hold HIST_BUCKETS). */
void sparse_hist_dense(const struct sparse_hist *s, __u64 *dense);
void sparse_hist_free(struct sparse_hist *s);

/* Inclusive bounds of bucket b: [0,0], [1,1], [2,3], [4,7], ... */
uint64_t hist_bucket_lo(int b);
uint64_t hist_bucket_hi(int b);
uint64_t hist_total(const __u64 *hist);
/* The bucket holding v (as the kernel side's log2_bucket()). */
int hist_bucket_of(uint64_t v);
/*
 * Value at quantile q (0..1): the bucket holding that rank, interpolated linearly
 * inside it and clamped to the observed [min, max], so uniform data reads exactly.
 */
uint64_t hist_quantile(const __u64 *hist, double q, uint64_t min, uint64_t max);
/* Count, p50 and p99; min/max are the kernel's when minmax_known, else bucket bounds. */
struct hist_summary hist_summary_of(const __u64 *hist, bool minmax_known, uint64_t min,
				    uint64_t max);
/* bcc print_log2_hist style: "lo -> hi : count |****|", empty edges trimmed. */
void hist_print(FILE *out, const __u64 *hist, const char *unit);

#endif
