/* SPDX-License-Identifier: GPL-2.0 */
/* A cJSON tree's text, formatted as cJSON_Print formats it, printed without libcjson's cost. */
#ifndef IOTRACE_JSON_TEXT_H
#define IOTRACE_JSON_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

/* A text buffer kept from one print to the next: grown as needed, up to max bytes. */
struct json_text {
	char *buf;
	size_t cap, len, max;
};

/*
 * item's text into t->buf (NUL-terminated; t->len its length), byte for byte what
 * cJSON_Print(item) gives: a member a line, indented by tabs, arrays on one line. -1 when a
 * node cannot be printed (an invalid type, a raw item without text) or the text would pass
 * t->max (0: no bound) or memory ran out.
 */
int json_text_print(struct json_text *t, const cJSON *item);

/* v's decimal digits into out, NUL-terminated; their count. */
size_t json_u64_text(uint64_t v, char out[21]);
/*
 * A number's text as libcjson prints it: null for NaN and the infinities, else 15
 * significant digits, or 17 when 15 do not read back (nearly) the same, with '.' whatever
 * the locale (-0 stays -0). Its length, or -1.
 */
int json_number_text(double d, char num[32]);

#endif
