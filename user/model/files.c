// SPDX-License-Identifier: GPL-2.0
/*
 * The per-process ledger of files in user space: kernel entries merged by file, their
 * syscall rows by syscall, their block I/O by disk and operation, and, at the end, every
 * derived number of a file (unused readahead from the merged page bitmaps, the per-file
 * table's summary).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "files.h"
#include "file_names.h"
#include "sums.h"
#include "syscall_table.h"
#include "util/hash.h"
#include "util/vec.h"

/* (dev, ino, generation) -> index + 1 into a process's files[]. */
struct file_slot {
	struct path_key key;
	size_t idx1;
	UT_hash_handle hh;
};

struct file_index {
	struct file_slot *head;
};

/* The slot of a new file: its record made in files[]; -1 out of memory (nothing added). */
static int add_file(struct proc_record *p, struct file_index *x, const struct path_key *k)
{
	struct file_slot *s = calloc(1, sizeof(*s));
	struct file_record *f = s ? VEC_PUSH(p->files, p->nfiles) : NULL;
	int err = -1;

	if (f) {
		s->key = *k;
		s->idx1 = p->nfiles;
		HASH_ADD_OR_FAIL(hh, x->head, key, sizeof(s->key), s, err);
	}
	if (err) {
		p->nfiles -= f != NULL;
		free(s);
		return -1;
	}
	f->key = (struct file_key){ .owner = p->pid, .dev = k->dev, .ino = k->ino, .igen = k->igen };
	f->pc.unused_exact = true;
	return 0;
}

struct file_record *files_get(struct proc_record *p, const struct path_key *k)
{
	struct file_index *x = p->file_index;
	struct file_slot *s;

	if (!x && !(x = p->file_index = calloc(1, sizeof(*x))))
		return NULL;
	HASH_FIND(hh, x->head, k, sizeof(*k), s);
	if (s)
		return &p->files[s->idx1 - 1];
	return add_file(p, x, k) ? NULL : &p->files[p->nfiles - 1];
}

static void file_index_free(struct file_index *x)
{
	if (!x)
		return;
	HASH_FREE_ALL(hh, x->head, free);
	free(x);
}

void ledger_entry_free(struct ledger_entry *e)
{
	free(e->bits.chunks);
	free(e->rows);
	memset(e, 0, sizeof(*e));
}

/* ---- page bitmaps: the union of a file's entries, by chunk ---- */

static int cmp_chunk(const void *a, const void *b)
{
	const struct page_chunk *x = a, *y = b;

	return (x->chunk > y->chunk) - (x->chunk < y->chunk);
}

/*
 * ORs add's chunks into bits (both end sorted). A page read ahead under one entry and
 * requested under a later one of the same file is used, as it would have been with one.
 */
static int bits_union(struct page_bits *bits, const struct page_bits *add)
{
	struct page_chunk *out;
	size_t i = 0, j = 0, n = 0;

	out = malloc((bits->n + add->n) * sizeof(*out) + 1);
	if (!out)
		return -1;
	while (i < bits->n || j < add->n) {
		if (j == add->n || (i < bits->n && bits->chunks[i].chunk < add->chunks[j].chunk)) {
			out[n++] = bits->chunks[i++];
		} else if (i == bits->n || add->chunks[j].chunk < bits->chunks[i].chunk) {
			out[n++] = add->chunks[j++];
		} else {
			out[n] = bits->chunks[i++];
			for (int w = 0; w < CHUNK_WORDS; w++) {
				out[n].bits.ra[w] |= add->chunks[j].bits.ra[w];
				out[n].bits.used[w] |= add->chunks[j].bits.used[w];
			}
			n++;
			j++;
		}
	}
	free(bits->chunks);
	bits->chunks = out;
	bits->n = n;
	return 0;
}

/* ---- rows ---- */

