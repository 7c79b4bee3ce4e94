// SPDX-License-Identifier: GPL-2.0
/*
 * Run mode's files at the end of the run: each file's name from the names the kernel
 * recorded (or from its inode), whether it was deleted, and what of it is cached now.
 */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "collect.h"
#include "collect_impl.h"
#include "kernel/tracer.h"
#include "model/files.h"
#include "model/names.h"
#include "util/hash.h"
#include "util/residency.h"

static bool parent_exists(const char *path)
{
	char *copy = strdup(path);
	struct stat st;
	bool there = copy && path[0] == '/' && !stat(dirname(copy), &st) && S_ISDIR(st.st_mode);

	free(copy);
	return there;
}

/* A file's names as the table has them. */
static void take_names(struct file_record *f, const struct name_view *v)
{
	f->path = v->shown;
	f->name = v->path;
	f->other_names = v->others;
	f->kind = v->kind;
	f->deleted = v->deleted;
}

/*
 * Its name no longer leads to it, in a directory that is still there: renamed since (by a
 * process not traced, or on a kernel without the timestamp tracepoints), so its inode says
 * where it is now; else unlinked (a lock file, a journal). A name whose directory went too
 * (/proc/PID/... of a process gone, a removed tree) says nothing of the file: left as it is.
 */
static void gone_at_end(struct names *names, struct file_record *f,
			const struct path_key *key, uint32_t gen)
{
	char *now = f->name && parent_exists(f->name) ? path_by_inode(key->dev, key->ino, gen)
						       : NULL;
	struct name_view v;

	if (now && !names_rename(names, key, now) && names_find(names, key, &v)) {
		take_names(f, &v);
		f->residency_missing = NULL;
	} else if (f->name && parent_exists(f->name) &&
		   (f->path = names_mark_deleted(names, key))) {
		f->deleted = true;
		f->residency_missing = "deleted";
	}
	free(now);
}

/* A file whose number a later file of the run had (no generations: counted): deleted. */
static bool later_file(struct names *names, const struct path_key *key, bool counted)
{
	struct path_key next = { .dev = key->dev, .ino = key->ino, .igen = key->igen + 1 };
	struct name_view v;

	return counted && names_find(names, &next, &v);
}

struct name_ctx {
	struct names *names;
	struct path_key key;
};

static const char *name_of_id(void *ctx, uint64_t id)
{
	struct name_ctx *x = ctx;

	return names_of_id(x->names, &x->key, id);
}

/*
 * A file's residency, read once however many processes used it (each has its record of
 * the file: twenty thousand shells share one libc): by the key and the generation checked,
 * for the path last asked (a file found under a new name is read again, then kept so).
 */
struct residency_memo {
	struct path_key key;
	char *path;
	const char *missing;
	struct residency res;
	UT_hash_handle hh;
};

static const char *read_residency(struct residency_memo **memo, const char *path,
				  const struct path_key *file, uint32_t gen, struct residency *r)
{
	struct path_key key = { .dev = file->dev, .ino = file->ino, .igen = gen };
	struct residency_memo *m;
	char *copy;
	int err;

	HASH_FIND(hh, *memo, &key, sizeof(key), m);
	if (m && path && !strcmp(m->path, path)) {
		*r = m->res;
		return m->missing;
	}
	copy = path ? strdup(path) : NULL;
	if (!m && copy && (m = calloc(1, sizeof(*m)))) {
		m->key = key;
		HASH_ADD_OR_FAIL(hh, *memo, key, sizeof(m->key), m, err);
		if (err) {
			free(m);
			m = NULL;
		}
	}
	if (!m || !copy) { /* no path, or no room to keep it: read, not kept */
		free(copy);
		return residency_read(path, key.dev, key.ino, gen, r);
	}
	free(m->path);
	m->path = copy;
	m->missing = residency_read(path, key.dev, key.ino, gen, &m->res);
	*r = m->res;
	return m->missing;
}

static void memo_free(struct residency_memo *m)
{
	free(m->path);
	free(m);
}

static void collect_residency_free(struct residency_memo **memo)
{
	HASH_FREE_ALL(hh, *memo, memo_free);
}

/*
 * A file's name from the names the kernel recorded (or its inode), whether it was
 * deleted, and its residency now (read once per file: *memo, NULL at first, keeps what was
 * read); -ENOMEM when a name could not be kept.
 */
static int collect_resolve_file(struct names *names, struct residency_memo **memo,
				struct file_record *f)
{
	struct name_ctx ctx = { names, { .dev = f->key.dev, .ino = f->key.ino,
					 .igen = f->key.igen } };
	struct residency res;
	struct name_view v;
	int err = 0;

	if (f->kind == FK_METADATA)
		return 0;
	if (names_find(names, &ctx.key, &v))
		take_names(f, &v);
	else if (f->kind == FK_FILE)
		f->path = f->name = names_resolve(names, &ctx.key);
	if (!v.gen)
		v.gen = ctx.key.igen; /* no name recorded: the key's */
	if (f->kind == FK_FILE && !f->deleted && later_file(names, &ctx.key, v.counted) &&
	    (f->path = names_mark_deleted(names, &ctx.key)))
		f->deleted = true;
	if (f->kind != FK_FILE)
		f->residency_missing = "not a regular file";
	else
		f->residency_missing = f->deleted ? "deleted"
						  : read_residency(memo, f->name, &ctx.key,
								   v.counted ? 0 : v.gen, &res);
	if (f->residency_missing == residency_gone) {
		gone_at_end(names, f, &ctx.key, v.counted ? 0 : v.gen);
		if (!f->residency_missing) /* found under its new name */
			f->residency_missing = read_residency(memo, f->name, &ctx.key, 0, &res);
	}
	if (files_name_calls(f, name_of_id, &ctx))
		err = -ENOMEM;
	if (f->residency_missing)
		return err;
	f->res = (struct residency_view){
		.resident_pages = res.cached_pages,
		.dirty_pages = res.dirty_pages,
		.writeback_pages = res.writeback_pages,
		.evicted_pages = res.evicted_pages,
		.recently_evicted_pages = res.recently_evicted_pages,
		.size_bytes = res.size_bytes,
	};
	f->residency_partial = res.partial;
	return err;
}

int collect_resolve_files(struct run_result *r)
{
	struct residency_memo *memo = NULL;
	int err = 0;

	for (size_t i = 0; i < r->nprocs; i++)
		for (size_t j = 0; j < r->procs[i].nfiles; j++)
			if (collect_resolve_file(r->names, &memo, &r->procs[i].files[j]))
				err = -ENOMEM;
	collect_residency_free(&memo);
	return err;
}
