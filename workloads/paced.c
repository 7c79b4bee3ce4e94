/*
 * paced - I/O at a known pace, to check the rates iotrace top shows.
 *
 * Usage: paced -m MODE [-b SIZE] [-r OPS] [-t SECS] [-d] FILE
 *   -m read   pread(2) of SIZE bytes, OPS times a second, at offsets 0, SIZE, 2*SIZE...
 *             wrapping at the end of FILE (which must hold at least SIZE bytes)
 *   -m write  pwrite(2) of SIZE bytes then fdatasync(2), OPS times a second, at offsets 0,
 *             SIZE, ... wrapping at 4 MiB (FILE is created and first filled to 4 MiB and
 *             synced, before the pace starts, so each write then overwrites allocated
 *             blocks: the fdatasync writes the data and no metadata); each write
 *             reaches the disk before the next (charged to this process)
 *   -m uring  one IORING_OP_READ of SIZE bytes (liburing), submitted and reaped, OPS
 *             times a second, at the read mode's offsets
 *   -b  bytes per operation, default 64k (k/m/g suffixes)
 *   -r  operations per second, default 100 (1..100000)
 *   -t  seconds to run, default 5 (1..3600)
 *   -d  open FILE with O_DIRECT (SIZE a multiple of 4096): reads reach the disk every time
 *
 * Operation i starts at start + i/OPS (an absolute schedule: a late one does not shift the
 * rest), so over the run the rate is OPS exactly as long as each operation takes less than
 * 1/OPS. At the end it prints "<ops> <bytes> <seconds>": the operations done, the bytes they
 * moved, and the seconds from the first to the end of the last period.
 * Exit status: 0, 1 on an I/O error, 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sizearg.h"

#define WRAP_WRITE (4ULL << 20)

enum mode { M_READ, M_WRITE, M_URING };

struct options {
	enum mode mode;
	unsigned long long size, ops, secs;
	bool direct;
	const char *file;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: paced -m read|write|uring [-b SIZE] [-r OPS] [-t SECS] [-d] FILE\n");
	exit(2);
}

static void parse(int argc, char **argv, struct options *o)
{
	int c;

	while ((c = getopt(argc, argv, "m:b:r:t:d")) != -1) {
		if (c == 'm' && !strcmp(optarg, "read"))
			o->mode = M_READ;
		else if (c == 'm' && !strcmp(optarg, "write"))
			o->mode = M_WRITE;
		else if (c == 'm' && !strcmp(optarg, "uring"))
			o->mode = M_URING;
		else if (c == 'b' && !parse_size(optarg, 1, 1ULL << 30, &o->size))
			;
		else if (c == 'r' && !parse_size(optarg, 1, 100000, &o->ops))
			;
		else if (c == 't' && !parse_size(optarg, 1, 3600, &o->secs))
			;
		else if (c == 'd')
			o->direct = true;
		else
			usage();
	}
	if (optind != argc - 1 || (o->direct && o->size % 4096))
		usage();
	o->file = argv[optind];
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	struct timespec ts = { (time_t)t, (long)((t - (time_t)t) * 1e9) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* The write mode's file filled to WRAP_WRITE and synced (its blocks allocated). */
static int prefill(int fd, void *buf, size_t size)
{
	for (unsigned long long off = 0; off < WRAP_WRITE; off += size)
		if (pwrite(fd, buf, size, off) != (ssize_t)size)
			return -1;
	return fsync(fd);
}

static ssize_t uring_read(struct io_uring *ring, int fd, void *buf, size_t size, off_t off)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	ssize_t res;

	io_uring_prep_read(sqe, fd, buf, size, off);
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -1;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

/* One operation at offset off; the bytes it moved, or -1. */
static ssize_t one_op(const struct options *o, struct io_uring *ring, int fd, void *buf,
		      off_t off)
{
	ssize_t n;

	switch (o->mode) {
	case M_READ:
		return pread(fd, buf, o->size, off);
	case M_WRITE:
		n = pwrite(fd, buf, o->size, off);
		return n < 0 || fdatasync(fd) ? -1 : n;
	default:
		return uring_read(ring, fd, buf, o->size, off);
	}
}

int main(int argc, char **argv)
{
	struct options o = { .size = 64 << 10, .ops = 100, .secs = 5 };
	unsigned long long done = 0, bytes = 0, total, wrap;
	struct io_uring ring;
	double start;
	void *buf;
	int fd;

	parse(argc, argv, &o);
	fd = open(o.file, (o.mode == M_WRITE ? O_RDWR | O_CREAT : O_RDONLY) |
			  (o.direct ? O_DIRECT : 0), 0644);
	if (fd < 0 || posix_memalign(&buf, 4096, o.size)) {
		perror(o.file);
		return 1;
	}
	memset(buf, 'p', o.size);
	if (o.mode == M_WRITE && (o.size > WRAP_WRITE || prefill(fd, buf, o.size))) {
		perror(o.file);
		return 1;
	}
	wrap = o.mode == M_WRITE ? WRAP_WRITE : (unsigned long long)lseek(fd, 0, SEEK_END);
	if (wrap < o.size || (o.mode == M_URING && io_uring_queue_init(4, &ring, 0))) {
		fprintf(stderr, "paced: %s: too small, or no io_uring\n", o.file);
		return 1;
	}
	total = o.ops * o.secs;
	start = now_s();
	for (; done < total; done++) {
		off_t off = (off_t)(done * o.size % (wrap / o.size * o.size));
		ssize_t n;

		sleep_until(start + (double)done / o.ops);
		n = one_op(&o, &ring, fd, buf, off);
		if (n < 0) {
			perror("paced");
			return 1;
		}
		bytes += n;
	}
	sleep_until(start + (double)total / o.ops);
	printf("%llu %llu %.3f\n", done, bytes, now_s() - start);
	return 0;
}
