/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which container a cgroup v2 path is, read from the names runtimes give their cgroups:
 * the runtime, the container's ID, and for a Kubernetes pod its UID and QoS class. Every
 * shape is listed in docs/containers.md and in tests/c/container_test.c's table. No I/O and
 * no allocation: the parser is fuzzed (tests/fuzz/fuzz_container.c).
 */
#ifndef IOTRACE_CONTAINER_PATH_H
#define IOTRACE_CONTAINER_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* What a cgroup belongs to; the names are container_runtime_names[] (JSON, text). */
enum container_runtime {
	CT_HOST,       /* in no container and no unit: the root, a slice */
	CT_DOCKER,     /* docker-<id>.scope (systemd driver), /docker/<id> (cgroupfs) */
	CT_PODMAN,     /* libpod-<id>.scope, /libpod_parent/libpod-<id>; conmon beside it */
	CT_CONTAINERD, /* cri-containerd-<id>.scope, nerdctl-<id>.scope */
	CT_CRIO,       /* crio-<id>.scope; crio-conmon-<id>.scope beside it */
	CT_CRI,        /* a pod's container by the kubelet's cgroupfs driver: a bare <id> */
	CT_NSPAWN,     /* systemd-nspawn@NAME.service, machine-NAME.scope (systemd-machined) */
	CT_SERVICE,    /* a systemd service: NAME.service */
	CT_SCOPE,      /* a systemd scope: NAME.scope */
	CT_SESSION,    /* a login session: session-N.scope */
	CT_RUNTIMES
};
extern const char *const container_runtime_names[CT_RUNTIMES];

/* Kubernetes' QoS classes, from the kubepods cgroup above the pod's. */
enum pod_qos { QOS_NONE, QOS_GUARANTEED, QOS_BURSTABLE, QOS_BESTEFFORT };
extern const char *const pod_qos_names[4];

#define CONTAINER_ID_LEN 64 /* hex digits of every runtime's full IDs */
#define POD_UID_LEN 36      /* 8-4-4-4-12 */
#define CONTAINER_UNIT_MAX 256

struct container_path {
	enum container_runtime runtime;
	/* The runtime's monitor beside a container (conmon), not a process of the container. */
	bool monitor;
	char id[CONTAINER_ID_LEN + 1];   /* lower-case hex; "" when the path holds none */
	char pod_uid[POD_UID_LEN + 1];   /* with dashes (systemd's driver writes '_'); or "" */
	enum pod_qos qos;
	/*
	 * nspawn: the machine's name; a service, scope or session: the unit's name (bytes,
	 * systemd's \xNN escapes undone for machine names only); else "".
	 */
	char name[CONTAINER_UNIT_MAX];
	/*
	 * The container's (or unit's) own cgroup is path[0..cgroup_len), its pod's
	 * path[0..pod_len): the cgroups a filter takes. 0 when there is none.
	 */
	size_t cgroup_len, pod_len;
};

/*
 * Parses a path below the cgroup v2 root ("/system.slice/docker-<id>.scope"). The deepest
 * container in it wins (a container inside another is the inner one; a unit inside a
 * container is the container); a pod's UID comes from any kubepods level above it. Always
 * succeeds: a path that names nothing is CT_HOST.
 */
void container_parse(const char *path, struct container_path *out);

#endif
