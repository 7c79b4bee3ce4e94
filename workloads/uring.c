/*
 * uring - a known mix of io_uring requests (liburing), to check what iotrace counts.
 *
 * Usage: uring [-n READS] [-w WRITES] [-b SIZE] [-f FSYNCS] [-a] [-q] [-d] [-o] [-l LINKS]
 *              [-m SHOTS] [-p [-k]] FILE
 *   -w  WRITES writes of SIZE bytes at offsets 0, SIZE, 2*SIZE... (IORING_OP_WRITE), first
 *   -n  READS reads of SIZE bytes at the same offsets, wrapping (IORING_OP_READ), after
 *       the writes; the file must hold READS*SIZE bytes or they come back short
 *   -b  request size, default 4k (k/m/g suffixes)
 *   -f  FSYNCS fsyncs (IORING_OP_FSYNC), after the reads
 *   -a  every other read, write and fsync flagged IOSQE_ASYNC (forced to an io-wq worker)
 *   -q  an SQPOLL ring (IORING_SETUP_SQPOLL): a kernel thread of this process submits
 *   -d  open FILE with O_DIRECT (SIZE must then be a multiple of 4096)
 *   -o  also IORING_OP_OPENAT, IORING_OP_STATX and IORING_OP_CLOSE of FILE, one each
 *   -l  a chain of LINKS (2..32) linked requests (IOSQE_IO_LINK), after the above: its head
 *       a READ on a bad descriptor (-1), which fails with -EBADF, then LINKS-1 WRITEs of
 *       SIZE to FILE, which never run: each completes with -ECANCELED (errors, no bytes)
 *   -m  one multishot RECV (IORING_RECV_MULTISHOT, buffers from a provided buffer ring)
 *       on an AF_UNIX SOCK_SEQPACKET socketpair, then SHOTS messages of SIZE bytes sent to
 *       it one at a time, then the peer shut down: one request, SHOTS+1 completions (each
 *       message, then 0 at end of file, the only one without IORING_CQE_F_MORE)
 *   -p  last, one READ of 8 bytes on an empty eventfd, never completed: the program exits
 *       with it in flight (the ring is left open; the kernel cancels the request once the
 *       ring's last reference is gone, after the exit)
 *   -k  with -p, after printing, wait for end of file on stdin before exiting: another
 *       process can then take a copy of the ring's descriptor (pidfd_getfd(2)), and the
 *       request stays pending after the exit as long as it holds it (an io_uring
 *       descriptor cannot be sent with SCM_RIGHTS)
 * FILE is opened (created if needed) with openat(2), except with -o's requests.
 *
 * Requests go in batches of up to 32 (the ring's size), each batch submitted and then
 * reaped whole. At the end it prints what it issued and what came back, one line per
 * opcode, as iotrace names them:
 *   "<OPCODE> <requests> <bytes> <async requests> <errors> <completions>"
 * where bytes is the sum of the positive results of the data opcodes (READ, WRITE, RECV),
 * async requests those flagged IOSQE_ASYNC, errors the completions with a negative result
 * and completions the CQEs reaped (a multishot request posts several, -p's request none).
 * Exit status: 0, 1 on an I/O error or a result other than expected (-l's errors are
 * expected), 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sizearg.h"

#define DEPTH 32
#define BUF_GROUP 7  /* -m's provided buffer group */
#define BUF_RING 2   /* and its buffers, each given back once its CQE is reaped */

static const char prog[] = "uring";

struct tally {
	const char *name;
	unsigned long long requests, bytes, async, errors, completions;
};

enum { T_WRITE, T_READ, T_FSYNC, T_OPENAT, T_STATX, T_CLOSE, T_RECV, TALLIES };

static struct tally tally[TALLIES] = {
	[T_WRITE] = { "WRITE" }, [T_READ] = { "READ" }, [T_FSYNC] = { "FSYNC" },
	[T_OPENAT] = { "OPENAT" }, [T_STATX] = { "STATX" }, [T_CLOSE] = { "CLOSE" },
	[T_RECV] = { "RECV" },
};

