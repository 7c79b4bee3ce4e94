/*
 * uring - a known mix of io_uring requests (liburing), to check what iotrace counts.
 *
 * Usage: uring [-n READS] [-w WRITES] [-b SIZE] [-f FSYNCS] [-a] [-q] [-d] [-o] FILE
 *   -w  WRITES writes of SIZE bytes at offsets 0, SIZE, 2*SIZE... (IORING_OP_WRITE), first
 *   -n  READS reads of SIZE bytes at the same offsets, wrapping (IORING_OP_READ), after
 *       the writes; the file must hold READS*SIZE bytes or they come back short
 *   -b  request size, default 4k (k/m/g suffixes)
 *   -f  FSYNCS fsyncs (IORING_OP_FSYNC), after the reads
 *   -a  every other read, write and fsync flagged IOSQE_ASYNC (forced to an io-wq worker)
 *   -q  an SQPOLL ring (IORING_SETUP_SQPOLL): a kernel thread of this process submits
 *   -d  open FILE with O_DIRECT (SIZE must then be a multiple of 4096)
 *   -o  also IORING_OP_OPENAT, IORING_OP_STATX and IORING_OP_CLOSE of FILE, one each
 * FILE is opened (created if needed) with openat(2), except with -o's requests.
 *
 * Requests go in batches of up to 32 (the ring's size), each batch submitted and then
 * reaped whole. At the end it prints what it issued and what came back, one line per
 * opcode, as iotrace names them:
 *   "<OPCODE> <requests> <bytes> <async requests> <errors>"
 * where bytes is the sum of the positive results of the data opcodes (READ, WRITE) and
 * async requests those flagged IOSQE_ASYNC. Exit status: 0, 1 on an I/O error, 2 on bad
 * arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sizearg.h"

#define DEPTH 32

static const char prog[] = "uring";

struct tally {
	const char *name;
	unsigned long long requests, bytes, async, errors;
};

enum { T_WRITE, T_READ, T_FSYNC, T_OPENAT, T_STATX, T_CLOSE, TALLIES };

static struct tally tally[TALLIES] = {
	[T_WRITE] = { "WRITE" }, [T_READ] = { "READ" }, [T_FSYNC] = { "FSYNC" },
	[T_OPENAT] = { "OPENAT" }, [T_STATX] = { "STATX" }, [T_CLOSE] = { "CLOSE" },
};

struct options {
	unsigned long reads, writes, fsyncs;
	size_t size;
	bool async, sqpoll, direct, open_ops;
	const char *file;
};

static void usage(void)
{
	fprintf(stderr, "usage: %s [-n READS] [-w WRITES] [-b SIZE] [-f FSYNCS] [-a] [-q] [-d] "
			"[-o] FILE\n", prog);
	exit(2);
}

static unsigned long count_arg(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || *s == '-')
		usage();
	return v;
}

static void parse(int argc, char **argv, struct options *o)
{
	int c;

	o->size = 4096;
	while ((c = getopt(argc, argv, "n:w:b:f:aqdo")) != -1) {
		switch (c) {
		case 'n': o->reads = count_arg(optarg); break;
		case 'w': o->writes = count_arg(optarg); break;
		case 'f': o->fsyncs = count_arg(optarg); break;
		case 'b': {
			unsigned long long v;

			if (parse_size(optarg, 1, 1ULL << 30, &v))
				usage();
			o->size = v;
			break;
		}
		case 'a': o->async = true; break;
		case 'q': o->sqpoll = true; break;
		case 'd': o->direct = true; break;
		case 'o': o->open_ops = true; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || (o->direct && o->size % 4096))
		usage();
	o->file = argv[optind];
}

/* Waits for n completions and tallies them by the request's tally (user_data). */
static int reap(struct io_uring *ring, unsigned n)
{
	struct io_uring_cqe *cqe;
	int err = 0;

	for (unsigned i = 0; i < n; i++) {
		int ret = io_uring_wait_cqe(ring, &cqe);

		if (ret < 0) {
			fprintf(stderr, "%s: io_uring_wait_cqe: %s\n", prog, strerror(-ret));
			return 1;
		}
		struct tally *t = &tally[cqe->user_data % TALLIES];

		if (cqe->res < 0) {
			t->errors++;
			err = 1;
		} else if (t == &tally[T_READ] || t == &tally[T_WRITE]) {
			t->bytes += cqe->res;
		}
		io_uring_cqe_seen(ring, cqe);
	}
	return err;
}

