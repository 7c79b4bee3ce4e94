/*
 * sizearg.h - parse a byte count given on the command line (copy, read-file, mkinput).
 *
 * Accepted: one or more decimal digits, optionally followed by exactly one of k, m, g
 * (either case) meaning KiB, MiB, GiB (powers of 1024). Nothing else: no sign, no
 * leading blanks, no "kB", no hex. The caller gives the allowed range, so a size of
 * zero, a negative number, trailing garbage and a value that overflows all come back
 * as the same "bad size" answer and can be reported as a usage error.
 */
#ifndef WORKLOADS_SIZEARG_H
#define WORKLOADS_SIZEARG_H

#include <errno.h>
#include <stdlib.h>

/*
 * Store the value of s in *out and return 0 when it is well formed and lies in
 * [min, max]; return -1 otherwise and leave *out alone.
 */
static inline int parse_size(const char *s, unsigned long long min, unsigned long long max,
			     unsigned long long *out)
{
	unsigned long long v, mult = 1;
	char *end;

	/* strtoull would skip blanks and quietly negate "-1" into a huge value. */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -1;

	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		mult = 1ULL << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mult = 1ULL << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mult = 1ULL << 30;
		end++;
		break;
	default:
		return -1;
	}
	if (*end != '\0')
		return -1;

	/* Divide instead of multiplying so the check itself cannot wrap. */
	if (v > max / mult)
		return -1;
	v *= mult;
	if (v < min)
		return -1;
	*out = v;
	return 0;
}

#endif /* WORKLOADS_SIZEARG_H */
