// SPDX-License-Identifier: GPL-2.0
/*
 * Run mode's --prom-file: the run's totals as Prometheus metrics, labelled by comm (the
 * processes of one name summed), for node_exporter's textfile collector.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prom.h"
#include "report.h"
#include "util/vec.h"

/*
 * Names with series of their own, at most: a run may start thousands of processes each
 * named apart (every series of every metric, once per name). The names after the first
 * PROM_FILE_COMMS share OTHER_COMMS, a value no process name can take (longer than 15
 * bytes). docs/prometheus.md, "Bounds".
 */
#define PROM_FILE_COMMS 1000
#define OTHER_COMMS "(other processes)"

struct comm_group {
	char comm[sizeof(OTHER_COMMS)];
	struct dense_profile d;
	struct page_cache_sum pc;
	bool pc_seen;
};

static struct comm_group *group_of(struct comm_group **groups, size_t *n, const char *comm)
{
	struct comm_group *g;

	for (size_t i = 0; i < *n; i++)
		if (!strncmp((*groups)[i].comm, comm, sizeof(g->comm)))
			return &(*groups)[i];
	if (*n >= PROM_FILE_COMMS && strcmp(comm, OTHER_COMMS))
		return group_of(groups, n, OTHER_COMMS);
	g = VEC_PUSH(*groups, *n);
	if (!g)
		return NULL;
	dense_reset(&g->d);
	page_cache_reset(&g->pc);
	snprintf(g->comm, sizeof(g->comm), "%s", comm);
	return g;
}

/* run="job" for .../job.prom: series of several files in one directory stay distinct. */
static char *run_label_of(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t len = strlen(base);

	if (len > 5 && !strcmp(base + len - 5, ".prom"))
		len -= 5;
	return strndup(base, len);
}

int report_prom_file(const char *path, const struct run_result *r)
{
	struct comm_group *groups = NULL, *g;
	struct prom_group *pg = NULL;
	struct prom_block *blocks = NULL;
	struct prom_uring *urings = NULL;
	size_t ngroups = 0, nblocks = 0, nurings = 0;
	char *run_name = NULL;
	int err = -1;

	for (size_t i = 0; i < r->nprocs; i++) {
		const struct proc_record *p = &r->procs[i];

		if (!(g = group_of(&groups, &ngroups, p->comm)))
			goto out;
		dense_add(&g->d, &p->prof);
		page_cache_merge(&g->pc, &p->pc);
		g->pc_seen |= p->nfiles > 0;
	}
	if (r->overflow_used) {
		if (!(g = group_of(&groups, &ngroups, "(overflow)")))
			goto out;
		dense_add(&g->d, &r->overflow);
	}
	pg = calloc(ngroups ? ngroups : 1, sizeof(*pg));
	if (!pg)
		goto out;
	for (size_t i = 0; i < ngroups; i++) {
		pg[i].lab.comm = groups[i].comm;
		pg[i].d = &groups[i].d;
		pg[i].pc = groups[i].pc;
		pg[i].pc_seen = groups[i].pc_seen;
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct proc_record *p = &r->procs[i];
		struct prom_labels lab = { .comm = group_of(&groups, &ngroups, p->comm)->comm };

		for (size_t j = 0; j < p->nblocks; j++)
			if (prom_add_block(&blocks, &nblocks, lab, &p->blocks[j]))
				goto out;
		for (size_t j = 0; j < p->nurings; j++)
			if (prom_add_uring(&urings, &nurings, lab, &p->urings[j]))
				goto out;
	}
	for (size_t j = 0; j < r->nother_blocks; j++)
		if (prom_add_block(&blocks, &nblocks, (struct prom_labels){ 0 },
				   &r->other_blocks[j]))
			goto out;
	run_name = run_label_of(path);
	if (!run_name)
		goto out;
	struct prom_report rep = {
		.run = run_name,
		.groups = pg,
		.ngroups = ngroups,
		.blocks = blocks,
		.nblocks = nblocks,
		.urings = urings,
		.nurings = nurings,
		.drops = r->drops,
		.timing = r->timing,
		.sampled = r->sampled,
		.page_cache_missing = r->page_cache_missing,
		.direct_io_missing = r->direct_io_missing,
		.uring_missing = r->uring_missing,
		.disks = &r->disks,
	};
	err = prom_write_file(path, &rep);
out:
	free(run_name);
	free(pg);
	free(groups);
	free(blocks);
	free(urings);
	return err;
}
