// SPDX-License-Identifier: GPL-2.0
/*
 * Parsers of command-line values (and of the kernel's build-ID notes), shared by the front
 * ends and fuzzed by tests/fuzz/fuzz_parsers.c (which holds an independent model of what
 * each accepts).
 */
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	/* Digits only: strtoul alone would skip blanks and wrap "-1" around. */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

int parse_seconds(const char *s, double max, double *out)
{
	double v;
	char *end;

	/* A plain decimal number: no blanks, sign, hex, "inf" or "nan". */
	if ((*s < '0' || *s > '9') && *s != '.')
		return -1;
	if (strpbrk(s, "xXpPnN"))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || !(v > 0) || v > max)
		return -1;
	*out = v;
	return 0;
}

int parse_duration_ns(const char *s, uint64_t max_ns, uint64_t *out)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	size_t len = strlen(s), num;
	char digits[64];
	double v;
	char *end;

	if (!strcmp(s, "0")) {
		*out = 0;
		return 0;
	}
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		size_t ulen = strlen(units[u].unit);

		if (len <= ulen || strcmp(s + len - ulen, units[u].unit))
			continue;
		num = len - ulen;
		/* The number: digits and at most one '.', nothing else (no sign, exponent, hex). */
		if (num >= sizeof(digits) || strspn(s, "0123456789.") != num ||
		    strchr(s, '.') != strrchr(s, '.') || !strpbrk(s, "0123456789"))
			return -1;
		memcpy(digits, s, num);
		digits[num] = '\0';
		errno = 0;
		v = strtod(digits, &end) * units[u].ns;
		if (errno || *end || !isfinite(v) || v > (double)max_ns)
			return -1;
		*out = (uint64_t)(v + 0.5);
		return 0;
	}
	return -1;
}

int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
				  .ai_socktype = SOCK_STREAM },
			*res;
	const char *port;
	unsigned long p;
	char host[256];

	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':' || (size_t)(end - s - 1) >= sizeof(host))
			return -1;
		memcpy(host, s + 1, end - s - 1);
		host[end - s - 1] = '\0';
		port = end + 2;
		hints.ai_family = AF_INET6; /* brackets are for IPv6 addresses only */
	} else {
		const char *colon = strchr(s, ':');

		/* One colon only: a bare IPv6 address needs its brackets. */
		if (!colon || (size_t)(colon - s) >= sizeof(host) || strchr(colon + 1, ':'))
			return -1;
		memcpy(host, s, colon - s);
		host[colon - s] = '\0';
		port = colon + 1;
		hints.ai_family = AF_INET;
	}
	if (!host[0] || parse_uint(port, 65535, &p) || getaddrinfo(host, port, &hints, &res))
		return -1;
	if (res->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(res);
		return -1;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* ELF note type of the GNU build ID. */
#define NT_GNU_BUILD_ID 3

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

size_t notes_build_id(const unsigned char *notes, size_t len, const unsigned char **id)
{
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t hdr[3];

		memcpy(hdr, notes + off, sizeof(hdr));
		size_t name = off + 12, namesz = hdr[0], descsz = hdr[1];

		/* Sizes come from the file: check each step against what is left. */
		if (align4(namesz) > len - name)
			return 0;
		size_t desc = name + align4(namesz);

		if (align4(descsz) > len - desc)
			return 0;
		if (hdr[2] == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(notes + name, "GNU", 4)) {
			*id = notes + desc;
			return descsz;
		}
		off = desc + align4(descsz);
	}
	return 0;
}
