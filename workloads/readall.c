/*
 * readall - read a whole file into memory the way Go's io.ReadAll or os.ReadFile does.
 *
 * Usage: readall [-m grow|stat] FILE
 *
 * I/O pattern by mode:
 *   grow (default, like ReadAll): the buffer starts at 512 bytes; each read() asks for
 *        all of the free space, and when the buffer is full it is realloc'ed to twice
 *        its size before the next read, until read() returns 0. On a regular file every
 *        read but the last fills the free space, so an S-byte file costs one read per
 *        doubling step plus the final 0-byte read, and many reallocations.
 *   stat (like ReadFile): fstat() the file and allocate st_size + 1 bytes. The spare byte
 *        leaves room for the read that sees EOF, so a regular file normally costs just
 *        one read() returning st_size and one returning 0. Should the file have grown
 *        meanwhile (or report no size, as in /proc), the buffer doubles as in grow mode.
 *
 * Output: "mode=M reads=N allocated=A bytes=B sec=S" where N counts every read() call
 * made (the final 0-byte one included), A is the sum of the sizes passed to malloc and
 * realloc, B the bytes read and S the seconds from open to the last read (monotonic).
 *
 * Exit status: 0 on success, 1 on a runtime error, 2 on bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char prog[] = "readall";

static void usage(void)
{
	fprintf(stderr, "usage: %s [-m grow|stat] FILE\n", prog);
	exit(2);
}

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "%s: %s %s: %s\n", prog, what, path, strerror(errno));
	return 1;
}

/* Reads fd to its end, growing the buffer by doubling as Go's ReadAll does. */
static int read_all(int fd, const char *path, char **bufp, size_t *capp, size_t *lenp,
		    unsigned long long *reads, unsigned long long *allocated)
{
	size_t cap = *capp, len = 0;
	char *buf = *bufp;

	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *p;

			if (cap > SIZE_MAX / 2) {
				errno = EFBIG;
				return fail("grow buffer for", path);
			}
			p = realloc(buf, cap * 2);
			if (!p)
				return fail("grow buffer for", path);
			*bufp = buf = p;
			cap *= 2;
			*allocated += cap;
		}
		n = read(fd, buf + len, cap - len);
		(*reads)++;
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail("read", path);
		}
		len += (size_t)n;
	}
	*capp = cap;
	*lenp = len;
	return 0;
}

/* -m grow|stat: 1 for stat; exits with the usage line on bad arguments. */
static int parse_mode(int argc, char **argv)
{
	int stat_mode = 0, opt;

	while ((opt = getopt(argc, argv, "m:")) != -1) {
		if (opt != 'm')
			usage();
		if (!strcmp(optarg, "grow"))
			stat_mode = 0;
		else if (!strcmp(optarg, "stat"))
			stat_mode = 1;
		else
			usage();
	}
	if (argc - optind != 1)
		usage();
	return stat_mode;
}

int main(int argc, char **argv)
{
	unsigned long long reads = 0, allocated = 0;
	size_t cap = 512, len = 0;
	struct timespec t0, t1;
	int stat_mode = parse_mode(argc, argv);
	const char *path = argv[optind];
	int fd;
	char *buf;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return fail("open", path);
	if (stat_mode) {
		struct stat st;

		if (fstat(fd, &st) < 0)
			return fail("stat", path);
		if (st.st_size < 0 || (uintmax_t)st.st_size >= SIZE_MAX) {
			errno = EFBIG;
			return fail("size", path);
		}
		cap = (size_t)st.st_size + 1;
	}
	buf = malloc(cap);
	if (!buf)
		return fail("allocate buffer for", path);
	allocated += cap;
	if (read_all(fd, path, &buf, &cap, &len, &reads, &allocated))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(fd);
	free(buf);

	printf("mode=%s reads=%llu allocated=%llu bytes=%zu sec=%.9f\n",
	       stat_mode ? "stat" : "grow", reads, allocated, len,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "%s: write stdout: %s\n", prog, strerror(errno));
		return 1;
	}
	return 0;
}
