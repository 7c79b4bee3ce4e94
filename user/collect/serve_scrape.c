// SPDX-License-Identifier: GPL-2.0
/*
 * serve's collection step. The kernel counts under label slots (bpf/proc.bpf.c); a scrape
 * reads every label, its syscall counters, the page-cache and block records whose owner is
 * its slot, and sums labels whose text is equal (a cgroup removed and made again at the same
 * path has a new id but one series).
 */
#include <stdlib.h>
#include <string.h>
#include "model/files.h"
#include "serve_scrape.h"
#include "util/container.h"
#include "util/residency.h"
#include "util/vec.h"

struct label {
	uint32_t slot;
	char *cgroup;
	char *container, *pod, *namespace; /* NULL: none */
	char comm[COMM_LEN];
	struct dense_profile d;
};

struct scrape {
	const struct scrape_config *cfg;
	struct label *labels;
	size_t nlabels;
	struct prom_group *groups;
	struct prom_group *group_of_slot[MAX_SLOTS];
	struct prom_block *blocks;
	size_t nblocks;
	struct prom_uring *urings;
	size_t nurings;
	uint64_t drops[DROP_COUNTERS];
	struct disk_table disks; /* the names of the disks of blocks[] */
	struct prom_report report;
	bool failed;
};

/* A copy of text, or NULL when text is empty; false when out of memory. */
static bool dup_text(char **out, const char *text)
{
	*out = *text ? strdup(text) : NULL;
	return !*text || *out;
}

/*
 * The container, pod and namespace labels of a label's cgroup, asked again at each scrape
 * (a runtime's answer may have come since: until then the container is its short ID).
 */
static bool label_container(struct label *l)
{
	struct container_info info;
	char buf[CONTAINER_TEXT_MAX];

	container_of_path(l->cgroup, &info);
	if (!container_is_one(&info) || info.path.monitor)
		return true;
	if (info.path.id[0] || info.path.runtime == CT_NSPAWN) {
		if (!dup_text(&l->container, container_label(&info, buf, sizeof(buf))))
			return false;
	}
	return dup_text(&l->pod, info.meta.pod_name[0] ? info.meta.pod_name : info.path.pod_uid) &&
	       dup_text(&l->namespace, info.meta.pod_namespace);
}

/* Appends a label for slot; false when out of memory. */
static bool new_label(struct scrape *s, uint32_t slot, const char *cgroup, const char *comm)
{
	struct label *l = VEC_PUSH(s->labels, s->nlabels);

	if (!l)
		return false;
	l->slot = slot;
	memcpy(l->comm, comm, strnlen(comm, COMM_LEN - 1));
	l->cgroup = strdup(cgroup);
	return l->cgroup && (slot == OVERFLOW_SLOT || label_container(l));
}

static void add_label(const struct label_key *key, uint32_t slot, void *arg)
{
	struct scrape *s = arg;
	const char *path = cgroup_group_path(s->cfg->cgroups, s->cfg->ncgroups, key->cgroup);

	if (!new_label(s, slot, path, key->comm))
		s->failed = true;
}

/* The labels the kernel made, with their cgroup paths, and the overflow label. */
static int read_labels(struct scrape *s)
{
	pthread_mutex_lock(s->cfg->cgroup_lock);
	cgroup_rescan();
	tracer_for_each_label(s->cfg->tracer, add_label, s);
	pthread_mutex_unlock(s->cfg->cgroup_lock);
	if (s->failed || !new_label(s, OVERFLOW_SLOT, "(overflow)", ""))
		return -1;
	s->groups = calloc(s->nlabels, sizeof(*s->groups));
	return s->groups ? 0 : -1;
}

/* Each label's syscall counters, summed over CPUs; kernel records name labels by slot. */
static void read_counters(struct scrape *s)
{
	for (size_t i = 0; i < s->nlabels; i++) {
		struct label *l = &s->labels[i];
		struct prom_group *g = &s->groups[i];

		s->group_of_slot[l->slot % MAX_SLOTS] = g;
		dense_reset(&l->d);
		tracer_read_slot(s->cfg->tracer, l->slot, &l->d, false);
		dense_finish_io(&l->d);
		g->lab.cgroup = l->cgroup;
		g->lab.container = l->container;
		g->lab.pod = l->pod;
		g->lab.namespace = l->namespace;
		g->lab.comm = s->cfg->label_comm ? l->comm : NULL;
		g->d = &l->d;
		page_cache_reset(&g->pc);
	}
}

