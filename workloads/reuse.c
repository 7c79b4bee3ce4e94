/*
 * reuse: files that get an earlier file's inode number, and files renamed every way, for
 * the file-identity checks where Python is not at hand (the kernel matrix's guests).
 *
 *   reuse reuse DIR N DIRS   N files created, written (file i: i % 100 + 1 bytes), closed
 *                            and deleted one after the other, spread over DIRS directories
 *                            (ext4 gives the freed number to the next file); prints each
 *                            file's inode number and generation (FS_IOC_GETVERSION; 0
 *                            where the filesystem has none), one file a line
 *   reuse renames DIR        rename, renameat, renameat2 RENAME_EXCHANGE, link + unlink,
 *                            O_TMPFILE + linkat and mv (another process) renaming a file this
 *                            one keeps writing, with calls before and after each; the bytes
 *                            are tests/test_identity.py's (KINDS)
 */
#define _GNU_SOURCE
#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fs.h>

static char path_buf[4][4096];

static const char *at(int i, const char *dir, const char *name)
{
	snprintf(path_buf[i], sizeof(path_buf[i]), "%s/%s", dir, name);
	return path_buf[i];
}

static void put(int fd, char c, size_t n)
{
	char buf[128];

	memset(buf, c, n);
	if (write(fd, buf, n) != (ssize_t)n)
		err(1, "write");
}

static int make(const char *path, char c, size_t n)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);

	if (fd < 0)
		err(1, "%s", path);
	put(fd, c, n);
	return fd;
}

static void read_all(const char *path)
{
	char buf[1000];
	int fd = open(path, O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
		err(1, "%s", path);
	close(fd);
}

static int reuse(const char *top, long n, long dirs)
{
	char dir[4096], path[4200];
	unsigned int gen;
	struct stat st;

	if (mkdir(top, 0755) && access(top, F_OK))
		err(1, "%s", top);
	for (long d = 0; d < dirs; d++) {
		snprintf(dir, sizeof(dir), "%s/d%ld", top, d);
		if (mkdir(dir, 0755) && access(dir, F_OK))
			err(1, "%s", dir);
	}
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/d%ld/f%ld", top, i % dirs, i);
		int fd = make(path, 'x', 0);

		if (fstat(fd, &st))
			err(1, "fstat");
		if (ioctl(fd, FS_IOC_GETVERSION, &gen))
			gen = 0;
		printf("%llu %u\n", (unsigned long long)st.st_ino, gen);
		put(fd, 'x', i % 100 + 1);
		close(fd);
		if (unlink(path))
			err(1, "unlink %s", path);
	}
	return 0;
}

static void run_mv(const char *from, const char *to)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		err(1, "fork");
	if (!pid) {
		execlp("mv", "mv", from, to, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		errx(1, "mv %s %s failed", from, to);
}

static int renames(const char *d)
{
	int a, x, y, l, t, dfd, m;
	char proc[64];

	a = make(at(0, d, "a.tmp"), '1', 11);
	if (rename(at(0, d, "a.tmp"), at(1, d, "a")))
		err(1, "rename");
	put(a, '2', 12);
	close(a);
	x = make(at(0, d, "x"), 'x', 13);
	y = make(at(1, d, "y"), 'y', 14);
	if (renameat2(AT_FDCWD, at(0, d, "x"), AT_FDCWD, at(1, d, "y"), RENAME_EXCHANGE))
		err(1, "renameat2");
	put(x, 'X', 15);
	put(y, 'Y', 16);
	close(x);
	close(y);
	l = make(at(0, d, "l.old"), 'l', 17);
	if (link(at(0, d, "l.old"), at(1, d, "l.new")) || unlink(at(0, d, "l.old")))
		err(1, "link");
	put(l, 'L', 18);
	close(l);
	read_all(at(1, d, "l.new"));
	t = open(d, O_TMPFILE | O_WRONLY, 0644);
	if (t < 0)
		err(1, "O_TMPFILE");
	put(t, 't', 19);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", t);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, at(0, d, "t.final"), AT_SYMLINK_FOLLOW))
		err(1, "linkat");
	put(t, 'T', 20);
	close(t);
	read_all(at(0, d, "t.final"));
	dfd = open(d, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		err(1, "%s", d);
	close(make(at(0, d, "c.1"), 'c', 21));
	if (renameat(dfd, "c.1", dfd, "c.2"))
		err(1, "renameat");
	close(dfd);
	read_all(at(0, d, "c.2"));
	m = make(at(0, d, "m.part"), 'm', 22);
	run_mv(at(0, d, "m.part"), at(1, d, "m"));
	put(m, 'M', 23);
	close(m);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "reuse") && atol(argv[3]) > 0 && atol(argv[4]) > 0)
		return reuse(argv[2], atol(argv[3]), atol(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "renames"))
		return renames(argv[2]);
	fprintf(stderr, "usage: reuse reuse DIR N DIRS | reuse renames DIR\n");
	return 2;
}
