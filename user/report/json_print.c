// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON texts of the report, printed (json_text.c: cJSON_Print's text, at a fraction of
 * its cost) into one buffer that grows as needed and is kept for the next: made and freed
 * for each process (cJSON_Print), it was the one large
 * allocation between a freed tree and the next, and glibc's malloc then merged the freed
 * tree's small chunks, which the next tree's nodes were carved from again (a third of a
 * 20,000-process report's time: docs/performance.md, "The report of a large run").
 *
 * The trees themselves are built in an obstack while the report is written: a node costs
 * a few instructions, not a malloc, and a tree printed is given back at once, everything
 * allocated since its root with it (obstack_free), not node by node (cJSON_Delete). That
 * was a quarter of the same report's time.
 *
 * The processes and their files, nearly all of a large report, go through a pipeline when
 * iotrace may run on two CPUs: the report's thread builds a batch of trees in one of two
 * arenas while a printer thread prints the batch of the other, writes it and empties that
 * arena. Building and printing take about as long as each other.
 */
#include <obstack.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "json_print.h"
#include "json_text.h"
#include "util/vec.h"

#define obstack_chunk_alloc malloc
#define obstack_chunk_free free
#define ARENA_CHUNK (64 << 10) /* a process's tree, ~30 KB, in one chunk */
#define MAX_TEXT (1 << 29)
#define SLOTS 2

/* The arena of trees made in turn (json_free); those of the pipeline's two slots. */
static struct obstack arena, slot_arena[SLOTS];
static struct obstack *building; /* where the report's nodes come from now */
static bool arena_paused;
/*
 * cJSON's hooks are the process's: only the thread writing the report takes nodes from
 * the arenas; another (the container runtimes' resolver parses their answers) gets
 * malloc's, as before the hooks were set.
 */
static _Thread_local bool reporting;

static void *tree_alloc(size_t size)
{
	return reporting && !arena_paused ? obstack_alloc(building, size) : malloc(size);
}

static bool in_arena(const struct obstack *h, const void *p)
{
	for (const struct _obstack_chunk *c = h ? h->chunk : NULL; c; c = c->prev)
		if ((const char *)p >= c->contents && (const char *)p < c->limit)
			return true;
	return false;
}

/* A node being built goes with its tree; any other is freed. */
static void tree_free(void *p)
{
	if (!reporting || !in_arena(building, p))
		free(p);
}

static void arena_exhausted(void)
{
	fputs("iotrace: out of memory writing the JSON report\n", stderr);
	exit(1);
}

/* ---- printing ---- */

static struct json_text printed = { .max = MAX_TEXT };

int json_put(FILE *out, cJSON *item)
{
	if (json_text_print(&printed, item))
		return -1;
	fwrite(printed.buf, 1, printed.len, out);
	return 0;
}

/* obj printed without its closing brace. */
static int put_open(FILE *out, cJSON *obj)
{
	size_t n;

	if (!cJSON_IsObject(obj) || json_text_print(&printed, obj))
		return -1;
	n = printed.len - 1; /* the brace */
	while (n && (printed.buf[n - 1] == '\n' || printed.buf[n - 1] == '\t'))
		n--;
	fwrite(printed.buf, 1, n, out);
	return 0;
}

int json_put_open(FILE *out, cJSON *obj)
{
	int err = put_open(out, obj);

	json_free(obj);
	return err;
}

void json_free(cJSON *item)
{
	if (item && in_arena(&arena, item))
		obstack_free(&arena, item);
	else
		cJSON_Delete(item);
}

void json_arena_pause(bool pause)
{
	arena_paused = pause;
}

/* ---- the pipeline ---- */

/*
 * A batch of trees, built in its slot's arena and printed in order by the printer, which
 * then empties the arena at once. A batch is a few hundred trees: a hand-over of each
 * (two threads waking each other ~120,000 times in a 20,000-process report) took longer
 * than printing them.
 */
#define BATCH 256

struct entry {
	const char *before; /* a literal, written first */
	cJSON *tree;        /* then this; NULL: none */
	bool open;
};

struct slot {
	struct entry e[BATCH];
	unsigned n;
	bool posted; /* the printer's until it has printed it */
	void *base;  /* the arena's first allocation of the batch */
};

static struct {
	FILE *out;
	bool threaded, reserved, stop;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct slot slot[SLOTS];
	unsigned build, print; /* the slot filled now, the one printed next */
	int err;
} pipe_ = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* Prints slot i's batch (none after an error) and empties its arena. */
static int print_batch(struct slot *s, unsigned i, bool failed)
{
	int err = 0;

	for (unsigned k = 0; k < s->n && !err && !failed; k++) {
		struct entry *e = &s->e[k];

		fputs(e->before, pipe_.out);
		if (e->tree)
			err = e->open ? put_open(pipe_.out, e->tree) : json_put(pipe_.out, e->tree);
	}
	obstack_free(&slot_arena[i], s->base);
	s->n = 0;
	return err;
}

static void *printer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pipe_.lock);
	for (;;) {
		unsigned i = pipe_.print;
		struct slot *s = &pipe_.slot[i];

		while (!s->posted && !pipe_.stop)
			pthread_cond_wait(&pipe_.cond, &pipe_.lock);
		if (!s->posted)
			break;
		bool failed = pipe_.err;

		pthread_mutex_unlock(&pipe_.lock);
		int err = print_batch(s, i, failed);
		pthread_mutex_lock(&pipe_.lock);
		if (err)
			pipe_.err = err;
		s->posted = false;
		pipe_.print = (i + 1) % SLOTS;
		pthread_cond_broadcast(&pipe_.cond);
	}
	pthread_mutex_unlock(&pipe_.lock);
	return NULL;
}