/* A ledger entry's page-cache numbers into its label's group (tracer_read_files' fn). */
static void add_file(const struct ledger_entry *e, void *ctx)
{
	struct scrape *s = ctx;
	struct prom_group *g = s->group_of_slot[e->st.key.owner % MAX_SLOTS];
	struct page_cache_view v = { .unused_exact = !e->chunks_lost };

	if (!g)
		return;
	page_cache_add_raw(&v, &e->st);
	v.unused_readahead_pages = page_bits_unused(&e->bits);
	page_cache_add(&g->pc, &v);
	for (int b = 0; b < HIST_BUCKETS; b++)
		g->pc.window_hist[b] += e->st.window_hist[b];
	g->pc_seen = true;
}

/* Each label's files: their page-cache numbers summed (serve reports no file by name). */
static void read_files(struct scrape *s)
{
	struct tracer *t = s->cfg->tracer;

	if (tracer_hooks_missing(t, HOOKS_PAGE_CACHE) && tracer_hooks_missing(t, HOOKS_DIRECT_IO))
		return;
	tracer_read_files(t, add_file, s);
}

static int read_blocks(struct scrape *s)
{
	struct block_record *recs;
	size_t n;
	int err = 0;

	if (tracer_read_blocks(s->cfg->tracer, &recs, &n))
		return 0;
	for (size_t i = 0; i < n && !err; i++) {
		struct prom_group *g = recs[i].key.owner
					       ? s->group_of_slot[recs[i].key.owner % MAX_SLOTS]
					       : NULL;

		err = prom_add_block(&s->blocks, &s->nblocks,
				     g ? g->lab : (struct prom_labels){ 0 }, &recs[i]) ?:
		      disk_table_add(&s->disks, recs[i].key.dev);
	}
	free(recs);
	return err;
}

/* io_uring records by label (the owner of their key is the label's slot) and opcode. */
static int read_urings(struct scrape *s)
{
	struct uring_record *recs;
	size_t n;
	int err = 0;

	if (tracer_read_urings(s->cfg->tracer, &recs, &n))
		return -1;
	for (size_t i = 0; i < n && !err; i++) {
		struct prom_group *g = s->group_of_slot[recs[i].key.owner % MAX_SLOTS];

		if (g)
			err = prom_add_uring(&s->urings, &s->nurings, g->lab, &recs[i]);
	}
	free(recs);
	return err;
}

static bool same_labels(const struct prom_labels *a, const struct prom_labels *b)
{
	return !strcmp(a->cgroup, b->cgroup) &&
	       (!a->comm || !b->comm ? a->comm == b->comm : !strcmp(a->comm, b->comm));
}

/* Folds groups with equal labels into the first of them; returns the new count. Block
 * records are keyed by label text already (prom_add_block merges them). */
static size_t merge_groups(struct prom_group *g, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < out && !same_labels(&g[j].lab, &g[i].lab); j++)
			;
		if (j == out) {
			g[out++] = g[i];
			continue;
		}
		/* g[j].d points into its label's own storage: add i's counters there. */
		dense_merge((struct dense_profile *)g[j].d, g[i].d);
		page_cache_merge(&g[j].pc, &g[i].pc);
		g[j].pc_seen |= g[i].pc_seen;
	}
	return out;
}

struct scrape *scrape_collect(const struct scrape_config *cfg)
{
	struct scrape *s = calloc(1, sizeof(*s));
	struct tracer *t = cfg->tracer;

	if (!s)
		return NULL;
	s->cfg = cfg;
	if (read_labels(s)) {
		scrape_free(s);
		return NULL;
	}
	read_counters(s);
	read_files(s);
	tracer_sweep_blocks(t); /* requests whose completion the kernel skipped: counted now */
	if (read_blocks(s) || read_urings(s)) {
		scrape_free(s);
		return NULL;
	}
	tracer_read_drops(t, s->drops);
	s->report = (struct prom_report){
		.groups = s->groups,
		.ngroups = merge_groups(s->groups, s->nlabels),
		.blocks = s->blocks,
		.nblocks = s->nblocks,
		.urings = s->urings,
		.nurings = s->nurings,
		.drops = s->drops,
		.timing = cfg->timing,
		.sampled = tracer_sampled(t),
		.page_cache_missing = tracer_hooks_missing(t, HOOKS_PAGE_CACHE),
		.direct_io_missing = tracer_hooks_missing(t, HOOKS_DIRECT_IO),
		.uring_missing = tracer_hooks_missing(t, HOOKS_URING),
		.disks = &s->disks,
	};
	return s;
}

const struct prom_report *scrape_report(const struct scrape *s)
{
	return &s->report;
}

void scrape_free(struct scrape *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nlabels; i++) {
		free(s->labels[i].cgroup);
		free(s->labels[i].container);
		free(s->labels[i].pod);
		free(s->labels[i].namespace);
	}
	free(s->labels);
	free(s->groups);
	free(s->blocks);
	disk_table_free(&s->disks);
	free(s->urings);
	free(s);
}
