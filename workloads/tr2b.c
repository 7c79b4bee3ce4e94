/*
 * tr2b - translate bytes from stdin to stdout like "tr FROM TO", through stdio.
 *
 * Usage: tr2b FROM TO
 *
 * I/O pattern: getchar()/putchar() per byte, so the system calls are whatever glibc's
 * buffering makes of them: reads and writes of the stream buffer size (st_blksize, 4096
 * on most files and pipes; a terminal stdout is line buffered instead), i.e. about
 * N/4096 reads and N/4096 writes for N bytes, plus one read returning 0 at the end and
 * the final flush at exit. The fast half of the tr2u/tr2b pair.
 *
 * FROM and TO are literal bytes of equal length, without duplicates in FROM (see
 * trargs.h). Exit status: 0 on success, 1 on an I/O error, 2 on bad arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "trargs.h"

static const char prog[] = "tr2b";

static void usage(const char *why)
{
	if (why)
		fprintf(stderr, "%s: %s\n", prog, why);
	fprintf(stderr, "usage: %s FROM TO\n", prog);
}

int main(int argc, char **argv)
{
	unsigned char map[256];
	const char *why;
	int c;

	if (argc != 3) {
		usage(NULL);
		return 2;
	}
	why = tr_build_map(argv[1], argv[2], map);
	if (why) {
		usage(why);
		return 2;
	}

	while ((c = getchar()) != EOF) {
		if (putchar(map[c]) == EOF) {
			fprintf(stderr, "%s: write stdout: %s\n", prog, strerror(errno));
			return 1;
		}
	}
	if (ferror(stdin)) {
		fprintf(stderr, "%s: read stdin: %s\n", prog, strerror(errno));
		return 1;
	}
	/* Flush here rather than at exit so a late write error still sets the status. */
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "%s: write stdout: %s\n", prog, strerror(errno));
		return 1;
	}
	return 0;
}
