/*
 * mkinput - make an input file of an exact size for the other workloads and the tests.
 *
 * Usage: mkinput [-r | -c CHAR] SIZE FILE
 *   -r       random bytes, from getrandom()
 *   -c CHAR  every byte is CHAR, which must be a single byte (default '1', like the
 *            producer in the tr2u/tr2b lab notes)
 * SIZE takes k/m/g suffixes (powers of 1024); 0 makes an empty file.
 *
 * I/O pattern: FILE is opened O_WRONLY|O_CREAT|O_TRUNC (mode 0644 less the umask) and
 * written in chunks of at most 1 MiB, one write() per chunk unless the kernel writes
 * less; with -r each chunk is first filled by getrandom() calls.
 *
 * Exit status: 0 on success, 1 on a runtime error, 2 on bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "sizearg.h"

#define CHUNK (1024 * 1024)

static const char prog[] = "mkinput";

static void usage(void)
{
	fprintf(stderr, "usage: %s [-r | -c CHAR] SIZE FILE\n", prog);
	exit(2);
}

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "%s: %s%s%s: %s\n", prog, what, path ? " " : "", path ? path : "",
		strerror(errno));
	return 1;
}

static int fill_random(unsigned char *buf, size_t len)
{
	/* getrandom may return less than asked, and be interrupted on big requests. */
	while (len > 0) {
		ssize_t n = getrandom(buf, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long size, left;
	bool random = false, have_char = false;
	unsigned char byte = '1';
	unsigned char *buf;
	size_t bufsize;
	const char *path;
	int fd, opt;

	while ((opt = getopt(argc, argv, "rc:")) != -1) {
		switch (opt) {
		case 'r':
			random = true;
			break;
		case 'c':
			if (strlen(optarg) != 1)
				usage();
			byte = (unsigned char)optarg[0];
			have_char = true;
			break;
		default:
			usage();
		}
	}
	if (random && have_char)
		usage();
	if (argc - optind != 2)
		usage();
	/* Capped at the largest file offset. */
	if (parse_size(argv[optind], 0, LLONG_MAX, &size))
		usage();
	path = argv[optind + 1];

	bufsize = size < CHUNK ? (size_t)size : CHUNK;
	buf = malloc(bufsize ? bufsize : 1);
	if (!buf)
		return fail("allocate buffer", NULL);
	if (!random)
		memset(buf, byte, bufsize);

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return fail("open", path);

	for (left = size; left > 0;) {
		size_t want = left < bufsize ? (size_t)left : bufsize;
		size_t done = 0;

		if (random && fill_random(buf, want))
			return fail("getrandom", NULL);
		while (done < want) {
			ssize_t n = write(fd, buf + done, want - done);

			if (n < 0) {
				if (errno == EINTR)
					continue;
				return fail("write", path);
			}
			done += (size_t)n;
		}
		left -= want;
	}

	if (close(fd) < 0)
		return fail("close", path);
	free(buf);
	return 0;
}
