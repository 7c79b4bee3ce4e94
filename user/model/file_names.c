// SPDX-License-Identifier: GPL-2.0
/*
 * A file's names in the model: its syscalls by the name they were made under (a renamed
 * file's, as strace -yy names them), and the rows of the files table by path (--files-by
 * path: the versions of one path, git's config or a database's journal, in one row).
 */
#include <stdlib.h>
#include <string.h>
#include "file_names.h"
#include "hist.h"
#include "sums.h"
#include "names.h"
#include "syscall_table.h"
#include "util/vec.h"

/* The syscalls a name is told for: the ledger's, not io_uring's (no name in strace). */
static bool by_name_op(uint32_t op)
{
	return op && op < FILE_OPS_END && !file_op_info(op).uring;
}

/* f's calls under name id (or under the path name, when name is set), made when new. */
static struct file_name_io *group_of(struct file_record *f, uint64_t id, const char *name)
{
	struct file_name_io *grown;

	for (size_t i = 0; i < f->nby_name; i++)
		if (name ? !strcmp(f->by_name[i].name, name) : f->by_name[i].name_id == id)
			return &f->by_name[i];
	grown = VEC_PUSH(f->by_name, f->nby_name);
	if (!grown)
		return NULL;
	*grown = (struct file_name_io){ .name_id = id, .name = name };
	return grown;
}

