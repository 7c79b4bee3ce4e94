// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the command-line value parsers: parse_uint, parse_seconds and
 * parse_listen (user/util.c) and the workloads' parse_size (workloads/sizearg.h).
 *
 * Each accepted/rejected answer is checked against a model written independently here
 * (digit by digit, with overflow tracked in 128 bits), so the fuzzer finds wrong answers,
 * not only crashes. Build and run: `make fuzz` (FUZZ_SECONDS=60 by default).
 */
#include <arpa/inet.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"
#include "sizearg.h"

#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "model disagrees: %s\n", #cond);                 \
			abort();                                                         \
		}                                                                        \
	} while (0)

/* Value of a run of decimal digits, saturated at 2^127. */
static unsigned __int128 digits_value(const char *s, const char **end)
{
	unsigned __int128 v = 0, cap = (unsigned __int128)1 << 127;

	for (; *s >= '0' && *s <= '9'; s++)
		v = v > cap / 10 ? cap : v * 10 + (*s - '0');
	*end = s;
	return v;
}

static void check_uint(const char *s, unsigned long max)
{
	unsigned long out = 12345;
	const char *end;
	unsigned __int128 v = digits_value(s, &end);
	int want = end != s && !*end && v >= 1 && v <= max ? 0 : -1;
	int got = parse_uint(s, max, &out);

	CHECK(got == want);
	if (!got)
		CHECK(out == (unsigned long)v);
	else
		CHECK(out == 12345);
}

static void check_size(const char *s, unsigned long long min, unsigned long long max)
{
	unsigned long long out = 777;
	const char *end;
	unsigned __int128 v = digits_value(s, &end), mult = 1;
	int want = -1, got;

	if (end != s) {
		switch (*end) {
		case 'k': case 'K': mult = 1 << 10; end++; break;
		case 'm': case 'M': mult = 1 << 20; end++; break;
		case 'g': case 'G': mult = 1 << 30; end++; break;
		}
		/* v saturates at 2^127: compare before multiplying so nothing wraps. */
		if (!*end && v <= max / mult && v * mult >= min)
			want = 0;
	}
	got = parse_size(s, min, max, &out);
	CHECK(got == want);
	if (!got)
		CHECK(out == (unsigned long long)(v * mult));
	else
		CHECK(out == 777);
}

static void check_seconds(const char *s)
{
	double out = -1;

	if (parse_seconds(s, 1e7, &out) == 0) {
		CHECK(isfinite(out) && out > 0 && out <= 1e7);
		/* Only digits, '.', and an exponent may appear. */
		CHECK(strspn(s, "0123456789.eE+-") == strlen(s));
	} else {
		CHECK(out == -1);
	}
}

static void check_listen(const char *s)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;

	if (parse_listen(s, &ss, &len))
		return;
	const char *colon = strrchr(s, ':');
	unsigned long port = strtoul(colon + 1, NULL, 10);

	CHECK(ss.ss_family == AF_INET || ss.ss_family == AF_INET6);
	CHECK(port >= 1 && port <= 65535);
	if (ss.ss_family == AF_INET)
		CHECK(len == sizeof(struct sockaddr_in) &&
		      ntohs(((struct sockaddr_in *)&ss)->sin_port) == port && s[0] != '[');
	else
		CHECK(len == sizeof(struct sockaddr_in6) &&
		      ntohs(((struct sockaddr_in6 *)&ss)->sin6_port) == port && s[0] == '[');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size > 4096)
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	check_uint(s, 65535);
	check_uint(s, 4094);
	check_uint(s, 2147483647);
	check_uint(s, ULONG_MAX);
	check_size(s, 1, 1ULL << 40);
	check_size(s, 0, ULLONG_MAX);
	check_seconds(s);
	check_listen(s);
	free(s);
	return 0;
}
