// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus text exposition. Counters keep their kernel names under one iotrace_ prefix,
 * in base units (bytes, seconds) with _total on counters; the kernel's log2 histograms
 * become cumulative `le` buckets whose bounds are the buckets' inclusive upper ends
 * (0, 1, 3, 7, ... 2^b - 1), so no observation is counted under the wrong bound.
 */
#include <errno.h>
#include <stdint.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "model/hist.h"
#include "prom.h"
#include "model/syscall_table.h"
#include "model/uring.h"
#include "util/escape.h"
#include "util/disks.h"
#include "util/vec.h"
#include "version.h" /* $(OUTPUT)'s: the Makefile writes it */

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: valid UTF-8, escaped as the format requires (esc_prom, util/escape.h). */
static void put_value(FILE *out, const char *v)
{
	esc_fputs(esc_prom, v, out);
}

/* '{' labels [, extra="value"]... ; pairs is a NULL-terminated name/value list. */
/* run mode's run="NAME" on every series, so files in one textfile directory never clash. */
static const char *run_label;

/* name="value" pairs of a NULL-terminated list; a NULL value is no label. */
static void put_pairs(FILE *out, const char *const *pairs, size_t n, bool *first)
{
	for (size_t i = 0; pairs && i + 1 < n && pairs[i]; i += 2) {
		if (!pairs[i + 1])
			continue;
		fprintf(out, "%s%s=\"", *first ? "" : ",", pairs[i]);
		put_value(out, pairs[i + 1]);
		fputc('"', out);
		*first = false;
	}
}

static void put_labels(FILE *out, const struct prom_labels *lab, const char *const *pairs)
{
	const struct prom_labels none = { 0 };
	const struct prom_labels *l = lab ? lab : &none;
	const char *const named[] = { "run", run_label, "cgroup", l->cgroup,
				      "container", l->container, "pod", l->pod,
				      "namespace", l->namespace, "comm", l->comm };
	bool first = true;

	fputc('{', out);
	put_pairs(out, named, sizeof(named) / sizeof(named[0]), &first);
	put_pairs(out, pairs, SIZE_MAX, &first);
	fputc('}', out);
}

static void sample(FILE *out, const char *name, const struct prom_labels *lab,
		   const char *const *pairs, uint64_t v)
{
	fputs(name, out);
	put_labels(out, lab, pairs);
	fprintf(out, " %llu\n", (unsigned long long)v);
}

static void sample_f(FILE *out, const char *name, const struct prom_labels *lab,
		     const char *const *pairs, double v)
{
	fputs(name, out);
	put_labels(out, lab, pairs);
	fprintf(out, " %.9g\n", v);
}

/* Nanoseconds as exact decimal seconds: 1023 -> "0.000001023", 2^30 - 1 -> "1.073741823". */
static void ns_to_seconds(uint64_t ns, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%llu.%09llu", (unsigned long long)(ns / 1000000000ULL),
			 (unsigned long long)(ns % 1000000000ULL));

	while (n > 0 && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '.')
		buf[--n] = '\0';
}

/*
 * One histogram, in log2 buckets whatever the kernel's layout (a fine one is folded: every
 * log2 bound is a fine one): buckets 0..HIST_BUCKETS-2 have the inclusive upper bound
 * 2^b - 1 (in seconds when ns: the kernel counts nanoseconds); the last bucket is open, so
 * it is +Inf.
 */
static void histogram(FILE *out, const char *name, const struct prom_labels *lab,
		      const char *k, const char *v, const char *k2, const char *v2,
		      enum hist_layout layout, const __u64 *in, double sum, bool ns)
{
	/* The caller's one or two label pairs, then "le" in the first free pair. */
	const char *pairs[] = { k, v, k2, v2, NULL, NULL, NULL };
	int at = k2 ? 4 : 2;
	char metric[128], le[48];
	uint64_t cum = 0;
	__u64 folded[HIST_BUCKETS];
	const __u64 *hist = in;

