// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup v2 path -> container (container_path.h). The runtimes name a container's cgroup
 * after its ID in a few shapes (docs/containers.md); cAdvisor, sysdig and bcc read the same
 * names, each for the runtimes it knows. Here one pass over the path's components keeps the
 * deepest container and the pod above it, and falls back to the deepest systemd unit.
 */
#include <string.h>
#include "container_path.h"

const char *const container_runtime_names[CT_RUNTIMES] = {
	[CT_HOST] = "host",         [CT_DOCKER] = "docker",   [CT_PODMAN] = "podman",
	[CT_CONTAINERD] = "containerd", [CT_CRIO] = "cri-o", [CT_CRI] = "cri",
	[CT_NSPAWN] = "nspawn",     [CT_SERVICE] = "service", [CT_SCOPE] = "scope",
	[CT_SESSION] = "session",
};

const char *const pod_qos_names[4] = { "", "guaranteed", "burstable", "besteffort" };

/* A component of the path: n bytes at s, and where it ends in the path. */
struct comp {
	const char *s;
	size_t n, end;
};

/* What the walk has seen so far. */
struct walk {
	struct container_path *out;
	bool container;   /* out holds a container (its runtime, ID, cgroup_len) */
	bool under_docker, under_kubepods, under_libpod;
	enum container_runtime unit_kind; /* the deepest unit seen (0: none) */
	struct comp unit;
};

/* Runtimes that name a container's cgroup PREFIX<64 hex>[.scope]. Longer prefixes first. */
static const struct {
	const char *prefix;
	enum container_runtime runtime;
	bool monitor;
} id_shapes[] = {
	{ "libpod-conmon-", CT_PODMAN, true },
	{ "crio-conmon-", CT_CRIO, true },
	{ "cri-containerd-", CT_CONTAINERD, false },
	{ "nerdctl-", CT_CONTAINERD, false },
	{ "docker-", CT_DOCKER, false },
	{ "libpod-", CT_PODMAN, false },
	{ "crio-", CT_CRIO, false },
};

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_hex(s[i]))
			return false;
	return true;
}

static bool has_prefix(const struct comp *c, const char *p)
{
	size_t n = strlen(p);

	return c->n >= n && !memcmp(c->s, p, n);
}

static bool has_suffix(const struct comp *c, const char *p)
{
	size_t n = strlen(p);

	return c->n >= n && !memcmp(c->s + c->n - n, p, n);
}

/* The component is exactly <64 hex> followed by suffix (".scope" or ""). */
static bool id_then(const char *s, size_t n, const char *suffix)
{
	return n == CONTAINER_ID_LEN + strlen(suffix) && all_hex(s, CONTAINER_ID_LEN) &&
	       !memcmp(s + CONTAINER_ID_LEN, suffix, strlen(suffix));
}

static void set_container(struct walk *w, const struct comp *c, enum container_runtime rt,
			  const char *id, bool monitor)
{
	struct container_path *o = w->out;

	o->runtime = rt;
	o->monitor = monitor;
	if (id)
		memcpy(o->id, id, CONTAINER_ID_LEN);
	o->id[id ? CONTAINER_ID_LEN : 0] = 0;
	o->name[0] = 0;
	o->cgroup_len = c->end;
	w->container = true;
}

/* PREFIX<id>, PREFIX<id>.scope, or a bare <id> where the levels above say whose it is. */
static bool match_id(struct walk *w, const struct comp *c)
{
	for (size_t i = 0; i < sizeof(id_shapes) / sizeof(id_shapes[0]); i++) {
		size_t pn = strlen(id_shapes[i].prefix);
		const char *rest = c->s + pn;

		if (!has_prefix(c, id_shapes[i].prefix))
			continue;
		if (id_then(rest, c->n - pn, ".scope") || id_then(rest, c->n - pn, "")) {
			set_container(w, c, id_shapes[i].runtime, rest, id_shapes[i].monitor);
			return true;
		}
	}
	if (!id_then(c->s, c->n, "") || !(w->under_docker || w->under_kubepods))
		return false;
	set_container(w, c, w->under_docker ? CT_DOCKER : CT_CRI, c->s, false);
	return true;
}

/* Undoes systemd's unit-name escapes (\x2d for '-') into out, cut to its size. */
static void unescape_name(const char *s, size_t n, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < size; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x' && all_hex(s + i + 2, 2)) {
			unsigned hi = s[i + 2] <= '9' ? s[i + 2] - '0' : s[i + 2] - 'a' + 10;
			unsigned lo = s[i + 3] <= '9' ? s[i + 3] - '0' : s[i + 3] - 'a' + 10;

			out[o++] = (char)(hi * 16 + lo);
			i += 3;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = 0;
}

