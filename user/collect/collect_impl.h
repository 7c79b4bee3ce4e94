/* SPDX-License-Identifier: GPL-2.0 */
/* Run mode's collection, inside: the containers of its processes (collect_containers.c). */
#ifndef IOTRACE_COLLECT_IMPL_H
#define IOTRACE_COLLECT_IMPL_H

#include "model/names.h"
#include "model/records.h"

/*
 * The containers of r's processes (from each one's cgroup id, whose path was noted while it
 * existed): r->containers and each process's index; -1 when out of memory.
 */
int collect_containers(struct run_result *r);

#endif