/* The filled slot to the printer (or printed here, with one CPU). */
static int post(void)
{
	unsigned i = pipe_.build;
	struct slot *s = &pipe_.slot[i];
	int err;

	pipe_.reserved = false;
	pipe_.build = (i + 1) % SLOTS;
	if (!pipe_.threaded) {
		err = print_batch(s, i, pipe_.err);
		if (err)
			pipe_.err = err;
		return pipe_.err;
	}
	pthread_mutex_lock(&pipe_.lock);
	s->posted = true;
	err = pipe_.err;
	pthread_cond_broadcast(&pipe_.cond);
	pthread_mutex_unlock(&pipe_.lock);
	return err;
}

void json_arena_begin(FILE *out)
{
	cJSON_Hooks hooks = { .malloc_fn = tree_alloc, .free_fn = tree_free };
	cpu_set_t cpus;

	obstack_alloc_failed_handler = arena_exhausted;
	obstack_begin(&arena, ARENA_CHUNK);
	for (int i = 0; i < SLOTS; i++)
		obstack_begin(&slot_arena[i], ARENA_CHUNK);
	building = &arena;
	reporting = true;
	cJSON_InitHooks(&hooks);
	pipe_.out = out;
	pipe_.err = 0;
	pipe_.build = pipe_.print = 0;
	/* One CPU to run on: a thread would only take turns with this one. */
	pipe_.threaded = !sched_getaffinity(0, sizeof(cpus), &cpus) && CPU_COUNT(&cpus) > 1 &&
			 !pthread_create(&pipe_.thread, NULL, printer, NULL);
}

int json_pipe_build(void)
{
	struct slot *s = &pipe_.slot[pipe_.build];
	int err;

	pthread_mutex_lock(&pipe_.lock);
	while (s->posted)
		pthread_cond_wait(&pipe_.cond, &pipe_.lock);
	err = pipe_.err;
	pthread_mutex_unlock(&pipe_.lock);
	building = &slot_arena[pipe_.build];
	if (!pipe_.reserved) {
		s->base = obstack_alloc(building, 1);
		pipe_.reserved = true;
	}
	return err;
}

int json_pipe_put(const char *before, cJSON *tree, bool open)
{
	struct slot *s = &pipe_.slot[pipe_.build];
	int err = pipe_.reserved ? 0 : json_pipe_build();

	building = &arena;
	s->e[s->n++] = (struct entry){ .before = before, .tree = tree, .open = open };
	if (s->n == BATCH)
		err = post();
	return err;
}

/* Everything posted is out; the printer's error, if any. */
int json_pipe_drain(void)
{
	int err = pipe_.reserved ? post() : 0;

	if (err)
		return err;
	pthread_mutex_lock(&pipe_.lock);
	for (int i = 0; i < SLOTS; i++)
		while (pipe_.slot[i].posted)
			pthread_cond_wait(&pipe_.cond, &pipe_.lock);
	err = pipe_.err;
	pthread_mutex_unlock(&pipe_.lock);
	return err;
}

void json_arena_end(void)
{
	json_pipe_drain();
	if (pipe_.threaded) {
		pthread_mutex_lock(&pipe_.lock);
		pipe_.stop = true;
		pthread_cond_broadcast(&pipe_.cond);
		pthread_mutex_unlock(&pipe_.lock);
		pthread_join(pipe_.thread, NULL);
		pipe_.stop = pipe_.threaded = false;
	}
	cJSON_InitHooks(NULL);
	reporting = false;
	building = NULL;
	obstack_free(&arena, NULL);
	for (int i = 0; i < SLOTS; i++)
		obstack_free(&slot_arena[i], NULL);
	free(printed.buf);
	printed.buf = NULL;
	printed.cap = printed.len = 0;
}
