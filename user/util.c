// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include "util.h"

int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	*out = strtoul(s, &end, 10);
	return errno || *end || *out == 0 || *out > max ? -1 : 0;
}
