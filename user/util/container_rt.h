/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a container runtime says about one of its containers: its name, image, and for a
 * Kubernetes container its pod's name and namespace. Asked of the runtime's API on its unix
 * socket (docker's, and podman's docker-compatible one), else read from the runtime's own
 * state files (docs/containers.md lists each). Calls may block (a socket's timeout): only the
 * resolver's thread (container.c) and one-shot commands call them.
 */
#ifndef IOTRACE_CONTAINER_RT_H
#define IOTRACE_CONTAINER_RT_H

#include "container_path.h"

#define CONTAINER_TEXT_MAX 256

struct container_meta {
	char name[CONTAINER_TEXT_MAX];  /* the runtime's name for it ("web", "k8s_app_...") */
	char image[CONTAINER_TEXT_MAX]; /* the image as it was asked for ("localhost/app:1") */
	char pod_name[CONTAINER_TEXT_MAX], pod_namespace[CONTAINER_TEXT_MAX];
	const char *source; /* where the answer came from ("podman API", "docker state"...) */
};

/*
 * Asks about container id of runtime rt (CT_CRI: every Kubernetes runtime in turn). 0 with
 * *out filled, or -1 when no source knows it (then out->source says what was asked last).
 */
int runtime_lookup(enum container_runtime rt, const char *id, struct container_meta *out);

/*
 * Where the runtimes are: "/" by default, or $IOTRACE_HOST_ROOT (iotrace in a container
 * with the host's / mounted there). The API sockets: $DOCKER_HOST and $CONTAINER_HOST when
 * they are unix:// addresses, else /run/docker.sock and /run/podman/podman.sock.
 */
const char *runtime_socket(enum container_runtime rt);

#endif