struct options {
	unsigned long reads, writes, fsyncs, links, shots;
	size_t size;
	bool async, sqpoll, direct, open_ops, pending, keep;
	const char *file;
};

static void usage(void)
{
	fprintf(stderr, "usage: %s [-n READS] [-w WRITES] [-b SIZE] [-f FSYNCS] [-a] [-q] [-d] "
			"[-o] [-l LINKS] [-m SHOTS] [-p [-k]] FILE\n", prog);
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
	while ((c = getopt(argc, argv, "n:w:b:f:aqdol:m:pk")) != -1) {
		switch (c) {
		case 'n': o->reads = count_arg(optarg); break;
		case 'w': o->writes = count_arg(optarg); break;
		case 'f': o->fsyncs = count_arg(optarg); break;
		case 'l': o->links = count_arg(optarg); break;
		case 'm': o->shots = count_arg(optarg); break;
		case 'p': o->pending = true; break;
		case 'k': o->keep = true; break;
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
	if (optind != argc - 1 || (o->direct && o->size % 4096) || o->links == 1 ||
	    o->links > DEPTH || (o->keep && !o->pending))
		usage();
	o->file = argv[optind];
}

/* The next CQE, tallied by its request's tally (user_data); NULL if waiting failed. */
static struct io_uring_cqe *wait_tally(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int ret = io_uring_wait_cqe(ring, &cqe);

	if (ret < 0) {
		fprintf(stderr, "%s: io_uring_wait_cqe: %s\n", prog, strerror(-ret));
		return NULL;
	}
	struct tally *t = &tally[cqe->user_data % TALLIES];

	t->completions++;
	if (cqe->res < 0)
		t->errors++;
	else if (t == &tally[T_READ] || t == &tally[T_WRITE] || t == &tally[T_RECV])
		t->bytes += cqe->res;
	return cqe;
}

/* Waits for n completions and tallies them; 1 if one failed. */
static int reap(struct io_uring *ring, unsigned n)
{
	int err = 0;

	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe = wait_tally(ring);

		if (!cqe)
			return 1;
		if (cqe->res < 0)
			err = 1;
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
	cqe = wait_tally(ring);
	if (!cqe || cqe->res < 0) {
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

/*
 * A chain of o->links linked requests whose head (a READ on descriptor -1) fails: the
 * WRITEs linked after it complete with -ECANCELED. 1 if any result is another one.
 */
static int chain(struct io_uring *ring, const struct options *o, int fd, char *buf)
{
	int err = 0;

	for (unsigned long i = 0; i < o->links; i++) {
		int which = i ? T_WRITE : T_READ;
		struct io_uring_sqe *sqe = next_sqe(ring, which, false);

		if (i)
			io_uring_prep_write(sqe, fd, buf, o->size, (i - 1) * o->size);
		else
			io_uring_prep_read(sqe, -1, buf, o->size, 0);
		tag_sqe(sqe, which, false);
		if (i + 1 < o->links)
			io_uring_sqe_set_flags(sqe, IOSQE_IO_LINK);
	}
	if (io_uring_submit(ring) < 0) {
		fprintf(stderr, "%s: io_uring_submit failed\n", prog);
		return 1;
	}
	for (unsigned long i = 0; i < o->links; i++) {
		struct io_uring_cqe *cqe = wait_tally(ring);

		if (!cqe)
			return 1;
		if (cqe->res != (cqe->user_data == T_READ ? -EBADF : -ECANCELED)) {
			fprintf(stderr, "%s: linked request: unexpected result %d\n", prog,
				cqe->res);
			err = 1;
		}
		io_uring_cqe_seen(ring, cqe);
	}
	return err;
}

/*
 * One multishot RECV on a socketpair: o->shots messages of o->size bytes, each received
 * into a buffer of the ring's provided buffer group (given back after its CQE), then end
 * of file. 1 if a CQE is not the one expected.
 */
static int multishot(struct io_uring *ring, const struct options *o, const char *msg)
{
	struct io_uring_buf_reg reg = { .ring_entries = BUF_RING, .bgid = BUF_GROUP };
	int mask = io_uring_buf_ring_mask(BUF_RING), sv[2], ret, err = 0;
	struct io_uring_buf_ring *br;
	char *bufs;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) ||
	    posix_memalign((void **)&br, 4096, BUF_RING * sizeof(struct io_uring_buf)) ||
	    !(bufs = malloc(BUF_RING * o->size))) {
		fprintf(stderr, "%s: multishot set-up: %s\n", prog, strerror(errno));
		return 1;
	}
	reg.ring_addr = (unsigned long)br;
	ret = io_uring_register_buf_ring(ring, &reg, 0);
	if (ret) {
		fprintf(stderr, "%s: io_uring_register_buf_ring: %s\n", prog, strerror(-ret));
		return 1;
	}
	io_uring_buf_ring_init(br);
	for (int b = 0; b < BUF_RING; b++)
		io_uring_buf_ring_add(br, bufs + b * o->size, o->size, b, mask, b);
	io_uring_buf_ring_advance(br, BUF_RING);

	struct io_uring_sqe *sqe = next_sqe(ring, T_RECV, false);

	io_uring_prep_recv_multishot(sqe, sv[0], NULL, 0, 0);
	tag_sqe(sqe, T_RECV, false);
	io_uring_sqe_set_flags(sqe, IOSQE_BUFFER_SELECT);
	sqe->buf_group = BUF_GROUP;
	if (io_uring_submit(ring) < 0) {
		fprintf(stderr, "%s: io_uring_submit failed\n", prog);
		return 1;
	}
	for (unsigned long i = 0; i <= o->shots && !err; i++) {
		bool last = i == o->shots;

		if (last ? shutdown(sv[1], SHUT_WR)
			 : send(sv[1], msg, o->size, 0) != (ssize_t)o->size) {
			fprintf(stderr, "%s: socketpair: %s\n", prog, strerror(errno));
			return 1;
		}
		struct io_uring_cqe *cqe = wait_tally(ring);

		if (!cqe)
			return 1;
		bool more = cqe->flags & IORING_CQE_F_MORE;

		if (last ? cqe->res != 0 || more : cqe->res != (int)o->size || !more ||
			   !(cqe->flags & IORING_CQE_F_BUFFER)) {
			fprintf(stderr, "%s: multishot recv: unexpected result %d (flags %#x)\n",
				prog, cqe->res, cqe->flags);
			err = 1;
		} else if (!last) {
			unsigned short bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;

			io_uring_buf_ring_add(br, bufs + bid * o->size, o->size, bid, mask, 0);
			io_uring_buf_ring_advance(br, 1);
		}
		io_uring_cqe_seen(ring, cqe);
	}
	io_uring_unregister_buf_ring(ring, BUF_GROUP);
	close(sv[0]);
	close(sv[1]);
	free(bufs);
	free(br);
	return err;
}

/* A READ on an empty eventfd: it waits for a write that never comes. */
static int pending(struct io_uring *ring)
{
	static unsigned long long value;
	int efd = eventfd(0, 0);

	if (efd < 0) {
		fprintf(stderr, "%s: eventfd: %s\n", prog, strerror(errno));
		return 1;
	}
	struct io_uring_sqe *sqe = next_sqe(ring, T_READ, false);

	io_uring_prep_read(sqe, efd, &value, sizeof(value), 0);
	tag_sqe(sqe, T_READ, false);
	if (io_uring_submit(ring) != 1) {
		fprintf(stderr, "%s: io_uring_submit failed\n", prog);
		return 1;
	}
	return 0;
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
	if (o.links)
		err |= chain(&ring, &o, fd, buf);
	if (o.shots)
		err |= multishot(&ring, &o, buf);
	close(fd);
	if (o.pending)
		err |= pending(&ring); /* the ring stays open until the exit */
	else
		io_uring_queue_exit(&ring);
	for (int i = 0; i < TALLIES; i++)
		if (tally[i].requests)
			printf("%s %llu %llu %llu %llu %llu\n", tally[i].name, tally[i].requests,
			       tally[i].bytes, tally[i].async, tally[i].errors,
			       tally[i].completions);
	if (o.keep) {
		char c;

		fflush(stdout);
		while (read(STDIN_FILENO, &c, 1) > 0)
			;
	}
	return err;
}
