// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the JSON report's counts (user/report/json_cells.c, add_u64): each value
 * printed is its decimal digits, over all 64 bits (a double would round 2^53 + 1), the
 * small ones from a table of digits that cJSON_Delete must leave alone (glibc aborts a
 * free of them). tests/test_outputs.py runs it; it prints one line per failed check, and
 * "all passed" with exit 0.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "report/json_cells.h"

static int failures;

static void check_one(uint64_t v)
{
	cJSON *obj = cJSON_CreateObject();
	char want[64], *text;

	add_u64(obj, "n", v);
	snprintf(want, sizeof(want), "{\"n\":%" PRIu64 "}", v);
	text = cJSON_PrintUnformatted(obj);
	if (!text || strcmp(text, want)) {
		printf("FAIL %" PRIu64 ": got %s, want %s\n", v, text ? text : "(null)", want);
		failures++;
	}
	/* Parsed back as JSON: a number (cJSON keeps it as a double: compared as one). */
	cJSON *back = text ? cJSON_Parse(text) : NULL;
	cJSON *n = back ? cJSON_GetObjectItem(back, "n") : NULL;

	if (!cJSON_IsNumber(n) || n->valuedouble != (double)v) {
		printf("FAIL %" PRIu64 ": not read back as a number\n", v);
		failures++;
	}
	cJSON_Delete(back);
	cJSON_free(text);
	cJSON_Delete(obj);
}

int main(void)
{
	static const uint64_t values[] = { 0, 1, 9, 10, 42, 99, 100, 101, 999, 1000, 65535,
					   2147483647ULL, 2147483648ULL, 4026531832ULL,
					   (1ULL << 53) + 1, 18446744073709551615ULL };
	cJSON *many = cJSON_CreateObject();
	char *text;
	size_t len;

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		check_one(values[i]);
	for (uint64_t v = 0; v < 1000; v++)
		check_one(v);
	/* Many in one object, deleted together: the table's digits are not freed. */
	for (int i = 0; i < 10000; i++)
		add_u64(many, "k", (uint64_t)i % 150);
	text = cJSON_PrintUnformatted(many);
	len = text ? strlen(text) : 0;
	if (!text || text[0] != '{' || text[len - 1] != '}') {
		printf("FAIL: an object of 10,000 counts did not print\n");
		failures++;
	}
	cJSON_free(text);
	cJSON_Delete(many);
	/* Fractions (add_double): libcjson's text of the same number, one after another the
	 * same value kept or not (-0 and 0 differ only in their sign). */
	static const double fractions[] = { 0.5, 0.5, 5e-05, 4.9992501124831273e-05, 1.0 / 3,
					    1.0 / 3, 0, -0.0, -0.0, 0, 1, 1e300, 3e9, -7 };

	for (size_t i = 0; i < sizeof(fractions) / sizeof(fractions[0]); i++) {
		cJSON *mine = cJSON_CreateObject(), *ref = cJSON_CreateObject();
		char *a, *b;

		add_double(mine, "share", fractions[i]);
		cJSON_AddNumberToObject(ref, "share", fractions[i]);
		a = cJSON_PrintUnformatted(mine);
		b = cJSON_PrintUnformatted(ref);
		if (!a || !b || strcmp(a, b)) {
			printf("FAIL fraction %zu: got %s, want %s\n", i, a ? a : "(null)",
			       b ? b : "(null)");
			failures++;
		}
		cJSON_free(a);
		cJSON_free(b);
		cJSON_Delete(mine);
		cJSON_Delete(ref);
	}
	printf("%s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
