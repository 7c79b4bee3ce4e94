/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A report file written by a thread of its own while the report is being made: a report of
 * tens of thousands of processes is hundreds of MiB, and writing it was a fifth of its time.
 */
#ifndef IOTRACE_ASYNC_WRITE_H
#define IOTRACE_ASYNC_WRITE_H

#include <stdio.h>

/*
 * A stream writing to fd (which it closes) in buffers of bufsize, each written by a second
 * thread while the next fills; the thread starts with the first write. A write error is
 * the stream's from the next write or fflush on, and fclose returns EOF with its errno.
 * NULL when out of memory (fd left open).
 */
FILE *async_fdopen(int fd, size_t bufsize);

#endif