static struct io_uring_sqe *next_sqe(struct io_uring *ring, int which, bool async)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe) {
		fprintf(stderr, "%s: no free SQE\n", prog);
		exit(1);
	}
	tally[which].requests++;
	tally[which].async += async;
	return sqe;
}

/* After io_uring_prep_*(), which clears the SQE's flags and user data. */
static void tag_sqe(struct io_uring_sqe *sqe, int which, bool async)
{
	io_uring_sqe_set_data64(sqe, which);
	if (async)
		io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
}

/* count requests of one kind in batches of DEPTH: submit, then reap the batch. */
static int batches(struct io_uring *ring, const struct options *o, int fd, char *buf, int which,
		   unsigned long count)
{
	int err = 0;

	for (unsigned long done = 0; done < count && !err;) {
		unsigned n = count - done < DEPTH ? count - done : DEPTH;

		for (unsigned i = 0; i < n; i++, done++) {
			bool async = o->async && done % 2;
			struct io_uring_sqe *sqe = next_sqe(ring, which, async);
			unsigned long long off = (unsigned long long)(done % (o->writes ? o->writes
									    : count)) * o->size;

			if (which == T_WRITE)
				io_uring_prep_write(sqe, fd, buf, o->size, off);
			else if (which == T_READ)
				io_uring_prep_read(sqe, fd, buf, o->size, off);
			else
				io_uring_prep_fsync(sqe, fd, 0);
			tag_sqe(sqe, which, async);
		}
		if (io_uring_submit(ring) < 0) {
			fprintf(stderr, "%s: io_uring_submit failed\n", prog);
			return 1;
		}
		err = reap(ring, n);
	}
	return err;
}

/* OPENAT, STATX and CLOSE of the file, each waited for (the close needs the open's fd). */
static int open_ops(struct io_uring *ring, const struct options *o)
{
	struct statx stx;
	struct io_uring_cqe *cqe;
	int fd, err;

	struct io_uring_sqe *sqe = next_sqe(ring, T_OPENAT, false);

	io_uring_prep_openat(sqe, AT_FDCWD, o->file, O_RDONLY, 0);
	tag_sqe(sqe, T_OPENAT, false);
	io_uring_submit(ring);
	if (io_uring_wait_cqe(ring, &cqe) || cqe->res < 0) {
		fprintf(stderr, "%s: IORING_OP_OPENAT failed\n", prog);
		return 1;
	}
	fd = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	sqe = next_sqe(ring, T_STATX, false);
	io_uring_prep_statx(sqe, AT_FDCWD, o->file, 0, STATX_SIZE, &stx);
	tag_sqe(sqe, T_STATX, false);
	io_uring_submit(ring);
	err = reap(ring, 1);
	sqe = next_sqe(ring, T_CLOSE, false);
	io_uring_prep_close(sqe, fd);
	tag_sqe(sqe, T_CLOSE, false);
	io_uring_submit(ring);
	return reap(ring, 1) || err;
}

int main(int argc, char **argv)
{
	struct io_uring_params params = { 0 };
	struct options o = { 0 };
	struct io_uring ring;
	char *buf;
	int fd, ret, err = 0;

	parse(argc, argv, &o);
	if (o.sqpoll) {
		params.flags = IORING_SETUP_SQPOLL;
		params.sq_thread_idle = 100;
	}
	ret = io_uring_queue_init_params(DEPTH, &ring, &params);
	if (ret < 0) {
		fprintf(stderr, "%s: io_uring_queue_init: %s\n", prog, strerror(-ret));
		return 1;
	}
	fd = open(o.file, O_RDWR | O_CREAT | (o.direct ? O_DIRECT : 0), 0644);
	if (fd < 0 || posix_memalign((void **)&buf, 4096, o.size)) {
		fprintf(stderr, "%s: %s: %s\n", prog, o.file, strerror(errno));
		return 1;
	}
	memset(buf, 'u', o.size);
	err |= batches(&ring, &o, fd, buf, T_WRITE, o.writes);
	err |= batches(&ring, &o, fd, buf, T_READ, o.reads);
	err |= batches(&ring, &o, fd, buf, T_FSYNC, o.fsyncs);
	if (o.open_ops)
		err |= open_ops(&ring, &o);
	close(fd);
	io_uring_queue_exit(&ring);
	for (int i = 0; i < TALLIES; i++)
		if (tally[i].requests)
			printf("%s %llu %llu %llu %llu\n", tally[i].name, tally[i].requests,
			       tally[i].bytes, tally[i].async, tally[i].errors);
	return err;
}