static int add_row(struct file_record *f, uint32_t op, const struct file_row *r)
{
	struct file_io *io = NULL;

	for (size_t i = 0; i < f->nio && !io; i++)
		if (f->io[i].op == op)
			io = &f->io[i];
	if (!io) {
		/* One at a time: most files see three (open, read or write, close), and a
		 * run may hold 50,000 files. */
		io = VEC_PUSH(f->io, f->nio);
		if (!io)
			return -1;
		io->op = op;
	}
	__u64 lat[HIST_BUCKETS];
	/* The kernel's row under the model's names (FILE_IO_FIELDS). */
	const struct file_io raw = { .calls = r->calls, .errors = r->errors,
				     .requested_bytes = r->requested,
				     .transferred_bytes = r->transferred, .total_ns = r->total_ns,
				     .timed_calls = r->timed };

	file_io_add(io, &raw);
	for (int b = 0; b < HIST_BUCKETS; b++)
		lat[b] = r->lat_hist[b];
	return sparse_hist_add(&io->lat, lat);
}

void page_cache_add_raw(struct page_cache_view *v, const struct file_stat *st)
{
	v->requested_pages += st->requested_pages;
	v->hit_pages += st->requested_pages - st->miss_pages;
	v->miss_pages += st->miss_pages;
	v->added_pages += st->added_pages;
	v->dirtied_pages += st->dirtied_pages;
	/*
	 * Read ahead of any request: window pages minus those the triggering read needed,
	 * from the sums: a window and the read that asked for its pages can be counted in two
	 * entries of one file (the ledger starts a new one after a rename or an eviction), so
	 * one entry's difference may be below zero; the file's is not, unless its entries went
	 * to other rows (then 0, not a wrapped count).
	 */
	v->readahead_window_added_pages += st->ra_pages;
	v->ra_requested_pages += st->ra_requested_pages;
	v->readahead_pages = v->readahead_window_added_pages > v->ra_requested_pages ?
				     v->readahead_window_added_pages - v->ra_requested_pages : 0;
	v->readahead_fallbacks += st->ra_fallbacks;
	v->faults += st->faults;
	v->fault_around_pages += st->map_pages;
	v->direct_reads += st->direct_reads;
	v->direct_read_bytes += st->direct_read_bytes;
	v->direct_writes += st->direct_writes;
	v->direct_write_bytes += st->direct_write_bytes;
	for (int k = 0; k < RA_KINDS; k++) {
		v->ra_windows[k] += st->ra_windows[k];
		v->ra_window_pages[k] += st->ra_window_pages[k];
	}
}

int files_add_entry(struct proc_record *p, const struct ledger_entry *e)
{
	struct path_key k = { .dev = e->st.key.dev, .ino = e->st.key.ino, .igen = e->st.key.igen };
	struct file_record *f = files_get(p, &k);
	struct page_bits sorted = e->bits;
	int err = 0;

	if (!f)
		return -1;
	page_cache_add_raw(&f->pc, &e->st);
	f->advice |= e->st.advice;
	f->loaded |= e->st.loaded;
	f->load.loader_read_calls += e->st.load_read_calls;
	f->load.loader_read_bytes += e->st.load_read_bytes;
	f->added_folios += e->st.added_folios;
	f->chunks_lost |= e->chunks_lost;
	for (int b = 0; b < HIST_BUCKETS; b++)
		p->window_hist[b] += e->st.window_hist[b];
	if (sorted.n)
		qsort(sorted.chunks, sorted.n, sizeof(*sorted.chunks), cmp_chunk);
	if (sorted.n && bits_union(&f->bits, &sorted))
		err = -1;
	/* By name first: the rows so far were all made under the file's first name. */
	if (files_add_named(f, e))
		err = -1;
	for (size_t i = 0; i < e->nrows; i++)
		if (add_row(f, e->rows[i].op, &e->rows[i].row))
			err = -1;
	return err;
}

/* ---- block ---- */

int files_add_block(struct proc_record *p, const struct file_block_key *k,
		    const struct file_block_stat *st)
{
	struct path_key file = { .dev = k->ino ? k->fdev : k->disk, .ino = k->ino,
				 .igen = k->ino ? k->igen : 0 };
	struct file_record *f = files_get(p, &file);
	struct file_block *b = NULL;
	int err = 0;

	if (!f)
		return -1;
	if (!k->ino)
		f->kind = FK_METADATA;
	for (size_t i = 0; i < f->nblocks && !b; i++)
		if (f->blocks[i].disk == k->disk && f->blocks[i].op == k->op)
			b = &f->blocks[i];
	if (!b) {
		b = VEC_PUSH(f->blocks, f->nblocks);
		if (!b)
			return -1;
		b->disk = k->disk;
		b->op = k->op;
	}
#define ADD(member) b->c.member += st->member;
	BLOCK_COUNTS_SUMMED(ADD)
#undef ADD
	b->c.latency_sum_ns += st->lat_ns;
	b->c.queue_latency_sum_ns += st->qlat_ns;
	err |= sparse_hist_add(&b->size, st->size_hist);
	err |= sparse_hist_add(&b->lat, st->lat_hist);
	err |= sparse_hist_add(&b->qlat, st->qlat_hist);
	return err ? -1 : 0;
}

