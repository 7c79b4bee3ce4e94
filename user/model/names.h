/* SPDX-License-Identifier: GPL-2.0 */
/*
 * File names as /proc/PID/fd shows them ("/etc/passwd", "pipe:[1234]", "socket:[5678]",
 * "anon_inode:[eventfd]", "/dev/pts/0"), from what the kernel side recorded
 * (struct file_name), kept by (dev, ino) for the whole run.
 */
#ifndef IOTRACE_NAMES_H
#define IOTRACE_NAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "iotrace.h"

struct names;

struct names *names_new(void);
void names_free(struct names *n);
/* Formats and keeps the name of key (mount points are read now); -1 out of memory. */
int names_add(struct names *n, const struct path_key *key, const struct file_name *name);
/*
 * The latest name of a file, its kind, whether it was deleted, and its earlier names
 * (renamed files; each ending with a NUL, an empty one last; or NULL); NULL when no name
 * was recorded.
 */
const char *names_find(const struct names *n, const struct path_key *key, uint32_t *kind,
		       bool *deleted, const char **others);
/*
 * The file's recorded name no longer leads to it at the end (unlinked after it was named):
 * its name gains " (deleted)", as /proc/PID/fd shows it. Returns the new name, or NULL.
 */
const char *names_mark_deleted(struct names *n, const struct path_key *key);
/*
 * The path of a regular file no name was recorded for (met only through the page cache),
 * found from its inode now and kept; NULL when it cannot be.
 */
const char *names_resolve(struct names *n, const struct path_key *key);
/* The name recorded for a file, or else the one names_resolve finds. */
const char *names_lookup(struct names *n, const struct path_key *key);
/* The name the kernel side recorded, formatted into a malloc'ed string (NULL: no memory). */
char *name_format(const struct path_key *key, const struct file_name *name);
/* "file", "dir", "pipe", "socket", ... ("metadata" for FK_KINDS). */
const char *file_kind_name(uint32_t kind);

#endif
