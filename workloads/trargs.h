/*
 * trargs.h - the FROM/TO check and byte map shared by tr2u and tr2b.
 *
 * Unlike tr(1), FROM and TO are taken literally, byte for byte: no ranges ("a-z"), no
 * classes, no backslash escapes, no padding of a short TO. Keeping the semantics this
 * small means the two programs differ from each other only in how they do their I/O.
 */
#ifndef WORKLOADS_TRARGS_H
#define WORKLOADS_TRARGS_H

#include <stdbool.h>
#include <string.h>

/*
 * Fill map so that map[b] is the output byte for input byte b. Return NULL when FROM
 * and TO are acceptable, else a short reason for the usage message.
 */
static inline const char *tr_build_map(const char *from, const char *to,
				       unsigned char map[256])
{
	bool seen[256] = { false };
	size_t len = strlen(from);
	size_t i;

	if (len == 0)
		return "FROM and TO must not be empty";
	if (strlen(to) != len)
		return "FROM and TO must have the same length";

	for (i = 0; i < 256; i++)
		map[i] = (unsigned char)i;
	for (i = 0; i < len; i++) {
		/* Index through unsigned char: bytes >= 0x80 must not go negative. */
		unsigned char c = (unsigned char)from[i];

		/* tr(1) lets the last one win; here it is almost surely a typo. */
		if (seen[c])
			return "FROM must not contain a byte twice";
		seen[c] = true;
		map[c] = (unsigned char)to[i];
	}
	return NULL;
}

#endif /* WORKLOADS_TRARGS_H */
