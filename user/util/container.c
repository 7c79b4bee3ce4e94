// SPDX-License-Identifier: GPL-2.0
/*
 * The container resolver (container.h). The runtimes' answers are kept per container ID in
 * a tree (tsearch) that only grows: IDs are not reused, and a container that is gone keeps
 * the name it had, so a late report still names it. Look-ups wait in a small queue for the
 * resolver's thread, which asks the runtime (a socket that may take its timeout to fail) so
 * that no refresh ever does; one that no source answered is asked again after
 * RETRY_SECONDS (a container just created may not be in its runtime's state yet).
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "container.h"

#define RETRY_SECONDS 10
#define QUEUE_LEN 256

struct meta_entry {
	char id[CONTAINER_ID_LEN + 1];
	enum container_runtime runtime;
	enum container_meta_state state;
	struct container_meta meta;
	time_t asked; /* CLOCK_MONOTONIC seconds of the last answer */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, settled = PTHREAD_COND_INITIALIZER;
static void *tree;
static struct meta_entry *queue[QUEUE_LEN];
static unsigned qhead, qtail; /* entries qhead..qtail-1 wait */
static bool working, thread_started;

static time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static int by_id(const void *a, const void *b)
{
	const struct meta_entry *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	return c ? c : (int)x->runtime - (int)y->runtime;
}

static void *resolver(void *unused)
{
	pthread_mutex_lock(&lock);
	for (;;) {
		struct meta_entry *e;
		struct container_meta meta;
		int err;

		while (qhead == qtail) {
			working = false;
			pthread_cond_broadcast(&settled);
			pthread_cond_wait(&wake, &lock);
		}
		working = true;
		e = queue[qhead++ % QUEUE_LEN];
		pthread_mutex_unlock(&lock);
		err = runtime_lookup(e->runtime, e->id, &meta);
		pthread_mutex_lock(&lock);
		e->meta = meta;
		e->state = err ? META_UNANSWERED : META_FOUND;
		e->asked = now_s();
	}
	return NULL;
}

/* Queues e for the resolver (lock held); a full queue leaves it to a later call. */
static void ask(struct meta_entry *e)
{
	pthread_t t;

	if (qtail - qhead == QUEUE_LEN)
		return;
	if (!thread_started) {
		if (pthread_create(&t, NULL, resolver, NULL))
			return;
		pthread_detach(t);
		thread_started = true;
	}
	e->state = META_PENDING;
	queue[qtail++ % QUEUE_LEN] = e;
	pthread_cond_signal(&wake);
}

/* The cached answer about the path's container (lock held), asking for it when due. */
static void lookup_meta(struct container_info *out)
{
	struct meta_entry key = { .runtime = out->path.runtime }, *e, **found;

	memcpy(key.id, out->path.id, sizeof(key.id));
	found = tfind(&key, &tree, by_id);
	if (found) {
		e = *found;
	} else {
		e = calloc(1, sizeof(*e));
		if (e)
			*e = key;
		if (!e || !tsearch(e, &tree, by_id)) {
			free(e);
			out->state = META_UNANSWERED;
			return;
		}
	}
	if (e->state == META_NONE ||
	    (e->state == META_UNANSWERED && now_s() - e->asked >= RETRY_SECONDS))
		ask(e);
	out->meta = e->meta;
	out->state = e->state == META_NONE ? META_PENDING : e->state; /* queue full: later */
}

void container_of_path(const char *cgroup_path, struct container_info *out)
{
	memset(out, 0, sizeof(*out));
	container_parse(cgroup_path, &out->path);
	if (out->path.runtime == CT_NSPAWN) {
		/* A machine's name is in its cgroup's; machined has no image to tell. */
		snprintf(out->meta.name, sizeof(out->meta.name), "%s", out->path.name);
		out->meta.source = "cgroup path";
		out->state = META_FOUND;
		return;
	}
	if (!out->path.id[0] || out->path.monitor)
		return;
	pthread_mutex_lock(&lock);
	lookup_meta(out);
	pthread_mutex_unlock(&lock);
}

int container_of_pid(pid_t pid, struct container_info *out)
{
	char file[64], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int err = -1;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	f = fopen(file, "re");
	if (!f)
		return -1;
	/* "0::/path": the v2 hierarchy's line (hierarchy 0, no controllers named). */
	while ((n = getline(&line, &cap, f)) > 0)
		if (!strncmp(line, "0::", 3)) {
			line[n - 1] = line[n - 1] == '\n' ? 0 : line[n - 1];
			container_of_path(line + 3, out);
			err = 0;
			break;
		}
	free(line);
	fclose(f);
	return err;
}