static int add_calls(struct file_name_io *g, const struct name_calls *c)
{
	struct name_calls *row = NULL;

	for (size_t i = 0; i < g->nrows && !row; i++)
		if (g->rows[i].op == c->op)
			row = &g->rows[i];
	if (!row) {
		row = VEC_PUSH(g->rows, g->nrows);
		if (!row)
			return -1;
		row->op = c->op;
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

/* ---- --files-by path ---- */

/*
 * The merged row's histograms, summed dense as the records come (a row of twenty thousand
 * processes' libc), made sparse once at the end: by the index of their row in dst's io[]
 * and blocks[].
 */
struct merge_dense {
	__u64 (*io)[HIST_BUCKETS];
	__u64 (*blocks)[3][HIST_BUCKETS]; /* size, lat, qlat */
	size_t nio, nblocks;
};

static void dense_add_sparse(__u64 *dense, const struct sparse_hist *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		dense[s->bins[i].b % HIST_BUCKETS] += s->bins[i].count;
}

static int merge_io(struct file_record *dst, struct merge_dense *md, const struct file_io *io)
{
	struct file_io *row = NULL;
	size_t i;

	for (i = 0; i < dst->nio && !row; i++)
		if (dst->io[i].op == io->op)
			row = &dst->io[i];
	if (!row) {
		if (!VEC_PUSH(md->io, md->nio))
			return -1;
		row = VEC_PUSH(dst->io, dst->nio);
		if (!row)
			return -1;
		row->op = io->op;
		i = dst->nio;
	}
	file_io_add(row, io);
	dense_add_sparse(md->io[i - 1], &io->lat);
	return 0;
}

static int merge_block(struct file_record *dst, struct merge_dense *md, const struct file_block *b)
{
	struct file_block *row = NULL;
	size_t i;

	for (i = 0; i < dst->nblocks && !row; i++)
		if (dst->blocks[i].disk == b->disk && dst->blocks[i].op == b->op)
			row = &dst->blocks[i];
	if (!row) {
		if (!VEC_PUSH(md->blocks, md->nblocks))
			return -1;
		row = VEC_PUSH(dst->blocks, dst->nblocks);
		if (!row)
			return -1;
		row->disk = b->disk;
		row->op = b->op;
		i = dst->nblocks;
	}
#define ADD_BLOCK_FIELD(name, ...) row->c.name += b->c.name;
	BLOCK_FIELDS(ADD_BLOCK_FIELD)
	dense_add_sparse(md->blocks[i - 1][0], &b->size);
	dense_add_sparse(md->blocks[i - 1][1], &b->lat);
	dense_add_sparse(md->blocks[i - 1][2], &b->qlat);
	return 0;
}

/* The sums into dst's rows' histograms; md freed. */
static int merge_dense_finish(struct file_record *dst, struct merge_dense *md, int err)
{
	for (size_t i = 0; i < dst->nio && i < md->nio && !err; i++)
		err = sparse_hist_add(&dst->io[i].lat, md->io[i]);
	for (size_t i = 0; i < dst->nblocks && i < md->nblocks && !err; i++)
		err = sparse_hist_add(&dst->blocks[i].size, md->blocks[i][0]) ||
		      sparse_hist_add(&dst->blocks[i].lat, md->blocks[i][1]) ||
		      sparse_hist_add(&dst->blocks[i].qlat, md->blocks[i][2]);
	free(md->io);
	free(md->blocks);
	return err;
}

/* m's calls by name into the merged row's (by path: the names are its versions' paths). */
static int merge_names(struct file_record *dst, const struct file_record *m)
{
	struct file_name_io *g;

	if (!m->nby_name)
		return (g = group_of(dst, 0, m->name)) && !add_file_calls(g, m) ? 0 : -1;
	for (size_t i = 0; i < m->nby_name; i++) {
		g = group_of(dst, 0, m->by_name[i].name);
		for (size_t k = 0; g && k < m->by_name[i].nrows; k++)
			if (add_calls(g, &m->by_name[i].rows[k]))
				return -1;
		if (!g)
			return -1;
	}
	return 0;
}

/* The versions' earlier names, once each, the path left out; dst's own. */
static int merge_other_names(struct file_record *dst, struct file_record *const *m, size_t n)
{
	size_t room = 1, len = 0;
	char *text;

	for (size_t i = 0; i < n; i++)
		room += names_list_bytes(m[i]->other_names);
	text = calloc(1, room);
	if (!text)
		return -1;
	for (size_t i = 0; i < n; i++)
		for (const char *p = m[i]->other_names; p && *p; p += strlen(p) + 1)
			if (strcmp(p, dst->name) && !names_list_has(text, len, p)) {
				memcpy(text + len, p, strlen(p) + 1);
				len += strlen(p) + 1;
			}
	text[len] = '\0';
	dst->other_names = len ? text : NULL; /* the row's own: file_record_free frees it */
	if (!len)
		free(text);
	return 0;
}

/*
 * The files of one path as one row: the newest version's identity, name and residency (the
 * one left at the end, else the last), every count summed. -1 out of memory.
 */
int files_merge(struct file_record *dst, struct file_record *const *m, size_t n)
{
	const struct file_record *newest = m[n - 1];
	struct merge_dense md = { 0 };
	struct page_cache_sum pc;
	bool by_name = false;
	int err = 0;

	for (size_t i = n; i-- > 0 && newest->deleted;)
		newest = m[i];
	*dst = (struct file_record){ .key = newest->key, .kind = newest->kind,
				     .path = newest->path, .name = newest->name,
				     .deleted = newest->deleted, .final = true, .versions = n,
				     .residency_missing = newest->residency_missing,
				     .res = newest->res };
	page_cache_reset(&pc);
	for (size_t i = 0; i < n; i++) {
		/* the records ahead, the rows of those asked for before, their histograms' bins */
		if (i + 8 < n)
			file_record_prefetch(m[i + 8]);
		for (size_t b = 0; i + 4 < n && b < m[i + 4]->nio * sizeof(*m[i]->io); b += 64)
			__builtin_prefetch((const char *)m[i + 4]->io + b);
		for (size_t j = 0; i + 2 < n && j < m[i + 2]->nio; j++)
			__builtin_prefetch(m[i + 2]->io[j].lat.bins);
		dst->advice |= m[i]->advice;
		dst->loaded |= m[i]->loaded;
		dst->load.loader_read_calls += m[i]->load.loader_read_calls;
		dst->load.loader_read_bytes += m[i]->load.loader_read_bytes;
		dst->added_folios += m[i]->added_folios;
		dst->chunks_lost |= m[i]->chunks_lost;
		dst->final &= m[i]->final;
		page_cache_add(&pc, &m[i]->pc);
		by_name |= m[i]->nby_name > 0;
		for (size_t j = 0; j < m[i]->nio && !err; j++)
			err = merge_io(dst, &md, &m[i]->io[j]);
		for (size_t j = 0; j < m[i]->nblocks && !err; j++)
			err = merge_block(dst, &md, &m[i]->blocks[j]);
	}
	err = merge_dense_finish(dst, &md, err);
	for (size_t i = 0; i < n && by_name && !err; i++)
		err = merge_names(dst, m[i]);
	dst->pc = pc.v;
	file_summarize(dst);
	return err || merge_other_names(dst, m, n) ? -1 : 0;
}

static int cmp_by_name(const void *a, const void *b)
{
	const struct file_record *x = *(const struct file_record *const *)a;
	const struct file_record *y = *(const struct file_record *const *)b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x > y) - (x < y); /* a path's versions in the order they came */
}

/* Folds by path whatever has one: files with a name, no metadata row. */
static bool foldable(const struct file_record *f)
{
	return f->name && f->kind != FK_METADATA;
}

/* The groups of several files of one path, merged; first[i]: the row file i leads, if any. */
static int fold_paths(struct proc_record *p, struct file_record **sorted, size_t n,
		      struct file_record **first)
{
	size_t groups = 0;

	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !strcmp(sorted[j]->name, sorted[i]->name); j++)
			;
		groups += j - i > 1;
	}
	p->merged = calloc(groups + 1, sizeof(*p->merged));
	if (!p->merged)
		return -1;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !strcmp(sorted[j]->name, sorted[i]->name); j++)
			;
		if (j - i < 2)
			continue;
		if (files_merge(&p->merged[p->nmerged], sorted + i, j - i))
			return -1;
		first[sorted[i] - p->files] = &p->merged[p->nmerged++];
		for (size_t k = i + 1; k < j; k++)
			first[sorted[k] - p->files] = NULL; /* in the row of the first */
	}
	return 0;
}

