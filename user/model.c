// SPDX-License-Identifier: GPL-2.0
/* Summing and compacting profiles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"
#include "model.h"
#include "syscall_table.h"

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

void dense_add_io(struct io_summary *dst, const struct io_summary *src)
{
	/* min/max mean something only where the histograms hold at least one call. */
	if (hist_total(src->size_hist)) {
		dst->size_min = hist_total(dst->size_hist) ? min_u64(dst->size_min, src->size_min)
							   : src->size_min;
		dst->size_max = max_u64(dst->size_max, src->size_max);
	}
	if (hist_total(src->lat_hist)) {
		dst->lat_min = hist_total(dst->lat_hist) ? min_u64(dst->lat_min, src->lat_min)
							 : src->lat_min;
		dst->lat_max = max_u64(dst->lat_max, src->lat_max);
	}
	dst->calls += src->calls;
	dst->errors += src->errors;
	dst->requested += src->requested;
	dst->transferred += src->transferred;
	dst->unknown_request += src->unknown_request;
	for (int b = 0; b < HIST_BUCKETS; b++) {
		dst->size_hist[b] += src->size_hist[b];
		dst->lat_hist[b] += src->lat_hist[b];
	}
}

void dense_add(struct dense_profile *d, const struct profile *p)
{
	for (size_t i = 0; i < p->nrows; i++) {
		struct sc_row *r = &d->sc[p->rows[i].nr];

		r->calls += p->rows[i].calls;
		r->errors += p->rows[i].errors;
		r->total_ns += p->rows[i].total_ns;
	}
	for (int k = 0; k < IO_KINDS; k++) {
		if (!p->io[k])
			continue;
		dense_add_io(&d->io[k], p->io[k]);
		d->io_used[k] = true;
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

uint64_t profile_calls(const struct profile *p)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < p->nrows; i++)
		sum += p->rows[i].calls;
	return sum;
}

const char *const ra_kind_names[RA_KINDS] = {
	[RA_SYNC] = "sync", [RA_ASYNC] = "async", [RA_MMAP] = "mmap",
	[RA_FORCED_SYNC] = "forced_sync", [RA_FORCED] = "forced",
};

static void file_stat_add(struct file_stat *s, const struct file_stat *f)
{
	s->requested_pages += f->requested_pages;
	s->miss_pages += f->miss_pages;
	s->added_pages += f->added_pages;
	s->added_folios += f->added_folios;
	s->ra_pages += f->ra_pages;
	s->ra_requested_pages += f->ra_requested_pages;
	for (int k = 0; k < RA_KINDS; k++) {
		s->ra_windows[k] += f->ra_windows[k];
		s->ra_window_pages[k] += f->ra_window_pages[k];
	}
	s->ra_fallbacks += f->ra_fallbacks;
	s->faults += f->faults;
	s->map_pages += f->map_pages;
	s->direct_reads += f->direct_reads;
	s->direct_read_bytes += f->direct_read_bytes;
	s->direct_writes += f->direct_writes;
	s->direct_write_bytes += f->direct_write_bytes;
	for (int b = 0; b < HIST_BUCKETS; b++)
		s->window_hist[b] += f->window_hist[b];
}

void page_cache_add(struct page_cache_sum *sum, const struct file_record *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		file_stat_add(&sum->st, &files[i].st);
		sum->unused_ra_pages += files[i].unused_ra_pages;
		sum->unused_exact &= files[i].unused_exact;
	}
}

void page_cache_merge(struct page_cache_sum *sum, const struct page_cache_sum *other)
{
	file_stat_add(&sum->st, &other->st);
	sum->unused_ra_pages += other->unused_ra_pages;
	sum->unused_exact &= other->unused_exact;
}

void dense_merge(struct dense_profile *d, const struct dense_profile *src)
{
	for (int nr = 0; nr < MAX_SYSCALLS; nr++) {
		d->sc[nr].calls += src->sc[nr].calls;
		d->sc[nr].errors += src->sc[nr].errors;
		d->sc[nr].total_ns += src->sc[nr].total_ns;
	}
	for (int k = 0; k < IO_KINDS; k++) {
		if (!src->io_used[k])
			continue;
		dense_add_io(&d->io[k], &src->io[k]);
		d->io_used[k] = true;
	}
}

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

const char *const drop_names[DROP_COUNTERS] = {
	[DROP_RINGBUF] = "ringbuf_events",
	[DROP_SLOTS] = "overflow_processes",
	[DROP_UNTIMED] = "untimed_calls",
	[DROP_FILES] = "files",
	[DROP_CHUNKS] = "page_chunks",
	[DROP_PATHS] = "paths",
	[DROP_BLOCK_INFLIGHT] = "block_inflight",
	[DROP_BLOCK_KEYS] = "block_keys",
	[DROP_BLOCK_EVENTS] = "block_events",
	[DROP_BLOCK_UNSEEN] = "block_completions_unseen",
};

const char *const block_op_names[BLOCK_OPS] = {
	[BOP_READ] = "read", [BOP_WRITE] = "write", [BOP_FLUSH] = "flush",
	[BOP_DISCARD] = "discard", [BOP_OTHER] = "other",
};

void block_stat_add(struct block_stat *dst, const struct block_stat *src)
{
	dst->requests += src->requests;
	dst->bytes += src->bytes;
	dst->errors += src->errors;
	dst->sync += src->sync;
	dst->readahead += src->readahead;
	dst->meta += src->meta;
	dst->fua += src->fua;
	dst->preflush += src->preflush;
	dst->writeback += src->writeback;
	dst->sequential += src->sequential;
	dst->lat_ns += src->lat_ns;
	dst->qlat_ns += src->qlat_ns;
	for (int b = 0; b < HIST_BUCKETS; b++) {
		dst->size_hist[b] += src->size_hist[b];
		dst->lat_hist[b] += src->lat_hist[b];
		dst->qlat_hist[b] += src->qlat_hist[b];
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
