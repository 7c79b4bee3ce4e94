// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON report's printer (json_text.h). libcjson's own (1.7.15) asks for room before every
 * piece it writes and measures each piece again with strlen once written; printing a
 * 20,000-process report's ~10 million nodes kept a thread busy ~0.8 s, a fifth of it in
 * strlen (docs/performance.md, "The report of a large run"). This one writes the same text,
 * tested byte for byte against cJSON_Print (tests/c/json_text_test.c): a node's fixed parts
 * in one check of room, a string measured once.
 */
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_text.h"
#include "util/vec.h"

/* What follows the backslash of an escaped byte: 'u' for \u00XX, 0 for none. */
static const unsigned char escaped[256] = {
	['"'] = '"',  ['\\'] = '\\', ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r',
	['\t'] = 't', [0x01] = 'u',  [0x02] = 'u', [0x03] = 'u', [0x04] = 'u', [0x05] = 'u',
	[0x06] = 'u', [0x07] = 'u',  [0x0b] = 'u', [0x0e] = 'u', [0x0f] = 'u', [0x10] = 'u',
	[0x11] = 'u', [0x12] = 'u',  [0x13] = 'u', [0x14] = 'u', [0x15] = 'u', [0x16] = 'u',
	[0x17] = 'u', [0x18] = 'u',  [0x19] = 'u', [0x1a] = 'u', [0x1b] = 'u', [0x1c] = 'u',
	[0x1d] = 'u', [0x1e] = 'u',  [0x1f] = 'u',
};

/* Pieces up to SHORT bytes are copied in one pass, room asked for once before it. */
#define SHORT 64

static bool grow(struct json_text *t, size_t n)
{
	size_t need = t->len + n + 1, twice = 2 * t->cap;

	if (t->max && need > t->max)
		return false;
	if (t->max && twice > t->max)
		twice = t->max;
	return !vec_reserve(&t->buf, &t->cap, need < twice ? twice : need, 1);
}

/* Room for n more bytes and the NUL after them. */
static inline bool reserve(struct json_text *t, size_t n)
{
	return t->len + n < t->cap || grow(t, n);
}

static bool put(struct json_text *t, const char *s, size_t n)
{
	if (!reserve(t, n))
		return false;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	return true;
}

/* A string in quotes, measured first: one with bytes to escape, or longer than SHORT. */
static bool put_string_measured(struct json_text *t, const unsigned char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0, extra = 0;
	char *o;

	for (; s[n]; n++)
		if (escaped[s[n]])
			extra += escaped[s[n]] == 'u' ? 5 : 1;
	if (!reserve(t, n + extra + 2))
		return false;
	o = t->buf + t->len;
	t->len += n + extra + 2;
	*o++ = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i], e = escaped[c];

		if (!e) {
			*o++ = (char)c;
			continue;
		}
		*o++ = '\\';
		*o++ = (char)e;
		if (e == 'u') {
			memcpy(o, "00", 2);
			o[2] = hex[c >> 4];
			o[3] = hex[c & 15];
			o += 4;
		}
	}
	*o = '"';
	return true;
}

/* A string in quotes, escaped as libcjson escapes (a NULL one as ""). */
static inline bool put_string(struct json_text *t, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	char *o;
	size_t i = 0;

	if (!reserve(t, SHORT + 2))
		return false;
	o = t->buf + t->len + 1;
	for (; i < SHORT && s[i] && !escaped[s[i]]; i++)
		o[i] = (char)s[i];
	if (s[i])
		return put_string_measured(t, s);
	o[-1] = '"';
	o[i] = '"';
	t->len += i + 2;
	return true;
}

/* A raw item's text as it is. */
static inline bool put_raw(struct json_text *t, const char *s)
{
	char *o;
	size_t i = 0;

	if (!s || !reserve(t, SHORT))
		return false;
	o = t->buf + t->len;
	for (; i < SHORT && s[i]; i++)
		o[i] = s[i];
	t->len += i;
	return !s[i] || put(t, s + i, strlen(s + i));
}

/* n tabs */
static inline bool indent(struct json_text *t, size_t n)
{
	if (!reserve(t, n))
		return false;
	memset(t->buf + t->len, '\t', n);
	t->len += n;
	return true;
}

static bool near(double a, double b)
{
	double most = fabs(a) > fabs(b) ? fabs(a) : fabs(b);

	return fabs(a - b) <= most * DBL_EPSILON;
}

size_t json_u64_text(uint64_t v, char out[21])
{
	char digits[20], *p = digits + sizeof(digits);
	size_t n;

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	n = (size_t)(digits + sizeof(digits) - p);
	memcpy(out, p, n);
	out[n] = '\0';
	return n;
}

int json_number_text(double d, char num[32])
{
	int n;

	if (isnan(d) || isinf(d))
		return snprintf(num, 32, "null");
	if (fabs(d) < 1e15 && d == (double)(long long)d && (d != 0 || !signbit(d))) {
		/* a whole number: "%1.15g" gives its digits; written here without printf */
		n = d < 0;
		num[0] = '-';
		return n + (int)json_u64_text((uint64_t)fabs(d), num + n);
	}
	n = snprintf(num, 32, "%1.15g", d);
	if (!near(strtod(num, NULL), d))
		n = snprintf(num, 32, "%1.17g", d);

	char point = localeconv()->decimal_point[0];

	for (int i = 0; point != '.' && i < n; i++)
		if (num[i] == point)
			num[i] = '.';
	return n > 0 && n < 26 ? n : -1;
}

static bool put_number(struct json_text *t, const cJSON *item)
{
	char num[32];
	int n = json_number_text(item->valuedouble, num);

	return n > 0 && put(t, num, (size_t)n);
}

static bool put_value(struct json_text *t, const cJSON *item, size_t depth);

static bool put_array(struct json_text *t, const cJSON *item, size_t depth)
{
	if (!put(t, "[", 1))
		return false;
	for (const cJSON *c = item->child; c; c = c->next)
		if (!put_value(t, c, depth + 1) || (c->next && !put(t, ", ", 2)))
			return false;
	return put(t, "]", 1);
}

static bool put_object(struct json_text *t, const cJSON *item, size_t depth)
{
	if (!put(t, "{\n", 2))
		return false;
	for (const cJSON *c = item->child; c; c = c->next) {
		if (!indent(t, depth + 1) || !put_string(t, c->string) || !put(t, ":\t", 2) ||
		    !put_value(t, c, depth + 1) || !reserve(t, 2))
			return false;
		if (c->next)
			t->buf[t->len++] = ',';
		t->buf[t->len++] = '\n';
	}
	return indent(t, depth) && put(t, "}", 1);
}

static bool put_value(struct json_text *t, const cJSON *item, size_t depth)
{
	switch (item->type & 0xff) {
	case cJSON_NULL:
		return put(t, "null", 4);
	case cJSON_False:
		return put(t, "false", 5);
	case cJSON_True:
		return put(t, "true", 4);
	case cJSON_Number:
		return put_number(t, item);
	case cJSON_Raw:
		return put_raw(t, item->valuestring);
	case cJSON_String:
		return put_string(t, item->valuestring);
	case cJSON_Array:
		return put_array(t, item, depth);
	case cJSON_Object:
		return put_object(t, item, depth);
	default:
		return false;
	}
}

int json_text_print(struct json_text *t, const cJSON *item)
{
	t->len = 0;
	if (!item || !put_value(t, item, 0))
		return -1;
	t->buf[t->len] = '\0';
	return 0;
}
