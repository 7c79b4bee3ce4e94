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

bool hist_empty(enum hist_layout l, const __u64 *hist)
{
	int n = hist_buckets(l);

	for (int b = 0; b < n; b++)
		if (hist[b])
			return false;
	return true;
}

uint64_t hist_total(enum hist_layout l, const __u64 *hist)
{
	uint64_t sum = 0;

	for (int b = 0; b < hist_buckets(l); b++)
		sum += hist[b];
	return sum;
}

/* Where a walk up the buckets is: the bucket it looks at and the calls below it. */
struct hist_walk {
	int b;
	uint64_t seen;
};

/*
 * The value at quantile q of total calls, walking on from w (a walk for a smaller q: the
 * rank of q is in w's bucket or above). Nearest rank among 1..total, interpolated linearly
 * in its bucket and clamped to [min, max].
 */
static uint64_t quantile_from(enum hist_layout l, const __u64 *hist, uint64_t total, double q,
			      uint64_t min, uint64_t max, struct hist_walk *w)
{
	double rank = q * total, lo, hi, v;
	int n = hist_buckets(l);

	if (!total)
		return 0;
	if (rank < 1)
		rank = 1;
	for (; w->b < n; w->b++) {
		int b = w->b;

		if (!hist[b] || w->seen + hist[b] < rank) {
			w->seen += hist[b];
			continue;
		}
		lo = hist_bucket_lo(l, b) > min ? hist_bucket_lo(l, b) : min;
		hi = hist_bucket_hi(l, b) < max ? hist_bucket_hi(l, b) : max;
		v = lo + (hi - lo) * ((rank - w->seen) / hist[b]);
		return (uint64_t)(v + 0.5) > (uint64_t)hi ? (uint64_t)hi : (uint64_t)(v + 0.5);
	}
	return max;
}

uint64_t hist_quantile(enum hist_layout l, const __u64 *hist, double q, uint64_t min,
		       uint64_t max)
{
	struct hist_walk w = { 0 };

	return quantile_from(l, hist, hist_total(l, hist), q, min, max, &w);
}

/* One count and one walk for the three quantiles (a run's profiles have thousands). */
struct hist_summary hist_summary_of(enum hist_layout l, const __u64 *hist, bool minmax_known,
				    uint64_t min, uint64_t max)
{
	struct hist_summary s = { .count = hist_total(l, hist), .minmax_known = minmax_known };
	struct hist_walk w = { 0 };

	if (!minmax_known) {
		min = 0;
		max = UINT64_MAX;
	}
	if (s.count && minmax_known) {
		s.min = min;
		s.max = max;
	}
	s.p50 = quantile_from(l, hist, s.count, 0.5, min, max, &w);
	s.p90 = quantile_from(l, hist, s.count, 0.9, min, max, &w);
	s.p99 = quantile_from(l, hist, s.count, 0.99, min, max, &w);
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
