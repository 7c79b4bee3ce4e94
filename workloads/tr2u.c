/*
 * tr2u - translate bytes from stdin to stdout like "tr FROM TO", unbuffered.
 *
 * Usage: tr2u FROM TO
 *
 * I/O pattern: exactly one read(0, buf, 1) per input byte plus one final read that
 * returns 0, and exactly one write(1, buf, 1) per byte: N input bytes give N+1 reads and
 * N writes on fds 0 and 1, and no other read or write calls (a read or write that is
 * interrupted by a signal is retried, which adds a call). This is the slow half of the
 * tr2u/tr2b pair: every byte costs two system calls.
 *
 * FROM and TO are literal bytes of equal length, without duplicates in FROM (see
 * trargs.h). Exit status: 0 on success, 1 on an I/O error, 2 on bad arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trargs.h"

static const char prog[] = "tr2u";

static void usage(const char *why)
{
	if (why)
		fprintf(stderr, "%s: %s\n", prog, why);
	fprintf(stderr, "usage: %s FROM TO\n", prog);
}

int main(int argc, char **argv)
{
	unsigned char map[256];
	unsigned char c;
	const char *why;
	ssize_t n;

	if (argc != 3) {
		usage(NULL);
		return 2;
	}
	why = tr_build_map(argv[1], argv[2], map);
	if (why) {
		usage(why);
		return 2;
	}

	for (;;) {
		n = read(STDIN_FILENO, &c, 1);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "%s: read stdin: %s\n", prog, strerror(errno));
			return 1;
		}
		c = map[c];
		for (;;) {
			n = write(STDOUT_FILENO, &c, 1);
			if (n == 1)
				break;
			if (n < 0 && errno == EINTR)
				continue;
			fprintf(stderr, "%s: write stdout: %s\n", prog,
				n < 0 ? strerror(errno) : "wrote nothing");
			return 1;
		}
	}
	return 0;
}
