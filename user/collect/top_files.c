// SPDX-License-Identifier: GPL-2.0
/*
 * top's per-file side: the kernel's ledger entries (one per process and file) read in place
 * each refresh, each entry's growth since its last read going to its file's row of the
 * interval (and its page-cache counts to its process: the syscall bytes come from the
 * process's slot); per-file block records taken as run mode takes them; named from the
 * engine's table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include "top_impl.h"
#include "model/files.h"
#include "model/syscall_table.h"
#include "util/residency.h"

static bool is_uring_op(uint32_t op)
{
	return op >= FOP_uring_READV && op < FILE_OPS_END;
}

/* An entry's counters as top counts them (they only grow while the entry lives). */
static void entry_counts(const struct ledger_entry *e, struct top_counts *c)
{
	memset(c, 0, sizeof(*c));
	c->requested_pages = e->st.requested_pages;
	c->miss_pages = e->st.miss_pages;
	for (size_t i = 0; i < e->nrows; i++) {
		const struct ledger_row *r = &e->rows[i];

		/* io_uring's bytes are not syscalls' (the rows' read/write_bytes): as a process's. */
		if (is_uring_op(r->op))
			c->io_uring_ops += r->row.calls;
		else if (file_op_info(r->op).cls == FOC_READ) {
			c->read_bytes += r->row.transferred;
			c->read_calls += r->row.calls;
		} else if (file_op_info(r->op).cls == FOC_WRITE) {
			c->write_bytes += r->row.transferred;
			c->write_calls += r->row.calls;
		}
		c->io_ns += r->row.total_ns;
	}
}

#define TOP_GREW(name, ...) d->name = top_grew(now->name, before->name);

static void counts_grew(struct top_counts *d, const struct top_counts *now,
			const struct top_counts *before)
{
	TOP_COUNT_FIELDS(TOP_GREW)
}

/* This interval's row of a file, made when new; NULL out of memory. */
static struct file_acc *file_acc_of(struct top_collector *c, const struct path_key *k)
{
	struct file_acc *f;
	int err;

	HASH_FIND(hh, c->files, k, sizeof(*k), f);
	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->key = *k;
	HASH_ADD_OR_FAIL(hh, c->files, key, sizeof(f->key), f, err);
	if (err) {
		free(f);
		return NULL;
	}
	return f;
}

static void to_file(struct top_collector *c, const struct path_key *k, const struct top_counts *d,
		    bool new_user)
{
	struct file_acc *f;

	if (!top_counts_any(d))
		return;
	f = file_acc_of(c, k);
	if (!f) {
		c->error = -ENOMEM;
		return;
	}
	top_counts_add(&f->c, d);
	f->procs += new_user;
}

/* An entry's growth since its last read: to its file, its page counts to its process. */
static void count_entry(struct top_collector *c, const struct ledger_entry *e, bool taken)
{
	const struct file_key *k = &e->st.key;
	struct entry_snap *s = e->idx < MAX_FILES ? &c->snap[e->idx] : NULL;
	struct path_key pk = { .dev = k->dev, .igen = k->igen, .ino = k->ino };
	struct top_counts now, d, pages = { 0 };
	bool same = s && !memcmp(&s->key, k, sizeof(*k));
	struct top_counts *acc;

	entry_counts(e, &now);
	if (same)
		counts_grew(&d, &now, &s->c);
	else
		d = now;
	to_file(c, &pk, &d, top_counts_any(&d));
	pages.requested_pages = d.requested_pages;
	pages.miss_pages = d.miss_pages;
	top_counts_add(&c->total, &pages);
	if (k->owner && (acc = top_acc_of(c, k->owner)))
		top_counts_add(acc, &pages);
	if (!s)
		return;
	if (taken) {
		memset(s, 0, sizeof(*s));
	} else {
		s->key = *k;
		s->c = now;
	}
}

static void peek_entry(const struct ledger_entry *e, void *ctx)
{
	count_entry(ctx, e, false);
}

void top_give_entry(const struct ledger_entry *e, void *ctx)
{
	count_entry(ctx, e, true);
}

int top_read_files(struct top_collector *c)
{
	return tracer_peek_files(c->tracer, peek_entry, c) ? -ENOMEM : 0;
}

static void give_file_block(const struct file_block_key *k, const struct file_block_stat *st,
			    void *ctx)
{
	struct top_collector *c = ctx;
	struct path_key pk = { .dev = k->ino ? k->fdev : k->disk, .igen = k->igen, .ino = k->ino };
	struct top_counts d = { 0 };

	if (k->op == BOP_READ) {
		d.disk_reads = st->requests;
		d.disk_read_bytes = st->bytes;
	} else if (k->op == BOP_WRITE) {
		d.disk_writes = st->requests;
		d.disk_write_bytes = st->bytes;
		d.disk_writeback_bytes = st->writeback_bytes;
	}
	to_file(c, &pk, &d, false);
}

int top_read_file_blocks(struct top_collector *c)
{
	return tracer_take_file_blocks(c->tracer, false, give_file_block, c) ? -ENOMEM : 0;
}

int top_files_out(struct top_collector *c, struct names *names, struct top_sample *out)
{
	struct file_acc *f, *tmp;

	out->files = calloc(HASH_COUNT(c->files) ? HASH_COUNT(c->files) : 1, sizeof(*out->files));
	if (!out->files)
		return -ENOMEM;
	HASH_ITER(hh, c->files, f, tmp) {
		struct top_file *o = &out->files[out->nfiles++];

		o->key = f->key;
		o->name = f->key.ino ? names_lookup(names, &f->key) : NULL;
		o->procs = f->procs;
		o->c = f->c;
		if (!f->key.ino && disk_table_add(&out->disk_names, f->key.dev))
			return -ENOMEM;
	}
	top_files_free(c);
	return 0;
}

void top_files_free(struct top_collector *c)
{
	struct file_acc *f, *tmp;

	HASH_ITER(hh, c->files, f, tmp) {
		HASH_DEL(c->files, f);
		free(f);
	}
}
