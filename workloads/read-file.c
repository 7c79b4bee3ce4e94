/*
 * read-file - measure how fast files are read with read(), one child process per file.
 *
 * Usage: read-file [-i] [-s | -r] [-D] [-t] [-b bufsize] [-n total_read_size] FILE...
 *   -i  open with O_DIRECT (bypass the page cache); bufsize, and total_read_size when
 *       given, must then be multiples of 4096, and the buffer is 4096-aligned
 *   -s  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL): Linux doubles the readahead
 *   -r  posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM): Linux turns readahead off
 *   -D  do not drop the file's page cache before reading
 *   -t  record a CLOCK_MONOTONIC timestamp after every read() and, once the file is done,
 *       write them to ./time.<parent_pid>.<proc_num> (proc_num: 0 for the first FILE),
 *       one line "<seconds since the first read started> <bytes read so far>" per read()
 *   -b  read() size, default 64k (cat's); -n  stop after this many bytes, default the
 *       whole file. Both take k/m/g suffixes (powers of 1024).
 *
 * For every FILE a child is forked; the children run concurrently and the parent waits
 * for all of them. Each child:
 *   1. unless -D: open(FILE, O_RDONLY), posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED),
 *      close. This is all the lab's drop-page-cache.c does: it evicts the file's clean
 *      cached pages only; pages that are still dirty or under writeback stay cached, so
 *      a file written moments ago may be read partly from memory.
 *   2. open(FILE, O_RDONLY [| O_DIRECT]), then the -s/-r posix_fadvise, if any.
 *   3. read(fd, buf, bufsize) until total_read_size bytes or EOF (the last read is
 *      shortened so no more than total_read_size bytes are asked for); with the whole
 *      file that is ceil(size / bufsize) reads plus one returning 0.
 *   4. print "<MB/s> MB/s <bytes> bytes <seconds> sec FILE", where MB means 2^20 bytes
 *      (as in the lab notes) and the time runs from just before the first read to just
 *      after the last one.
 *
 * Exit status: 0 when every child succeeded, 1 when any failed, 2 on bad arguments.
 */
/* O_DIRECT is a Linux extension. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sizearg.h"

#define DIRECT_ALIGN 4096

static const char prog[] = "read-file";

struct options {
	bool direct;
	int advice;		/* POSIX_FADV_NORMAL when neither -s nor -r */
	bool keep_cache;
	bool timestamps;
	size_t bufsize;
	unsigned long long limit;
};

struct stamp {
	double sec;
	long long bytes;
};

static void usage(void)
{
	fprintf(stderr, "usage: %s [-i] [-s | -r] [-D] [-t] [-b bufsize] [-n total_read_size] "
		"FILE...\n", prog);
	exit(2);
}

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "%s: %s %s: %s\n", prog, what, path, strerror(errno));
	return 1;
}

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int drop_cache(const char *path)
{
	int fd = open(path, O_RDONLY);
	int err;

	if (fd < 0)
		return fail("open (to drop its cache)", path);
	/* posix_fadvise reports through its return value, not errno. */
	err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	if (err) {
		errno = err;
		return fail("posix_fadvise(DONTNEED)", path);
	}
	return 0;
}

static int write_stamps(const struct stamp *st, size_t n, pid_t parent, int num)
{
	char name[64];
	FILE *f;

	snprintf(name, sizeof(name), "time.%ld.%d", (long)parent, num);
	f = fopen(name, "w");
	if (!f)
		return fail("open", name);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.9f %lld\n", st[i].sec, st[i].bytes);
	if (ferror(f)) {
		fclose(f);
		return fail("write", name);
	}
	if (fclose(f) == EOF)
		return fail("write", name);
	return 0;
}

