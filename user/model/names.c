// SPDX-License-Identifier: GPL-2.0
/* File names: the kernel's record (bpf/ledger.bpf.c, record_name) made into text. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include "names.h"
#include "records.h"
#include "util/hash.h"
#include "util/vec.h"

struct names {
	char **retired; /* names replaced: records may still point at them */
	size_t nretired;
	struct named {
		struct path_key key;
		uint32_t kind;
		bool deleted, from_alias;
		bool counted; /* igen is the ledger's count of files with the number (file_name) */
		char *path;   /* the latest name */
		struct named_more {
			uint64_t id;  /* the latest name's id (file_name.name_id; 0: not known) */
			uint32_t gen; /* the inode's own generation, where the key's is not it */
			char *shown;  /* the path with " (deleted)", once deleted, or NULL */
			char *others; /* earlier names, each ending with a NUL, then a NUL; or NULL */
			struct earlier {
				uint64_t id;
				char *path;
			} *earlier; /* the earlier names and their ids (0: the first's, not kept) */
			uint32_t nearlier;
		} *more; /* a renamed or deleted file's: NULL for most, which have one name */
		UT_hash_handle hh;
	} *table; /* by (dev, ino, igen) */
	struct path_key unnamed[64]; /* files names_resolve found no path for lately (a ring) */
	unsigned nunnamed;
};

static const char *const kind_names[FK_KINDS + 1] = {
	[FK_FILE] = "file", [FK_DIR] = "dir", [FK_PIPE] = "pipe", [FK_FIFO] = "fifo",
	[FK_SOCKET] = "socket", [FK_CHR] = "chr", [FK_BLK] = "blk", [FK_LINK] = "link",
	[FK_ANON] = "anon", [FK_MEMFD] = "memfd", [FK_KINDS] = "metadata",
};

const char *file_kind_name(uint32_t kind)
{
	return kind <= FK_KINDS && kind_names[kind] ? kind_names[kind] : "file";
}

/* lsof's names of the common socket families and protocols. */
static const char *socket_name(const struct file_name *n)
{
	bool v6 = n->sock_family == AF_INET6;

	switch (n->sock_family) {
	case AF_UNIX:
		return "UNIX";
	case AF_NETLINK:
		return "NETLINK";
	case AF_INET:
	case AF_INET6:
		if (n->sock_protocol == IPPROTO_TCP)
			return v6 ? "TCPv6" : "TCP";
		if (n->sock_protocol == IPPROTO_UDP)
			return v6 ? "UDPv6" : "UDP";
		if (n->sock_protocol == IPPROTO_ICMP || n->sock_protocol == IPPROTO_ICMPV6)
			return v6 ? "ICMPv6" : "ICMP";
		return v6 ? "RAWv6" : "RAW";
	case AF_PACKET:
		return "PACKET";
	}
	return "socket";
}

/* The recorded names, leaf first in buf, as "a/b/c" (the top first). */
static char *joined(const struct file_name *n)
{
	const char *part[64];
	size_t len = 1, off = 0;
	int k = 0;
	char *out;

	while (k < n->nparts && k < 64 && off < NAME_BUF + NAME_PART_MAX) {
		part[k] = n->buf + off;
		off += strnlen(part[k], NAME_BUF + NAME_PART_MAX - off) + 1;
		len += strlen(part[k++]) + 1;
	}
	out = calloc(1, len);
	for (int i = k - 1; out && i >= 0; i--) {
		strcat(out, part[i]);
		if (i)
			strcat(out, "/");
	}
	return out;
}

/* A path: the filesystem's mount point (mnt, NULL: not known), then the names below it. */
static char *path_of(const struct path_key *key, const struct file_name *n, const char *mnt)
{
	char *below = joined(n), *path = NULL;
	int err;

	if (!below)
		return NULL;
	if (n->truncated) /* the top is missing: say so rather than print a wrong path */
		err = asprintf(&path, "…/%s", below);
	else if (!mnt)
		err = asprintf(&path, "%u:%u:/%s", key->dev >> 20, key->dev & 0xfffff, below);
	else
		err = asprintf(&path, "%s%s%s", strcmp(mnt, "/") ? mnt : "", *below ? "/" : "",
			       *below || strcmp(mnt, "/") ? below : "/");
	free(below);
	return err < 0 ? NULL : path;
}

