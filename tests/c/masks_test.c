// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of bpf/masks.h, the masks the kernel programs compute instead of branches,
 * against the branches they stand for: every helper over the edges of its range (0, 1,
 * -1, the syscall table's ends, the signal codes, 2^32, 2^63) and ten million random
 * values of every magnitude. tests/test_startup.py runs it; it prints one line per check
 * and exits 0 if all pass.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/types.h>
#include "masks.h"

#define RANDOM_VALUES 10000000
#define ROWS 512

static int failures;

static void check(const char *what, long bad, long tried)
{
	printf("%s: %ld of %ld differ\n", what, bad, tried);
	failures += bad != 0;
}

/* A random 64-bit value of a random magnitude (1 to 64 bits), and its sign at random. */
static uint64_t any_value(void)
{
	uint64_t v = (uint64_t)random() << 62 ^ (uint64_t)random() << 31 ^ random();
	int bits = 1 + random() % 64;

	v = bits == 64 ? v : v & ((1ULL << bits) - 1);
	return random() & 1 ? -v : v;
}

static uint32_t ref_row(uint64_t id, uint64_t sigreturn)
{
	uint64_t x = id == UINT64_MAX ? sigreturn : id;

	return x < ROWS ? x : ROWS - 1;
}

static int ref_interrupted(int64_t ret)
{
	return ret == -EINTR || (ret >= -ERESTART_RESTARTBLOCK && ret <= -ERESTARTSYS);
}

static int ref_failed(int64_t ret)
{
	return ret < 0 && ret >= -MAX_ERRNO;
}

static uint64_t ref_pages(uint64_t s, uint64_t e, uint64_t first, uint64_t last)
{
	if (s < first)
		s = first;
	if (e > last + 1)
		e = last + 1;
	return e > s ? e - s : 0;
}

int main(void)
{
	static const uint64_t edges[] = {
		0, 1, 2, 3, 4, 5, 255, 256, 510, 511, 512, 513, 1023, 1024,
		-1ULL, -2ULL, -4ULL, -5ULL, -511ULL, -512ULL, -513ULL, -516ULL, -517ULL,
		-4094ULL, -4095ULL, -4096ULL, -4097ULL, 1ULL << 31, 1ULL << 32, (1ULL << 32) - 1,
		(1ULL << 32) + 1, (1ULL << 63) - 1, 1ULL << 63, (1ULL << 63) + 1, -(1ULL << 32),
	};
	static const uint64_t sigreturns[] = { 15, 139, 0, 510, 511 };
	const int n_edges = sizeof(edges) / sizeof(edges[0]);
	long bad[6] = {}, tried[6] = {};

	srandom(4627);
	for (long i = -n_edges; i < RANDOM_VALUES; i++) {
		uint64_t a = i < 0 ? edges[-i - 1] : any_value();
		uint64_t b = i < 0 ? edges[(-i * 7) % n_edges] : random() & 3 ? any_value() : a;
		uint64_t sig = sigreturns[(i + n_edges) % 5];
		/* Page numbers: below 2^52, runs and requests near each other as often as not. */
		uint64_t s = a >> 12, e = s + (b & 0xffff), first = s + (int16_t)b, last;

		first = first >> 52 ? 0 : first;
		last = first + ((a ^ b) & 0xfff);
		bad[0] += eq_mask(a, b) != (a == b ? UINT64_MAX : 0) ||
			  all_ones_if_zero(a) != (a == 0 ? UINT64_MAX : 0);
		tried[0]++;
		if (!(a >> 63) && !(b >> 63)) {
			bad[1] += below_mask(a, b) != (a < b ? UINT64_MAX : 0);
			tried[1]++;
		}
		bad[2] += syscall_row_of(a, sig, ROWS) != ref_row(a, sig);
		tried[2]++;
		bad[3] += interrupted_ret((int64_t)a) != (uint64_t)ref_interrupted((int64_t)a) ||
			  call_failed((int64_t)a) != (uint64_t)ref_failed((int64_t)a);
		tried[3]++;
		bad[4] += pages_within(s, e, first, last) != ref_pages(s, e, first, last);
		tried[4]++;
		if (!(a >> 63) && !(b >> 63)) {
			bad[5] += less_or_zero(a, b) != (a > b ? a - b : 0) ||
				  at_most(a, b) != (a < b ? a : b) ||
				  at_least(a, b) != (a > b ? a : b);
			tried[5]++;
		}
	}
	for (int64_t ret = -5000; ret <= 5000; ret++) {
		bad[3] += interrupted_ret(ret) != (uint64_t)ref_interrupted(ret) ||
			  call_failed(ret) != (uint64_t)ref_failed(ret);
		tried[3]++;
	}
	check("eq_mask, all_ones_if_zero", bad[0], tried[0]);
	check("below_mask (both below 2^63)", bad[1], tried[1]);
	check("syscall_row_of", bad[2], tried[2]);
	check("interrupted_ret, call_failed", bad[3], tried[3]);
	check("pages_within", bad[4], tried[4]);
	check("less_or_zero, at_most, at_least (below 2^63)", bad[5], tried[5]);
	return failures ? 1 : 0;
}
