// SPDX-License-Identifier: GPL-2.0
/*
 * Summing one kind of record at a time (profiles, page-cache views, block records) and the
 * numbers derived from one record: quantiles, averages, page-cache hits; the names of the
 * records' enums. model.c derives the whole run with them, once; the renderers only format.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sums.h"
#include "syscall_table.h"
#include "util/vec.h"

void dense_reset(struct dense_profile *d)
{
	memset(d, 0, sizeof(*d));
	for (uint32_t nr = 0; nr < MAX_SYSCALLS; nr++)
		d->sc[nr].nr = nr;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static void io_add(struct io_summary *dst, const struct io_summary *src)
{
	/* min/max mean something only where the histograms hold at least one call. */
	if (!hist_empty(HIST_LOG2, src->size_hist)) {
		dst->size_min = !hist_empty(HIST_LOG2, dst->size_hist)
					? min_u64(dst->size_min, src->size_min) : src->size_min;
		dst->size_max = max_u64(dst->size_max, src->size_max);
	}
	if (!hist_empty(HIST_FINE, src->lat_hist)) {
		dst->lat_min = !hist_empty(HIST_FINE, dst->lat_hist)
				       ? min_u64(dst->lat_min, src->lat_min) : src->lat_min;
		dst->lat_max = max_u64(dst->lat_max, src->lat_max);
	}
	dst->calls += src->calls;
	dst->errors += src->errors;
	dst->requested_bytes += src->requested_bytes;
	dst->transferred_bytes += src->transferred_bytes;
	dst->unknown_request_calls += src->unknown_request_calls;
	for (int b = 0; b < HIST_BUCKETS; b++)
		dst->size_hist[b] += src->size_hist[b];
	for (int b = 0; b < FINE_BUCKETS; b++)
		dst->lat_hist[b] += src->lat_hist[b];
}

static void sc_add(struct sc_row *dst, const struct sc_row *src)
{
	dst->calls += src->calls;
	dst->errors += src->errors;
	dst->total_ns += src->total_ns;
	dst->timed_calls += src->timed_calls;
}

void dense_add_syscall(struct dense_profile *d, uint32_t nr, const struct syscall_stat *sc)
{
	struct sc_row row = { .calls = sc->calls, .errors = sc->errors,
			      .total_ns = sc->total_ns, .timed_calls = sc->timed };

	if (nr < MAX_SYSCALLS)
		sc_add(&d->sc[nr], &row);
}

void dense_add_io(struct dense_profile *d, uint32_t kind, const struct io_stat *s)
{
	/* The kernel keeps min + 1 so that 0 can mean "none yet". */
	struct io_summary one = {
		.requested_bytes = s->requested,
		.transferred_bytes = s->transferred,
		.unknown_request_calls = s->unknown_request,
		.size_min = s->size_min_plus1 ? s->size_min_plus1 - 1 : 0,
		.size_max = s->size_max,
		.lat_min = s->lat_min_plus1 ? s->lat_min_plus1 - 1 : 0,
		.lat_max = s->lat_max,
	};

	if (!kind || kind >= IO_KINDS)
		return;
	memcpy(one.size_hist, s->size_hist, sizeof(one.size_hist));
	memcpy(one.lat_hist, s->lat_hist, sizeof(one.lat_hist));
	io_add(&d->io[kind], &one);
}

void dense_merge_raw(struct dense_profile *d, const struct dense_profile *src)
{
	for (int nr = 0; nr < MAX_SYSCALLS; nr++)
		sc_add(&d->sc[nr], &src->sc[nr]);
	for (int k = 1; k < IO_KINDS; k++)
		io_add(&d->io[k], &src->io[k]);
}

void dense_add(struct dense_profile *d, const struct profile *p)
{
	for (size_t i = 0; i < p->nrows; i++)
		sc_add(&d->sc[p->rows[i].nr], &p->rows[i]);
	for (int k = 0; k < IO_KINDS; k++) {
		if (!p->io[k])
			continue;
		io_add(&d->io[k], p->io[k]);
		d->io_used[k] = true;
	}
}