char *name_format(const struct path_key *key, const struct file_name *n, const char *mnt)
{
	char *text = NULL, *base;
	int err = 0;

	switch (n->kind) {
	case FK_PIPE:
		err = asprintf(&text, "pipe:[%llu]", (unsigned long long)key->ino);
		break;
	case FK_SOCKET:
		err = asprintf(&text, "socket:[%llu] (%s)", (unsigned long long)key->ino,
			       socket_name(n));
		break;
	case FK_ANON:
		base = joined(n);
		err = asprintf(&text, "anon_inode:%s", base && *base ? base : "?");
		free(base);
		break;
	case FK_MEMFD:
		/*
		 * An unlinked file on the kernel's shm mount; memfd_create's dentries are named
		 * "memfd:NAME", which /proc/PID/fd shows as "/memfd:NAME (deleted)".
		 */
		base = joined(n);
		if (base && !strncmp(base, "memfd:", 6)) {
			err = asprintf(&text, "/%s (deleted)", base);
			free(base);
			break;
		}
		free(base);
		/* fallthrough */
	default:
		text = path_of(key, n, mnt);
	}
	return err < 0 ? NULL : text;
}

struct names *names_new(void)
{
	return calloc(1, sizeof(struct names));
}

static void named_free(struct named *s)
{
	free(s->path);
	if (s->more) {
		free(s->more->shown);
		free(s->more->others);
		for (uint32_t i = 0; i < s->more->nearlier; i++)
			free(s->more->earlier[i].path);
		free(s->more->earlier);
		free(s->more);
	}
	free(s);
}

/* The slot's more, made when it is first needed; NULL out of memory. */
static struct named_more *more_of(struct named *s)
{
	if (!s->more)
		s->more = calloc(1, sizeof(*s->more));
	return s->more;
}

void names_free(struct names *n)
{
	if (!n)
		return;
	HASH_FREE_ALL(hh, n->table, named_free);
	for (size_t i = 0; i < n->nretired; i++)
		free(n->retired[i]);
	free(n->retired);
	free(n);
}

static struct named *find(const struct names *n, const struct path_key *k)
{
	struct named *s;

	HASH_FIND(hh, n->table, k, sizeof(*k), s);
	return s;
}

/* A new file's entry, nameless yet; NULL out of memory. */
static struct named *add(struct names *n, const struct path_key *k)
{
	struct named *s = calloc(1, sizeof(*s));
	int err = -1;

	if (s) {
		s->key = *k;
		HASH_ADD_OR_FAIL(hh, n->table, key, sizeof(s->key), s, err);
	}
	if (err) {
		free(s);
		return NULL;
	}
	return s;
}

/* A string records may point at, kept until the end; -1 out of memory. */
static int retire(struct names *n, char *s)
{
	char **slot;

	if (!s)
		return 0;
	slot = VEC_PUSH(n->retired, n->nretired);
	if (!slot)
		return -1;
	*slot = s;
	return 0;
}

/* Whether the first len bytes of list (NUL-terminated names) hold name. */
bool names_list_has(const char *list, size_t len, const char *name)
{
	for (const char *p = list; p && p < list + len; p += strlen(p) + 1)
		if (!strcmp(p, name))
			return true;
	return false;
}

/* Bytes of list (NUL-terminated names, an empty one last) before its empty name. */
size_t names_list_bytes(const char *list)
{
	const char *p = list;

	while (p && *p)
		p += strlen(p) + 1;
	return p ? (size_t)(p - list) : 0;
}

/* others: the earlier names, once each, in the order they came, the latest name left out. */
static int list_others(struct names *n, struct named *s)
{
	struct named_more *m = s->more;
	size_t len = 0, room = 1;
	char *text;

	for (uint32_t i = 0; i < m->nearlier; i++)
		room += strlen(m->earlier[i].path) + 1;
	text = malloc(room);
	if (!text || retire(n, m->others)) {
		free(text);
		return -1;
	}
	for (uint32_t i = 0; i < m->nearlier; i++) {
		const char *p = m->earlier[i].path;

		if (strcmp(p, s->path) && !names_list_has(text, len, p)) {
			memcpy(text + len, p, strlen(p) + 1);
			len += strlen(p) + 1;
		}
	}
	text[len] = '\0';
	m->others = len ? text : NULL;
	if (!len)
		free(text);
	return 0;
}

/* The slot's latest name becomes an earlier one (kept: records may point at it). */
static int push_earlier(struct named *s)
{
	struct named_more *m = more_of(s);
	struct earlier *e;

	if (!m)
		return -1;
	e = VEC_PUSH(m->earlier, m->nearlier);
	if (!e)
		return -1;
	*e = (struct earlier){ m->id, s->path };
	return 0;
}

/*
 * The slot's name is now path (owned), whose id is id (0: not known): a name other than
 * the latest one (by id when both are known, else by text) makes that one an earlier name.
 * Its deletion as told. -1 out of memory.
 */
