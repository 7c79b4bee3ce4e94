// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON texts of the report, printed into one buffer that grows as needed and is kept
 * for the next: made and freed for each process (cJSON_Print), it was the one large
 * allocation between a freed tree and the next, and glibc's malloc then merged the freed
 * tree's small chunks, which the next tree's nodes were carved from again (a third of a
 * 20,000-process report's time: docs/performance.md, "The report of a large run").
 *
 * The trees themselves are built in an obstack while the report is written: a node costs
 * a few instructions, not a malloc, and a tree printed is given back at once, everything
 * allocated since its root with it (obstack_free), not node by node (cJSON_Delete). That
 * was a quarter of the same report's time.
 */
#include <obstack.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "json_print.h"
#include "util/vec.h"

#define obstack_chunk_alloc malloc
#define obstack_chunk_free free
#define ARENA_CHUNK (64 << 10) /* a process's tree, ~30 KB, in one chunk */

static struct obstack arena;
static bool arena_on, arena_paused;

static void *tree_alloc(size_t size)
{
	return arena_paused ? malloc(size) : obstack_alloc(&arena, size);
}

static bool in_arena(const void *p)
{
	for (const struct _obstack_chunk *c = arena_on ? arena.chunk : NULL; c; c = c->prev)
		if ((const char *)p >= c->contents && (const char *)p < c->limit)
			return true;
	return false;
}

/* A node of a tree in the arena goes with its tree (json_free); any other is freed. */
static void tree_free(void *p)
{
	if (!in_arena(p))
		free(p);
}

static void arena_exhausted(void)
{
	fputs("iotrace: out of memory writing the JSON report\n", stderr);
	exit(1);
}

void json_arena_begin(void)
{
	cJSON_Hooks hooks = { .malloc_fn = tree_alloc, .free_fn = tree_free };

	obstack_alloc_failed_handler = arena_exhausted;
	obstack_begin(&arena, ARENA_CHUNK);
	arena_on = true;
	cJSON_InitHooks(&hooks);
}

void json_arena_end(void)
{
	cJSON_InitHooks(NULL);
	obstack_free(&arena, NULL);
	arena_on = false;
}

void json_arena_pause(bool pause)
{
	arena_paused = pause;
}

void json_free(cJSON *item)
{
	if (item && in_arena(item))
		obstack_free(&arena, item);
	else
		cJSON_Delete(item);
}

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

	json_free(obj);
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