	if (layout == HIST_FINE) {
		hist_fold_log2(in, folded);
		hist = folded;
	}
	snprintf(metric, sizeof(metric), "%s_bucket", name);
	pairs[at] = "le";
	pairs[at + 1] = le;
	for (int b = 0; b < HIST_BUCKETS - 1; b++) {
		cum += hist[b];
		if (ns)
			ns_to_seconds(hist_bucket_hi(HIST_LOG2, b), le, sizeof(le));
		else
			snprintf(le, sizeof(le), "%llu",
				 (unsigned long long)hist_bucket_hi(HIST_LOG2, b));
		sample(out, metric, lab, pairs, cum);
	}
	cum += hist[HIST_BUCKETS - 1];
	pairs[at + 1] = "+Inf";
	sample(out, metric, lab, pairs, cum);
	pairs[at] = NULL;
	snprintf(metric, sizeof(metric), "%s_sum", name);
	sample_f(out, metric, lab, pairs, sum);
	snprintf(metric, sizeof(metric), "%s_count", name);
	sample(out, metric, lab, pairs, cum);
}

/* A field's value as Prometheus wants it: nanoseconds as seconds. */
static void field_sample(FILE *out, const struct field *f, const char *name,
			 const struct prom_labels *lab, const char *const *pairs, const void *rec)
{
	if (!strcmp(f->unit, "ns"))
		sample_f(out, name, lab, pairs, field_get(f, rec) * 1e-9);
	else
		sample(out, name, lab, pairs, field_get(f, rec));
}

/* True when f is the first field of its table with f's metric (its family's header). */
static bool first_of_family(const struct field_table *t, const struct field *f)
{
	for (const struct field *g = t->f; g < f; g++)
		if (g->metric && !strcmp(g->metric, f->metric))
			return false;
	return true;
}

/* ---- syscalls ---- */

/*
 * How syscalls are timed, as labels of a gauge (docs/prometheus.md): with "sampled", the
 * seconds and latency families are estimates from the timed calls, weighted.
 */
static void timing_info(FILE *out, const struct prom_report *r)
{
	char warmup[16], period[16];
	const char *pairs[] = { "mode", !r->timing ? "off" : r->sampled ? "sampled" : "all",
				"warmup_calls", warmup, "sample_period", period, NULL };

	snprintf(warmup, sizeof(warmup), "%d", r->sampled ? SAMPLE_WARMUP : 0);
	snprintf(period, sizeof(period), "%d", r->sampled ? SAMPLE_PERIOD : 1);
	family(out, "iotrace_timing_info", "gauge",
	       "How syscalls are timed (mode off, all or sampled: estimated); always 1.");
	sample(out, "iotrace_timing_info", NULL, pairs, 1);
}

static void syscall_families(FILE *out, const struct prom_report *r)
{
	for (size_t i = 0; i < syscall_fields.n; i++) {
		const struct field *f = &syscall_fields.f[i];

		if ((!strcmp(f->unit, "ns") || !strcmp(f->name, "timed_calls")) && !r->timing)
			continue;
		family(out, f->metric, "counter", f->help);
		for (size_t g = 0; g < r->ngroups; g++)
			for (uint32_t nr = 0; nr < MAX_SYSCALLS; nr++) {
				const struct sc_row *row = &r->groups[g].d->sc[nr];
				const char *pairs[] = { "syscall", syscall_name(nr), NULL };

				if (row->calls)
					field_sample(out, f, f->metric, &r->groups[g].lab, pairs, row);
			}
	}
}

static void io_counters(FILE *out, const struct prom_report *r)
{
	for (size_t i = 0; i < io_fields.n; i++) {
		const struct field *f = &io_fields.f[i];

		if (!f->metric)
			continue;
		family(out, f->metric, "counter", f->help);
		for (size_t g = 0; g < r->ngroups; g++)
			for (int k = 1; k < IO_KINDS; k++) {
				const char *pairs[] = { "syscall", io_kind_name(k), NULL };

				if (r->groups[g].d->io_used[k])
					field_sample(out, f, f->metric, &r->groups[g].lab, pairs,
						     &r->groups[g].d->io[k]);
			}
	}
}

