// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the command-line value parsers: parse_uint, parse_seconds and
 * parse_listen (user/util/util.c) and the workloads' parse_size (workloads/sizearg.h), and for
 * notes_build_id (user/util/util.c), which reads the kernel's ELF notes.
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
#include "util/util.h"
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

/* Model: "0", or [digits][.digits] then exactly one unit of ns/us/ms/s, the value in range. */
static void check_duration(const char *s)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };
	static const double scale[] = { 1, 1e3, 1e6, 1e9 };
	uint64_t out = UINT64_MAX;
	size_t len = strlen(s);
	int ok = !strcmp(s, "0");
	double want = 0;

	for (int u = 0; !ok && u < 4; u++) {
		size_t ulen = strlen(units[u]), dots = 0, digits = 0;

		if (len <= ulen || strcmp(s + len - ulen, units[u]))
			continue;
		for (size_t i = 0; i < len - ulen; i++) {
			dots += s[i] == '.';
			digits += s[i] >= '0' && s[i] <= '9';
		}
		if (dots + digits != len - ulen || dots > 1 || !digits || len - ulen >= 64)
			break;
		want = strtod(s, NULL) * scale[u];
		ok = want <= 1e15;
		break;
	}
	if (parse_duration_ns(s, 1000000000000000ULL, &out) == 0) {
		CHECK(ok);
		CHECK(out == (uint64_t)(want + 0.5));
	} else {
		CHECK(!ok && out == UINT64_MAX);
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

/*
 * Model of notes_build_id: walk the notes in 64-bit arithmetic, where no size read from the
 * input can wrap, and give the offset and length of the first GNU build ID, or -1.
 */
static int64_t model_build_id(const uint8_t *p, uint64_t len, uint64_t *idlen)
{
	for (uint64_t off = 0; off + 12 <= len;) {
		uint32_t namesz, descsz, type;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		uint64_t name = off + 12, desc = name + (((uint64_t)namesz + 3) / 4) * 4;
		uint64_t next = desc + (((uint64_t)descsz + 3) / 4) * 4;

		if (desc > len || next > len)
			return -1;
		if (type == 3 && namesz == 4 && !memcmp(p + name, "GNU", 4)) {
			*idlen = descsz;
			return desc;
		}
		off = next;
	}
	return -1;
}

static void check_notes(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so that AddressSanitizer sees any read past the end. */
	unsigned char *notes = malloc(size ? size : 1);
	const unsigned char *id = NULL;
	uint64_t want_len = 0;

	if (!notes)
		return;
	memcpy(notes, data, size);
	size_t got = notes_build_id(notes, size, &id);
	int64_t want = model_build_id(notes, size, &want_len);

	if (want < 0 || want_len == 0)
		CHECK(got == 0);
	else
		CHECK(got == want_len && id == notes + want);
	free(notes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size > 4096)
		return 0;
	check_notes(data, size);
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
	check_duration(s);
	check_listen(s);
	free(s);
	return 0;
}
