/* SPDX-License-Identifier: GPL-2.0 */
/* Parsers of command-line values shared by the front ends (fuzzed: tests/fuzz/). */
#ifndef IOTRACE_UTIL_H
#define IOTRACE_UTIL_H

#include <sys/socket.h>

/* Decimal integer in 1..max, digits only; returns 0 and sets *out, or -1. */
int parse_uint(const char *s, unsigned long max, unsigned long *out);
/* Decimal seconds in (0, max] ("2", "0.5"); returns 0 and sets *out, or -1. */
int parse_seconds(const char *s, double max, double *out);
/* "ADDR:PORT" or "[V6ADDR]:PORT", numeric address and port 1..65535 (no DNS lookup). */
int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len);

#endif
