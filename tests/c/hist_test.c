// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the histogram bucket math (bpf/buckets.h, used by the kernel programs and the
 * loader) against a reference written the plain way (a loop over powers of two), over every
 * value below 2^20 and ten million random ones of every magnitude: each value lands in the
 * bucket whose bounds hold it, the buckets' bounds are contiguous and increasing, every log2
 * bound is a fine one (folding is exact), and the fine buckets are at most 1/8 of their
 * values wide. tests/test_hist.py runs it; it prints one line per check, exits 0 if all pass.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/types.h>
#include "iotrace.h"
#include "model/hist.h"

static int failures;

/* The reference: the power of two, then the eighth of it, found by search. */
static int ref_fine(uint64_t v)
{
	int len = 0, b;

	if (v < FINE_EXACT)
		return v;
	while (len < 64 && (v >> len) > 1)
		len++;
	len++; /* bits of v */
	if (len > FINE_MAX_BITS)
		return FINE_BUCKETS - 1;
	b = FINE_EXACT + (len - FINE_SUB_BITS - 2) * FINE_SUBS;
	for (uint64_t lo = 1ULL << (len - 1), step = lo / FINE_SUBS; v >= lo + step; lo += step)
		b++;
	return b;
}

static int ref_log2(uint64_t v)
{
	int b = 0;

	while (b < 64 && v >> b)
		b++;
	return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}

static uint64_t rnd(void)
{
	static uint64_t x = 0x9e3779b97f4a7c15ULL;

	x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x >> (x % 64); /* every magnitude */
}

static void check(const char *what, long bad)
{
	printf("%s %s (%ld bad)\n", bad ? "FAIL" : "ok", what, bad);
	failures += bad != 0;
}

static long check_value(uint64_t v)
{
	int f = hist_bucket_of(HIST_FINE, v), l = hist_bucket_of(HIST_LOG2, v);

	return (f != ref_fine(v)) + (l != ref_log2(v)) +
	       (v < hist_bucket_lo(HIST_FINE, f) || v > hist_bucket_hi(HIST_FINE, f)) +
	       (v < hist_bucket_lo(HIST_LOG2, l) || v > hist_bucket_hi(HIST_LOG2, l));
}

/* A random histogram: a few buckets filled, of every size (and now and then none). */
static void random_hist(__u64 *hist, int n)
{
	int filled = rnd() % 6;

	for (int b = 0; b < n; b++)
		hist[b] = 0;
	while (filled--)
		hist[rnd() % n] += rnd() % 3 ? rnd() % 1000 + 1 : rnd() >> 20;
}

/* hist_summary_of's one walk gives each quantile as a walk of its own does. */
static long check_summary(enum hist_layout l)
{
	__u64 hist[FINE_BUCKETS];
	int n = hist_buckets(l);
	long bad = 0;

	for (long i = 0; i < 200000; i++) {
		uint64_t min = rnd() % 5000, max = min + rnd() % 100000;
		bool known = i % 2;
		struct hist_summary s;

		random_hist(hist, n);
		s = hist_summary_of(l, hist, known, min, max);
		if (!known) {
			min = 0;
			max = UINT64_MAX;
		}
		bad += s.count != hist_total(l, hist) ||
		       s.p50 != hist_quantile(l, hist, 0.5, min, max) ||
		       s.p90 != hist_quantile(l, hist, 0.9, min, max) ||
		       s.p99 != hist_quantile(l, hist, 0.99, min, max);
	}
	return bad;
}

int main(void)
{
	long bad = 0;

	for (uint64_t v = 0; v < (1 << 20); v++)
		bad += check_value(v);
	check("every value below 2^20 in the reference's bucket, within its bounds", bad);
	bad = 0;
	for (long i = 0; i < 10000000; i++)
		bad += check_value(rnd());
	bad += check_value(UINT64_MAX) + check_value(1ULL << 63);
	check("10,000,000 random values of every magnitude", bad);
	bad = 0;
	for (int b = 1; b < FINE_BUCKETS; b++)
		bad += hist_bucket_lo(HIST_FINE, b) != hist_bucket_hi(HIST_FINE, b - 1) + 1;
	for (int b = 1; b < HIST_BUCKETS; b++)
		bad += hist_bucket_lo(HIST_LOG2, b) != hist_bucket_hi(HIST_LOG2, b - 1) + 1;
	check("bounds contiguous and increasing", bad);
	bad = 0;
	for (int b = 1; b < HIST_BUCKETS; b++)
		bad += hist_bucket_lo(HIST_FINE, hist_bucket_of(HIST_FINE,
			hist_bucket_lo(HIST_LOG2, b))) != hist_bucket_lo(HIST_LOG2, b);
	check("every log2 bound is a fine bound", bad);
	bad = 0;
	for (int b = FINE_EXACT; b < FINE_BUCKETS - 1; b++) {
		uint64_t lo = hist_bucket_lo(HIST_FINE, b), hi = hist_bucket_hi(HIST_FINE, b);

		bad += (hi - lo + 1) * FINE_SUBS > lo;
	}
	check("fine buckets at most 1/8 of their values wide", bad);
	check("a summary's quantiles those of hist_quantile (log2, fine)",
	      check_summary(HIST_LOG2) + check_summary(HIST_FINE));
	return failures ? 1 : 0;
}
