// SPDX-License-Identifier: GPL-2.0
/* -c CGROUP and --container NAME|ID: the kernel's cgroup filters (filters.h). */
#include "filters.h"
#include "util/container.h"

void filter_add(struct argp_state *state, struct tracer_config *cfg, struct cgroup_ref *refs,
		bool container, const char *arg)
{
	static uint32_t given; /* -c and --container arguments: at most 8, named twice or not */
	struct cgroup_ref cg;
	uint32_t before = cfg->ncgroups;
	char why[256];

	if (++given > MAX_CGROUP_FILTERS)
		argp_failure(state, 1, 0, "at most %d cgroups and containers", MAX_CGROUP_FILTERS);
	if (container ? container_cgroup(arg, &cg, why, sizeof(why))
		      : cgroup_resolve(arg, &cg, why, sizeof(why)))
		argp_failure(state, 1, 0, "%s '%s': %s", container ? "container" : "cgroup", arg,
			     why);
	tracer_config_add_cgroup(cfg, cg.id, cg.level); /* room: no more than given */
	if (refs && cfg->ncgroups > before)
		refs[before] = cg;
}