void dense_merge(struct dense_profile *d, const struct dense_profile *src)
{
	for (int nr = 0; nr < MAX_SYSCALLS; nr++)
		sc_add(&d->sc[nr], &src->sc[nr]);
	for (int k = 0; k < IO_KINDS; k++) {
		if (!src->io_used[k])
			continue;
		io_add(&d->io[k], &src->io[k]);
		d->io_used[k] = true;
	}
}

void dense_finish_io(struct dense_profile *d)
{
	for (int k = 1; k < IO_KINDS; k++) {
		int nr = io_kind_nr(k);

		if (nr < 0 || !d->sc[nr].calls)
			continue;
		d->io_used[k] = true;
		d->io[k].calls = d->sc[nr].calls;
		d->io[k].errors = d->sc[nr].errors;
	}
}

int dense_to_profile(const struct dense_profile *d, struct profile *out)
{
	size_t n = 0;

	for (int nr = 0; nr < MAX_SYSCALLS; nr++)
		n += d->sc[nr].calls != 0;
	out->rows = calloc(n ? n : 1, sizeof(*out->rows));
	if (!out->rows)
		return -1;
	for (int nr = 0; nr < MAX_SYSCALLS; nr++)
		if (d->sc[nr].calls)
			out->rows[out->nrows++] = d->sc[nr];
	for (int k = 0; k < IO_KINDS; k++) {
		if (!d->io_used[k])
			continue;
		out->io[k] = malloc(sizeof(*out->io[k]));
		if (!out->io[k])
			return -1;
		*out->io[k] = d->io[k];
	}
	return 0;
}

void profile_free(struct profile *p)
{
	free(p->rows);
	for (int k = 0; k < IO_KINDS; k++)
		free(p->io[k]);
	memset(p, 0, sizeof(*p));
}

/* ---- page cache ---- */

void page_cache_reset(struct page_cache_sum *s)
{
	memset(s, 0, sizeof(*s));
	s->v.unused_exact = true;
}

static void view_add(struct page_cache_view *sum, const struct page_cache_view *v)
{
	for (size_t i = 0; i < page_cache_fields.n; i++) {
		uint64_t *dst = (uint64_t *)((char *)sum + page_cache_fields.f[i].offset);

		*dst += field_get(&page_cache_fields.f[i], v);
	}
	for (int k = 0; k < RA_KINDS; k++) {
		sum->ra_windows[k] += v->ra_windows[k];
		sum->ra_window_pages[k] += v->ra_window_pages[k];
	}
	sum->unused_exact &= v->unused_exact;
}

void page_cache_add(struct page_cache_sum *sum, const struct page_cache_view *v)
{
	view_add(&sum->v, v);
	sum->files++;
}

void page_cache_merge(struct page_cache_sum *sum, const struct page_cache_sum *other)
{
	view_add(&sum->v, &other->v);
	for (int b = 0; b < HIST_BUCKETS; b++)
		sum->window_hist[b] += other->window_hist[b];
	sum->files += other->files;
}

const char *page_cache_field_unknown(const struct field *f, const struct page_cache_view *v,
				     const char *direct_missing)
{
	if ((f->flags & FIELD_NEEDS_EXACT_BITMAPS) && !v->unused_exact)
		return "page bitmap table full (drops.page_chunks)";
	if (f->flags & FIELD_NEEDS_DIRECT_HOOK)
		return direct_missing;
	return NULL;
}

/* ---- files ---- */

void file_io_add(struct file_io *dst, const struct file_io *src)
{
#define ADD_IO_FIELD(name, ...) dst->name += src->name;
	FILE_IO_FIELDS(ADD_IO_FIELD)
#undef ADD_IO_FIELD
}

/* ---- block ---- */

void block_record_add(struct block_record *dst, const struct block_record *src)
{
	struct block_stat *d = &dst->st;
	const struct block_stat *s = &src->st;

#define ADD(member) d->member += s->member;
	BLOCK_COUNTS_SUMMED(ADD)
#undef ADD
	d->writeback_bytes += s->writeback_bytes;
	d->lat_ns += s->lat_ns;
	d->qlat_ns += s->qlat_ns;
	for (int b = 0; b < HIST_BUCKETS; b++)
		d->size_hist[b] += s->size_hist[b];
	for (int b = 0; b < FINE_BUCKETS; b++) {
		d->lat_hist[b] += s->lat_hist[b];
		d->qlat_hist[b] += s->qlat_hist[b];
	}
	dst->lat_layout = src->lat_layout;
}

