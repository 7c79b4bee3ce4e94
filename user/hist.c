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

uint64_t hist_bucket_lo(int b)
{
	return b == 0 ? 0 : 1ULL << (b - 1);
}

uint64_t hist_bucket_hi(int b)
{
	if (b == 0)
		return 0;
	/* The last bucket also holds everything larger. */
	return b == HIST_BUCKETS - 1 ? UINT64_MAX : (1ULL << b) - 1;
}

int hist_bucket_of(uint64_t v)
{
	int b = v ? 64 - __builtin_clzll(v) : 0;

	return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}

uint64_t hist_total(const __u64 *hist)
{
	uint64_t sum = 0;

	for (int b = 0; b < HIST_BUCKETS; b++)
		sum += hist[b];
	return sum;
}

uint64_t hist_quantile(const __u64 *hist, double q, uint64_t min, uint64_t max)
{
	uint64_t total = hist_total(hist), seen = 0;
	double rank, lo, hi, v;

	if (!total)
		return 0;
	/* Rank of the element at quantile q among 1..total (nearest-rank definition). */
	rank = q * total;
	if (rank < 1)
		rank = 1;
	for (int b = 0; b < HIST_BUCKETS; b++) {
		if (!hist[b] || seen + hist[b] < rank) {
			seen += hist[b];
			continue;
		}
		lo = hist_bucket_lo(b) > min ? hist_bucket_lo(b) : min;
		hi = hist_bucket_hi(b) < max ? hist_bucket_hi(b) : max;
		v = lo + (hi - lo) * ((rank - seen) / hist[b]);
		return (uint64_t)(v + 0.5) > (uint64_t)hi ? (uint64_t)hi : (uint64_t)(v + 0.5);
	}
	return max;
}

struct hist_summary hist_summary_of(const __u64 *hist, bool minmax_known, uint64_t min,
				    uint64_t max)
{
	struct hist_summary s = { .count = hist_total(hist), .minmax_known = minmax_known };

	if (!minmax_known) {
		min = 0;
		max = UINT64_MAX;
	}
	if (s.count && minmax_known) {
		s.min = min;
		s.max = max;
	}
	s.p50 = hist_quantile(hist, 0.5, min, max);
	s.p99 = hist_quantile(hist, 0.99, min, max);
	return s;
}

void hist_print(FILE *out, const __u64 *hist, const char *unit)
{
	int first = -1, last = -1;
	uint64_t peak = 0;
	const int width = 40;

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
			(unsigned long long)hist_bucket_lo(b), (unsigned long long)hist_bucket_hi(b),
			(unsigned long long)hist[b], width, stars,
			"****************************************");
	}
}