/* systemd-nspawn@NAME.service, or machine-NAME.scope (a machine systemd-machined knows). */
static bool match_machine(struct walk *w, const struct comp *c)
{
	static const char *const shapes[][2] = {
		{ "systemd-nspawn@", ".service" }, { "machine-", ".scope" },
	};

	for (int i = 0; i < 2; i++) {
		size_t pn = strlen(shapes[i][0]), sn = strlen(shapes[i][1]);

		if (!has_prefix(c, shapes[i][0]) || !has_suffix(c, shapes[i][1]) ||
		    c->n <= pn + sn)
			continue;
		set_container(w, c, CT_NSPAWN, NULL, false);
		unescape_name(c->s + pn, c->n - pn - sn, w->out->name, sizeof(w->out->name));
		return true;
	}
	return false;
}

/* 8-4-4-4-12 lower-case hex, split by '-' (cgroupfs driver) or by '_' (systemd driver). */
static bool pod_uid_at(const char *s, size_t n)
{
	if (n < POD_UID_LEN || (s[8] != '-' && s[8] != '_'))
		return false;
	for (int i = 0; i < POD_UID_LEN; i++) {
		bool sep = i == 8 || i == 13 || i == 18 || i == 23;

		if (sep ? s[i] != s[8] : !is_hex(s[i]))
			return false;
	}
	return true;
}

/*
 * Below a kubepods level: the QoS slices, and the pod's own level, "pod<UID>" (cgroupfs)
 * or "kubepods[-QOS]-pod<UID>.slice" (systemd; kind's "kubelet-kubepods-..." too).
 */
static void match_kubepods(struct walk *w, const struct comp *c)
{
	struct container_path *o = w->out;
	const char *uid = NULL;

	if (has_prefix(c, "kubepods") || has_prefix(c, "kubelet-kubepods"))
		w->under_kubepods = true;
	if (!w->under_kubepods)
		return;
	if (c->n == 3 + POD_UID_LEN && has_prefix(c, "pod"))
		uid = c->s + 3;
	else if (c->n >= 4 + POD_UID_LEN + 6 && has_suffix(c, ".slice") &&
		 !memcmp(c->s + c->n - 6 - POD_UID_LEN - 4, "-pod", 4))
		uid = c->s + c->n - 6 - POD_UID_LEN;
	if (uid && pod_uid_at(uid, POD_UID_LEN)) {
		for (int i = 0; i < POD_UID_LEN; i++)
			o->pod_uid[i] = uid[i] == '_' ? '-' : uid[i];
		o->pod_uid[POD_UID_LEN] = 0;
		o->pod_len = c->end;
		if (!o->qos)
			o->qos = QOS_GUARANTEED;
		return;
	}
	/* "besteffort", "kubepods-besteffort.slice", and the burstable ones, above the pod. */
	if (o->pod_uid[0])
		return;
	if (memmem(c->s, c->n, "besteffort", 10))
		o->qos = QOS_BESTEFFORT;
	else if (memmem(c->s, c->n, "burstable", 9))
		o->qos = QOS_BURSTABLE;
}

/* A systemd unit: the deepest one is what a process outside every container is in. */
static void match_unit(struct walk *w, const struct comp *c)
{
	if (has_suffix(c, ".service"))
		w->unit_kind = CT_SERVICE;
	else if (has_suffix(c, ".scope"))
		w->unit_kind = has_prefix(c, "session-") ? CT_SESSION : CT_SCOPE;
	else
		return;
	w->unit = *c;
}

static void visit(struct walk *w, const struct comp *c)
{
	if (match_id(w, c) || match_machine(w, c))
		return;
	match_kubepods(w, c);
	if (c->n == 6 && !memcmp(c->s, "docker", 6))
		w->under_docker = true;
	else if (c->n == 13 && !memcmp(c->s, "libpod_parent", 13))
		w->under_libpod = true;
	else if (w->under_libpod && c->n == 6 && !memcmp(c->s, "conmon", 6) && !w->container)
		set_container(w, c, CT_PODMAN, NULL, true);
	match_unit(w, c);
}

void container_parse(const char *path, struct container_path *out)
{
	struct walk w = { .out = out };
	const char *p = path;

	memset(out, 0, sizeof(*out));
	while (*p) {
		struct comp c;

		p += strspn(p, "/");
		if (!*p)
			break;
		c.s = p;
		c.n = strcspn(p, "/");
		p += c.n;
		c.end = p - path;
		visit(&w, &c);
	}
	if (out->pod_uid[0] && (!w.container || out->pod_len > out->cgroup_len)) {
		/* In the pod's own cgroup (or a pod below a container: kind's nodes). */
		out->runtime = CT_CRI;
		out->monitor = false;
		out->id[0] = out->name[0] = 0;
		out->cgroup_len = out->pod_len;
		return;
	}
	if (!out->pod_uid[0])
		out->qos = QOS_NONE; /* a QoS slice with no pod below it */
	if (w.container)
		return;
	if (!w.unit_kind)
		return;
	out->runtime = w.unit_kind;
	out->cgroup_len = w.unit.end;
	if (w.unit.n >= sizeof(out->name))
		w.unit.n = sizeof(out->name) - 1;
	memcpy(out->name, w.unit.s, w.unit.n);
	out->name[w.unit.n] = 0;
}
