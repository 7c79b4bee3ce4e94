// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the escaping of names (user/util/escape.c) and the text cells that cut
 * them (user/report/cells.c): any bytes in, every output kind checked against models written
 * independently here, so the fuzzer finds wrong answers, not only crashes:
 *
 * - UTF-8 validity by the table of well-formed byte sequences (Unicode 15, table 3-7);
 * - each kind read back by its own decoder (the value rule's \xHH, the Prometheus text
 *   format's \\ and \" before it, C's string escapes for text) gives the input bytes again;
 * - nothing a kind must not hold: controls, ';' in a folded frame, a raw '"' or newline in a
 *   label value, a byte < 0x20 in text;
 * - a name that needs nothing escaped comes out as it went in;
 * - esc_json_quoted writes what cJSON writes for esc_json's value, and cJSON reads it back;
 * - the report's printer (user/report/json_text.c) writes what cJSON_Print writes for any
 *   bytes as a key and as a value;
 * - a short buffer gets a prefix of the whole output that ends between two escapes or
 *   characters, and the whole length is returned;
 * - name_cell and name_head fit their width, and a cut one is the name's start, "…" and its
 *   end, cut between escapes and characters (each part reads back as the name's).
 *
 * Build and run: `make fuzz` (FUZZ_SECONDS=60 by default, for each target).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "util/escape.h"
#include "report/cells.h"
#include "report/json_text.h"

#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "model disagrees: %s\n", #cond);                 \
			abort();                                                         \
		}                                                                        \
	} while (0)

/* ---- UTF-8, by the table of well-formed byte sequences ---- */

static const struct {
	uint8_t lo[4], hi[4];
	int n;
} well_formed[] = {
	{ { 0x00 }, { 0x7f }, 1 },
	{ { 0xc2, 0x80 }, { 0xdf, 0xbf }, 2 },
	{ { 0xe0, 0xa0, 0x80 }, { 0xe0, 0xbf, 0xbf }, 3 },
	{ { 0xe1, 0x80, 0x80 }, { 0xec, 0xbf, 0xbf }, 3 },
	{ { 0xed, 0x80, 0x80 }, { 0xed, 0x9f, 0xbf }, 3 },
	{ { 0xee, 0x80, 0x80 }, { 0xef, 0xbf, 0xbf }, 3 },
	{ { 0xf0, 0x90, 0x80, 0x80 }, { 0xf0, 0xbf, 0xbf, 0xbf }, 4 },
	{ { 0xf1, 0x80, 0x80, 0x80 }, { 0xf3, 0xbf, 0xbf, 0xbf }, 4 },
	{ { 0xf4, 0x80, 0x80, 0x80 }, { 0xf4, 0x8f, 0xbf, 0xbf }, 4 },
};

/* Length of the well-formed sequence at s (n bytes left), and its code point; 0: none. */
static int wf_char(const uint8_t *s, size_t n, uint32_t *cp)
{
	for (size_t r = 0; r < sizeof(well_formed) / sizeof(well_formed[0]); r++) {
		int k = well_formed[r].n, i;

		for (i = 0; i < k && (size_t)i < n; i++)
			if (s[i] < well_formed[r].lo[i] || s[i] > well_formed[r].hi[i])
				break;
		if (i < k)
			continue;
		*cp = k == 1 ? s[0] : s[0] & (0xff >> (k + 1));
		for (i = 1; i < k; i++)
			*cp = *cp << 6 | (s[i] & 0x3f);
		return k;
	}
	return 0;
}

static bool valid_utf8(const uint8_t *s, size_t n)
{
	uint32_t cp;

	for (size_t i = 0; i < n;) {
		int k = wf_char(s + i, n - i, &cp);

		if (!k)
			return false;
		i += k;
	}
	return true;
}

/* The characters escape.h calls controls, as listed in docs/json.md. */
static bool control(uint32_t cp)
{
	static const uint32_t ranges[][2] = {
		{ 0x00, 0x1f }, { 0x7f, 0x9f }, { 0x061c, 0x061c }, { 0x200e, 0x200f },
		{ 0x2028, 0x2029 }, { 0x202a, 0x202e }, { 0x2066, 0x2069 },
	};

	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (cp >= ranges[i][0] && cp <= ranges[i][1])
			return true;
	return false;
}

static bool any_char(const uint8_t *s, size_t n, bool (*pred)(uint32_t))
{
	uint32_t cp;

	for (size_t i = 0; i < n;) {
		int k = wf_char(s + i, n - i, &cp);

		if (k && pred(cp))
			return true;
		i += k ? k : 1;
	}
	return false;
}

/* ---- decoders ---- */

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The value rule read back: each \xHH is its byte, the rest as it is. */
static size_t value_decode(const char *e, size_t n, uint8_t *out)
{
	size_t m = 0;

	for (size_t i = 0; i < n;) {
		if (i + 3 < n && e[i] == '\\' && e[i + 1] == 'x' && hexval(e[i + 2]) >= 0 &&
		    hexval(e[i + 3]) >= 0) {
			out[m++] = hexval(e[i + 2]) * 16 + hexval(e[i + 3]);
			i += 4;
		} else {
			out[m++] = e[i++];
		}
	}
	return m;
}

