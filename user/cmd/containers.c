// SPDX-License-Identifier: GPL-2.0
/*
 * iotrace containers: which container each process is in, as iotrace resolves it
 * (user/util/container.c; docs/containers.md): what to check first when a container is not
 * named as expected, and what --container takes.
 */
#include <argp.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "args.h"
#include "containers.h"
#include "report/cells.h"
#include "report/json_cells.h"
#include "util/container.h"
#include "util/util.h"

/* How long the runtimes are waited for before the list is printed. */
#define SETTLE_MS 5000
#define PIDS_MAX 4096

struct containers_opts {
	bool json, all;
	pid_t pids[PIDS_MAX];
	size_t npids;
};

static const char doc[] =
	"iotrace containers -- which container each process is in: the runtime, the "
	"container's name, ID and image, its Kubernetes pod, as the other commands show them.\n"
	"\v"
	"Columns: PID, COMM, RUNTIME (docker, podman, containerd, cri-o, cri, nspawn; service, "
	"scope or session for a systemd unit; host), CONTAINER (name, else short ID), ID (12 "
	"digits), POD (namespace/name, else UID), IMAGE. Names come from the runtime's API or "
	"state files (docs/containers.md); '?' when it did not answer.\n"
	"\n"
	"EXAMPLES:\n"
	"  sudo iotrace containers             the processes in containers\n"
	"  sudo iotrace containers -a          every process, the host's too\n"
	"  sudo iotrace containers -j 1234     process 1234, as a JSON line\n";

static const struct option_row options[] = {
	OPTION_STORING(STORE_ON, offsetof(struct containers_opts, all), "all", 'a', NULL, 0,
		       "Every process, also those in no container", 0),
	OPTION_STORING(STORE_ON, offsetof(struct containers_opts, json), "json", 'j', NULL, 0,
		       "One JSON object per line (with the mount and pid namespaces)", 0),
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct containers_opts *o = state->input;
	pid_t pid;

	if (option_stored(options, key, arg, o))
		return 0;
	switch (key) {
	case ARGP_KEY_ARG:
		pid = pid_arg(state, arg);
		if (o->npids == PIDS_MAX)
			argp_failure(state, 1, 0, "at most %d pids", PIDS_MAX);
		o->pids[o->npids++] = pid;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void read_comm(pid_t pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	comm[0] = 0;
	f = fopen(path, "re");
	if (f && fgets(comm, len, f))
		comm[strcspn(comm, "\n")] = 0;
	if (f)
		fclose(f);
}

static void print_json(pid_t pid, const char *comm, const struct container_info *c)
{
	cJSON *obj = cJSON_CreateObject();
	struct ns_ids ns;
	char *text;

	cJSON_AddNumberToObject(obj, "pid", pid);
	add_name(obj, "comm", comm);
	add_container(obj, c);
	if (!proc_namespaces(pid, &ns)) {
		cJSON_AddNumberToObject(obj, "mnt_ns", ns.mnt);
		cJSON_AddNumberToObject(obj, "pid_ns", ns.pid);
	}
	text = cJSON_PrintUnformatted(obj);
	if (text)
		puts(text);
	cJSON_free(text);
	cJSON_Delete(obj);
}

static void print_text(pid_t pid, const char *comm, const struct container_info *c)
{
	char label[CONTAINER_TEXT_MAX], pod[2 * CONTAINER_TEXT_MAX + 2], cell[NAME_TEXT_MAX];
	const struct container_meta *m = &c->meta;
	bool asked = c->path.id[0] && !c->path.monitor;
	const char *unknown = asked && c->state != META_FOUND ? "?" : "-";

	if (m->pod_name[0])
		snprintf(pod, sizeof(pod), "%s/%s", m->pod_namespace, m->pod_name);
	else
		snprintf(pod, sizeof(pod), "%s", c->path.pod_uid[0] ? c->path.pod_uid : "-");
	printf("%-7d ", (int)pid);
	put_padded(stdout, name_cell(comm, 16, cell, sizeof(cell)), 16);
	printf(" %-10s ", container_runtime_names[c->path.runtime]);
	put_padded(stdout, name_cell(container_label(c, label, sizeof(label)), 20, cell,
				     sizeof(cell)), 20);
	printf(" %-12.12s ", c->path.id[0] ? c->path.id : "-");
	put_padded(stdout, name_cell(pod, 24, cell, sizeof(cell)), 24);
	printf(" %s\n", name_cell(m->image[0] ? m->image : unknown, 0, cell, sizeof(cell)));
}

/* The processes asked for, or every one in /proc. */
static size_t list_pids(struct containers_opts *o)
{
	DIR *d;
	struct dirent *e;
	unsigned long v;

	if (o->npids)
		return o->npids;
	d = opendir("/proc");
	while (d && (e = readdir(d)) && o->npids < PIDS_MAX)
		if (!parse_uint(e->d_name, INT_MAX, &v))
			o->pids[o->npids++] = v;
	if (d)
		closedir(d);
	return o->npids;
}

int containers_main(int argc, char **argv)
{
	static struct containers_opts o;
	const struct subcommand cmd = { "iotrace containers", options, parse_opt, "[PID...]", doc,
					0 };
	struct container_info c;
	char comm[64];
	int status = 0;

	subcommand_parse(&cmd, argc, argv, &o);
	bool given = o.npids > 0;
	size_t n = list_pids(&o);

	/* First ask every runtime, then print what they said. */
	for (size_t i = 0; i < n; i++)
		container_of_pid(o.pids[i], &c);
	container_settle(SETTLE_MS);
	if (!o.json)
		printf("%-7s %-16s %-10s %-20s %-12s %-24s %s\n", "PID", "COMM", "RUNTIME",
		       "CONTAINER", "ID", "POD", "IMAGE");
	for (size_t i = 0; i < n; i++) {
		if (container_of_pid(o.pids[i], &c)) {
			if (given) {
				fprintf(stderr, "iotrace: no process %d\n", (int)o.pids[i]);
				status = 1;
			}
			continue;
		}
		if (!given && !o.all && !container_is_one(&c))
			continue;
		read_comm(o.pids[i], comm, sizeof(comm));
		if (o.json)
			print_json(o.pids[i], comm, &c);
		else
			print_text(o.pids[i], comm, &c);
	}
	return status;
}
