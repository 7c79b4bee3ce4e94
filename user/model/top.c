// SPDX-License-Identifier: GPL-2.0
/*
 * iotrace top's view: an interval's processes (or their groups) and files as rows, each rate
 * and share derived once, here; filtered by name and sorted by a column. Renderers
 * (report/top_*.c) only format what this leaves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"
#include "top.h"

#define TOP_ADD(name, ...) a->name += b->name;
#define TOP_ANY(name, ...) || c->name

void top_counts_add(struct top_counts *a, const struct top_counts *b)
{
	TOP_COUNT_FIELDS(TOP_ADD)
}

bool top_counts_any(const struct top_counts *c)
{
	return false TOP_COUNT_FIELDS(TOP_ANY);
}

void top_sample_free(struct top_sample *s)
{
	free(s->procs);
	free(s->files);
	free(s->disks);
	disk_table_free(&s->disk_names);
	memset(s, 0, sizeof(*s));
}

/* ---- sort keys ---- */

#define TOP_SORT_NAME(name, key) key,
static const char *const sort_names[TOP_SORTS] = { TOP_SORT_KEYS(TOP_SORT_NAME) };

int top_sort_of(const char *text)
{
	for (int i = 0; i < TOP_SORTS; i++)
		if (!strcmp(text, sort_names[i]))
			return i;
	return -1;
}

const char *top_sort_name(enum top_sort s)
{
	return s < TOP_SORTS ? sort_names[s] : "?";
}

static const char *const group_names[] = { "process", "cgroup", "container", "pod" };

int top_group_of(const char *text)
{
	for (int i = 0; i < (int)(sizeof(group_names) / sizeof(group_names[0])); i++)
		if (!strcmp(text, group_names[i]))
			return i;
	return -1;
}

const char *top_group_name(enum top_group g)
{
	return g <= TOP_BY_POD ? group_names[g] : "?";
}

const char *top_sort_list(void)
{
	static char list[128];

	if (!list[0])
		for (int i = 0; i < TOP_SORTS; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i ? ", " : "", sort_names[i]);
	return list;
}

/* ---- rates ---- */

static double per_sec(uint64_t v, double secs)
{
	return secs > 0 ? v / secs : 0;
}

static void rates_of(const struct top_counts *c, double secs, struct top_rates *r)
{
	uint64_t miss = c->miss_pages < c->requested_pages ? c->miss_pages : c->requested_pages;

	r->read_bytes_per_sec = per_sec(c->read_bytes, secs);
	r->write_bytes_per_sec = per_sec(c->write_bytes, secs);
	r->hit_pct = c->requested_pages ? 100.0 * (c->requested_pages - miss) / c->requested_pages
				        : TOP_NONE;
	r->disk_read_bytes_per_sec = per_sec(c->disk_read_bytes, secs);
	r->disk_write_bytes_per_sec = per_sec(c->disk_write_bytes, secs);
	r->io_time_pct = secs > 0 ? 100.0 * c->io_ns / (secs * 1e9) : 0;
	r->io_uring_ops_per_sec = per_sec(c->io_uring_ops, secs);
}

static double p99_of(const __u64 *lat)
{
	return hist_total(HIST_FINE, lat) ? (double)hist_quantile(HIST_FINE, lat, 0.99, 0, UINT64_MAX)
					  : TOP_NONE;
}

static void disk_rates_of(const struct top_counts *c, const __u64 lat[2][FINE_BUCKETS],
			  double secs, struct top_disk_rates *d)
{
	d->read_iops = per_sec(c->disk_reads, secs);
	d->write_iops = per_sec(c->disk_writes, secs);
	d->read_p99_ns = p99_of(lat[0]);
	d->write_p99_ns = p99_of(lat[1]);
	d->writeback_bytes_per_sec = per_sec(c->disk_writeback_bytes, secs);
}

/* The header: the machine's counts, and every disk's latencies together. */
static int header_of(const struct top_sample *s, struct top_view *v)
{
	__u64 lat[2][FINE_BUCKETS] = { { 0 } };

	v->h.c = s->total;
	v->h.live = s->live;
	rates_of(&s->total, s->seconds, &v->h.r);
	v->disks = calloc(s->ndisks ? s->ndisks : 1, sizeof(*v->disks));
	if (!v->disks)
		return -1;
	for (size_t i = 0; i < s->ndisks; i++) {
		const struct top_disk *d = &s->disks[i];
		struct top_view_disk *out = &v->disks[v->ndisks++];

		memcpy(out->name, d->name, sizeof(out->name));
		out->c = d->c;
		rates_of(&d->c, s->seconds, &out->r);
		disk_rates_of(&d->c, d->lat, s->seconds, &out->d);
		for (int op = 0; op < 2; op++)
			for (int b = 0; b < FINE_BUCKETS; b++)
				lat[op][b] += d->lat[op][b];
	}
	disk_rates_of(&s->total, lat, s->seconds, &v->h.d);
	return 0;
}