/* A Prometheus label value's text-format escapes undone; -1 for what the format forbids. */
static long prom_unescape(const char *e, size_t n, char *out)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (e[i] == '"' || e[i] == '\n')
			return -1;
		if (e[i] != '\\') {
			out[m++] = e[i];
			continue;
		}
		if (++i == n || (e[i] != '\\' && e[i] != '"' && e[i] != 'n'))
			return -1;
		out[m++] = e[i] == 'n' ? '\n' : e[i];
	}
	return m;
}

/* C's string escapes (as strace writes them); -1 for a backslash that starts none. */
static long text_decode(const char *e, size_t n, uint8_t *out)
{
	static const char named[] = "t\tn\nv\vf\fr\r\\\\";
	size_t m = 0;

	for (size_t i = 0; i < n;) {
		const char *nm;
		int v = 0, d = 0;

		if (e[i] != '\\') {
			out[m++] = e[i++];
			continue;
		}
		if (++i == n)
			return -1;
		if (e[i] == 'x') {
			if (i + 2 >= n || hexval(e[i + 1]) < 0 || hexval(e[i + 2]) < 0)
				return -1;
			out[m++] = hexval(e[i + 1]) * 16 + hexval(e[i + 2]);
			i += 3;
		} else if (e[i] >= '0' && e[i] <= '7') {
			for (; d < 3 && i < n && e[i] >= '0' && e[i] <= '7'; d++)
				v = v * 8 + e[i++] - '0';
			out[m++] = v;
		} else if (e[i] && (nm = strchr(named, e[i])) && (nm - named) % 2 == 0) {
			out[m++] = nm[1];
			i++;
		} else {
			return -1;
		}
	}
	return m;
}

/* ---- the checks ---- */

struct name {
	const char *s;
	size_t n;
	bool plain; /* valid UTF-8 with no "\x" */
};

/* A prefix of the output (from a buffer of cap bytes) is whole escapes and characters. */
static void check_prefixes(esc_fn *esc, const struct name *in, const char *full, size_t len,
			   long (*decode)(const char *, size_t, uint8_t *), const uint8_t *seed)
{
	size_t caps[] = { 0, 1, 2, len, len + 1, seed[0] % (len + 2), seed[1] * 7 % (len + 2),
			  (seed[2] * 256 + seed[3]) % (len + 2) };
	char *buf = malloc(len + 2);
	uint8_t *back = malloc(len + 1);

	CHECK(buf && back);
	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		size_t got = esc(caps[c] ? buf : NULL, caps[c], in->s), plen;
		long m;

		CHECK(got == len);
		if (!caps[c])
			continue;
		plen = strlen(buf);
		CHECK(plen < caps[c] && !memcmp(buf, full, plen));
		CHECK(caps[c] <= len || plen == len);
		CHECK(valid_utf8((const uint8_t *)buf, plen));
		if (!decode)
			continue;
		m = decode(buf, plen, back);
		CHECK(m >= 0 && (size_t)m <= in->n && !memcmp(back, in->s, m));
	}
	free(buf);
	free(back);
}

static long value_decoder(const char *e, size_t n, uint8_t *out)
{
	return value_decode(e, n, out);
}

static long prom_decoder(const char *e, size_t n, uint8_t *out)
{
	char *v = malloc(n + 1);
	long m = v ? prom_unescape(e, n, v) : -1;

	if (m >= 0)
		m = value_decode(v, m, out);
	free(v);
	return m;
}

/* One kind: its whole output, read back, and its prefixes; returns the output (malloc'ed). */
static char *check_kind(esc_fn *esc, const struct name *in,
			long (*decode)(const char *, size_t, uint8_t *), const uint8_t *seed)
{
	char *full = esc_dup(esc, in->s);
	size_t len;
	uint8_t *back;

	CHECK(full);
	len = strlen(full);
	CHECK(valid_utf8((const uint8_t *)full, len));
	back = malloc(len + 1);
	CHECK(back);
	CHECK(decode(full, len, back) == (long)in->n && !memcmp(back, in->s, in->n));
	free(back);
	check_prefixes(esc, in, full, len, decode, seed);
	return full;
}

static bool is_c0_or_del(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f;
}

static void check_json(const struct name *in, const uint8_t *seed)
{
	char *value = check_kind(esc_json, in, value_decoder, seed), *quoted, *printed;
	cJSON *str, *parsed;

	if (in->plain)
		CHECK(!strcmp(value, in->s));
	quoted = esc_dup(esc_json_quoted, in->s);
	str = cJSON_CreateString(value);
	printed = str ? cJSON_PrintUnformatted(str) : NULL;
	CHECK(quoted && printed && !strcmp(quoted, printed));
	parsed = cJSON_Parse(quoted);
	CHECK(parsed && cJSON_IsString(parsed) && !strcmp(parsed->valuestring, value));
	check_prefixes(esc_json_quoted, in, quoted, strlen(quoted), NULL, seed);
	cJSON_Delete(parsed);
	cJSON_Delete(str);
	cJSON_free(printed);
	free(quoted);
	free(value);

	/* The report's printer, any bytes as a key and as a value (not escaped first). */
	static struct json_text text;
	cJSON *obj = cJSON_CreateObject();

	cJSON_AddStringToObject(obj, in->s, in->s);
	cJSON_AddItemToObject(obj, "in an array", cJSON_CreateStringArray(
							    (const char *const[]){ in->s, in->s }, 2));
	printed = cJSON_Print(obj);
	CHECK(printed && !json_text_print(&text, obj) && !strcmp(text.buf, printed));
	cJSON_free(printed);
	cJSON_Delete(obj);
}