/* ---- the end ---- */

uint64_t page_bits_unused(const struct page_bits *bits)
{
	uint64_t unused = 0;

	for (size_t i = 0; i < bits->n; i++) {
		const struct chunk_bits *c = &bits->chunks[i].bits;

		for (int w = 0; w < CHUNK_WORDS; w++)
			unused += __builtin_popcountll(c->ra[w] & ~c->used[w]);
	}
	return unused;
}

void files_count_readahead(struct proc_record *p)
{
	for (size_t i = 0; i < p->nfiles; i++) {
		struct file_record *f = &p->files[i];

		f->pc.unused_readahead_pages += page_bits_unused(&f->bits);
		f->pc.unused_exact = !f->chunks_lost;
		free(f->bits.chunks);
		f->bits = (struct page_bits){ 0 };
	}
}

void files_finish(struct proc_record *p, bool by_path)
{
	files_count_readahead(p);
	for (size_t i = 0; i < p->nfiles; i++)
		file_summarize(&p->files[i]);
	if (files_rows(p, by_path))
		p->nrows = 0; /* out of memory: no rows rather than half of them */
}

bool file_mapped_only(const struct file_record *f)
{
	/* Mapped by mmap or by execve (which opens and maps the program in the kernel): no
	 * open of its own, no read past an ELF header, never written. */
	bool mapped = f->sum.maps || f->pc.faults || (!f->sum.opens && !f->sum.read_calls);

	return mapped && f->sum.read_bytes <= 4096 && !f->sum.write_calls &&
	       !f->sum.sync_calls && f->kind == FK_FILE;
}

void files_fold(struct file_record *const *f, size_t n, struct files_fold *out)
{
	memset(out, 0, sizeof(*out));
	out->files = n;
	for (size_t i = 0; i < n; i++) {
		out->mapped += file_mapped_only(f[i]);
		out->read_calls += f[i]->sum.read_calls;
		out->read_bytes += f[i]->sum.read_bytes;
		out->write_calls += f[i]->sum.write_calls;
		out->write_bytes += f[i]->sum.write_bytes;
		out->resident_pages += f[i]->residency_missing ? 0 : f[i]->res.resident_pages;
		out->faults += f[i]->pc.faults;
	}
}

struct hist_summary file_io_latency(const struct file_io *io, __u64 *dense)
{
	sparse_hist_dense(&io->lat, dense);
	return hist_summary_of(HIST_LOG2, dense, false, 0, 0);
}

void file_record_free(struct file_record *f)
{
	free(f->bits.chunks);
	for (size_t j = 0; j < f->nio; j++)
		sparse_hist_free(&f->io[j].lat);
	free(f->io);
	for (size_t j = 0; j < f->nby_name; j++)
		free(f->by_name[j].rows);
	free(f->by_name);
	for (size_t j = 0; j < f->nblocks; j++) {
		sparse_hist_free(&f->blocks[j].size);
		sparse_hist_free(&f->blocks[j].lat);
		sparse_hist_free(&f->blocks[j].qlat);
	}
	free(f->blocks);
	if (f->versions)
		free((char *)f->other_names); /* a row of several files owns these (files_rows) */
}

void files_free(struct proc_record *p)
{
	for (size_t i = 0; i < p->nfiles; i++)
		file_record_free(&p->files[i]);
	for (size_t i = 0; i < p->nmerged; i++)
		file_record_free(&p->merged[i]);
	free(p->files);
	free(p->merged);
	free(p->rows);
	p->files = p->merged = NULL;
	p->rows = NULL;
	p->nfiles = p->nmerged = p->nrows = 0;
	file_index_free(p->file_index);
	p->file_index = NULL;
}