void block_record_derive(struct block_record *r)
{
	const struct block_stat *st = &r->st;
	struct block_view *v = &r->v;

	v->requests = st->requests;
	v->bytes = st->bytes;
	v->errors = st->errors;
	v->sync = st->sync;
	v->readahead = st->readahead;
	v->meta = st->meta;
	v->fua = st->fua;
	v->preflush = st->preflush;
	v->writeback = st->writeback;
	v->sequential = st->sequential;
	v->latency_sum_ns = st->lat_ns;
	v->queue_latency_sum_ns = st->qlat_ns;
	v->avg_bytes = st->requests ? st->bytes / st->requests : 0;
	v->sequential_pct = st->requests ? 100 * st->sequential / st->requests : 0;
	/* The kernel keeps no extremes of block histograms: quantiles within bucket bounds. */
	v->size = hist_summary_of(HIST_LOG2, st->size_hist, false, 0, 0);
	v->lat = hist_summary_of(r->lat_layout, st->lat_hist, false, 0, 0);
	v->qlat = hist_summary_of(r->lat_layout, st->qlat_hist, false, 0, 0);
}

int block_add_unseen(struct block_record **recs, size_t *n, const struct block_record *unseen,
		     size_t nunseen)
{
	for (size_t u = 0; u < nunseen; u++) {
		struct block_record one = unseen[u];
		size_t i;

		/* One request, counted without latencies (its completion was not seen). */
		memset(one.st.size_hist, 0, sizeof(one.st.size_hist));
		one.st.size_hist[hist_bucket_of(HIST_LOG2, one.st.bytes)] = one.st.requests;
		for (i = 0; i < *n && memcmp(&(*recs)[i].key, &one.key, sizeof(one.key)); i++)
			;
		if (i == *n) {
			if (!VEC_PUSH(*recs, *n))
				return -1;
			(*recs)[i].key = one.key;
		}
		block_record_add(&(*recs)[i], &one);
	}
	return 0;
}

void block_sums_of(struct block_sums *s, const struct block_record *recs, size_t n)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < n; i++) {
		block_record_add(&s->by_op[recs[i].key.op % BLOCK_OPS], &recs[i]);
		block_record_add(&s->all, &recs[i]);
	}
	for (int op = 0; op < BLOCK_OPS; op++) {
		s->by_op[op].key.op = op;
		block_record_derive(&s->by_op[op]);
	}
	block_record_derive(&s->all);
}

/* Adds rec into the list, merged with the record of the same disk and operation. */
static int add_by_disk(struct block_record **list, size_t *n, const struct block_record *rec)
{
	struct block_key key = { .dev = rec->key.dev, .op = rec->key.op };
	size_t i;

	for (i = 0; i < *n && memcmp(&(*list)[i].key, &key, sizeof(key)); i++)
		;
	if (i == *n) {
		if (!VEC_PUSH(*list, *n))
			return -1;
		(*list)[i].key = key;
	}
	block_record_add(&(*list)[i], rec);
	return 0;
}

int block_by_disk_of_run(const struct run_result *r, struct block_record **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < r->nprocs; i++)
		for (size_t j = 0; j < r->procs[i].nblocks; j++)
			if (add_by_disk(out, n, &r->procs[i].blocks[j]))
				return -1;
	for (size_t j = 0; j < r->nother_blocks; j++)
		if (add_by_disk(out, n, &r->other_blocks[j]))
			return -1;
	for (size_t i = 0; i < *n; i++)
		block_record_derive(&(*out)[i]);
	return 0;
}

static struct disk_stat_view *disk_stat_for(struct disk_stat_view *v, size_t *n, uint32_t dev)
{
	for (size_t i = 0; i < *n; i++)
		if (v[i].dev == dev)
			return &v[i];
	v[*n].dev = dev;
	return &v[(*n)++];
}