int files_rows(struct proc_record *p, bool by_path)
{
	struct file_record **sorted = NULL, **first;
	size_t n = 0;
	int err = 0;

	p->rows = first = calloc(p->nfiles + 1, sizeof(*first));
	if (!first)
		return -1;
	for (size_t i = 0; i < p->nfiles; i++)
		first[i] = &p->files[i];
	if (by_path && p->nfiles > 1 && (sorted = malloc(p->nfiles * sizeof(*sorted)))) {
		for (size_t i = 0; i < p->nfiles; i++)
			if (foldable(&p->files[i]))
				sorted[n++] = &p->files[i];
		qsort(sorted, n, sizeof(*sorted), cmp_by_name);
		err = fold_paths(p, sorted, n, first);
	} else if (by_path && p->nfiles > 1) {
		err = -1;
	}
	free(sorted);
	/* The rows in the order of the files that lead them. */
	for (size_t i = 0; i < p->nfiles; i++)
		if (first[i])
			first[p->nrows++] = first[i];
	return err;
}

/* ---- a file's summary ---- */

/* Reads, writes, syncs, time: the per-file table's syscall columns. */
static void summarize_io(struct file_record *f)
{
	struct file_summary *s = &f->sum;

	for (size_t i = 0; i < f->nio; i++) {
		struct file_io *io = &f->io[i];
		int cls = file_op_info(io->op).cls;

		s->io_ns += io->total_ns;
		s->read_calls += cls == FOC_READ ? io->calls : 0;
		s->read_bytes += cls == FOC_READ ? io->transferred_bytes : 0;
		s->write_calls += cls == FOC_WRITE ? io->calls : 0;
		s->write_bytes += cls == FOC_WRITE ? io->transferred_bytes : 0;
		s->sync_calls += cls == FOC_SYNC ? io->calls : 0;
		s->opens += cls == FOC_OPEN ? io->calls : 0;
		s->closes += cls == FOC_CLOSE ? io->calls : 0;
		s->maps += cls == FOC_MAP ? io->calls : 0;
	}
}

/* Block bytes by direction and the p99 of every request of the file. */
static void summarize_blocks(struct file_record *f)
{
	struct file_summary *s = &f->sum;
	__u64 all[HIST_BUCKETS] = {}, one[HIST_BUCKETS];

	for (size_t i = 0; i < f->nblocks; i++) {
		const struct file_block *b = &f->blocks[i];

		s->block_read_bytes += b->op == BOP_READ ? b->c.bytes : 0;
		s->block_write_bytes += b->op == BOP_WRITE ? b->c.bytes : 0;
		sparse_hist_dense(&b->lat, one);
		for (int k = 0; k < HIST_BUCKETS; k++)
			all[k] += one[k];
	}
	s->block_p99_ns = hist_total(HIST_LOG2, all)
				  ? hist_quantile(HIST_LOG2, all, 0.99, 0, UINT64_MAX)
				  : FILE_SUMMARY_NONE;
}

void file_summarize(struct file_record *f)
{
	memset(&f->sum, 0, sizeof(f->sum));
	summarize_io(f);
	summarize_blocks(f);
	f->sum.hit_pct = f->pc.requested_pages ? 100 * f->pc.hit_pages / f->pc.requested_pages
					       : FILE_SUMMARY_NONE;
	f->sum.readahead_pages = f->pc.readahead_pages;
	f->sum.unused_readahead_pages = f->pc.unused_readahead_pages;
}
