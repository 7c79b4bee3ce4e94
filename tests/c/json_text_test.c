// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the JSON report's printer (user/report/json_text.c): for every tree, its text
 * must be byte for byte cJSON_Print's, the reference. Trees made here (every node type, every
 * byte in strings and keys, numbers near the edges of each way libcjson prints them), random
 * trees from a fixed seed, and the trees of any JSON files named on the command line (a real
 * report: tests/test_outputs.py). One line per failed check, then "all passed" with exit 0.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "report/json_text.h"
#include "util/vec.h"

static int failures;
static struct json_text text;

static void check(const char *what, const cJSON *tree)
{
	char *want = cJSON_Print(tree);
	int err = json_text_print(&text, tree);

	if (!want || err || strcmp(text.buf, want) || text.len != strlen(want)) {
		size_t at = 0;

		while (want && !err && want[at] && want[at] == text.buf[at])
			at++;
		printf("FAIL %s: %s at byte %zu\n", what, err ? "not printed" : "texts differ", at);
		failures++;
	}
	free(want);
}

static cJSON *raw_ref(const char *s)
{
	cJSON *r = cJSON_CreateNull();

	r->type = cJSON_Raw | cJSON_IsReference;
	r->valuestring = (char *)s;
	return r;
}

static void handmade(void)
{
	static const double numbers[] = { 0, -0.0, 1, -1, 2147483647.0, -2147483648.0,
					  2147483648.0, -2147483649.0, 3e9, 0.5, 0.1, 1.0 / 3,
					  5e-05, 4.9992501124831273e-05, 1e300, -1e-300, 1e21,
					  123456789012345678.0, DBL_MAX, DBL_MIN, 4.9e-324,
					  NAN, INFINITY, -INFINITY };
	cJSON *root = cJSON_CreateObject(), *nums = cJSON_CreateArray();
	char bytes[256], key[8];

	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		cJSON *one = cJSON_CreateNumber(numbers[i]);

		snprintf(key, sizeof(key), "%zu", i);
		check(key, one);
		cJSON_Delete(one);
		cJSON_AddItemToArray(nums, cJSON_CreateNumber(numbers[i]));
	}
	cJSON_AddItemToObject(root, "numbers", nums);
	for (int i = 1; i < 256; i++)
		bytes[i - 1] = (char)i;
	bytes[255] = '\0';
	cJSON_AddStringToObject(root, "every byte", bytes);
	cJSON_AddStringToObject(root, bytes, "a key of every byte");
	cJSON_AddItemToObject(root, "no text", cJSON_CreateString(NULL));
	cJSON_AddItemToObject(root, "", cJSON_CreateString(""));
	cJSON_AddTrueToObject(root, "t");
	cJSON_AddFalseToObject(root, "f");
	cJSON_AddNullToObject(root, "n");
	cJSON_AddItemToObject(root, "raw", cJSON_CreateRaw("18446744073709551615"));
	cJSON_AddItemToObject(root, "raw ref", raw_ref("42"));
	cJSON_AddObjectToObject(root, "empty object");
	cJSON_AddArrayToObject(root, "empty array");

	cJSON *arr = cJSON_AddArrayToObject(root, "objects in arrays"), *inner = arr;

	for (int depth = 0; depth < 70; depth++) { /* deeper than the 64 tabs of one copy */
		cJSON *o = cJSON_CreateObject(), *a = cJSON_CreateArray();

		cJSON_AddNumberToObject(o, "depth", depth);
		cJSON_AddItemToArray(a, cJSON_CreateObject());
		cJSON_AddItemToArray(a, cJSON_CreateArray());
		cJSON_AddItemToObject(o, "next", a);
		cJSON_AddItemToArray(inner, o);
		cJSON_AddItemToArray(inner, cJSON_CreateString("after"));
		inner = a;
	}
	check("handmade", root);
	check("an empty object", cJSON_GetObjectItem(root, "empty object"));
	check("a string alone", cJSON_GetObjectItem(root, "every byte"));

	/* What cannot be printed fails as libcjson's does: an item of no type, a raw without text. */
	cJSON none = { 0 }, raw = { .type = cJSON_Raw };

	if (!json_text_print(&text, &none) || !json_text_print(&text, &raw)) {
		printf("FAIL: an invalid item printed\n");
		failures++;
	}
	/* A bound on the text's size is kept. */
	struct json_text small = { .max = 100 };

	if (!json_text_print(&small, root)) {
		printf("FAIL: a text past its bound printed\n");
		failures++;
	}
	free(small.buf);
	cJSON_Delete(root);
}

static unsigned long long seed = 0x9e3779b97f4a7c15ULL;

static unsigned pick(unsigned n)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (unsigned)(seed % n);
}

static void random_string(char *s, size_t cap)
{
	size_t n = pick((unsigned)cap);

	for (size_t i = 0; i < n; i++)
		s[i] = (char)(1 + pick(255));
	s[n] = '\0';
}

static cJSON *random_tree(int depth)
{
	char s[24];

	switch (depth > 5 ? pick(6) : pick(8)) {
	case 0:
		return cJSON_CreateNull();
	case 1:
		return cJSON_CreateBool(pick(2));
	case 2:
		return cJSON_CreateNumber(pick(2) ? (double)pick(1u << 31) - (1u << 30)
						  : ldexp((double)pick(1u << 31), (int)pick(200) - 100));
	case 3:
		snprintf(s, sizeof(s), "%u", pick(1u << 31));
		return cJSON_CreateRaw(s);
	case 4:
	case 5:
		random_string(s, sizeof(s));
		return cJSON_CreateString(s);
	case 6: {
		cJSON *a = cJSON_CreateArray();

		for (unsigned i = pick(5); i; i--)
			cJSON_AddItemToArray(a, random_tree(depth + 1));
		return a;
	}
	default: {
		cJSON *o = cJSON_CreateObject();

		for (unsigned i = pick(6); i; i--) {
			random_string(s, 12);
			cJSON_AddItemToObject(o, s, random_tree(depth + 1));
		}
		return o;
	}
	}
}

static void from_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *data = NULL;
	size_t cap = 0, n = 0, got;

	if (!f) {
		printf("FAIL: cannot open %s\n", path);
		failures++;
		return;
	}
	do {
		if (vec_reserve(&data, &cap, n + 65537, 1)) {
			printf("FAIL: out of memory reading %s\n", path);
			failures++;
			fclose(f);
			free(data);
			return;
		}
		got = fread(data + n, 1, cap - n - 1, f);
		n += got;
	} while (got);
	fclose(f);
	data[n] = '\0';

	cJSON *tree = cJSON_Parse(data);

	if (!tree) {
		printf("FAIL: %s is not JSON\n", path);
		failures++;
	} else {
		check(path, tree);
	}
	cJSON_Delete(tree);
	free(data);
}

int main(int argc, char **argv)
{
	char what[32];

	handmade();
	for (int i = 0; i < 3000; i++) {
		cJSON *tree = random_tree(0);

		snprintf(what, sizeof(what), "random tree %d", i);
		check(what, tree);
		cJSON_Delete(tree);
	}
	for (int i = 1; i < argc; i++)
		from_file(argv[i]);
	free(text.buf);
	printf("%s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
