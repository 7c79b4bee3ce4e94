// SPDX-License-Identifier: GPL-2.0
/*
 * File names as they arrive: the ring's file_name events carry the names below a
 * filesystem's root, and the table of names (model/names.c) needs the mount point above
 * them; a file met only through the page cache has no event at all and is found by its
 * inode. Both are read from the machine here, at the time the name comes in, so that the
 * model keeps what it is given and reads nothing itself.
 */
#include <stddef.h>
#include <string.h>
#include "tracer.h"
#include "model/names.h"
#include "util/residency.h"

/* Pipes, sockets and anonymous inodes are named without a path: no mount point to read. */
static const char *mount_of(const struct file_name *name)
{
	if (name->kind == FK_PIPE || name->kind == FK_SOCKET || name->kind == FK_ANON)
		return NULL;
	return mount_point_of(name->dev);
}

int names_add_event(struct names *n, const void *data, size_t size, struct path_key *key)
{
	struct file_name name = { 0 };

	if (size < offsetof(struct file_name, buf))
		return 1;
	memcpy(&name, data, size < sizeof(name) ? size : sizeof(name));
	*key = (struct path_key){ .dev = name.dev, .ino = name.ino, .igen = name.igen };
	return names_add(n, key, &name, mount_of(&name)) ? -1 : 0;
}

const char *names_resolve(struct names *n, const struct path_key *key)
{
	/* Opening by handle costs a syscall or two: not again for a file that had no path. */
	if (names_unresolved(n, key))
		return NULL;
	return names_resolved(n, key, path_by_inode(key->dev, key->ino, key->igen));
}

const char *names_lookup(struct names *n, const struct path_key *key)
{
	struct name_view v;

	return names_find(n, key, &v) ? v.shown : names_resolve(n, key);
}
