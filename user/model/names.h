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
/*
 * Formats and keeps the name of key, a path below mnt (its filesystem's mount point, as the
 * collector read it when the name arrived; NULL: not known, the path starts "MAJ:MIN:"): a
 * later name of the file (another name id) makes the one before an earlier name; -1 out of
 * memory. The ring's events come in through names_add_event (kernel/tracer.h).
 */
int names_add(struct names *n, const struct path_key *key, const struct file_name *name,
	      const char *mnt);

/* A file's names. The strings are the table's, kept until names_free. */
struct name_view {
	const char *shown;  /* as /proc/PID/fd shows it: the path, " (deleted)" after it if so */
	const char *path;   /* the path alone */
	const char *others; /* its earlier names (renamed), each ending with a NUL, then a NUL;
			     * or NULL (a name may hold any other byte) */
	uint32_t kind;
	bool deleted;
	bool counted; /* its key's igen counts the files with its number (no generations) */
	uint32_t gen; /* the inode's generation (the key's igen unless one came back) */
};
/* Whether the first len bytes of list (NUL-terminated names) hold name. */
bool names_list_has(const char *list, size_t len, const char *name);
/* Bytes of list (NUL-terminated names, an empty one last) before its empty name. */
size_t names_list_bytes(const char *list);
/* The names recorded for key, false when none was. */
bool names_find(struct names *n, const struct path_key *key, struct name_view *out);
/* The path the file had under the name id (file_stat.name_id), NULL when not known. */
const char *names_of_id(const struct names *n, const struct path_key *key, uint64_t id);
/*
 * The file's recorded name no longer leads to it at the end (unlinked after it was named):
 * its name gains " (deleted)", as /proc/PID/fd shows it. Returns the new name, or NULL.
 */
const char *names_mark_deleted(struct names *n, const struct path_key *key);
/* The file is found at the end under path (renamed unseen): its latest name; -1 if not. */
int names_rename(struct names *n, const struct path_key *key, const char *path);
/*
 * Whether key is among the files lately found to have no path by inode (a ring): the
 * collector does not ask the machine again for them (names_resolve, kernel/tracer.h).
 */
bool names_unresolved(const struct names *n, const struct path_key *key);
/*
 * The path text (malloc'ed, taken; NULL: none was found, remembered by names_unresolved)
 * the collector found from key's inode, kept for a file no name was recorded for. Returns
 * the name to show (the recorded one if a name came meanwhile), or NULL.
 */
const char *names_resolved(struct names *n, const struct path_key *key, char *text);
/*
 * The name the kernel side recorded, below mount point mnt (as names_add), formatted into
 * a malloc'ed string (NULL: no memory), without " (deleted)" (a memfd's name has it:
 * /proc/PID/fd always shows it).
 */
char *name_format(const struct path_key *key, const struct file_name *name, const char *mnt);
/* "file", "dir", "pipe", "socket", ... ("metadata" for FK_KINDS). */
const char *file_kind_name(uint32_t kind);

#endif
