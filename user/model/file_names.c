// SPDX-License-Identifier: GPL-2.0
/*
 * A file's names in the model: its syscalls by the name they were made under (a renamed
 * file's, as strace -yy names them).
 */
#include <stdlib.h>
#include <string.h>
#include "files.h"
#include "syscall_table.h"

/* The syscalls a name is told for: the ledger's, not io_uring's (no name in strace). */
static bool by_name_op(uint32_t op)
{
	return op && op < FILE_OPS_END && !file_ops[op].uring;
}

/* f's calls under name id (or under the path name, when name is set), made when new. */
static struct file_name_io *group_of(struct file_record *f, uint64_t id, const char *name)
{
	struct file_name_io *grown;

	for (size_t i = 0; i < f->nby_name; i++)
		if (name ? !strcmp(f->by_name[i].name, name) : f->by_name[i].name_id == id)
			return &f->by_name[i];
	grown = realloc(f->by_name, (f->nby_name + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	f->by_name = grown;
	grown = &f->by_name[f->nby_name++];
	*grown = (struct file_name_io){ .name_id = id, .name = name };
	return grown;
}

static int add_calls(struct file_name_io *g, const struct name_calls *c)
{
	struct name_calls *row = NULL, *grown;

	for (size_t i = 0; i < g->nrows && !row; i++)
		if (g->rows[i].op == c->op)
			row = &g->rows[i];
	if (!row) {
		grown = realloc(g->rows, (g->nrows + 1) * sizeof(*grown));
		if (!grown)
			return -1;
		g->rows = grown;
		row = &g->rows[g->nrows++];
		*row = (struct name_calls){ .op = c->op };
	}
	row->calls += c->calls;
	row->errors += c->errors;
	row->requested_bytes += c->requested_bytes;
	row->transferred_bytes += c->transferred_bytes;
	return 0;
}

/* Every syscall row of f (summed over its entries so far) into g. */
static int add_file_calls(struct file_name_io *g, const struct file_record *f)
{
	for (size_t i = 0; i < f->nio; i++) {
		const struct file_io *io = &f->io[i];
		struct name_calls c = { io->op, io->calls, io->errors, io->requested_bytes,
					io->transferred_bytes };

		if (by_name_op(io->op) && add_calls(g, &c))
			return -1;
	}
	return 0;
}

int files_add_named(struct file_record *f, const struct ledger_entry *e)
{
	uint64_t id = e->st.name_id;
	struct file_name_io *g;
	bool calls = false;

	for (size_t i = 0; i < e->nrows; i++)
		calls |= by_name_op(e->rows[i].op) && e->rows[i].row.calls;
	if (!calls)
		return 0;
	if (!f->nby_name && (!f->name_id || !id || id == f->name_id)) {
		f->name_id = f->name_id ? f->name_id : id;
		return 0;
	}
	/* A second name: every call before it was made under the first. */
	if (!f->nby_name && (!(g = group_of(f, f->name_id, NULL)) || add_file_calls(g, f)))
		return -1;
	g = group_of(f, id ? id : f->name_id, NULL);
	if (!g)
		return -1;
	for (size_t i = 0; i < e->nrows; i++) {
		const struct file_row *r = &e->rows[i].row;
		struct name_calls c = { e->rows[i].op, r->calls, r->errors, r->requested,
					r->transferred };

		if (by_name_op(c.op) && add_calls(g, &c))
			return -1;
	}
	return 0;
}

static void drop_groups(struct file_record *f)
{
	for (size_t i = 0; i < f->nby_name; i++)
		free(f->by_name[i].rows);
	free(f->by_name);
	f->by_name = NULL;
	f->nby_name = 0;
}

/* Groups of one path (two names that read the same: a directory made anew) as one. */
static int merge_same_names(struct file_record *f)
{
	for (size_t i = 0; i < f->nby_name; i++)
		for (size_t j = i + 1; j < f->nby_name; j++) {
			if (strcmp(f->by_name[i].name, f->by_name[j].name))
				continue;
			for (size_t k = 0; k < f->by_name[j].nrows; k++)
				if (add_calls(&f->by_name[i], &f->by_name[j].rows[k]))
					return -1;
			free(f->by_name[j].rows);
			f->by_name[j--] = f->by_name[--f->nby_name];
		}
	return 0;
}

int files_name_calls(struct file_record *f, file_name_of_fn name_of, void *ctx)
{
	const char *only = f->name_id ? name_of(ctx, f->name_id) : NULL;
	struct file_name_io *g;

	if (!f->name)
		return 0;
	if (!f->nby_name) {
		/* One name, told only where it is not the file's (HEAD.lock, now HEAD). */
		if (!only || !strcmp(only, f->name))
			return 0;
		g = group_of(f, f->name_id, NULL);
		if (!g || add_file_calls(g, f))
			return -1;
		g->name = only;
		return 0;
	}
	for (size_t i = 0; i < f->nby_name; i++) {
		const char *name = name_of(ctx, f->by_name[i].name_id);

		f->by_name[i].name = name ? name : f->name;
	}
	if (merge_same_names(f))
		return -1;
	if (f->nby_name == 1 && !strcmp(f->by_name[0].name, f->name))
		drop_groups(f);
	return 0;
}