/* Everything one child does; returns its exit status. */
static int read_one(const char *path, int num, pid_t parent, const struct options *o)
{
	struct stamp *stamps = NULL;
	size_t nstamps = 0, maxstamps = 0;
	unsigned long long total = 0;
	struct timespec t0;
	double sec, mbps;
	void *buf;
	int fd, err;

	if (!o->keep_cache && drop_cache(path))
		return 1;

	fd = open(path, O_RDONLY | (o->direct ? O_DIRECT : 0));
	if (fd < 0)
		return fail(o->direct ? "open (O_DIRECT)" : "open", path);
	if (o->advice != POSIX_FADV_NORMAL) {
		err = posix_fadvise(fd, 0, 0, o->advice);
		if (err) {
			errno = err;
			return fail("posix_fadvise", path);
		}
	}
	/* O_DIRECT needs an aligned buffer; aligning it always costs nothing. */
	err = posix_memalign(&buf, DIRECT_ALIGN, o->bufsize);
	if (err) {
		errno = err;
		return fail("allocate buffer for", path);
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (total < o->limit) {
		size_t want = o->bufsize;
		ssize_t n;

		if (o->limit - total < want)
			want = (size_t)(o->limit - total);
		n = read(fd, buf, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail("read", path);
		}
		if (o->timestamps) {
			/* Timestamp first, then grow the array, so realloc is not timed. */
			double now = since(&t0);

			if (nstamps == maxstamps) {
				size_t m = maxstamps ? 2 * maxstamps : 1024;
				struct stamp *p = realloc(stamps, m * sizeof(*p));

				if (!p)
					return fail("allocate timestamps for", path);
				stamps = p;
				maxstamps = m;
			}
			stamps[nstamps].sec = now;
			stamps[nstamps].bytes = (long long)(total + (unsigned long long)n);
			nstamps++;
		}
		if (n == 0)
			break;
		total += (unsigned long long)n;
	}
	sec = since(&t0);
	close(fd);
	free(buf);

	if (o->timestamps && write_stamps(stamps, nstamps, parent, num))
		return 1;
	free(stamps);

	mbps = sec > 0 ? (double)total / (1024.0 * 1024.0) / sec : 0.0;
	printf("%.3f MB/s %lld bytes %.6f sec %s\n", mbps, (long long)total, sec, path);
	if (fflush(stdout) == EOF)
		return fail("write", "stdout");
	return 0;
}

/* The options into *o; exits with the usage line on bad arguments. */
static void parse_args(int argc, char **argv, struct options *o)
{
	unsigned long long v;
	bool seq = false, rnd = false, limited = false;
	int opt;

	while ((opt = getopt(argc, argv, "isrDtb:n:")) != -1) {
		switch (opt) {
		case 'i':
			o->direct = true;
			break;
		case 's':
			seq = true;
			break;
		case 'r':
			rnd = true;
			break;
		case 'D':
			o->keep_cache = true;
			break;
		case 't':
			o->timestamps = true;
			break;
		case 'b':
			if (parse_size(optarg, 1, SSIZE_MAX, &v))
				usage();
			o->bufsize = (size_t)v;
			break;
		case 'n':
			if (parse_size(optarg, 1, LLONG_MAX, &v))
				usage();
			o->limit = v;
			limited = true;
			break;
		default:
			usage();
		}
	}
	if (seq && rnd)
		usage();
	if (seq)
		o->advice = POSIX_FADV_SEQUENTIAL;
	if (rnd)
		o->advice = POSIX_FADV_RANDOM;
	/* An unaligned O_DIRECT read, including a shortened last one, fails with EINVAL. */
	if (o->direct && (o->bufsize % DIRECT_ALIGN || (limited && o->limit % DIRECT_ALIGN)))
		usage();
	if (argc - optind < 1)
		usage();
}

/* Waits for the readers; 0 when all of them succeeded, else 1. */
static int wait_readers(const pid_t *pids, int started, char **files)
{
	int status = 0;

	for (int i = 0; i < started; i++) {
		int ws;

		while (waitpid(pids[i], &ws, 0) < 0) {
			if (errno != EINTR) {
				fprintf(stderr, "%s: waitpid: %s\n", prog, strerror(errno));
				return 1;
			}
		}
		if (WIFSIGNALED(ws)) {
			fprintf(stderr, "%s: child for %s killed by signal %d\n", prog, files[i],
				WTERMSIG(ws));
			status = 1;
		} else if (WEXITSTATUS(ws) != 0) {
			status = 1;
		}
	}
	return status;
}

int main(int argc, char **argv)
{
	struct options o = {
		.advice = POSIX_FADV_NORMAL,
		.bufsize = 64 * 1024,
		.limit = ULLONG_MAX,
	};
	int nfiles, started, status = 0;
	pid_t parent, *pids;

	parse_args(argc, argv, &o);
	nfiles = argc - optind;
	pids = calloc((size_t)nfiles, sizeof(*pids));
	if (!pids) {
		fprintf(stderr, "%s: allocate: %s\n", prog, strerror(errno));
		return 1;
	}
	parent = getpid();
	/* Nothing buffered may be duplicated into the children. */
	fflush(NULL);

	for (started = 0; started < nfiles; started++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
			status = 1;
			break;
		}
		if (pid == 0)
			exit(read_one(argv[optind + started], started, parent, &o));
		pids[started] = pid;
	}
	if (wait_readers(pids, started, argv + optind))
		status = 1;
	free(pids);
	return status;
}