int disk_stats_of(const struct block_record *by_disk, size_t n, struct disk_stat_view **out,
		  size_t *nout)
{
	*nout = 0;
	*out = calloc(n ? n : 1, sizeof(**out));
	if (!*out)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct block_view *b = &by_disk[i].v;
		struct disk_stat_view *d = disk_stat_for(*out, nout, by_disk[i].key.dev);
		uint64_t ms = b->queue_latency_sum_ns / 1000000;

		switch (by_disk[i].key.op) {
		case BOP_READ:
			d->read_ios = b->requests;
			d->read_sectors = b->bytes >> 9;
			d->read_ticks_ms = ms;
			break;
		case BOP_WRITE:
			d->write_ios = b->requests;
			d->write_sectors = b->bytes >> 9;
			d->write_ticks_ms = ms;
			break;
		case BOP_DISCARD:
			d->discard_ios = b->requests;
			d->discard_sectors = b->bytes >> 9;
			d->discard_ticks_ms = ms;
			break;
		case BOP_FLUSH:
			d->flush_ios = b->requests;
			d->flush_ticks_ms = ms;
			break;
		}
	}
	return 0;
}

int file_block_records(const struct file_record *f, struct block_record **out, size_t *n)
{
	*n = 0;
	*out = NULL;
	/* None: nothing allocated (a block record is large; a report has tens of thousands
	 * of files without block I/O, docs/performance.md "The report of a large run"). */
	if (!f->nblocks)
		return 0;
	*out = calloc(f->nblocks, sizeof(**out));
	if (!*out)
		return -1;
	for (size_t i = 0; i < f->nblocks; i++) {
		const struct file_block *b = &f->blocks[i];
		struct block_record *r = &(*out)[(*n)++];

		r->key = (struct block_key){ .owner = f->key.owner, .dev = b->disk, .op = b->op };
		r->lat_layout = HIST_LOG2; /* per-file latencies have log2 buckets */
		r->st.requests = b->c.requests;
		r->st.bytes = b->c.bytes;
		r->st.errors = b->c.errors;
		r->st.sync = b->c.sync;
		r->st.readahead = b->c.readahead;
		r->st.meta = b->c.meta;
		r->st.fua = b->c.fua;
		r->st.preflush = b->c.preflush;
		r->st.writeback = b->c.writeback;
		r->st.sequential = b->c.sequential;
		r->st.lat_ns = b->c.latency_sum_ns;
		r->st.qlat_ns = b->c.queue_latency_sum_ns;
		sparse_hist_dense(&b->size, r->st.size_hist);
		sparse_hist_dense(&b->lat, r->st.lat_hist);
		sparse_hist_dense(&b->qlat, r->st.qlat_hist);
		block_record_derive(r);
	}
	return 0;
}

/* ---- names ---- */

const char *advice_name(uint32_t advice, char *buf, size_t len)
{
	static const char *const names[] = { "normal", "sequential", "random", "direct" };
	size_t used = 0;

	buf[0] = '\0';
	for (int b = 0; b < 4; b++)
		if (advice & (1u << b))
			used += snprintf(buf + used, used < len ? len - used : 0, "%s%s",
					 used ? "+" : "", names[b]);
	return advice ? buf : NULL;
}

#define RA_KIND_NAME(kind, help) #kind,
const char *const ra_kind_names[RA_KINDS] = { RA_KIND_FIELDS(RA_KIND_NAME) };
#define RA_KIND_ONE(kind, help) +1
_Static_assert(0 RA_KIND_FIELDS(RA_KIND_ONE) == RA_KINDS, "RA_KIND_FIELDS lists enum ra_kind");

#define DROP_NAME(suffix, name, help) [DROP_##suffix] = #name,
const char *const drop_names[DROP_COUNTERS] = { DROP_LIST(DROP_NAME) };
#define DROP_HELP(suffix, name, help) [DROP_##suffix] = help,
const char *const drop_help[DROP_COUNTERS] = { DROP_LIST(DROP_HELP) };

bool drop_loses(int i)
{
	return i != DROP_RINGBUF && i != DROP_BLOCK_UNSEEN && i != DROP_BLOCK_EVENTS;
}

const char *const block_op_names[BLOCK_OPS] = {
	[BOP_READ] = "read", [BOP_WRITE] = "write", [BOP_FLUSH] = "flush",
	[BOP_DISCARD] = "discard", [BOP_OTHER] = "other",
};
