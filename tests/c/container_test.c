// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of container_parse() (user/util/container_path.c): one row per cgroup path shape
 * that docker, podman, containerd, CRI-O, the kubelet (both cgroup drivers, every QoS class),
 * systemd-nspawn and systemd itself make, with the runtime, ID, pod UID, QoS, name and the
 * container's own cgroup expected. tests/test_containers.py runs it; one line per row, exit
 * status 0 when all pass.
 */
#include <stdio.h>
#include <string.h>
#include "util/container_path.h"

/* Rows leave monitor out when it is false. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define ID "4f797c539e6c745de61a93ca3ff892358ecbcaccd8414d5db545c38428142970"
#define ID2 "9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d"
#define UID "74c13223-5a00-11e9-b385-42010a80018d"
#define UID_ "74c13223_5a00_11e9_b385_42010a80018d"

struct row {
	const char *path;
	enum container_runtime runtime;
	const char *id, *pod_uid;
	enum pod_qos qos;
	const char *name;
	const char *cgroup; /* the container's (or unit's) own cgroup: a prefix of path */
	bool monitor;
};

static const struct row rows[] = {
	/* host: the root, slices */
	{ "/", CT_HOST, "", "", QOS_NONE, "", "" },
	{ "", CT_HOST, "", "", QOS_NONE, "", "" },
	{ "/system.slice", CT_HOST, "", "", QOS_NONE, "", "" },
	{ "/user.slice/user-1000.slice", CT_HOST, "", "", QOS_NONE, "", "" },
	/* systemd units and sessions */
	{ "/system.slice/ssh.service", CT_SERVICE, "", "", QOS_NONE, "ssh.service",
	  "/system.slice/ssh.service" },
	{ "/init.scope", CT_SCOPE, "", "", QOS_NONE, "init.scope", "/init.scope" },
	{ "/system.slice/run-r1234.scope", CT_SCOPE, "", "", QOS_NONE, "run-r1234.scope",
	  "/system.slice/run-r1234.scope" },
	{ "/user.slice/user-1000.slice/session-3.scope", CT_SESSION, "", "", QOS_NONE,
	  "session-3.scope", "/user.slice/user-1000.slice/session-3.scope" },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice/dbus.service", CT_SERVICE, "",
	  "", QOS_NONE, "dbus.service",
	  "/user.slice/user-1000.slice/user@1000.service/app.slice/dbus.service" },
	{ "/system.slice/docker.service", CT_SERVICE, "", "", QOS_NONE, "docker.service",
	  "/system.slice/docker.service" },
	{ "/system.slice/systemd-fsck@dev-disk-by\\x2duuid-1.service", CT_SERVICE, "", "",
	  QOS_NONE, "systemd-fsck@dev-disk-by\\x2duuid-1.service",
	  "/system.slice/systemd-fsck@dev-disk-by\\x2duuid-1.service" },
	/* docker: systemd driver, cgroupfs driver, a sub-cgroup, docker in docker */
	{ "/system.slice/docker-" ID ".scope", CT_DOCKER, ID, "", QOS_NONE, "",
	  "/system.slice/docker-" ID ".scope" },
	{ "/docker/" ID, CT_DOCKER, ID, "", QOS_NONE, "", "/docker/" ID },
	{ "/docker/" ID "/init", CT_DOCKER, ID, "", QOS_NONE, "", "/docker/" ID },
	{ "/docker/" ID "/docker/" ID2, CT_DOCKER, ID2, "", QOS_NONE, "",
	  "/docker/" ID "/docker/" ID2 },
	/* podman: systemd driver (and its conmon), cgroupfs driver (and its conmon) */
	{ "/machine.slice/libpod-" ID ".scope", CT_PODMAN, ID, "", QOS_NONE, "",
	  "/machine.slice/libpod-" ID ".scope" },
	{ "/machine.slice/libpod-" ID ".scope/container", CT_PODMAN, ID, "", QOS_NONE, "",
	  "/machine.slice/libpod-" ID ".scope" },
	{ "/machine.slice/libpod-conmon-" ID ".scope", CT_PODMAN, ID, "", QOS_NONE, "",
	  "/machine.slice/libpod-conmon-" ID ".scope", true },
	{ "/libpod_parent/libpod-" ID, CT_PODMAN, ID, "", QOS_NONE, "",
	  "/libpod_parent/libpod-" ID },
	{ "/libpod_parent/conmon", CT_PODMAN, "", "", QOS_NONE, "", "/libpod_parent/conmon",
	  true },
	{ "/machine.slice/machine-libpod_pod_" ID2 ".slice/libpod-" ID ".scope", CT_PODMAN, ID,
	  "", QOS_NONE, "", "/machine.slice/machine-libpod_pod_" ID2 ".slice/libpod-" ID ".scope" },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope",
	  CT_PODMAN, ID, "", QOS_NONE, "",
	  "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope" },
	/* containerd without Kubernetes (nerdctl), CRI-O's conmon */
	{ "/system.slice/nerdctl-" ID ".scope", CT_CONTAINERD, ID, "", QOS_NONE, "",
	  "/system.slice/nerdctl-" ID ".scope" },
	{ "/system.slice/crio-conmon-" ID ".scope", CT_CRIO, ID, "", QOS_NONE, "",
	  "/system.slice/crio-conmon-" ID ".scope", true },
	/* kubelet, systemd driver: guaranteed, burstable, besteffort; containerd, CRI-O, docker */
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope",
	  CT_CONTAINERD, ID, UID, QOS_GUARANTEED, "",
	  "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	  ".slice/cri-containerd-" ID ".scope",
	  CT_CONTAINERD, ID, UID, QOS_BURSTABLE, "",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	  ".slice/cri-containerd-" ID ".scope" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	  ".slice/crio-" ID ".scope",
	  CT_CRIO, ID, UID, QOS_BESTEFFORT, "",
	  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	  ".slice/crio-" ID ".scope" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	  ".slice/crio-" ID ".scope/container", /* CRI-O's nested container cgroup */
	  CT_CRIO, ID, UID, QOS_BESTEFFORT, "",
	  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	  ".slice/crio-" ID ".scope" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	  ".slice/docker-" ID ".scope",
	  CT_DOCKER, ID, UID, QOS_BURSTABLE, "",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	  ".slice/docker-" ID ".scope" },
	/* a process in the pod's own cgroup (systemd, then cgroupfs) */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice",
	  CT_CRI, "", UID, QOS_BURSTABLE, "",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice" },
	{ "/kubepods/besteffort/pod" UID, CT_CRI, "", UID, QOS_BESTEFFORT, "",
	  "/kubepods/besteffort/pod" UID },
	/* kubelet, cgroupfs driver: bare IDs (any runtime), CRI-O's crio-<id> */
	{ "/kubepods/pod" UID "/" ID, CT_CRI, ID, UID, QOS_GUARANTEED, "",
	  "/kubepods/pod" UID "/" ID },
	{ "/kubepods/burstable/pod" UID "/" ID, CT_CRI, ID, UID, QOS_BURSTABLE, "",
	  "/kubepods/burstable/pod" UID "/" ID },
	{ "/kubepods/besteffort/pod" UID "/" ID, CT_CRI, ID, UID, QOS_BESTEFFORT, "",
	  "/kubepods/besteffort/pod" UID "/" ID },
	{ "/kubepods/besteffort/pod" UID "/crio-" ID, CT_CRIO, ID, UID, QOS_BESTEFFORT, "",
	  "/kubepods/besteffort/pod" UID "/crio-" ID },
	/* kind and k3s nest the kubelet's tree: in a node container, under kubelet.slice */
	{ "/docker/" ID2 "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	  "kubelet-kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" ID ".scope",
	  CT_CONTAINERD, ID, UID, QOS_BESTEFFORT, "",
	  "/docker/" ID2 "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	  "kubelet-kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" ID ".scope" },
	{ "/docker/" ID2 "/kubepods/burstable/pod" UID, CT_CRI, "", UID, QOS_BURSTABLE, "",
	  "/docker/" ID2 "/kubepods/burstable/pod" UID },
	/* systemd-nspawn and machines systemd-machined registered (names unescaped) */
	{ "/machine.slice/systemd-nspawn@deb12.service", CT_NSPAWN, "", "", QOS_NONE, "deb12",
	  "/machine.slice/systemd-nspawn@deb12.service" },
	{ "/machine.slice/systemd-nspawn@deb12.service/payload/system.slice/cron.service",
	  CT_NSPAWN, "", "", QOS_NONE, "deb12", "/machine.slice/systemd-nspawn@deb12.service" },
	{ "/machine.slice/machine-web\\x2d1.scope", CT_NSPAWN, "", "", QOS_NONE, "web-1",
	  "/machine.slice/machine-web\\x2d1.scope" },
	/* near misses: no container */
	{ "/docker/" ID "0", CT_HOST, "", "", QOS_NONE, "", "" },
	{ "/system.slice/docker-" ID ".mount", CT_HOST, "", "", QOS_NONE, "", "" },
	{ "/system.slice/docker-4F797C539E6C745DE61A93CA3FF892358ECBCACCD8414D5DB545C38428142970"
	  ".scope", CT_SCOPE, "", "", QOS_NONE,
	  "docker-4F797C539E6C745DE61A93CA3FF892358ECBCACCD8414D5DB545C38428142970.scope",
	  "/system.slice/docker-4F797C539E6C745DE61A93CA3FF892358ECBCACCD8414D5DB545C38428142970"
	  ".scope" },
	{ "/" ID, CT_HOST, "", "", QOS_NONE, "", "" },
	{ "/kubepods/pod" UID "x", CT_HOST, "", "", QOS_NONE, "", "" },
	{ "/slice/pod" UID, CT_HOST, "", "", QOS_NONE, "", "" },
	{ "/machine.slice/machine-.scope", CT_SCOPE, "", "", QOS_NONE, "machine-.scope",
	  "/machine.slice/machine-.scope" },
	{ "//docker//" ID "//", CT_DOCKER, ID, "", QOS_NONE, "", "//docker//" ID },
};

