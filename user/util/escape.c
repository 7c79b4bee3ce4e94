// SPDX-License-Identifier: GPL-2.0
/* Names made safe to print, one rule per output kind (see escape.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"

/* The output: pieces are whole or not at all; past the first that does not fit, none. */
struct sink {
	char *out;
	size_t cap, len, total;
	bool stopped;
	bool json_quote; /* each piece written as a JSON string's contents */
};

static void put_raw(struct sink *k, const char *p, size_t n)
{
	if (!k->stopped && k->len + n < k->cap) {
		memcpy(k->out + k->len, p, n);
		k->len += n;
	} else {
		k->stopped = true;
	}
	k->total += n;
}

/* A piece (at most 16 bytes) as cJSON's print_string_ptr writes it. */
static void put_json_quoted(struct sink *k, const char *p, size_t n)
{
	static const char named[] = { ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r',
				      ['\t'] = 't', ['"'] = '"', ['\\'] = '\\' };
	static const char hex[] = "0123456789abcdef";
	char q[16 * 6];
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];

		if (c < sizeof(named) && named[c]) {
			q[m++] = '\\';
			q[m++] = named[c];
		} else if (c < 0x20) {
			memcpy(q + m, "\\u00", 4);
			q[m + 4] = hex[c >> 4];
			q[m + 5] = hex[c & 15];
			m += 6;
		} else {
			q[m++] = c;
		}
	}
	put_raw(k, q, m);
}

static void put(struct sink *k, const char *p, size_t n)
{
	if (k->json_quote)
		put_json_quoted(k, p, n);
	else
		put_raw(k, p, n);
}

static size_t finish(struct sink *k)
{
	if (k->cap)
		k->out[k->len] = '\0';
	return k->total;
}

/* Bytes as \xHH each (\\xHH in a Prometheus value: its backslash escaped), in one piece. */
static void put_hex(struct sink *k, const unsigned char *p, size_t n, bool prom)
{
	static const char hex[] = "0123456789abcdef";
	char e[4 * 5];
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		e[m++] = '\\';
		if (prom)
			e[m++] = '\\';
		e[m++] = 'x';
		e[m++] = hex[p[i] >> 4];
		e[m++] = hex[p[i] & 15];
	}
	put(k, e, m);
}

/*
 * The valid UTF-8 character at s (RFC 3629: the shortest form, no surrogate, at most
 * U+10FFFF): its length and code point; 0 when s does not start one (the NUL that ends
 * the string is never a continuation byte, so nothing is read past it).
 */
