/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers shared by the command-line front ends. */
#ifndef IOTRACE_UTIL_H
#define IOTRACE_UTIL_H

/* Decimal integer in 1..max, nothing else around it; returns 0 and sets *out, or -1. */
int parse_uint(const char *s, unsigned long max, unsigned long *out);

#endif
