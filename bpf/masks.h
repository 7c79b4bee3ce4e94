/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Masks instead of branches, shared by the kernel programs and tests/c/masks_test.c (which
 * checks each against the plain branches it stands for).
 *
 * A branch on a value the verifier must later know exactly (an array index, a test it can
 * decide) leaves it a constant or a range on each side, and the verifier walks all that
 * follows once per side (docs/startup.md, "Branches the verifier kept apart"). These give
 * all ones or 0 with no branch; the barriers keep the compiler from making them a compare
 * and a branch again (BPF has no instruction that sets a register from a compare). Newer
 * verifiers split the walk at an AND or OR of such a mask with a constant
 * (maybe_fork_scalars): mask a value, never a constant.
 */
#ifndef IOTRACE_MASKS_H
#define IOTRACE_MASKS_H

#ifndef barrier_var
#define barrier_var(var) asm volatile("" : "+r"(var))
#endif
#ifndef MASKS_INLINE
#define MASKS_INLINE static inline
#endif

MASKS_INLINE __u64 all_ones_if_zero(__u64 x)
{
	__u64 t = x | -x;

	barrier_var(t);
	return (t >> 63) - 1;
}

MASKS_INLINE __u64 eq_mask(__u64 a, __u64 b)
{
	return all_ones_if_zero(a ^ b);
}

/* All ones when a < b, for a and b below 2^63 (page numbers). */
MASKS_INLINE __u64 below_mask(__u64 a, __u64 b)
{
	__u64 d = a - b, m;

	barrier_var(d);
	m = (__s64)d >> 63;
	barrier_var(m);
	return m;
}

/* a - b when a > b, else 0; both below 2^63. */
MASKS_INLINE __u64 less_or_zero(__u64 a, __u64 b)
{
	return (a - b) & below_mask(b, a);
}

/* The smaller of x and max; both below 2^63. */
MASKS_INLINE __u64 at_most(__u64 x, __u64 max)
{
	return x ^ ((x ^ max) & below_mask(max, x)); /* the mask on a value (see above) */
}

/* The larger of x and min; both below 2^63. */
MASKS_INLINE __u64 at_least(__u64 x, __u64 min)
{
	return x ^ ((x ^ min) & below_mask(x, min));
}

/*
 * The counters' row of syscall number id in a table of rows (a power of two): the last row
 * past the table, and sigreturn's row for -1 (rt_sigreturn restores the interrupted
 * context, its syscall number -1 included: x86 orig_ax, arm64 syscallno).
 */
MASKS_INLINE __u32 syscall_row_of(__u64 id, __u64 sigreturn, __u64 rows)
{
	__u64 x = id, minus1 = all_ones_if_zero(id + 1), past;

	x ^= (x ^ sigreturn) & minus1; /* the mask on a value, not on the constant */
	barrier_var(x);
	past = ~all_ones_if_zero(x / rows);
	return (x | past) & (rows - 1);
}

#ifndef EINTR
#define EINTR 4
#endif
#define ERESTARTSYS 512 /* the kernel's restart codes, include/linux/errno.h */
#define ERESTART_RESTARTBLOCK 516

/*
 * 1 when a syscall's return value says a signal interrupted it: -EINTR, or one of the
 * restart codes -ERESTARTSYS to -ERESTART_RESTARTBLOCK.
 */
MASKS_INLINE __u64 interrupted_ret(__s64 ret)
{
	__u64 r = ret + ERESTART_RESTARTBLOCK, m; /* the restart codes: 0..4, unsigned */

	/* The second term's top bit is set when r < 5 (unsigned). */
	m = eq_mask(ret, -EINTR) | ((r - (ERESTART_RESTARTBLOCK - ERESTARTSYS + 1)) & ~r);
	barrier_var(m);
	return m >> 63;
}

/* Largest syscall return value that is an error: the kernel's -MAX_ERRNO..-1 range. */
#define MAX_ERRNO 4095

/*
 * 1 when a syscall's return value is an error (-MAX_ERRNO..-1), else 0: its sign bit, and
 * not that of ret + MAX_ERRNO. A branch would narrow ret on each side, and the verifier
 * would walk the rest of sys_exit once per side.
 */
MASKS_INLINE __u64 call_failed(__s64 ret)
{
	__u64 r = ret;

	return (r >> 63) & (((r + MAX_ERRNO) >> 63) ^ 1);
}

/* The pages of [s, e) within [first, last], all below 2^63. */
MASKS_INLINE __u64 pages_within(__u64 s, __u64 e, __u64 first, __u64 last)
{
	return less_or_zero(at_most(e, last + 1), at_least(s, first));
}

#endif /* IOTRACE_MASKS_H */