static size_t utf8_char(const unsigned char *s, uint32_t *cp)
{
	uint32_t v, min;
	size_t n;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, v = s[0] & 0x1f, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, v = s[0] & 0x0f, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, v = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

/* A character a terminal or a viewer acts on (escape.h). */
static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
	       cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

enum value_kind { V_JSON, V_PROM, V_FOLDED };

static size_t esc_value(struct sink *k, const char *s, enum value_kind kind)
{
	const unsigned char *p = (const unsigned char *)s;
	bool prom = kind == V_PROM;

	while (*p) {
		uint32_t cp;
		size_t n = utf8_char(p, &cp);

		if (!n)
			n = 1, put_hex(k, p, 1, prom);
		else if ((cp == '\\' && p[1] == 'x') ||
			 (kind != V_JSON && (is_control(cp) || (kind == V_FOLDED && cp == ';'))))
			put_hex(k, p, n, prom);
		else if (prom && (cp == '\\' || cp == '"'))
			put(k, cp == '\\' ? "\\\\" : "\\\"", 2);
		else
			put(k, (const char *)p, n);
		p += n;
	}
	return finish(k);
}

size_t esc_json(char *out, size_t cap, const char *s)
{
	struct sink k = { .out = out, .cap = cap };

	return esc_value(&k, s, V_JSON);
}

size_t esc_json_quoted(char *out, size_t cap, const char *s)
{
	struct sink k = { .out = out, .cap = cap };

	put_raw(&k, "\"", 1);
	k.json_quote = true;
	esc_value(&k, s, V_JSON);
	k.json_quote = false;
	put_raw(&k, "\"", 1);
	return finish(&k);
}

size_t esc_prom(char *out, size_t cap, const char *s)
{
	struct sink k = { .out = out, .cap = cap };

	return esc_value(&k, s, V_PROM);
}

size_t esc_folded(char *out, size_t cap, const char *s)
{
	struct sink k = { .out = out, .cap = cap };

	return esc_value(&k, s, V_FOLDED);
}

/* A control byte as strace writes it: by name, else in octal (\33; \033 before a digit). */
static void put_c0(struct sink *k, unsigned char c, unsigned char next)
{
	static const char named[] = { ['\t'] = 't', ['\n'] = 'n', ['\v'] = 'v', ['\f'] = 'f',
				      ['\r'] = 'r' };
	char e[5] = { '\\' };
	size_t m = 1;

	if (c < sizeof(named) && named[c]) {
		e[m++] = named[c];
	} else {
		bool full = next >= '0' && next <= '7';

		if (full || c >= 0100)
			e[m++] = '0' + (c >> 6);
		if (full || c >= 010)
			e[m++] = '0' + ((c >> 3) & 7);
		e[m++] = '0' + (c & 7);
	}
	put(k, e, m);
}

size_t esc_text(char *out, size_t cap, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	struct sink k = { .out = out, .cap = cap };

	while (*p) {
		uint32_t cp;
		size_t n = utf8_char(p, &cp);

		if (!n)
			n = 1, put_hex(&k, p, 1, false);
		else if (cp == '\\')
			put(&k, "\\\\", 2);
		else if (cp < 0x20 || cp == 0x7f)
			put_c0(&k, cp, p[1]);
		else if (is_control(cp))
			put_hex(&k, p, n, false);
		else
			put(&k, (const char *)p, n);
		p += n;
	}
	return finish(&k);
}

char *esc_dup(esc_fn *esc, const char *s)
{
	size_t n = esc(NULL, 0, s);
	char *out = malloc(n + 1);

	if (out)
		esc(out, n + 1, s);
	return out;
}

int esc_fputs(esc_fn *esc, const char *s, FILE *f)
{
	char buf[512], *big;
	int err;

	if (esc(buf, sizeof(buf), s) < sizeof(buf))
		return fputs(buf, f);
	big = esc_dup(esc, s);
	if (!big)
		return EOF;
	err = fputs(big, f);
	free(big);
	return err;
}

/* Columns of a character on a terminal (after Markus Kuhn's wcwidth, abridged). */
static int char_width(uint32_t cp)
{
	static const uint32_t zero[][2] = {
		{ 0x0300, 0x036f }, { 0x0483, 0x0489 }, { 0x0591, 0x05bd }, { 0x1ab0, 0x1aff },
		{ 0x1dc0, 0x1dff }, { 0x200b, 0x200f }, { 0x20d0, 0x20ff }, { 0xfe00, 0xfe0f },
		{ 0xfe20, 0xfe2f }, { 0xfeff, 0xfeff },
	};
	static const uint32_t wide[][2] = {
		{ 0x1100, 0x115f }, { 0x2329, 0x232a }, { 0x2e80, 0x303e }, { 0x3041, 0x33ff },
		{ 0x3400, 0x4dbf }, { 0x4e00, 0x9fff }, { 0xa000, 0xa4cf }, { 0xac00, 0xd7a3 },
		{ 0xf900, 0xfaff }, { 0xfe10, 0xfe19 }, { 0xfe30, 0xfe6f }, { 0xff00, 0xff60 },
		{ 0xffe0, 0xffe6 }, { 0x1f300, 0x1f64f }, { 0x1f900, 0x1f9ff }, { 0x20000, 0x2fffd },
		{ 0x30000, 0x3fffd },
	};

	for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++)
		if (cp >= zero[i][0] && cp <= zero[i][1])
			return 0;
	for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
		if (cp >= wide[i][0] && cp <= wide[i][1])
			return 2;
	return 1;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

size_t esc_text_unit(const char *s, int *columns)
{
	uint32_t cp;
	size_t n;

	if (!*s) {
		*columns = 0;
		return 0;
	}
	if (s[0] == '\\') {
		if (s[1] == 'x' && is_hex(s[2]) && is_hex(s[3]))
			n = 4;
		else if (s[1] >= '0' && s[1] <= '7')
			for (n = 2; n < 4 && s[n] >= '0' && s[n] <= '7'; n++)
				;
		else
			n = s[1] ? 2 : 1;
		*columns = n;
		return n;
	}
	n = utf8_char((const unsigned char *)s, &cp);
	*columns = n ? char_width(cp) : 1;
	return n ? n : 1;
}