/* ---- rows ---- */

/* What a process is grouped by: its cgroup, container or pod; "?" when unknown. */
static const char *group_key(const struct top_proc *p, enum top_group g)
{
	const char *k = g == TOP_BY_CGROUP ? p->cgroup : g == TOP_BY_CONTAINER ? p->container
		      : p->container ? (p->pod ? p->pod : "(no pod)") : NULL;

	return k ? k : "?";
}

/* The name a process is shown (and grouped) by. */
static char *row_name(const struct top_proc *p, const struct top_view_opts *o)
{
	char *name = NULL;

	if (p->overflow)
		return strdup("(overflow)");
	if (o->group == TOP_BY_PROCESS)
		return strdup(p->comm);
	/*
	 * A container's name is not unique (every pod of a Deployment has its "app"): the
	 * rows are folded by name, so a named container's row names its short ID too.
	 */
	if (o->group == TOP_BY_CONTAINER && p->container && p->container_id &&
	    strncmp(p->container, p->container_id, 12)) {
		if (asprintf(&name, "%s (%.12s)%s%s", p->container, p->container_id,
			     o->by_comm ? " " : "", o->by_comm ? p->comm : "") < 0)
			return NULL;
		return name;
	}
	if (o->by_comm) {
		if (asprintf(&name, "%s %s", group_key(p, o->group), p->comm) < 0)
			return NULL;
		return name;
	}
	return strdup(group_key(p, o->group));
}

/* A copy of text (NULL stays NULL); false when out of memory. */
static bool dup_or_null(char **out, const char *text)
{
	*out = text ? strdup(text) : NULL;
	return !text || *out;
}

static void row_free(struct top_row *r)
{
	free(r->name);
	free(r->cgroup);
	free(r->container);
	free(r->container_id);
	free(r->pod);
}

