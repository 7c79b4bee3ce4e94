// SPDX-License-Identifier: GPL-2.0
/*
 * The runtimes' answers about a container (container_rt.h): docker's Engine API and podman's
 * docker-compatible API (GET /containers/<id>/json over HTTP/1.0 on a unix socket), else the
 * runtimes' own state files: docker's config.v2.json, containers/storage's containers.json
 * (podman, CRI-O), and the OCI bundle's config.json annotations that containerd's and
 * CRI-O's Kubernetes plugins write (pod name and namespace, container name, image).
 */
#include <errno.h>
#include <glob.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <cjson/cJSON.h>
#include "container_rt.h"
#include "vec.h"

/* A runtime that does not answer within this is given up on (the resolver asks again later). */
#define SOCKET_TIMEOUT_MS 1500
/* Larger answers or state files than this are not read. */
#define READ_MAX (16 << 20)

static const char *host_root(void)
{
	const char *r = getenv("IOTRACE_HOST_ROOT");

	return r && *r ? r : "";
}

/* $DOCKER_HOST / $CONTAINER_HOST when a unix:// address, else the runtime's usual socket. */
const char *runtime_socket(enum container_runtime rt)
{
	static __thread char path[2][512];
	const char *env = getenv(rt == CT_PODMAN ? "CONTAINER_HOST" : "DOCKER_HOST");
	char *out = path[rt == CT_PODMAN];

	if (env && !strncmp(env, "unix://", 7))
		snprintf(out, sizeof(path[0]), "%s", env + 7);
	else
		snprintf(out, sizeof(path[0]), "%s%s", host_root(),
			 rt == CT_PODMAN ? "/run/podman/podman.sock" : "/run/docker.sock");
	return out;
}

/* Reads fd to its end (at most READ_MAX); a NUL-terminated buffer, or NULL. */
static char *read_all(int fd, size_t *len)
{
	size_t n = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t got;

	while (buf && (got = read(fd, buf + n, cap - n - 1)) > 0) {
		n += got;
		if (n + 1 < cap)
			continue;
		if (cap >= READ_MAX || vec_reserve(&buf, &cap, cap + 1, 1)) {
			free(buf);
			return NULL;
		}
	}
	if (buf && got < 0) {
		free(buf);
		return NULL;
	}
	if (buf)
		buf[n] = 0;
	*len = n;
	return buf;
}

static cJSON *read_json_file(const char *path)
{
	char full[1024];
	size_t len;
	char *text;
	cJSON *j;
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", host_root(), path);
	f = fopen(full, "re");
	if (!f)
		return NULL;
	text = read_all(fileno(f), &len);
	fclose(f);
	j = text ? cJSON_ParseWithLength(text, len) : NULL;
	free(text);
	return j;
}

/* GET target on the HTTP server at unix socket sock: the 200 answer's body as JSON. */
static cJSON *http_get_json(const char *sock, const char *target)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { SOCKET_TIMEOUT_MS / 1000, SOCKET_TIMEOUT_MS % 1000 * 1000 };
	char req[512], *resp = NULL, *body;
	cJSON *j = NULL;
	size_t len = 0;
	int fd, n, status = 0;

	if (strlen(sock) >= sizeof(sa.sun_path))
		return NULL;
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* HTTP/1.0: the server closes the connection after its answer, unchunked. */
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", target);
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)) && write(fd, req, n) == n)
		resp = read_all(fd, &len);
	close(fd);
	if (resp && sscanf(resp, "HTTP/1.%*d %d", &status) == 1 && status == 200 &&
	    (body = strstr(resp, "\r\n\r\n")))
		j = cJSON_ParseWithLength(body + 4, len - (body + 4 - resp));
	free(resp);
	return j;
}

static void copy_text(char *dst, const cJSON *v)
{
	if (cJSON_IsString(v) && v->valuestring)
		snprintf(dst, CONTAINER_TEXT_MAX, "%s", v->valuestring);
}

/* Docker's inspect document: its API's answer and config.v2.json have the same shape. */
static int from_inspect(const cJSON *j, struct container_meta *out)
{
	const cJSON *config = cJSON_GetObjectItemCaseSensitive(j, "Config");
	const cJSON *labels = cJSON_GetObjectItemCaseSensitive(config, "Labels");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "Name");

	if (!cJSON_IsString(name))
		return -1;
	/* Docker names start with '/' (the legacy link namespace). */
	snprintf(out->name, sizeof(out->name), "%s",
		 name->valuestring + (name->valuestring[0] == '/'));
	copy_text(out->image, cJSON_GetObjectItemCaseSensitive(config, "Image"));
	copy_text(out->pod_name,
		  cJSON_GetObjectItemCaseSensitive(labels, "io.kubernetes.pod.name"));
	copy_text(out->pod_namespace,
		  cJSON_GetObjectItemCaseSensitive(labels, "io.kubernetes.pod.namespace"));
	return 0;
}

static int ask_api(enum container_runtime rt, const char *id, struct container_meta *out)
{
	char target[128];
	cJSON *j;
	int err;

	snprintf(target, sizeof(target), "/containers/%s/json", id);
	j = http_get_json(runtime_socket(rt), target);
	err = j ? from_inspect(j, out) : -1;
	cJSON_Delete(j);
	return err;
}

static int docker_api(const char *id, struct container_meta *out)
{
	out->source = "docker API";
	return ask_api(CT_DOCKER, id, out);
}

