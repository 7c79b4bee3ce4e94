// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "iotrace.h"
#include "hist.h"

int sparse_hist_add(struct sparse_hist *s, const __u64 *dense)
{
	__u64 merged[HIST_BUCKETS];
	struct hist_bin *bins;
	uint32_t n = 0;

	sparse_hist_dense(s, merged);
	for (int b = 0; b < HIST_BUCKETS; b++) {
		merged[b] += dense[b];
		n += merged[b] != 0;
	}
	if (n == s->n) { /* no new bucket: add in place */
		for (uint32_t i = 0; i < s->n; i++)
			s->bins[i].count = merged[s->bins[i].b];
		return 0;
	}
	bins = malloc(n * sizeof(*bins));
	if (!bins)
		return -1;
	n = 0;
	for (int b = 0; b < HIST_BUCKETS; b++)
		if (merged[b])
			bins[n++] = (struct hist_bin){ .b = b, .count = merged[b] };
	free(s->bins);
	s->bins = bins;
	s->n = n;
	return 0;
}

void sparse_hist_dense(const struct sparse_hist *s, __u64 *dense)
{
	memset(dense, 0, HIST_BUCKETS * sizeof(*dense));
	for (uint32_t i = 0; i < s->n; i++)
		dense[s->bins[i].b % HIST_BUCKETS] = s->bins[i].count;
}

void sparse_hist_free(struct sparse_hist *s)
{
	free(s->bins);
	s->bins = NULL;
	s->n = 0;
}

int hist_buckets(enum hist_layout l)
{
	return l == HIST_FINE ? FINE_BUCKETS : HIST_BUCKETS;
}

uint64_t hist_bucket_lo(enum hist_layout l, int b)
{
	if (l == HIST_FINE)
		return fine_bucket_lo(b);
	return b == 0 ? 0 : 1ULL << (b - 1);
}

uint64_t hist_bucket_hi(enum hist_layout l, int b)
{
	/* The last bucket also holds everything larger. */
	if (b == hist_buckets(l) - 1)
		return UINT64_MAX;
	return hist_bucket_lo(l, b + 1) - 1;
}

int hist_bucket_of(enum hist_layout l, uint64_t v)
{
	return l == HIST_FINE ? (int)fine_bucket(v) : (int)log2_bucket(v);
}

void hist_fold_log2(const __u64 *fine, __u64 *log2)
{
	memset(log2, 0, HIST_BUCKETS * sizeof(*log2));
	for (int b = 0; b < FINE_BUCKETS; b++)
		log2[log2_bucket(fine_bucket_lo(b))] += fine[b];
}

uint64_t hist_total(enum hist_layout l, const __u64 *hist)
{
	uint64_t sum = 0;

	for (int b = 0; b < hist_buckets(l); b++)
		sum += hist[b];
	return sum;
}

uint64_t hist_quantile(enum hist_layout l, const __u64 *hist, double q, uint64_t min,
		       uint64_t max)
{
	uint64_t total = hist_total(l, hist), seen = 0;
	double rank, lo, hi, v;

	if (!total)
		return 0;
	/* Rank of the element at quantile q among 1..total (nearest-rank definition). */
	rank = q * total;
	if (rank < 1)
		rank = 1;
	for (int b = 0; b < hist_buckets(l); b++) {
		if (!hist[b] || seen + hist[b] < rank) {
			seen += hist[b];
			continue;
		}
		lo = hist_bucket_lo(l, b) > min ? hist_bucket_lo(l, b) : min;
		hi = hist_bucket_hi(l, b) < max ? hist_bucket_hi(l, b) : max;
		v = lo + (hi - lo) * ((rank - seen) / hist[b]);
		return (uint64_t)(v + 0.5) > (uint64_t)hi ? (uint64_t)hi : (uint64_t)(v + 0.5);
	}
	return max;
}

struct hist_summary hist_summary_of(enum hist_layout l, const __u64 *hist, bool minmax_known,
				    uint64_t min, uint64_t max)
{
	struct hist_summary s = { .count = hist_total(l, hist), .minmax_known = minmax_known };

	if (!minmax_known) {
		min = 0;
		max = UINT64_MAX;
	}
	if (s.count && minmax_known) {
		s.min = min;
		s.max = max;
	}
	s.p50 = hist_quantile(l, hist, 0.5, min, max);
	s.p90 = hist_quantile(l, hist, 0.9, min, max);
	s.p99 = hist_quantile(l, hist, 0.99, min, max);
	return s;
}

void hist_print(FILE *out, enum hist_layout l, const __u64 *in, const char *unit)
{
	int first = -1, last = -1;
	uint64_t peak = 0;
	const int width = 40;
	__u64 hist[HIST_BUCKETS];

	if (l == HIST_FINE)
		hist_fold_log2(in, hist);
	else
		memcpy(hist, in, sizeof(hist));
	for (int b = 0; b < HIST_BUCKETS; b++) {
		if (!hist[b])
			continue;
		if (first < 0)
			first = b;
		last = b;
		if (hist[b] > peak)
			peak = hist[b];
	}
	if (first < 0)
		return;
	fprintf(out, "%27s : %-10s distribution\n", unit, "count");
	for (int b = first; b <= last; b++) {
		int stars = (int)((hist[b] * width + peak - 1) / peak);

		fprintf(out, "%12llu -> %-11llu : %-10llu |%-*.*s|\n",
			(unsigned long long)hist_bucket_lo(HIST_LOG2, b),
			(unsigned long long)hist_bucket_hi(HIST_LOG2, b),
			(unsigned long long)hist[b], width, stars,
			"****************************************");
	}
}