static int set_name(struct names *n, struct named *s, char *path, uint64_t id, bool deleted)
{
	uint64_t was = s->more ? s->more->id : 0;
	bool same = s->path && (id && was ? id == was : !strcmp(path, s->path));

	if (same) {
		free(path);
		if (id && s->more)
			s->more->id = id;
	} else if (s->path) {
		/* A second name: the first one's id is not kept (most files have one name). */
		if (push_earlier(s)) {
			free(path);
			return -1;
		}
		s->path = path;
		s->more->id = id;
		if (list_others(n, s))
			return -1;
	} else {
		s->path = path;
	}
	if (s->deleted != deleted && s->more) {
		if (retire(n, s->more->shown))
			return -1;
		s->more->shown = NULL;
	}
	s->deleted = deleted;
	return 0;
}

int names_add(struct names *n, const struct path_key *key, const struct file_name *name,
	      const char *mnt)
{
	struct named *s;
	char *text;

	s = find(n, key);
	/* A rename or unlink that left the file no name: it was deleted, its name stays. */
	if (name->again && !name->nparts && name->kind != FK_PIPE && name->kind != FK_SOCKET) {
		if (s && s->path && name->deleted && !s->deleted)
			s->deleted = true;
		return 0;
	}
	text = name_format(key, name, mnt);
	if (!text)
		return -1;
	/* One of the inode's names (no file at hand) does not replace a file's own, except
	 * the newest name a rename, link or unlink gave it. */
	if (s && s->path && name->from_alias && !name->again && !s->from_alias) {
		free(text);
		return 0;
	}
	if (!s && !(s = add(n, key))) {
		free(text);
		return -1;
	}
	s->kind = name->kind;
	s->counted = name->counted;
	/* A generation that came back: the key's counts the files that had it (names.bpf.c). */
	if (name->gen != key->igen && !name->counted && name->kind != FK_ANON &&
	    more_of(s))
		s->more->gen = name->gen;
	s->from_alias = name->from_alias && !name->again;
	/* memfds are always shown "(deleted)", in their name itself */
	return set_name(n, s, text, name->name_id, name->deleted && name->kind != FK_MEMFD);
}

/* The path with " (deleted)" after it, made once (NULL out of memory). */
static const char *shown_of(struct named *s)
{
	struct named_more *m;

	if (!s->deleted)
		return s->path;
	m = more_of(s);
	if (m && !m->shown && asprintf(&m->shown, "%s (deleted)", s->path) < 0)
		m->shown = NULL;
	return m ? m->shown : NULL;
}

bool names_find(struct names *n, const struct path_key *key, struct name_view *out)
{
	struct named *s;

	memset(out, 0, sizeof(*out));
	s = find(n, key);
	if (!s || !s->path)
		return false;
	*out = (struct name_view){ .shown = shown_of(s), .path = s->path,
				   .others = s->more ? s->more->others : NULL, .kind = s->kind,
				   .deleted = s->deleted, .counted = s->counted,
				   .gen = s->more && s->more->gen ? s->more->gen : key->igen };
	return out->shown != NULL;
}

const char *names_of_id(const struct names *n, const struct path_key *key, uint64_t id)
{
	const struct named *s;
	const char *first = NULL;

	if (!id)
		return NULL;
	s = find(n, key);
	if (!s || !s->path)
		return NULL;
	/* One name (no more): every call was made under it. */
	if (!s->more || s->more->id == id)
		return s->path;
	for (uint32_t i = 0; i < s->more->nearlier; i++) {
		if (s->more->earlier[i].id == id)
			return s->more->earlier[i].path;
		if (!s->more->earlier[i].id && !first)
			first = s->more->earlier[i].path;
	}
	return first; /* an id not kept: the first name's */
}

const char *names_mark_deleted(struct names *n, const struct path_key *key)
{
	struct named *s;

	s = find(n, key);
	if (!s || !s->path)
		return NULL;
	s->deleted = true;
	return shown_of(s);
}

int names_rename(struct names *n, const struct path_key *key, const char *path)
{
	struct named *s;
	char *copy = strdup(path);

	s = copy ? find(n, key) : NULL;
	if (!s || !s->path) {
		free(copy);
		return -1;
	}
	return set_name(n, s, copy, 0, false);
}

bool names_unresolved(const struct names *n, const struct path_key *key)
{
	const unsigned ring = sizeof(n->unnamed) / sizeof(n->unnamed[0]);

	for (unsigned i = 0; i < ring && i < n->nunnamed; i++)
		if (!memcmp(&n->unnamed[i], key, sizeof(*key)))
			return true;
	return false;
}

const char *names_resolved(struct names *n, const struct path_key *key, char *text)
{
	const unsigned ring = sizeof(n->unnamed) / sizeof(n->unnamed[0]);
	struct named *s;

	if (!text)
		n->unnamed[n->nunnamed++ % ring] = *key;
	s = text ? find(n, key) : NULL;
	if (s && s->path) { /* named meanwhile */
		free(text);
		return shown_of(s);
	}
	if (!text || (!s && !(s = add(n, key)))) {
		free(text);
		return NULL;
	}
	s->kind = FK_FILE;
	s->from_alias = true;
	s->path = text;
	return text;
}