void container_prime(int max_ms)
{
	struct container_info c;
	struct dirent *e;
	DIR *d = opendir("/proc");
	char *end;

	while (d && (e = readdir(d))) {
		long pid = strtol(e->d_name, &end, 10);

		if (pid > 0 && !*end)
			container_of_pid(pid, &c);
	}
	if (d)
		closedir(d);
	container_settle(max_ms);
}

void container_settle(int max_ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += max_ms / 1000;
	until.tv_nsec += max_ms % 1000 * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&lock);
	while ((qhead != qtail || working) &&
	       pthread_cond_timedwait(&settled, &lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&lock);
}

const char *container_label(const struct container_info *c, char *buf, size_t len)
{
	const struct container_path *p = &c->path;

	if (c->meta.name[0])
		snprintf(buf, len, "%s", c->meta.name);
	else if (p->id[0])
		snprintf(buf, len, "%.12s", p->id);
	else if (p->name[0])
		snprintf(buf, len, "%s", p->name);
	else if (p->pod_uid[0])
		snprintf(buf, len, "pod:%.8s", p->pod_uid);
	else
		snprintf(buf, len, "%s", container_runtime_names[p->runtime]);
	return buf;
}

int proc_namespaces(pid_t pid, struct ns_ids *out)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	if (stat(path, &st))
		return -1;
	out->mnt = st.st_ino;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	if (stat(path, &st))
		return -1;
	out->pid = st.st_ino;
	return 0;
}

/* ---- --container NAME|ID: a walk of the cgroup tree ---- */

static struct {
	const char *arg;
	size_t root_len;
	int by_name, by_id; /* matches of each kind (the first one's path kept) */
	char name_path[512], id_path[512];
} search_state;

/* The container's own cgroup (or a pod's, by its UID) whose name or ID is the argument. */
static int visit_cgroup(const char *fpath, const struct stat *sb, int type, struct FTW *ftw)
{
	const char *rel = fpath + search_state.root_len, *arg = search_state.arg;
	size_t len = strlen(rel), alen = strlen(arg);
	struct container_path p;
	struct container_meta meta;
	bool name = false, id = false;

	if (type != FTW_D || !len || len >= sizeof(search_state.id_path))
		return 0;
	container_parse(rel, &p);
	if (p.pod_uid[0] && p.pod_len == len && p.runtime == CT_CRI && !p.id[0])
		id = !strcmp(p.pod_uid, arg);
	else if (p.runtime >= CT_DOCKER && p.runtime <= CT_NSPAWN && !p.monitor &&
		 p.cgroup_len == len) {
		id = p.id[0] && alen <= CONTAINER_ID_LEN && !strncmp(p.id, arg, alen);
		name = p.runtime == CT_NSPAWN ? !strcmp(p.name, arg)
		       : !id && p.id[0] && !runtime_lookup(p.runtime, p.id, &meta) &&
				 !strcmp(meta.name, arg);
	}
	if (name && !search_state.by_name++)
		memcpy(search_state.name_path, rel, len + 1);
	if (id && !search_state.by_id++)
		memcpy(search_state.id_path, rel, len + 1);
	return 0;
}

int container_cgroup(const char *arg, struct cgroup_ref *out, char *why, size_t why_len)
{
	const char *root = cgroup_root(), *path;

	if (!root) {
		snprintf(why, why_len, "no cgroup v2 filesystem is mounted");
		return -1;
	}
	if (!*arg || strchr(arg, '/')) {
		snprintf(why, why_len, "expected a container's name or ID (a cgroup: --cgroup)");
		return -1;
	}
	memset(&search_state, 0, sizeof(search_state));
	search_state.arg = arg;
	search_state.root_len = strlen(root);
	nftw(root, visit_cgroup, 16, FTW_PHYS | FTW_MOUNT);
	/* A name is exact; an ID is a prefix, which must be one container's only. */
	if (search_state.by_name == 1)
		path = search_state.name_path;
	else if (!search_state.by_name && search_state.by_id == 1)
		path = search_state.id_path;
	else if (search_state.by_name + search_state.by_id) {
		snprintf(why, why_len, "names %d running containers: give more of the ID",
			 search_state.by_name + search_state.by_id);
		return -1;
	} else {
		snprintf(why, why_len, "no running container has that name or an ID starting so");
		return -1;
	}
	return cgroup_resolve(path, out, why, why_len);
}