/* One io histogram family: sizes (sum: bytes transferred) or latencies (sum: seconds). */
static void io_histogram(FILE *out, const struct prom_report *r, const char *name,
			 const char *help, bool latency)
{
	family(out, name, "histogram", help);
	for (size_t g = 0; g < r->ngroups; g++)
		for (int k = 1; k < IO_KINDS; k++) {
			const struct dense_profile *d = r->groups[g].d;
			const struct io_summary *io = &d->io[k];
			int nr = io_kind_nr(k);

			if (!d->io_used[k] || (latency && nr < 0))
				continue;
			if (latency)
				histogram(out, name, &r->groups[g].lab, "syscall", io_kind_name(k),
					  NULL, NULL, HIST_FINE, io->lat_hist,
					  d->sc[nr].total_ns * 1e-9, true);
			else
				histogram(out, name, &r->groups[g].lab, "syscall", io_kind_name(k),
					  NULL, NULL, HIST_LOG2, io->size_hist, io->transferred_bytes,
					  false);
		}
}

static void io_families(FILE *out, const struct prom_report *r)
{
	io_counters(out, r);
#define IO_HIST_FAMILY(name, column, metric, unit, help)                               \
	if (strcmp(unit, "ns") || r->timing)                                             \
		io_histogram(out, r, metric, help, !strcmp(unit, "ns"));
	IO_HISTS(IO_HIST_FAMILY)
}

/* ---- page cache ---- */

/*
 * The page-cache fields with a metric, for groups that read files; direct: only the
 * O_DIRECT ones, else only the others. An unknown value leaves its series out (a gauge that
 * is absent, not 0).
 */
static void page_cache_fields_out(FILE *out, const struct prom_report *r, bool direct)
{
	const struct field_table *t = &page_cache_fields;

	for (const struct field *f = t->f; f < t->f + t->n; f++) {
		if (!f->metric || !!(f->flags & FIELD_NEEDS_DIRECT_HOOK) != direct ||
		    !first_of_family(t, f))
			continue;
		family(out, f->metric, f->flags & FIELD_GAUGE ? "gauge" : "counter", f->help);
		for (const struct field *m = f; m < t->f + t->n; m++) {
			const char *pairs[] = { m->label, m->value, NULL };

			if (!m->metric || strcmp(m->metric, f->metric))
				continue;
			for (size_t g = 0; g < r->ngroups; g++) {
				const struct prom_group *gr = &r->groups[g];

				if (gr->pc_seen &&
				    !page_cache_field_unknown(m, &gr->pc.v, r->direct_io_missing))
					sample(out, m->metric, &gr->lab, m->label ? pairs : NULL,
					       field_get(m, &gr->pc.v));
			}
		}
	}
}

/* A counter with one series per readahead kind, for groups that read files. */
static void by_kind(FILE *out, const struct prom_report *r, const char *name, const char *help,
		    bool pages)
{
	family(out, name, "counter", help);
	for (size_t g = 0; g < r->ngroups; g++)
		for (int k = 0; k < RA_KINDS && r->groups[g].pc_seen; k++) {
			const struct page_cache_view *pc = &r->groups[g].pc.v;
			const char *pairs[] = { "kind", ra_kind_names[k], NULL };

			sample(out, name, &r->groups[g].lab, pairs,
			       pages ? pc->ra_window_pages[k] : pc->ra_windows[k]);
		}
}

static void page_cache_families(FILE *out, const struct prom_report *r)
{
	page_cache_fields_out(out, r, false);
	by_kind(out, r, "iotrace_readahead_windows_total",
		"Readahead windows opened, by how they started.", false);
	by_kind(out, r, "iotrace_readahead_pages_total",
		"Pages in the readahead windows opened, by kind.", true);
}

/* ---- block ---- */

