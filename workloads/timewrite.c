/*
 * timewrite - time writing the same data with growing write sizes, with or without O_SYNC.
 *
 * Usage: timewrite [-f] OUTFILE [sync] < INFILE
 *
 * stdin must be seekable: its length is taken with lseek(0, 0, SEEK_END), it is rewound
 * and read whole into memory (one read() for a regular file; more only if the kernel
 * returns less). OUTFILE is then opened O_RDWR|O_CREAT|O_TRUNC, plus O_SYNC when the
 * second argument is "sync", with mode 0644 (less the umask).
 *
 * I/O pattern on OUTFILE: for BUFFSIZE = 256, 512, ..., 131072 (10 rows), one
 * lseek(OUTFILE, 0, SEEK_SET) followed by ceil(len / BUFFSIZE) write() calls of BUFFSIZE
 * bytes (the last one the remainder). Each row is timed with times() and printed as
 * "BUFFSIZE\tuser\tsys\treal\tloops" with times in seconds; the rows reach stdout
 * through stdio, so not interleaved with the measured writes. A short write is reported
 * as an error rather than retried, so every row makes exactly the calls it claims.
 *
 * -f runs each row in a child process (fork; the parent waits for it before the next row),
 * so that a per-process tracer sees one row per process: same file descriptor, same file
 * offset rules, same output. The note's program had no such option; without -f nothing
 * changes.
 *
 * Exit status: 0 on success, 1 on a runtime error, 2 on bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <unistd.h>

static const char prog[] = "timewrite";

static int fail(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	return 1;
}

/* Write one chunk; 0 on success. */
static int write_chunk(int fd, const char *buf, size_t len, const char *path)
{
	ssize_t n = write(fd, buf, len);

	if (n < 0) {
		fprintf(stderr, "%s: write %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	if ((size_t)n != len) {
		fprintf(stderr, "%s: write %s: short write (%zd of %zu bytes)\n", prog, path,
			n, len);
		return -1;
	}
	return 0;
}

/* Reads all of stdin (a regular file) into a malloc'ed buffer; NULL after one error line. */
static char *slurp_stdin(off_t *lengthp)
{
	off_t length = lseek(STDIN_FILENO, 0, SEEK_END), got;
	char *buff;

	if (length < 0) {
		fail("lseek stdin (it must be a file)");
		return NULL;
	}
	if (lseek(STDIN_FILENO, 0, SEEK_SET) < 0) {
		fail("lseek stdin");
		return NULL;
	}
	if ((uintmax_t)length >= SIZE_MAX) {
		errno = EFBIG;
		fail("read stdin");
		return NULL;
	}
	/* One spare byte so that an empty input still gets a real buffer. */
	buff = malloc((size_t)length + 1);
	if (!buff) {
		fail("allocate input buffer");
		return NULL;
	}
	for (got = 0; got < length;) {
		ssize_t n = read(STDIN_FILENO, buff + got, (size_t)(length - got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail("read stdin");
			return NULL;
		}
		if (n == 0) {
			fprintf(stderr, "%s: read stdin: file shrank to %lld of %lld bytes\n",
				prog, (long long)got, (long long)length);
			return NULL;
		}
		got += n;
	}
	*lengthp = length;
	return buff;
}

/* Rewrites out from the start in bufsize writes and prints the row of times; -1 on error. */
static int timed_pass(int out, const char *path, const char *buff, off_t length, int bufsize,
		      long ticks)
{
	off_t full = length / bufsize, rest = length % bufsize;
	struct tms start, end;
	clock_t start_clock, end_clock;

	if (lseek(out, 0, SEEK_SET) < 0) {
		fprintf(stderr, "%s: lseek %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	start_clock = times(&start);
	for (off_t i = 0; i < full; i++)
		if (write_chunk(out, buff + i * bufsize, (size_t)bufsize, path))
			return -1;
	if (rest != 0 && write_chunk(out, buff + full * bufsize, (size_t)rest, path))
		return -1;
	end_clock = times(&end);
	printf("%d\t%7.4f\t%7.4f\t%7.4f\t%lld\n", bufsize,
	       (double)(end.tms_utime - start.tms_utime) / ticks,
	       (double)(end.tms_stime - start.tms_stime) / ticks,
	       (double)(end_clock - start_clock) / ticks, (long long)(full + (rest != 0)));
	return 0;
}

/* timed_pass in a child process that the parent waits for; -1 on error. */
static int timed_pass_in_child(int out, const char *path, const char *buff, off_t length,
			       int bufsize, long ticks)
{
	pid_t pid = 0;
	int ws;

	/* Nothing buffered may be duplicated into the child. */
	if (fflush(stdout) == EOF || (pid = fork()) < 0) {
		fail(pid < 0 ? "fork" : "write stdout");
		return -1;
	}
	if (pid == 0) {
		int err = timed_pass(out, path, buff, length, bufsize, ticks);

		if (fflush(stdout) == EOF)
			err = fail("write stdout");
		_exit(err ? 1 : 0);
	}
	while (waitpid(pid, &ws, 0) < 0) {
		if (errno != EINTR) {
			fail("waitpid");
			return -1;
		}
	}
	/* The child has said what failed. */
	return WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? 0 : -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: %s [-f] OUTFILE [sync] < INFILE\n", prog);
	exit(2);
}

int main(int argc, char **argv)
{
	int flags = O_RDWR | O_CREAT | O_TRUNC;
	const char *path;
	off_t length;
	long ticks;
	char *buff;
	int out, fork_rows = 0;

	opterr = 0; /* usage() says it in one line */
	for (int opt; (opt = getopt(argc, argv, "f")) != -1;) {
		if (opt != 'f')
			usage();
		fork_rows = 1;
	}
	/* Drop the options but keep argv[1] the first operand, as without them. */
	argc -= optind - 1;
	argv += optind - 1;
	if ((argc != 2 && argc != 3) || (argc == 3 && strcmp(argv[2], "sync") != 0))
		usage();
	if (argc == 3)
		flags |= O_SYNC;
	path = argv[1];
	buff = slurp_stdin(&length);
	if (!buff)
		return 1;
	out = open(path, flags, 0644);
	if (out < 0) {
		fprintf(stderr, "%s: open %s: %s\n", prog, path, strerror(errno));
		return 1;
	}
	ticks = sysconf(_SC_CLK_TCK);
	if (ticks <= 0)
		return fail("sysconf(_SC_CLK_TCK)");
	for (int bufsize = 256; bufsize <= 131072; bufsize <<= 1)
		if ((fork_rows ? timed_pass_in_child : timed_pass)(out, path, buff, length,
								    bufsize, ticks))
			return 1;
	if (close(out) < 0) {
		fprintf(stderr, "%s: close %s: %s\n", prog, path, strerror(errno));
		return 1;
	}
	free(buff);
	if (fflush(stdout) == EOF)
		return fail("write stdout");
	return 0;
}
