// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <dirent.h>
#include "residency.h"
#include "vec.h"

/* cachestat(2) arrived in Linux 6.5; glibc 2.36 has neither wrapper nor number. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

struct cachestat_range {
	uint64_t off;
	uint64_t len;
};

struct cachestat {
	uint64_t nr_cache;
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_evicted;
	uint64_t nr_recently_evicted;
};

const char *disk_name(uint32_t kdev, char *buf, size_t len)
{
	/* snoop names every event's disk and serve every block series: remember a few. */
	static __thread struct {
		uint32_t kdev;
		char name[32];
	} known[8];
	static __thread unsigned int next;
	char path[96], line[256];
	FILE *f;

	for (int i = 0; i < 8; i++)
		if (known[i].kdev == kdev && known[i].name[0]) {
			snprintf(buf, len, "%s", known[i].name);
			return buf;
		}
	kdev_format(kdev, buf, len);
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", kdev >> 20, kdev & 0xfffff);
	f = fopen(path, "r");
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "DEVNAME=", 8)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, len, "%s", line + 8);
			break;
		}
	fclose(f);
	known[next % 8].kdev = kdev;
	snprintf(known[next % 8].name, sizeof(known[0].name), "%s", buf);
	next++;
	return buf;
}

int disk_table_add(struct disk_table *t, uint32_t dev)
{
	struct disk_entry *e;

	if (disk_table_find(t, dev))
		return 0;
	e = VEC_PUSH(t->v, t->n);
	if (!e)
		return -1;
	e->dev = dev;
	disk_name(dev, e->name, sizeof(e->name));
	return 0;
}

int disk_table_read(struct disk_table *t)
{
	DIR *d = opendir("/sys/dev/block");
	struct dirent *de;
	unsigned int major, minor;
	int err = 0;

	while (d && !err && (de = readdir(d)))
		if (sscanf(de->d_name, "%u:%u", &major, &minor) == 2)
			err = disk_table_add(t, major << 20 | minor);
	if (d)
		closedir(d);
	return err;
}

/*
 * The path of a regular file the kernel side met only through the page cache (a mapped
 * library, the dynamic loader, an executable): opened by its handle, the (inode number,
 * generation) pair that ext4, xfs and tmpfs export (FILEID_INO32_GEN), on its mount, and
 * read back from /proc/self/fd. NULL when the filesystem or the file does not allow it.
 */
char *path_by_inode(uint32_t kdev, uint64_t ino, uint32_t igen)
{
	struct {
		struct file_handle fh;
		uint32_t ino, gen;
	} h = { .fh = { .handle_bytes = 8, .handle_type = 1 /* FILEID_INO32_GEN */ },
		.ino = (uint32_t)ino, .gen = igen };
	const char *mnt = mount_point_of(kdev);
	char link[64], path[PATH_MAX];
	int mfd, fd;
	ssize_t n;

	if (!mnt || ino > UINT32_MAX)
		return NULL;
	mfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return NULL;
	fd = open_by_handle_at(mfd, &h.fh, O_PATH | O_CLOEXEC);
	close(mfd);
	if (fd < 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	close(fd);
	/* A disconnected dentry names no path; a deleted file's is no longer its. */
	if (n <= 0 || path[0] != '/' ||
	    (n > 10 && !memcmp(path + n - 10, " (deleted)", 10)))
		return NULL;
	path[n] = '\0';
	return strdup(path);
}

const char *mount_point_of(uint32_t kdev)
{
	/* Files of one run live on a handful of filesystems: remember the last answer. */
	static char found[4096];
	static uint32_t found_kdev;
	unsigned int major, minor;
	char line[8192], root[4096], point[4096];
	FILE *f;

	if (found_kdev == kdev && found[0])
		return found;
	f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return NULL;
	found[0] = '\0';
	found_kdev = kdev;
	while (fgets(line, sizeof(line), f)) {
		/* id parent MAJ:MIN root mount-point ... */
		if (sscanf(line, "%*d %*d %u:%u %4095s %4095s", &major, &minor, root, point) != 4)
			continue;
		if (major == kdev >> 20 && minor == (kdev & 0xfffff) && !strcmp(root, "/")) {
			snprintf(found, sizeof(found), "%s", point);
			break;
		}
	}
	fclose(f);
	return found[0] ? found : NULL;
}

const char residency_gone[] = "deleted or renamed";

/*
 * Whether the open file is not the one with generation igen: its inode number came back for
 * another file (ext4 gives a deleted file's number to the next one). Filesystems that cannot
 * say (no FS_IOC_GETVERSION: tmpfs, whose numbers do not come back) are taken at their word.
 */
static bool other_generation(int fd, uint32_t igen)
{
	int gen = 0;

	return igen && !ioctl(fd, FS_IOC_GETVERSION, &gen) && (uint32_t)gen != igen;
}

const char residency_by_mincore[] = "cachestat(2) not in this kernel: resident pages from "
				   "mmap and mincore(2), as fincore reads them";

/* The pages of the open file fd (size bytes) in the page cache, as fincore counts them. */
static int mincore_pages(int fd, uint64_t size, uint64_t *pages)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = (size + page - 1) / page;
	unsigned char *vec;
	void *map;
	int err = 0;

	*pages = 0;
	if (!size)
		return 0;
	/* Mapping faults nothing in, and mincore reads the cache without touching it. */
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	vec = malloc(n);
	if (!vec || mincore(map, size, vec))
		err = vec ? -errno : -ENOMEM;
	for (size_t i = 0; !err && i < n; i++)
		*pages += vec[i] & 1;
	free(vec);
	munmap(map, size);
	return err;
}

const char *residency_read(const char *path, uint32_t kdev, uint64_t ino, uint32_t igen,
			   struct residency *r)
{
	struct cachestat_range range = { 0, 0 }; /* len 0: to the end of the file */
	struct cachestat cs;
	static char reason[128];
	struct stat st;
	int fd;

	memset(r, 0, sizeof(*r));
	if (!path)
		return "path unknown";
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? residency_gone : "cannot open at exit";
	if (fstat(fd, &st) || st.st_ino != ino || major(st.st_dev) != kdev >> 20 ||
	    minor(st.st_dev) != (kdev & 0xfffff) || other_generation(fd, igen)) {
		close(fd);
		return residency_gone;
	}
	if (syscall(__NR_cachestat, fd, &range, &cs, 0)) {
		bool missing = errno == ENOSYS;
		int err = missing ? mincore_pages(fd, st.st_size, &r->cached_pages) : -errno;

		close(fd);
		if (err) {
			snprintf(reason, sizeof(reason), "%s: %s", missing ? "mincore" : "cachestat",
				 strerror(-err));
			return reason;
		}
		r->size_bytes = st.st_size;
		r->partial = residency_by_mincore;
		return NULL;
	}
	close(fd);
	r->size_bytes = st.st_size;
	r->cached_pages = cs.nr_cache;
	r->dirty_pages = cs.nr_dirty;
	r->writeback_pages = cs.nr_writeback;
	r->evicted_pages = cs.nr_evicted;
	r->recently_evicted_pages = cs.nr_recently_evicted;
	return NULL;
}
