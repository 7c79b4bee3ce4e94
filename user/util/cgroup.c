// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <mntent.h>
#include <linux/magic.h>
#include "cgroup.h"
#include "vec.h"

const char *cgroup_root(void)
{
	static char root[PATH_MAX];
	struct mntent *m;
	FILE *f;

	if (root[0])
		return root;
	/* Usually /sys/fs/cgroup; /sys/fs/cgroup/unified on hybrid (v1 + v2) systems. */
	f = setmntent("/proc/self/mounts", "r");
	while (f && (m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(root, sizeof(root), "%s", m->mnt_dir);
			break;
		}
	if (f)
		endmntent(f);
	return root[0] ? root : NULL;
}

int cgroup_resolve(const char *arg, struct cgroup_ref *out, char *why, size_t why_len)
{
	const char *root = cgroup_root(), *rel;
	char full[PATH_MAX * 2], real[PATH_MAX];
	struct statfs sfs;
	struct stat st;
	size_t root_len;

	if (!root) {
		snprintf(why, why_len, "no cgroup v2 filesystem is mounted");
		return -1;
	}
	root_len = strlen(root);
	if (!strncmp(arg, root, root_len) && (!arg[root_len] || arg[root_len] == '/'))
		snprintf(full, sizeof(full), "%s", arg);
	else
		snprintf(full, sizeof(full), "%s/%s", root, arg + strspn(arg, "/"));
	if (!realpath(full, real)) {
		snprintf(why, why_len, "%s", strerror(errno));
		return -1;
	}
	if (statfs(real, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC ||
	    strncmp(real, root, root_len) || (real[root_len] && real[root_len] != '/')) {
		snprintf(why, why_len, "not a directory of the cgroup v2 tree at %s", root);
		return -1;
	}
	if (stat(real, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(why, why_len, "not a cgroup directory");
		return -1;
	}
	rel = real[root_len] ? real + root_len : "/";
	out->id = st.st_ino;
	out->level = 0;
	/* "/a/b": one level per slash that starts a name. */
	for (const char *c = rel; *c; c++)
		out->level += *c == '/' && c[1];
	if (strlen(rel) >= sizeof(out->path)) {
		snprintf(why, why_len, "path too long");
		return -1;
	}
	memcpy(out->path, rel, strlen(rel) + 1);
	return 0;
}

/* id -> path cache, refilled by a walk of the whole tree. */
struct cg_entry {
	uint64_t id;
	char *path;
};

static struct cg_entry *cache;
static size_t ncache, cap;
/* Until the first cgroup_rescan(), a miss walks the tree (once). */
static int rescan_allowed = 1;

static int add_entry(const char *fpath, const struct stat *sb, int type, struct FTW *ftw)
{
	const char *rel = fpath + strlen(cgroup_root());
	struct cg_entry *e;

	if (type != FTW_D)
		return 0;
	for (size_t i = 0; i < ncache; i++)
		if (cache[i].id == (uint64_t)sb->st_ino) {
			if (strcmp(cache[i].path, *rel ? rel : "/")) {
				char *p = strdup(*rel ? rel : "/");

				if (!p)
					return 1;
				free(cache[i].path);
				cache[i].path = p;
			}
			return 0;
		}
	if (VEC_ROOM(cache, ncache, cap))
		return 1;
	e = &cache[ncache];
	e->id = sb->st_ino;
	e->path = strdup(*rel ? rel : "/");
	if (!e->path)
		return 1;
	ncache++;
	return 0;
}

/*
 * Entries are only added or renamed, never dropped: cgroup ids are not reused, and a removed
 * cgroup keeps its last path, so a service restarted into a new cgroup at the same path
 * still gets the same label (and its counters keep growing).
 */
static const char *cached(uint64_t id)
{
	for (size_t i = 0; i < ncache; i++)
		if (cache[i].id == id)
			return cache[i].path;
	return NULL;
}

static void rescan(void)
{
	if (cgroup_root())
		nftw(cgroup_root(), add_entry, 16, FTW_PHYS | FTW_MOUNT);
}

void cgroup_rescan(void)
{
	rescan();
	rescan_allowed = 0;
}

const char *cgroup_path_of(uint64_t id)
{
	static char gone[32];
	const char *path = cached(id);

	if (!path && rescan_allowed) {
		rescan();
		path = cached(id);
	}
	if (path)
		return path;
	snprintf(gone, sizeof(gone), "id:%llu", (unsigned long long)id);
	return gone;
}

const char *cgroup_group_path(const struct cgroup_ref *refs, uint32_t n, uint64_t id)
{
	for (uint32_t i = 0; i < n; i++)
		if (refs[i].id == id)
			return refs[i].path;
	return cgroup_path_of(id);
}

int cgroup_path_of_pid(pid_t pid, char *buf, size_t len)
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
			snprintf(buf, len, "%s", line + 3);
			err = 0;
			break;
		}
	free(line);
	fclose(f);
	return err;
}

uint64_t cgroup_id_of_pid(pid_t pid)
{
	struct cgroup_ref ref;
	char path[PATH_MAX], why[64];

	if (cgroup_path_of_pid(pid, path, sizeof(path)) || cgroup_resolve(path, &ref, why, sizeof(why)))
		return 0;
	return ref.id;
}

void cgroup_note(uint64_t id)
{
	if (!cached(id))
		rescan();
}