static void block_histogram(FILE *out, const struct prom_report *r, const char *name,
			    const char *help, const char *which)
{
	char disk[64];

	family(out, name, "histogram", help);
	for (size_t i = 0; i < r->nblocks; i++) {
		const struct block_record *b = &r->blocks[i].rec;
		const char *dn = disk_table_name(r->disks, b->key.dev, disk, sizeof(disk));
		const char *op = block_op_names[b->key.op % BLOCK_OPS];
		const struct prom_labels *lab = &r->blocks[i].lab;

		if (!strcmp(which, "latency_ns"))
			histogram(out, name, lab, "disk", dn, "op", op, b->lat_layout, b->st.lat_hist,
				  b->v.latency_sum_ns * 1e-9, true);
		else if (!strcmp(which, "queue_latency_ns"))
			histogram(out, name, lab, "disk", dn, "op", op, b->lat_layout, b->st.qlat_hist,
				  b->v.queue_latency_sum_ns * 1e-9, true);
		else
			histogram(out, name, lab, "disk", dn, "op", op, HIST_LOG2, b->st.size_hist,
				  b->v.bytes,
				  false);
	}
}

static void block_families(FILE *out, const struct prom_report *r)
{
	char disk[64];

	for (size_t c = 0; c < block_fields.n; c++) {
		const struct field *f = &block_fields.f[c];

		if (!f->metric)
			continue;
		family(out, f->metric, "counter", f->help);
		for (size_t i = 0; i < r->nblocks; i++) {
			const struct block_record *b = &r->blocks[i].rec;
			const char *pairs[] = { "disk", disk_table_name(r->disks, b->key.dev, disk,
										sizeof(disk)),
						"op", block_op_names[b->key.op % BLOCK_OPS], NULL };

			field_sample(out, f, f->metric, &r->blocks[i].lab, pairs, &b->v);
		}
	}
#define BLOCK_HIST_FAMILY(name, column, metric, unit, help) \
	block_histogram(out, r, metric, help, #name);
	BLOCK_HISTS(BLOCK_HIST_FAMILY)
}

/* ---- io_uring ---- */

static void uring_samples(FILE *out, const struct prom_report *r, const struct field *m)
{
	char name[16];

	for (size_t i = 0; i < r->nurings; i++) {
		const struct uring_record *u = &r->urings[i].rec;
		const char *pairs[] = { "opcode", uring_op_name(u->key.op, name, sizeof(name)),
					m->label, m->value, NULL };

		if (!uring_field_unknown(m, u))
			field_sample(out, m, m->metric, &r->urings[i].lab, pairs, &u->v);
	}
}

static void uring_families(FILE *out, const struct prom_report *r)
{
	const struct field_table *t = &uring_fields;
	char name[16];

	for (const struct field *f = t->f; f < t->f + t->n; f++) {
		if (!f->metric || !first_of_family(t, f))
			continue;
		family(out, f->metric, f->flags & FIELD_GAUGE ? "gauge" : "counter", f->help);
		for (const struct field *m = f; m < t->f + t->n; m++)
			if (m->metric && !strcmp(m->metric, f->metric))
				uring_samples(out, r, m);
	}
#define URING_HIST_FAMILY(member, column, metric, unit, help)                                     \
	family(out, metric, "histogram", help);                                                     \
	for (size_t i = 0; i < r->nurings; i++)                                                     \
		histogram(out, metric, &r->urings[i].lab, "opcode",                                 \
			  uring_op_name(r->urings[i].rec.key.op, name, sizeof(name)), NULL, NULL,   \
			  HIST_FINE, r->urings[i].rec.st.lat_hist,                                  \
			  r->urings[i].rec.v.latency_sum_ns * 1e-9, true);
	URING_HISTS(URING_HIST_FAMILY)
}

static void hook_up(FILE *out, const char *hook, const char *missing)
{
	const char *pairs[] = { "hook", hook, "reason", missing ? missing : "", NULL };

	sample(out, "iotrace_hook_up", NULL, pairs, !missing);
}

int prom_write(FILE *out, const struct prom_report *r)
{
	const char *version[] = { "version", IOTRACE_VERSION, NULL };

	run_label = r->run;

	family(out, "iotrace_build_info", "gauge", "iotrace's version; always 1.");
	sample(out, "iotrace_build_info", NULL, version, 1);
	timing_info(out, r);
	family(out, "iotrace_hook_up", "gauge",
	       "1 when a group of tracepoints is attached; 0 with the reason when it is not.");
	hook_up(out, "syscalls", NULL);
	hook_up(out, "page_cache", r->page_cache_missing);
	hook_up(out, "direct_io", r->direct_io_missing);
	hook_up(out, "io_uring", r->uring_missing);

	syscall_families(out, r);
	io_families(out, r);
	if (!r->page_cache_missing)
		page_cache_families(out, r);
	if (!r->direct_io_missing)
		page_cache_fields_out(out, r, true);
	block_families(out, r);
	if (!r->uring_missing)
		uring_families(out, r);

	family(out, "iotrace_lost_events_total", "counter",
	       "Events not counted, or counted inexactly, because a bounded table was full.");
	for (int i = 0; i < DROP_COUNTERS; i++) {
		const char *pairs[] = { "reason", drop_names[i], NULL };

		sample(out, "iotrace_lost_events_total", NULL, pairs, r->drops ? r->drops[i] : 0);
	}
	fflush(out);
	return ferror(out) ? -1 : 0;
}

int prom_write_file(const char *path, const struct prom_report *r)
{
	char *dir_copy = strdup(path), *base_copy = strdup(path), *tmp = NULL;
	int fd = -1, err = -1;
	FILE *f = NULL;

	if (!dir_copy || !base_copy ||
	    asprintf(&tmp, "%s/.%s.XXXXXX", dirname(dir_copy), basename(base_copy)) < 0) {
		tmp = NULL;
		errno = ENOMEM;
		goto out;
	}
	/* A hidden temporary name: node_exporter's textfile collector reads *.prom only. */
	fd = mkstemp(tmp);
	if (fd < 0)
		goto out;
	f = fdopen(fd, "w");
	if (!f)
		goto out;
	fd = -1;
	if (prom_write(f, r) || fchmod(fileno(f), 0644) || fsync(fileno(f)))
		goto out;
	if (fclose(f)) {
		f = NULL;
		goto out;
	}
	f = NULL;
	if (rename(tmp, path))
		goto out;
	free(tmp);
	tmp = NULL;
	err = 0;
out:
	if (err) {
		int saved = errno;

		if (f)
			fclose(f);
		if (fd >= 0)
			close(fd);
		if (tmp)
			unlink(tmp);
		errno = saved;
	}
	free(tmp);
	free(dir_copy);
	free(base_copy);
	return err;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

int prom_add_block(struct prom_block **blocks, size_t *n, struct prom_labels lab,
		   const struct block_record *rec)
{
	struct prom_block *b;

	for (size_t i = 0; i < *n; i++) {
		b = &(*blocks)[i];
		if (b->rec.key.dev == rec->key.dev && b->rec.key.op == rec->key.op &&
		    same_str(b->lab.cgroup, lab.cgroup) && same_str(b->lab.comm, lab.comm)) {
			block_record_add(&b->rec, rec);
			block_record_derive(&b->rec);
			return 0;
		}
	}
	b = VEC_PUSH(*blocks, *n);
	if (!b)
		return -1;
	b->lab = lab;
	b->rec.key.dev = rec->key.dev;
	b->rec.key.op = rec->key.op;
	block_record_add(&b->rec, rec);
	block_record_derive(&b->rec);
	return 0;
}

int prom_add_uring(struct prom_uring **urings, size_t *n, struct prom_labels lab,
		   const struct uring_record *rec)
{
	struct prom_uring *u;

	for (size_t i = 0; i < *n; i++) {
		u = &(*urings)[i];
		if (u->rec.key.op == rec->key.op && same_str(u->lab.cgroup, lab.cgroup) &&
		    same_str(u->lab.comm, lab.comm)) {
			uring_record_add(&u->rec, rec);
			uring_record_derive(&u->rec);
			return 0;
		}
	}
	u = VEC_PUSH(*urings, *n);
	if (!u)
		return -1;
	u->lab = lab;
	u->rec.key.op = rec->key.op;
	uring_record_add(&u->rec, rec);
	uring_record_derive(&u->rec);
	return 0;
}
