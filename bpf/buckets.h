/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Histogram bucket math, shared by the kernel programs (maps.bpf.h) and the loader (hist.c,
 * tests/c/hist_test.c): plain C on __u64, no branch the verifier would have to follow
 * twice except the final clamp.
 *
 * Two layouts (bpf/iotrace.h):
 * - log2, HIST_BUCKETS: bucket 0 holds 0, bucket b holds 2^(b-1) .. 2^b - 1 (sizes, the
 *   per-file rows, readahead windows);
 * - fine (log-linear, HdrHistogram's idea), FINE_BUCKETS: values below FINE_EXACT are their
 *   own bucket; above, each power of two [2^(L-1), 2^L) is cut into FINE_SUBS equal
 *   sub-buckets, chosen by the FINE_SUB_BITS bits after the leading one. A bucket is then
 *   at most 1/FINE_SUBS of its values wide (12.5%), so a quantile read from it, interpolated
 *   inside, is off by less than that (latencies of syscalls, block requests, io_uring).
 *   The last bucket also holds everything of more than FINE_MAX_BITS bits.
 * Every log2 bucket boundary is a fine one: a fine histogram folds exactly into log2 rows.
 */
#ifndef IOTRACE_BUCKETS_H
#define IOTRACE_BUCKETS_H

#define HIST_BUCKETS 40

#define FINE_SUB_BITS 3
#define FINE_SUBS (1 << FINE_SUB_BITS)
#define FINE_EXACT (2 * FINE_SUBS) /* 0..15: one bucket each */
#define FINE_MAX_BITS 40           /* 2^40 ns: 18 minutes */
#define FINE_BUCKETS (FINE_EXACT + (FINE_MAX_BITS - FINE_SUB_BITS - 1) * FINE_SUBS)

#ifndef BUCKETS_INLINE
#define BUCKETS_INLINE static inline
#endif

/* Set bits of x, without a branch. */
BUCKETS_INLINE __u32 popcount64(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
	return (x * 0x0101010101010101ULL) >> 56;
}

/* Bits needed to write v: 0 for 0, else floor(log2(v)) + 1. Branch-free. */
BUCKETS_INLINE __u32 bit_length(__u64 v)
{
	v |= v >> 1;
	v |= v >> 2;
	v |= v >> 4;
	v |= v >> 8;
	v |= v >> 16;
	v |= v >> 32;
	return popcount64(v);
}

/* Bucket of v: 0 for 0, else floor(log2(v)) + 1, capped to the last bucket. */
BUCKETS_INLINE __u32 log2_bucket(__u64 v)
{
	__u32 r = bit_length(v);

	return r < HIST_BUCKETS ? r : HIST_BUCKETS - 1;
}

/*
 * Fine bucket of v. Below FINE_EXACT, v itself. Else, with L = bit_length(v) (at least
 * FINE_SUB_BITS + 2), FINE_EXACT + (L - FINE_SUB_BITS - 2) * FINE_SUBS + the FINE_SUB_BITS
 * bits after the leading one. Computed for every v without a branch (the small values'
 * index is selected by a mask), then clamped to the last bucket.
 */
BUCKETS_INLINE __u32 fine_bucket(__u64 v)
{
	__u64 small = ((v - FINE_EXACT) & ~v) >> 63; /* 1 when v < FINE_EXACT */
	__u64 big = v | (FINE_EXACT * small);        /* a small v: any L >= FINE_SUB_BITS + 2 */
	__u32 len = bit_length(big);
	__u64 sub = (big >> (len - FINE_SUB_BITS - 1)) & (FINE_SUBS - 1);
	__u64 idx = FINE_EXACT + (__u64)(len - FINE_SUB_BITS - 2) * FINE_SUBS + sub;

	idx = (idx & (small - 1)) | (v & -small);
	return idx < FINE_BUCKETS ? idx : FINE_BUCKETS - 1;
}

/* Inclusive lower bound of fine bucket b (FINE_EXACT <= b). */
BUCKETS_INLINE __u64 fine_bucket_lo(__u32 b)
{
	__u32 len, sub;

	if (b < FINE_EXACT)
		return b;
	len = (b - FINE_EXACT) / FINE_SUBS + FINE_SUB_BITS + 2;
	sub = (b - FINE_EXACT) % FINE_SUBS;
	return (__u64)(FINE_SUBS + sub) << (len - FINE_SUB_BITS - 1);
}

#endif
