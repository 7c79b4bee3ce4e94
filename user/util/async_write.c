// SPDX-License-Identifier: GPL-2.0
/*
 * A stdio stream whose writes to its file go on in a thread of their own (async_write.h).
 *
 * stdio fills its buffer; when it is full (or flushed, or closed) the stream's write
 * function copies it into the one buffer of this file and hands that to the thread, which
 * writes it out while the report goes on into stdio's buffer. One buffer is enough: the
 * next hand-over waits only if the thread has not written the last one yet.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "async_write.h"
#include "vec.h"

struct async_file {
	int fd;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool started, posted, closing;
	char *buf; /* the thread's while posted */
	size_t cap, len;
	char *stdio_buf; /* stdio's buffer: glibc sizes its own by st_blksize, 4 KiB */
	int err; /* the first write error: later writes fail with it */
};

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void *writer(void *arg)
{
	struct async_file *a = arg;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (!a->posted && !a->closing)
			pthread_cond_wait(&a->cond, &a->lock);
		if (!a->posted)
			break;
		pthread_mutex_unlock(&a->lock);
		int err = a->err ? 0 : write_all(a->fd, a->buf, a->len);
		pthread_mutex_lock(&a->lock);
		if (err && !a->err)
			a->err = err;
		a->posted = false;
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* Waits for the thread's last buffer; its error, if any. Called with the lock held. */
static int drained(struct async_file *a)
{
	while (a->posted)
		pthread_cond_wait(&a->cond, &a->lock);
	return a->err;
}

static ssize_t async_write(void *cookie, const char *p, size_t n)
{
	struct async_file *a = cookie;
	int err;

	if (!a->started) {
		/*
		 * The first write starts the thread: none runs while the command is forked.
		 * Without one (out of threads), the writes are made here.
		 */
		if (pthread_create(&a->thread, NULL, writer, a)) {
			err = write_all(a->fd, p, n);
			return err ? (errno = err, 0) : (ssize_t)n;
		}
		a->started = true;
	}
	pthread_mutex_lock(&a->lock);
	err = drained(a);
	pthread_mutex_unlock(&a->lock);
	if (!err && n > a->cap && vec_reserve(&a->buf, &a->cap, n, 1))
		err = ENOMEM;
	if (err)
		return (errno = err, 0);
	memcpy(a->buf, p, n);
	pthread_mutex_lock(&a->lock);
	a->len = n;
	a->posted = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	return (ssize_t)n;
}

static int async_close(void *cookie)
{
	struct async_file *a = cookie;
	int err;

	pthread_mutex_lock(&a->lock);
	err = drained(a);
	a->closing = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	if (a->started)
		pthread_join(a->thread, NULL);
	if (close(a->fd) && !err)
		err = errno;
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	free(a->buf);
	free(a->stdio_buf); /* stdio is done with it: fclose flushed before it closes */
	free(a);
	return err ? (errno = err, EOF) : 0;
}

FILE *async_fdopen(int fd, size_t bufsize)
{
	cookie_io_functions_t io = { .write = async_write, .close = async_close };
	struct async_file *a = calloc(1, sizeof(*a));
	FILE *f;

	if (!a || !(a->stdio_buf = malloc(bufsize))) {
		free(a);
		return NULL;
	}
	a->fd = fd;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	f = fopencookie(a, "w", io);
	if (!f) {
		pthread_cond_destroy(&a->cond);
		pthread_mutex_destroy(&a->lock);
		free(a->stdio_buf);
		free(a);
		return NULL;
	}
	setvbuf(f, a->stdio_buf, _IOFBF, bufsize);
	return f;
}
