/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Histograms as the kernel side fills them, in one of two layouts (bpf/buckets.h): log2
 * (HIST_BUCKETS) or log-linear (FINE_BUCKETS, 8 buckets per power of two).
 */
#ifndef IOTRACE_HIST_H
#define IOTRACE_HIST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

/* HIST_FINE first: a zeroed record (block sums) has the kernel's fine latency buckets. */
enum hist_layout { HIST_FINE = 0, HIST_LOG2 };

/* One histogram's count, extremes and quantiles (hist_summary_of). */
struct hist_summary {
	uint64_t count;
	bool minmax_known; /* the kernel kept the extremes (syscall sizes and latencies) */
	uint64_t min, max; /* valid when count and minmax_known */
	uint64_t p50, p90, p99; /* valid when count */
};

/* A log2 histogram with its non-empty buckets only (per-file rows, which have few). */
struct sparse_hist {
	uint32_t n;
	struct hist_bin {
		uint32_t b;
		uint64_t count;
	} *bins; /* by bucket */
};

/* Adds a dense log2 histogram into s; -1 out of memory. */
int sparse_hist_add(struct sparse_hist *s, const __u64 *dense);
/* s as a dense log2 histogram (dense must hold HIST_BUCKETS). */
void sparse_hist_dense(const struct sparse_hist *s, __u64 *dense);
void sparse_hist_free(struct sparse_hist *s);

int hist_buckets(enum hist_layout l);
/* Inclusive bounds of bucket b: log2 [0,0], [1,1], [2,3], [4,7], ...; fine: see buckets.h. */
uint64_t hist_bucket_lo(enum hist_layout l, int b);
uint64_t hist_bucket_hi(enum hist_layout l, int b);
uint64_t hist_total(enum hist_layout l, const __u64 *hist);
/* No call in any bucket (hist_total's 0, seen at the first call found). */
bool hist_empty(enum hist_layout l, const __u64 *hist);
/* The bucket holding v (as the kernel side's log2_bucket() or fine_bucket()). */
int hist_bucket_of(enum hist_layout l, uint64_t v);
/* A fine histogram folded into log2 buckets (every log2 bound is a fine one). */
void hist_fold_log2(const __u64 *fine, __u64 *log2);
/*
 * Value at quantile q (0..1): the bucket holding that rank, interpolated linearly
 * inside it and clamped to the observed [min, max], so uniform data reads exactly.
 */
uint64_t hist_quantile(enum hist_layout l, const __u64 *hist, double q, uint64_t min,
		       uint64_t max);
/* Count, p50, p90 and p99; min/max are the kernel's when minmax_known, else bucket bounds. */
struct hist_summary hist_summary_of(enum hist_layout l, const __u64 *hist, bool minmax_known,
				    uint64_t min, uint64_t max);
/* bcc print_log2_hist style: "lo -> hi : count |****|" in log2 rows, empty edges trimmed. */
void hist_print(FILE *out, enum hist_layout l, const __u64 *hist, const char *unit);

#endif
