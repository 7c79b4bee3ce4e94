// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the container resolver (user/util/container.c, container_rt.c) where no
 * runtime runs here: containerd's and CRI-O's Kubernetes state (the OCI bundle's config.json
 * annotations) laid out below a host root of the test's own (IOTRACE_HOST_ROOT), and a podman
 * socket that takes connections and never answers. Checks: the first call for a container
 * returns at once with the answer pending (the caller never waits for a runtime), the
 * answers after container_settle(), and that an unanswered container says so and which
 * source was asked. tests/test_containers.py runs it; one line per check, exit 0 if all pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "util/container.h"

#define ID1 "1111111111111111111111111111111111111111111111111111111111111111"
#define ID2 "2222222222222222222222222222222222222222222222222222222222222222"
#define ID3 "3333333333333333333333333333333333333333333333333333333333333333"
#define UID_ "74c13223_5a00_11e9_b385_42010a80018d"

static int failures;
static char dir[] = "/tmp/iotrace-resolver-XXXXXX";

static void check(const char *what, int ok)
{
	printf("%s %s\n", ok ? "ok" : "FAIL", what);
	failures += !ok;
}

static void write_file(const char *rel, const char *text)
{
	char path[512], cmd[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/root%s", dir, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	if (system(cmd) || !(f = fopen(path, "w"))) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

/* A podman socket that accepts connections (the kernel's backlog) and never answers. */
static void hanging_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char env[256];
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/hang.sock", dir);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		perror("hang.sock");
		exit(2);
	}
	snprintf(env, sizeof(env), "unix://%s", sa.sun_path);
	setenv("CONTAINER_HOST", env, 1);
}

static void lay_state(void)
{
	write_file("/run/containerd/io.containerd.runtime.v2.task/k8s.io/" ID1 "/config.json",
		   "{\"ociVersion\":\"1.0.2\",\"annotations\":{"
		   "\"io.kubernetes.cri.container-type\":\"container\","
		   "\"io.kubernetes.cri.container-name\":\"app\","
		   "\"io.kubernetes.cri.image-name\":\"docker.io/library/nginx:1.25\","
		   "\"io.kubernetes.cri.sandbox-name\":\"web-7d9f\","
		   "\"io.kubernetes.cri.sandbox-namespace\":\"shop\"}}");
	write_file("/run/containers/storage/overlay-containers/" ID2 "/userdata/config.json",
		   "{\"ociVersion\":\"1.0.0\",\"annotations\":{"
		   "\"io.kubernetes.container.name\":\"db\","
		   "\"io.kubernetes.cri-o.ImageName\":\"quay.io/example/pg:16\","
		   "\"io.kubernetes.pod.name\":\"db-0\","
		   "\"io.kubernetes.pod.namespace\":\"data\"}}");
}

static void check_answer(const char *path, const char *name, const char *image,
			 const char *pod, const char *ns, const char *source)
{
	struct container_info c;
	char what[2048];

	container_of_path(path, &c);
	snprintf(what, sizeof(what), "%s: %s %s %s/%s from %s (got %s %s %s/%s from %s)",
		 container_runtime_names[c.path.runtime], name, image, ns, pod, source,
		 c.meta.name, c.meta.image, c.meta.pod_namespace, c.meta.pod_name,
		 c.meta.source ? c.meta.source : "-");
	check(what, c.state == META_FOUND && !strcmp(c.meta.name, name) &&
		    !strcmp(c.meta.image, image) && !strcmp(c.meta.pod_name, pod) &&
		    !strcmp(c.meta.pod_namespace, ns) && !strcmp(c.meta.source, source));
}

int main(void)
{
	const char *cd = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
			 ".slice/cri-containerd-" ID1 ".scope";
	const char *crio = "/kubepods/besteffort/pod74c13223-5a00-11e9-b385-42010a80018d/crio-" ID2;
	const char *pm = "/libpod_parent/libpod-" ID3;
	struct container_info c;
	char root[256], label[64];

	if (!mkdtemp(dir))
		return 2;
	snprintf(root, sizeof(root), "%s/root", dir);
	setenv("IOTRACE_HOST_ROOT", root, 1);
	lay_state();
	hanging_socket();

	/* Every first call returns what the path says, the runtime's answer still pending. */
	container_of_path(pm, &c);
	check("podman behind a socket that never answers: the first call does not wait",
	      c.state == META_PENDING && !strcmp(c.path.id, ID3));
	container_of_path(cd, &c);
	check("containerd: pending at first", c.state == META_PENDING);
	container_of_path(crio, &c);
	check("cri-o: pending at first", c.state == META_PENDING);
	check("label while pending: the short ID",
	      !strcmp(container_label(&c, label, sizeof(label)), "222222222222"));

	container_settle(20000);
	check_answer(cd, "app", "docker.io/library/nginx:1.25", "web-7d9f", "shop",
		     "containerd state");
	check_answer(crio, "db", "quay.io/example/pg:16", "db-0", "data", "cri-o state");
	container_of_path(crio, &c);
	check("label once answered: the name", !strcmp(container_label(&c, label, sizeof(label)),
							 "db"));
	container_of_path(pm, &c);
	check("podman unanswered: says so, and the last source asked",
	      c.state == META_UNANSWERED && !strcmp(c.meta.source, "containers/storage") &&
		      !c.meta.name[0]);
	container_of_path("/machine.slice/systemd-nspawn@web\\x2d1.service", &c);
	check("nspawn: the machine's name, from its cgroup",
	      c.state == META_FOUND && !strcmp(c.meta.name, "web-1"));
	container_of_path("/system.slice/cron.service", &c);
	check("a service: nothing to ask",
	      c.state == META_NONE && !strcmp(container_label(&c, label, 64), "cron.service"));
	container_of_path("/", &c);
	check("the host", c.state == META_NONE && !strcmp(container_label(&c, label, 64), "host"));

	snprintf(root, sizeof(root), "rm -rf '%s'", dir);
	if (system(root))
		failures++;
	printf("%d failed\n", failures);
	return failures != 0;
}
