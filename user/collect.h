/* SPDX-License-Identifier: GPL-2.0 */
/* Turns process events and harvested slots into proc_records; never prints. */
#ifndef IOTRACE_COLLECT_H
#define IOTRACE_COLLECT_H

#include <sys/types.h>
#include "model.h"
#include "tracer.h"

struct collector {
	struct tracer *tracer;
	struct proc_record *procs;
	size_t nprocs, cap;
	uint32_t *index_of_pid; /* pid -> index + 1 of its newest record, 0 when none */
	int error;              /* first allocation failure */
};

int collector_init(struct collector *c, struct tracer *t);
/* Record for a process iotrace started or attached to itself. */
int collector_add_root(struct collector *c, pid_t pid, pid_t ppid, uint32_t slot,
		       const char *comm, const char *args, uint64_t start_ns);
/* Ring-buffer callback: handles one struct iot_proc_event. */
int collector_on_event(void *ctx, void *data, size_t size);
/* Harvests what is still in the kernel and moves everything into r. */
int collector_finish(struct collector *c, struct run_result *r);
struct proc_record *collector_find(struct collector *c, pid_t pid);

#endif