static int check(const struct row *r)
{
	struct container_path c;
	size_t want_len = strlen(r->cgroup);
	char why[400] = "";

	container_parse(r->path, &c);
	if (c.runtime != r->runtime)
		snprintf(why, sizeof(why), "runtime %s, expected %s",
			 container_runtime_names[c.runtime], container_runtime_names[r->runtime]);
	else if (strcmp(c.id, r->id))
		snprintf(why, sizeof(why), "id '%s'", c.id);
	else if (strcmp(c.pod_uid, r->pod_uid))
		snprintf(why, sizeof(why), "pod uid '%s'", c.pod_uid);
	else if (c.qos != r->qos)
		snprintf(why, sizeof(why), "qos %s", pod_qos_names[c.qos]);
	else if (strcmp(c.name, r->name))
		snprintf(why, sizeof(why), "name '%s'", c.name);
	else if (c.cgroup_len != want_len || strncmp(r->path, r->cgroup, want_len))
		snprintf(why, sizeof(why), "cgroup '%.*s'", (int)c.cgroup_len, r->path);
	else if (c.monitor != r->monitor)
		snprintf(why, sizeof(why), "monitor %d", c.monitor);
	printf("%s %s %s%s%s\n", why[0] ? "FAIL" : "ok", container_runtime_names[r->runtime],
	       r->path, why[0] ? ": " : "", why);
	return why[0] != 0;
}

int main(void)
{
	int failures = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		failures += check(&rows[i]);
	printf("%d of %zu failed\n", failures, sizeof(rows) / sizeof(rows[0]));
	return failures != 0;
}