static int podman_api(const char *id, struct container_meta *out)
{
	out->source = "podman API";
	return ask_api(CT_PODMAN, id, out);
}

static int docker_state(const char *id, struct container_meta *out)
{
	char path[256];
	cJSON *j;
	int err;

	out->source = "docker state";
	snprintf(path, sizeof(path), "/var/lib/docker/containers/%s/config.v2.json", id);
	j = read_json_file(path);
	err = j ? from_inspect(j, out) : -1;
	cJSON_Delete(j);
	return err;
}

/* One container of containers.json: names[], and its metadata (a JSON document in a string). */
static void from_storage_entry(const cJSON *c, struct container_meta *out)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(c, "metadata");
	cJSON *m = cJSON_IsString(meta) ? cJSON_Parse(meta->valuestring) : NULL;

	copy_text(out->name, cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "names"), 0));
	copy_text(out->name, cJSON_GetObjectItemCaseSensitive(m, "name"));
	copy_text(out->image, cJSON_GetObjectItemCaseSensitive(m, "image-name"));
	copy_text(out->pod_name, cJSON_GetObjectItemCaseSensitive(m, "pod-name"));
	cJSON_Delete(m);
}

/* containers/storage (podman, CRI-O, buildah): each storage driver's containers.json. */
static int storage_state(const char *id, struct container_meta *out)
{
	static const char *const drivers[] = { "overlay", "vfs", "btrfs", "zfs" };
	char path[256];
	int found = -1;

	out->source = "containers/storage";
	for (size_t d = 0; d < sizeof(drivers) / sizeof(drivers[0]) && found; d++) {
		cJSON *list, *c;

		snprintf(path, sizeof(path),
			 "/var/lib/containers/storage/%s-containers/containers.json", drivers[d]);
		list = read_json_file(path);
		cJSON_ArrayForEach(c, list) {
			const cJSON *cid = cJSON_GetObjectItemCaseSensitive(c, "id");

			if (cJSON_IsString(cid) && !strcmp(cid->valuestring, id)) {
				from_storage_entry(c, out);
				found = 0;
				break;
			}
		}
		cJSON_Delete(list);
	}
	return found;
}

/* The annotations of an OCI bundle's config.json that the Kubernetes runtimes write. */
static int from_annotations(const char *path, struct container_meta *out)
{
	static const struct {
		const char *key;
		size_t field;
	} keys[] = {
		{ "io.kubernetes.cri.container-name", offsetof(struct container_meta, name) },
		{ "io.kubernetes.container.name", offsetof(struct container_meta, name) },
		{ "io.kubernetes.cri.image-name", offsetof(struct container_meta, image) },
		{ "io.kubernetes.cri-o.ImageName", offsetof(struct container_meta, image) },
		{ "io.kubernetes.cri.sandbox-name", offsetof(struct container_meta, pod_name) },
		{ "io.kubernetes.pod.name", offsetof(struct container_meta, pod_name) },
		{ "io.kubernetes.cri.sandbox-namespace",
		  offsetof(struct container_meta, pod_namespace) },
		{ "io.kubernetes.pod.namespace", offsetof(struct container_meta, pod_namespace) },
	};
	cJSON *j = read_json_file(path);
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(j, "annotations");

	for (size_t i = 0; ann && i < sizeof(keys) / sizeof(keys[0]); i++)
		copy_text((char *)out + keys[i].field,
			  cJSON_GetObjectItemCaseSensitive(ann, keys[i].key));
	cJSON_Delete(j);
	return ann && (out->name[0] || out->pod_name[0]) ? 0 : -1;
}

static int crio_state(const char *id, struct container_meta *out)
{
	char path[256];

	out->source = "cri-o state";
	snprintf(path, sizeof(path), "/run/containers/storage/overlay-containers/%s/userdata/"
		 "config.json", id);
	return from_annotations(path, out);
}

/* containerd's bundles: /run/containerd/io.containerd.runtime.v2.task/NAMESPACE/ID/. */
static int containerd_state(const char *id, struct container_meta *out)
{
	char pattern[512];
	glob_t g;
	int err = -1;

	out->source = "containerd state";
	snprintf(pattern, sizeof(pattern),
		 "%s/run/containerd/io.containerd.runtime.v2.task/*/%s/config.json", host_root(),
		 id);
	if (glob(pattern, GLOB_NOSORT, NULL, &g))
		return -1;
	if (g.gl_pathc == 1)
		err = from_annotations(g.gl_pathv[0] + strlen(host_root()), out);
	globfree(&g);
	return err;
}

typedef int (*source_fn)(const char *id, struct container_meta *out);

int runtime_lookup(enum container_runtime rt, const char *id, struct container_meta *out)
{
	static const source_fn sources[CT_RUNTIMES][4] = {
		[CT_DOCKER] = { docker_api, docker_state },
		[CT_PODMAN] = { podman_api, storage_state },
		[CT_CRIO] = { crio_state, storage_state },
		[CT_CONTAINERD] = { containerd_state },
		[CT_CRI] = { docker_api, containerd_state, crio_state, docker_state },
	};

	memset(out, 0, sizeof(*out));
	if (rt >= CT_RUNTIMES || strlen(id) != CONTAINER_ID_LEN || strspn(id, "0123456789abcdef") !=
	    CONTAINER_ID_LEN)
		return -1;
	for (int i = 0; i < 4 && sources[rt][i]; i++) {
		memset(out, 0, sizeof(*out));
		if (!sources[rt][i](id, out))
			return 0;
	}
	return -1;
}
