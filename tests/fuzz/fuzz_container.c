// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for container_parse() (user/util/container_path.c), which reads a cgroup
 * path that any process on the machine can shape (a cgroup is named by whoever makes it).
 * Besides crashes, each answer is checked against properties the parser must keep whatever
 * the path: the ID and pod UID are well-formed and stand in the path where they are said to;
 * the container's own cgroup ends at a component's end; the parse of that cgroup alone gives
 * the same answer (so a filter on it takes the same container); a level below a container
 * that names nothing changes nothing. tests/test_containers.py runs it briefly, `make fuzz`
 * longer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/container_path.h"

#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "property broken: %s\n", #cond);                 \
			abort();                                                         \
		}                                                                        \
	} while (0)

static int lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int same(const struct container_path *a, const struct container_path *b)
{
	return a->runtime == b->runtime && a->monitor == b->monitor && !strcmp(a->id, b->id) &&
	       !strcmp(a->pod_uid, b->pod_uid) && a->qos == b->qos && !strcmp(a->name, b->name) &&
	       a->cgroup_len == b->cgroup_len && a->pod_len == b->pod_len;
}

/* The pod UID as the path spells it: '-' (cgroupfs driver) or '_' (systemd driver). */
static int uid_in(const char *path, size_t len, const char *uid)
{
	char alt[POD_UID_LEN + 1];

	memcpy(alt, uid, sizeof(alt));
	for (int i = 0; i < POD_UID_LEN; i++)
		if (alt[i] == '-')
			alt[i] = '_';
	return memmem(path, len, uid, POD_UID_LEN) || memmem(path, len, alt, POD_UID_LEN);
}

static void check_form(const char *path, const struct container_path *c)
{
	size_t len = strlen(path);

	CHECK(c->runtime < CT_RUNTIMES && c->qos <= QOS_BESTEFFORT);
	CHECK(c->cgroup_len <= len && c->pod_len <= len);
	CHECK((c->runtime == CT_HOST) == (c->cgroup_len == 0));
	if (c->cgroup_len) /* the end of a component */
		CHECK(path[c->cgroup_len - 1] != '/' &&
		      (!path[c->cgroup_len] || path[c->cgroup_len] == '/'));
	if (c->runtime == CT_HOST)
		CHECK(!c->id[0] && !c->pod_uid[0] && !c->name[0] && !c->monitor);
	CHECK(!c->id[0] || (strlen(c->id) == CONTAINER_ID_LEN &&
			    lower_hex(c->id, CONTAINER_ID_LEN)));
	/* The ID is in the container's own level, the last of its cgroup. */
	if (c->id[0]) {
		const char *last = path + c->cgroup_len;

		while (last > path && last[-1] != '/')
			last--;
		CHECK(memmem(last, path + c->cgroup_len - last, c->id, CONTAINER_ID_LEN));
	}
	CHECK((c->qos != QOS_NONE) == (c->pod_uid[0] != 0));
	if (c->pod_uid[0]) {
		CHECK(strlen(c->pod_uid) == POD_UID_LEN && c->pod_len);
		CHECK(uid_in(path, c->pod_len, c->pod_uid));
		CHECK(c->pod_len <= c->cgroup_len);
	}
	CHECK(!c->monitor || c->runtime == CT_PODMAN || c->runtime == CT_CRIO);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct container_path c, again;
	char *path = malloc(size + 4);

	if (!path)
		return 0;
	memcpy(path, data, size);
	path[size] = 0;
	container_parse(path, &c);
	check_form(path, &c);
	if (c.cgroup_len) {
		/* The container's own cgroup is the same container. */
		char keep = path[c.cgroup_len];

		path[c.cgroup_len] = 0;
		container_parse(path, &again);
		CHECK(same(&c, &again));
		path[c.cgroup_len] = keep;
	}
	/* A level that names nothing, below: the same answer. */
	strcpy(path + strlen(path), "/zz");
	container_parse(path, &again);
	CHECK(same(&c, &again));
	free(path);
	return 0;
}
