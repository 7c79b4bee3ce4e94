// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON texts of the report, printed into one buffer that grows as needed and is kept
 * for the next: made and freed for each process (cJSON_Print), it was the one large
 * allocation between a freed tree and the next, and glibc's malloc then merged the freed
 * tree's small chunks, which the next tree's nodes were carved from again (a third of a
 * 20,000-process report's time: docs/performance.md, "The report of a large run").
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "json_print.h"
#include "util/vec.h"

#define MAX_TEXT (1 << 29)

static struct {
	char *buf;
	size_t cap;
} printed;

static char *print_json(cJSON *item)
{
	for (;;) {
		if (printed.cap &&
		    cJSON_PrintPreallocated(item, printed.buf, (int)printed.cap, true))
			return printed.buf;
		/* Too small (nothing else fails here): twice as large, up to MAX_TEXT. */
		if (printed.cap >= MAX_TEXT ||
		    vec_reserve(&printed.buf, &printed.cap, printed.cap ? 2 * printed.cap : 1 << 16,
				1))
			return NULL;
	}
}

int json_put(FILE *out, cJSON *item)
{
	const char *text = print_json(item);

	if (!text)
		return -1;
	fputs(text, out);
	return 0;
}

int json_put_open(FILE *out, cJSON *obj)
{
	char *text = print_json(obj), *end = text ? strrchr(text, '}') : NULL;

	cJSON_Delete(obj);
	if (!end)
		return -1;
	*end = '\0';
	while (end > text && (end[-1] == '\n' || end[-1] == '\t'))
		*--end = '\0';
	fputs(text, out);
	return 0;
}

void json_print_done(void)
{
	free(printed.buf);
	printed.buf = NULL;
	printed.cap = 0;
}
