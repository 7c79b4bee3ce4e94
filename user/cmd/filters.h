/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -c CGROUP and --container NAME|ID, as top, serve and snoop take them: the cgroup they
 * stand for becomes one of the kernel's filters (tracer_config_add_cgroup).
 */
#ifndef IOTRACE_FILTERS_H
#define IOTRACE_FILTERS_H

#include <argp.h>
#include <stdbool.h>
#include "kernel/tracer.h"
#include "util/cgroup.h"

/*
 * Resolves arg (a cgroup, or with container a container's name, ID prefix or pod UID) and
 * adds its cgroup to cfg's filters; refs[i] (when refs is not NULL) keeps filter i's path,
 * which labels top's groups and serve's series. A bad value: one line, exit 1.
 */
void filter_add(struct argp_state *state, struct tracer_config *cfg, struct cgroup_ref *refs,
		bool container, const char *arg);

#endif
