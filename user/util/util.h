/* SPDX-License-Identifier: GPL-2.0 */
/* Parsers of command-line values and of the kernel's notes, shared (fuzzed: tests/fuzz/). */
#ifndef IOTRACE_UTIL_H
#define IOTRACE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Decimal integer in 1..max, digits only; returns 0 and sets *out, or -1. */
int parse_uint(const char *s, unsigned long max, unsigned long *out);
/* Decimal seconds in (0, max] ("2", "0.5"); returns 0 and sets *out, or -1. */
int parse_seconds(const char *s, double max, double *out);
/*
 * A duration with its unit, "1ms", "0.5ms", "250us", "10ns", "2s", or "0", in ns (rounded),
 * at most max_ns; returns 0 and sets *out, or -1.
 */
int parse_duration_ns(const char *s, uint64_t max_ns, uint64_t *out);
/* "ADDR:PORT" or "[V6ADDR]:PORT", numeric address and port 1..65535 (no DNS lookup). */
int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len);

/*
 * The GNU build ID in an ELF note section (as /sys/kernel/notes holds): its length, with
 * *id pointing into notes, or 0 if there is none or the notes are malformed.
 */
size_t notes_build_id(const unsigned char *notes, size_t len, const unsigned char **id);

#endif
