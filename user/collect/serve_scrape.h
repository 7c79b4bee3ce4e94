/* SPDX-License-Identifier: GPL-2.0 */
/* serve's collection step: the kernel's per-label counters read and grouped for one scrape. */
#ifndef IOTRACE_SERVE_SCRAPE_H
#define IOTRACE_SERVE_SCRAPE_H

#include <pthread.h>
#include "util/cgroup.h"
#include "report/prom.h"
#include "kernel/tracer.h"

struct scrape_config {
	struct tracer *tracer;
	bool label_comm; /* --comm: labels carry the process name */
	bool timing;
	const struct cgroup_ref *cgroups; /* the -c filters (their paths name their labels) */
	uint32_t ncgroups;
	pthread_mutex_t *cgroup_lock; /* the cgroup path cache is shared with the event thread */
};

struct scrape;

/* Every label's counters, page cache and block I/O, read now; NULL out of memory. */
struct scrape *scrape_collect(const struct scrape_config *cfg);
/* What prom_write() formats; valid until scrape_free(). */
const struct prom_report *scrape_report(const struct scrape *s);
void scrape_free(struct scrape *s);

#endif