static void check_prom(const struct name *in, const uint8_t *seed)
{
	char *e = check_kind(esc_prom, in, prom_decoder, seed), *v = malloc(strlen(e) + 1);
	long n;

	CHECK(v);
	n = prom_unescape(e, strlen(e), v);
	CHECK(n >= 0 && !any_char((const uint8_t *)v, n, control));
	if (in->plain && !any_char((const uint8_t *)in->s, in->n, control) && !strpbrk(in->s, "\\\""))
		CHECK(!strcmp(e, in->s));
	free(v);
	free(e);
}

static void check_folded(const struct name *in, const uint8_t *seed)
{
	char *e = check_kind(esc_folded, in, value_decoder, seed);

	CHECK(!strchr(e, ';') && !any_char((const uint8_t *)e, strlen(e), control));
	if (in->plain && !any_char((const uint8_t *)in->s, in->n, control) && !strchr(in->s, ';'))
		CHECK(!strcmp(e, in->s));
	free(e);
}

static void check_text(const struct name *in, const uint8_t *seed)
{
	char *e = check_kind(esc_text, in, text_decode, seed);

	CHECK(!any_char((const uint8_t *)e, strlen(e), control));
	if (valid_utf8((const uint8_t *)in->s, in->n) && !strchr(in->s, '\\') &&
	    !any_char((const uint8_t *)in->s, in->n, control))
		CHECK(!strcmp(e, in->s));
	free(e);
}

/* t (n bytes) is whole units of whole: read back, it is the start (or the end) of the name. */
static bool reads_as(const char *t, size_t n, const char *whole, const struct name *in,
		     bool at_end)
{
	size_t wn = strlen(whole);
	uint8_t *back = malloc(n + 1);
	long m;
	bool ok;

	CHECK(back);
	ok = n <= wn && !memcmp(t, at_end ? whole + wn - n : whole, n) &&
	     (m = text_decode(t, n, back)) >= 0 && (size_t)m <= in->n &&
	     !memcmp(back, at_end ? in->s + in->n - m : in->s, m);
	free(back);
	return ok;
}

/*
 * A cut cell is whole's start, "…", and whole's end (either may be empty), each cut between
 * two units: it reads back as the name's start and end. Some "…" of the cell is the cut's.
 */
static void check_cut(const char *cell, const char *whole, const struct name *in)
{
	size_t el = strlen(ELLIPSIS);

	for (const char *e = strstr(cell, ELLIPSIS); e; e = strstr(e + 1, ELLIPSIS))
		if (reads_as(cell, e - cell, whole, in, false) &&
		    reads_as(e + el, strlen(e + el), whole, in, true))
			return;
	CHECK(!"a cut cell is the name's start, an ellipsis, and its end");
}

static void check_cells(const struct name *in, const uint8_t *seed)
{
	static char cell[NAME_TEXT_MAX];
	char *whole = esc_dup(esc_text, in->s);
	int widths[] = { 1, 2, 3, 22, 60, 95, 1 + seed[4] % 40 };

	CHECK(whole);
	CHECK(!strcmp(name_cell(in->s, 0, cell, sizeof(cell)), whole));
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		int w = widths[i];

		bool fits = text_width(whole) <= w;

		name_cell(in->s, w, cell, sizeof(cell));
		CHECK(text_width(cell) <= w);
		if (fits)
			CHECK(!strcmp(cell, whole));
		else
			check_cut(cell, whole, in);
		name_head(in->s, w, cell, sizeof(cell));
		CHECK(text_width(cell) <= w);
		if (fits)
			CHECK(!strcmp(cell, whole));
		else
			check_cut(cell, whole, in);
	}
	free(whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t seed[5] = { 0 };
	struct name in;
	char *s;
	size_t n = 0;

	if (size > 4096)
		return 0;
	memcpy(seed, data, size < sizeof(seed) ? size : sizeof(seed));
	s = malloc(size + 1);
	if (!s)
		return 0;
	for (size_t i = 0; i < size; i++) /* names never hold a NUL */
		if (data[i])
			s[n++] = data[i];
	s[n] = '\0';
	in = (struct name){ s, n, valid_utf8((const uint8_t *)s, n) && !strstr(s, "\\x") };
	check_json(&in, seed);
	check_prom(&in, seed);
	check_folded(&in, seed);
	check_text(&in, seed);
	check_cells(&in, seed);
	free(s);
	return 0;
}
