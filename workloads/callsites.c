/*
 * callsites - known I/O from known functions, for the stacks of --stacks.
 *
 * Usage: callsites [-r READS] [-w WRITES] [-s SYNCS] FILE
 *
 * I/O pattern: reader_a() makes READS read(fd, buf, 1) calls on FILE (default 1000; FILE
 * must hold that many bytes), writer_b() WRITES write(fd, "x", 1) calls to FILE.out
 * (default 500), syncer_c() SYNCS fsync calls on FILE.out (default 10), in that order,
 * each called from main() through middle(), a function of its own. Every one of those
 * functions is kept out of line (noinline), so that a stack shows them all: main ->
 * middle -> reader_a -> read_one -> read, where read_one is inlined into reader_a (the
 * debug information still names it: an inlined frame). It prints what it did, one line
 * per function:
 * "reader_a read READS", "writer_b write WRITES", "syncer_c fsync SYNCS".
 *
 * The build makes it twice: callsites without frame pointers (-fomit-frame-pointer, as
 * Debian builds its libraries) and callsites-fp with them, for the two unwinding modes.
 * Exit status: 0 on success, 1 on an I/O error, 2 on bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sizearg.h"

static const char prog[] = "callsites";

static void usage(const char *why)
{
	if (why)
		fprintf(stderr, "%s: %s\n", prog, why);
	fprintf(stderr, "usage: %s [-r READS] [-w WRITES] [-s SYNCS] FILE\n", prog);
}

/* Always inlined: no frame of its own, a scope of its own in the debug information. */
__attribute__((always_inline)) static inline int read_one(int fd, char *c)
{
	return read(fd, c, 1) == 1 ? 0 : -1;
}

__attribute__((noinline)) static int reader_a(int fd, unsigned long n)
{
	char c;

	for (unsigned long i = 0; i < n; i++)
		if (read_one(fd, &c))
			return -1;
	return 0;
}

__attribute__((noinline)) static int writer_b(int fd, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		if (write(fd, "x", 1) != 1)
			return -1;
	return 0;
}

__attribute__((noinline)) static int syncer_c(int fd, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		if (fsync(fd))
			return -1;
	return 0;
}

/* One more frame between main and the workers. */
__attribute__((noinline)) static int middle(int in, int out, unsigned long long counts[3])
{
	if (reader_a(in, counts[0]) || writer_b(out, counts[1]) || syncer_c(out, counts[2]))
		return -1;
	printf("reader_a read %llu\nwriter_b write %llu\nsyncer_c fsync %llu\n", counts[0],
	       counts[1], counts[2]);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long counts[3] = { 1000, 500, 10 };
	char out_path[4096];
	int opt, in, out;

	while ((opt = getopt(argc, argv, "r:w:s:")) != -1) {
		const char *at = strchr("rws", opt);

		if (!at || parse_size(optarg, 0, 1UL << 30, &counts[at - "rws"])) {
			usage(at ? "bad count" : NULL);
			return 2;
		}
	}
	if (optind != argc - 1 ||
	    snprintf(out_path, sizeof(out_path), "%s.out", argv[optind]) >= (int)sizeof(out_path)) {
		usage(NULL);
		return 2;
	}
	in = open(argv[optind], O_RDONLY);
	out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0 || middle(in, out, counts)) {
		fprintf(stderr, "%s: %s: %s\n", prog, argv[optind], strerror(errno));
		return 1;
	}
	return 0;
}
