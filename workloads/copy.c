/*
 * copy - copy one file with a chosen buffer size and I/O interface, and time it.
 *
 * Usage: copy [-m rw|stdio|stdio-unbuf] [-b BUFSIZE] SRC DST
 *
 * BUFSIZE defaults to 8192 and takes k/m/g suffixes (powers of 1024). DST is created or
 * truncated with mode 0644 (less the umask). On success the elapsed wall-clock time of
 * the copy (from opening SRC to closing DST, CLOCK_MONOTONIC) is printed to stdout as
 * "<seconds>.<9 digits> sec".
 *
 * I/O pattern by mode, for an S-byte regular file and B = BUFSIZE:
 *   rw           read(SRC, buf, B) until it returns 0 and one write(DST) per chunk read:
 *                ceil(S/B) + 1 reads and ceil(S/B) writes.
 *   stdio        fopen() + fread(buf, 1, B, fp) / fwrite(buf, 1, n, fp): the system calls
 *                are glibc's, made of its own stream buffers (st_blksize, usually 4096),
 *                so for small B there are far fewer calls than fread/fwrite calls.
 *   stdio-unbuf  the same after setvbuf(_IONBF) on both streams: glibc then passes each
 *                fread/fwrite straight to one read/write, which gives about the rw counts.
 * Besides these, only the usual open/fstat/stat/close calls are made, and one write of
 * the timing line to stdout.
 *
 * Exit status: 0 on success, 1 on a runtime error, 2 on bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sizearg.h"

static const char prog[] = "copy";

enum mode { MODE_RW, MODE_STDIO, MODE_STDIO_UNBUF };

static void usage(void)
{
	fprintf(stderr, "usage: %s [-m rw|stdio|stdio-unbuf] [-b BUFSIZE] SRC DST\n", prog);
	exit(2);
}

static void fail(const char *what, const char *path)
{
	fprintf(stderr, "%s: %s%s%s: %s\n", prog, what, path ? " " : "", path ? path : "",
		strerror(errno));
	exit(1);
}

static void write_all(int fd, const char *buf, size_t len, const char *path)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail("write", path);
		}
		buf += n;
		len -= (size_t)n;
	}
}

static void copy_rw(int in, int out, char *buf, size_t bufsize, const char *src,
		    const char *dst)
{
	for (;;) {
		ssize_t n = read(in, buf, bufsize);

		if (n == 0)
			return;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail("read", src);
		}
		write_all(out, buf, (size_t)n, dst);
	}
}

static void copy_stdio(FILE *in, FILE *out, char *buf, size_t bufsize, const char *src,
		       const char *dst)
{
	for (;;) {
		size_t n = fread(buf, 1, bufsize, in);

		if (n > 0 && fwrite(buf, 1, n, out) != n)
			fail("write", dst);
		/* A short fread means end of file or an error; either way we are done. */
		if (n < bufsize) {
			if (ferror(in))
				fail("read", src);
			return;
		}
	}
}

/* -m and -b into *mode and *bufsize; exits with the usage line on bad arguments. */
static void parse_args(int argc, char **argv, enum mode *mode, unsigned long long *bufsize)
{
	int opt;

	while ((opt = getopt(argc, argv, "m:b:")) != -1) {
		switch (opt) {
		case 'm':
			if (!strcmp(optarg, "rw"))
				*mode = MODE_RW;
			else if (!strcmp(optarg, "stdio"))
				*mode = MODE_STDIO;
			else if (!strcmp(optarg, "stdio-unbuf"))
				*mode = MODE_STDIO_UNBUF;
			else
				usage();
			break;
		case 'b':
			/* read() cannot return more than SSIZE_MAX, so no bigger buffer. */
			if (parse_size(optarg, 1, SSIZE_MAX, bufsize))
				usage();
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2)
		usage();
}

/* The two files as streams (fdopen keeps the exact 0644 create mode and the same-file check). */
static void copy_streams(int in, int out, enum mode mode, char *buf, size_t bufsize,
			 const char *src, const char *dst)
{
	FILE *fin = fdopen(in, "r");
	FILE *fout = fdopen(out, "w");

	if (!fin)
		fail("fdopen", src);
	if (!fout)
		fail("fdopen", dst);
	if (mode == MODE_STDIO_UNBUF) {
		if (setvbuf(fin, NULL, _IONBF, 0) || setvbuf(fout, NULL, _IONBF, 0))
			fail("setvbuf", NULL);
	}
	copy_stdio(fin, fout, buf, bufsize, src, dst);
	if (fclose(fin) == EOF)
		fail("close", src);
	/* Buffered data reaches the file only here, so this is a write error too. */
	if (fclose(fout) == EOF)
		fail("write", dst);
}

int main(int argc, char **argv)
{
	enum mode mode = MODE_RW;
	unsigned long long bufsize = 8192;
	struct timespec t0, t1;
	const char *src, *dst;
	struct stat sst, dstt;
	int in, out;
	char *buf;

	parse_args(argc, argv, &mode, &bufsize);
	src = argv[optind];
	dst = argv[optind + 1];

	buf = malloc(bufsize);
	if (!buf)
		fail("allocate buffer", NULL);

	clock_gettime(CLOCK_MONOTONIC, &t0);

	in = open(src, O_RDONLY);
	if (in < 0)
		fail("open", src);
	/* Truncating DST when it is SRC would silently destroy the data being copied. */
	if (fstat(in, &sst) < 0)
		fail("stat", src);
	if (stat(dst, &dstt) == 0 && dstt.st_dev == sst.st_dev && dstt.st_ino == sst.st_ino) {
		fprintf(stderr, "%s: %s and %s are the same file\n", prog, src, dst);
		return 1;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0)
		fail("open", dst);

	if (mode == MODE_RW) {
		copy_rw(in, out, buf, bufsize, src, dst);
		if (close(in) < 0)
			fail("close", src);
		if (close(out) < 0)
			fail("close", dst);
	} else {
		copy_streams(in, out, mode, buf, bufsize, src, dst);
	}

	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (t1.tv_nsec < t0.tv_nsec) {
		t1.tv_nsec += 1000000000L;
		t1.tv_sec--;
	}
	printf("%lld.%09ld sec\n", (long long)(t1.tv_sec - t0.tv_sec), t1.tv_nsec - t0.tv_nsec);
	free(buf);
	if (fflush(stdout) == EOF)
		fail("write", "stdout");
	return 0;
}