static int cmp_name(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* Rows of equal names folded into one (groups): rows sorted by name first. */
static size_t fold_groups(struct top_row *rows, size_t n)
{
	size_t out = 0;

	qsort(rows, n, sizeof(*rows), cmp_name);
	for (size_t i = 0; i < n; i++) {
		if (out && !strcmp(rows[out - 1].name, rows[i].name)) {
			top_counts_add(&rows[out - 1].c, &rows[i].c);
			rows[out - 1].procs += rows[i].procs;
			rows[out - 1].exited &= rows[i].exited;
			row_free(&rows[i]);
			continue;
		}
		rows[out] = rows[i];
		rows[out++].pid = 0;
	}
	return out;
}

static int proc_rows(const struct top_sample *s, const struct top_view_opts *o,
		     struct top_view *v)
{
	bool grouped = o->group != TOP_BY_PROCESS || o->by_comm;

	v->rows = calloc(s->nprocs ? s->nprocs : 1, sizeof(*v->rows));
	if (!v->rows)
		return -1;
	for (size_t i = 0; i < s->nprocs; i++) {
		const struct top_proc *p = &s->procs[i];
		struct top_row *r = &v->rows[v->nrows];

		r->pid = p->overflow ? 0 : p->pid;
		r->name = row_name(p, o);
		r->procs = 1;
		r->exited = p->exited;
		r->c = p->c;
		if (!r->name || !dup_or_null(&r->cgroup, p->cgroup) ||
		    !dup_or_null(&r->container, p->container) ||
		    !dup_or_null(&r->container_id, p->container_id) ||
		    !dup_or_null(&r->pod, p->pod)) {
			row_free(r);
			return -1;
		}
		v->nrows++;
	}
	if (grouped)
		v->nrows = fold_groups(v->rows, v->nrows);
	for (size_t i = 0; i < v->nrows; i++)
		rates_of(&v->rows[i].c, s->seconds, &v->rows[i].r);
	return 0;
}

/* A file's name: its path, or for block I/O of no file the disk's metadata. */
static char *file_name(const struct top_file *f, const struct disk_table *disks)
{
	char *name = NULL, disk[DISK_NAME_LEN];

	if (f->name)
		return strdup(f->name);
	if (!f->key.ino) {
		if (asprintf(&name, "(metadata: %s)",
			     disk_table_name(disks, f->key.dev, disk, sizeof(disk))) < 0)
			return NULL;
		return name;
	}
	if (asprintf(&name, "(dev %u:%u ino %llu)", f->key.dev >> 20, f->key.dev & 0xfffff,
		     (unsigned long long)f->key.ino) < 0)
		return NULL;
	return name;
}

static int file_rows(const struct top_sample *s, struct top_view *v)
{
	v->files = calloc(s->nfiles ? s->nfiles : 1, sizeof(*v->files));
	if (!v->files)
		return -1;
	for (size_t i = 0; i < s->nfiles; i++) {
		struct top_row *r = &v->files[v->nfiles];

		r->name = file_name(&s->files[i], &s->disk_names);
		if (!r->name)
			return -1;
		r->procs = s->files[i].procs;
		r->c = s->files[i].c;
		rates_of(&r->c, s->seconds, &r->r);
		v->nfiles++;
	}
	return 0;
}

/* ---- sorting and filtering ---- */

/* A row's value in the sort column; TOP_NONE sorts below every value. */
static double sort_value(const struct top_row *r, enum top_sort s)
{
	switch (s) {
	case TOP_SORT_READ:
		return r->r.read_bytes_per_sec;
	case TOP_SORT_WRITE:
		return r->r.write_bytes_per_sec;
	case TOP_SORT_HIT:
		return r->r.hit_pct;
	case TOP_SORT_DREAD:
		return r->r.disk_read_bytes_per_sec;
	case TOP_SORT_DWRITE:
		return r->r.disk_write_bytes_per_sec;
	case TOP_SORT_IO:
		return r->r.io_time_pct;
	case TOP_SORT_URING:
		return r->r.io_uring_ops_per_sec;
	default:
		return r->pid;
	}
}

static const struct top_view_opts *sorting; /* qsort has no context argument */

/* Largest first (ascending: smallest), then by name and pid, so the order is stable. */
static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = *(struct top_row *const *)a, *y = *(struct top_row *const *)b;
	int c = 0;

	if (sorting->sort == TOP_SORT_NAME) {
		c = strcmp(x->name, y->name);
		return sorting->ascending ? -c : c;
	}
	if (sort_value(x, sorting->sort) != sort_value(y, sorting->sort))
		c = sort_value(x, sorting->sort) > sort_value(y, sorting->sort) ? -1 : 1;
	if (sorting->ascending)
		c = -c;
	if (!c)
		c = strcmp(x->name, y->name);
	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

static size_t select_rows(struct top_row *rows, size_t n, struct top_row **out,
			  const struct top_view_opts *o)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!o->filter || !*o->filter || strstr(rows[i].name, o->filter))
			out[k++] = &rows[i];
	sorting = o;
	qsort(out, k, sizeof(*out), cmp_rows);
	return k;
}

void top_view_resort(struct top_view *v, const struct top_view_opts *o)
{
	v->o.sort = o->sort;
	v->o.ascending = o->ascending;
	v->o.filter = o->filter;
	v->nshown = select_rows(v->rows, v->nrows, v->shown, &v->o);
	v->nshown_files = select_rows(v->files, v->nfiles, v->shown_files, &v->o);
}

int top_view_build(const struct top_sample *s, const struct top_view_opts *o,
		   struct top_view *v)
{
	memset(v, 0, sizeof(*v));
	v->o = *o;
	v->seconds = s->seconds;
	v->block_until_ns = s->block_until_ns;
	memcpy(v->drops, s->drops, sizeof(v->drops));
	v->na[TOP_SORT_HIT] = s->page_cache_missing;
	v->na[TOP_SORT_URING] = s->uring_missing;
	v->na[TOP_SORT_IO] = s->timing ? NULL : "syscalls not timed";
	if (header_of(s, v) || proc_rows(s, o, v) || file_rows(s, v))
		return -1;
	v->shown = calloc(v->nrows ? v->nrows : 1, sizeof(*v->shown));
	v->shown_files = calloc(v->nfiles ? v->nfiles : 1, sizeof(*v->shown_files));
	if (!v->shown || !v->shown_files)
		return -1;
	top_view_resort(v, o);
	return 0;
}

void top_view_free(struct top_view *v)
{
	for (size_t i = 0; i < v->nrows; i++)
		row_free(&v->rows[i]);
	for (size_t i = 0; i < v->nfiles; i++)
		free(v->files[i].name);
	free(v->rows);
	free(v->files);
	free(v->shown);
	free(v->shown_files);
	free(v->disks);
	memset(v, 0, sizeof(*v));
}
