// SPDX-License-Identifier: GPL-2.0
/*
 * Run mode: which container each process was in (docs/containers.md). The kernel keeps each
 * process's cgroup id at its fork, exec and exit (its slot row); the collector notes the
 * path of each id while the cgroup exists (a container's cgroup is gone by the report);
 * here the distinct cgroups are read as containers, their runtimes asked once, and each
 * process given its container's index.
 */
#include <stdlib.h>
#include <string.h>
#include "collect_impl.h"
#include "util/cgroup.h"
#include "util/container.h"
#include "util/vec.h"

/* How long the report waits for the runtimes to name the containers (asked in parallel). */
#define CONTAINER_SETTLE_MS 1500

static bool same_container(const struct container_info *a, const struct container_info *b)
{
	return a->path.runtime == b->path.runtime && !strcmp(a->path.id, b->path.id) &&
	       !strcmp(a->path.pod_uid, b->path.pod_uid) && !strcmp(a->path.name, b->path.name);
}

/* The index + 1 of info's container in r, added when new; 0 when out of memory. */
static uint32_t container_index(struct run_result *r, const struct container_info *info,
				const char *path)
{
	struct run_container *rc;

	for (size_t i = 0; i < r->ncontainers; i++)
		if (same_container(&r->containers[i].info, info))
			return i + 1;
	rc = VEC_PUSH(r->containers, r->ncontainers);
	if (!rc)
		return 0;
	rc->info = *info;
	rc->cgroup = strdup(path);
	if (!rc->cgroup) {
		r->ncontainers--;
		return 0;
	}
	return r->ncontainers;
}

int collect_containers(struct run_result *r)
{
	struct container_info info;
	uint64_t last = 0;
	uint32_t idx = 0;
	bool asked = false, known = false;

	for (size_t i = 0; i < r->nprocs; i++) {
		struct proc_record *p = &r->procs[i];
		const char *path;

		if (!p->cgroup)
			continue;
		if (p->cgroup != last) {
			path = cgroup_path_of(p->cgroup);
			/* "id:N": removed before the collector read its path (not the host's). */
			known = path[0] == '/';
			container_of_path(path, &info);
			last = p->cgroup;
			idx = 0;
			if (container_is_one(&info) && !info.path.monitor) {
				idx = container_index(r, &info, path);
				if (!idx)
					return -1;
				asked |= info.state == META_PENDING;
			}
		}
		p->container = idx;
		if (idx)
			r->containers[idx - 1].procs++;
		else if (known)
			r->host_procs++;
		else
			r->unknown_procs++;
	}
	if (!asked)
		return 0;
	/* One-shot: the runtimes' answers are worth a moment (asked at once, in parallel). */
	container_settle(CONTAINER_SETTLE_MS);
	for (size_t i = 0; i < r->ncontainers; i++)
		container_of_path(r->containers[i].cgroup, &r->containers[i].info);
	return 0;
}
