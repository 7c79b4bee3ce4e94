// SPDX-License-Identifier: GPL-2.0
/* Report outputs (output.h): checked before the command runs, write errors reported. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "async_write.h"
#include "escape.h"
#include "output.h"

/* A path as the error lines show it (escaped: names are bytes). */
static const char *shown(const char *path, char *buf, size_t len)
{
	if (esc_text(buf, len, path) >= len)
		snprintf(buf, len, "(a long name)");
	return buf;
}

static int fail(const struct output *o, const char *what, const char *why)
{
	char name[512];

	fprintf(stderr, "iotrace: %s %s: %s\n", what,
		o->path ? shown(o->path, name, sizeof(name))
		: o->f == stderr ? "standard error" : "standard output", why);
	return -1;
}

int output_open(struct output *o, const char *path)
{
	struct stat st;
	int fd;

	/* "-": standard output, as tar, perf and curl read it (./- for a file of that name). */
	if (path && !strcmp(path, "-"))
		path = NULL;
	*o = (struct output){ .path = path, .f = stdout };
	if (!path)
		return 0;
	/* Made now (so that a bad path fails before the command runs), emptied only later. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
	o->created = fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return fail(o, "cannot write", strerror(errno));
	if (fstat(fd, &st) || S_ISBLK(st.st_mode)) {
		close(fd);
		return fail(o, "cannot write", "a block device: the report would overwrite it");
	}
	o->truncate = !o->created && S_ISREG(st.st_mode);
	o->fd = fd;
	/*
	 * A report of tens of thousands of processes is 100 MiB of JSON: written in 1 MiB
	 * pieces, not 4 KiB ones, by a thread of its own while the report goes on.
	 */
	o->f = S_ISREG(st.st_mode) ? async_fdopen(fd, 1 << 20) : fdopen(fd, "w");
	if (!o->f) {
		int err = errno ? errno : ENOMEM;

		close(fd);
		output_abandon(o);
		return fail(o, "cannot write", strerror(err));
	}
	return 0;
}

void output_start(struct output *o)
{
	if (o->truncate && ftruncate(o->fd, 0) == 0)
		o->truncate = false;
	errno = 0; /* so that a failed write's errno is the one reported (write_error) */
}

void output_abandon(struct output *o)
{
	if (o->path && o->f) {
		fclose(o->f);
		o->f = NULL;
	}
	if (o->created)
		unlink(o->path);
	o->created = false;
}

/*
 * 0, or the error of a write to f. A write that failed before this flush left only the
 * stream's error flag: its errno is taken if nothing set another since the report started
 * (output_start, output_flush clear it), else EIO.
 */
static int write_error(FILE *f)
{
	int before = errno;

	if (fflush(f))
		return errno;
	return ferror(f) ? (before ? before : EIO) : 0;
}

int output_flush(struct output *o)
{
	int err = o->f ? write_error(o->f) : 0;

	errno = 0; /* for the next piece's failure, if any */
	return err ? fail(o, "writing", strerror(err)) : 0;
}

int output_close(struct output *o)
{
	int err;

	if (!o->f)
		return 0;
	err = write_error(o->f);
	if (o->path && fclose(o->f) && !err)
		err = errno;
	if (err)
		fail(o, "writing", strerror(err));
	o->f = NULL;
	return err ? -1 : 0;
}

int output_replaceable(const char *path, char *why, size_t len)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : (snprintf(why, len, "%s", strerror(errno)), -1);
	if (S_ISREG(st.st_mode))
		return 0;
	snprintf(why, len, "%s is there, and it is replaced whole: give the path of a regular "
		 "file", S_ISDIR(st.st_mode) ? "a directory" : S_ISLNK(st.st_mode) ?
		 "a symbolic link" : "a device, FIFO or socket");
	return -1;
}

void output_hold_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			open("/dev/null", O_RDWR | O_CLOEXEC); /* the lowest free number: fd */
}
