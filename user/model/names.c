// SPDX-License-Identifier: GPL-2.0
/* File names: the kernel's record (bpf/ledger.bpf.c, record_name) made into text. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include "names.h"
#include "util/residency.h"

struct names {
	size_t cap, n;
	char **retired; /* names replaced by names_mark_deleted: records may still point at them */
	size_t nretired;
	struct named {
		struct path_key key;
		uint32_t kind;
		bool deleted, from_alias;
		char *text;   /* the latest name */
		char *others; /* earlier names, each ending with a NUL, then a NUL; or NULL */
	} *slots; /* open addressing by (dev, ino) */
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

/* A path: the filesystem's mount point, then the names below it. */
static char *path_of(const struct path_key *key, const struct file_name *n)
{
	const char *mnt = mount_point_of(key->dev);
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

char *name_format(const struct path_key *key, const struct file_name *n)
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
		text = path_of(key, n);
		if (text && n->deleted) {
			base = text;
			err = asprintf(&text, "%s (deleted)", base);
			free(base);
		}
	}
	return err < 0 ? NULL : text;
}

struct names *names_new(void)
{
	return calloc(1, sizeof(struct names));
}

void names_free(struct names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->cap; i++) {
		free(n->slots[i].text);
		free(n->slots[i].others);
	}
	for (size_t i = 0; i < n->nretired; i++)
		free(n->retired[i]);
	free(n->retired);
	free(n->slots);
	free(n);
}

static bool same_file(const struct path_key *a, const struct path_key *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->igen == b->igen;
}

static size_t slot_of(const struct names *n, const struct path_key *k)
{
	size_t i = ((k->ino ^ ((uint64_t)k->dev << 32) ^ ((uint64_t)k->igen << 16)) *
		    0x9E3779B97F4A7C15ULL) & (n->cap - 1);

	while (n->slots[i].text && !same_file(&n->slots[i].key, k))
		i = (i + 1) & (n->cap - 1);
	return i;
}

static int grow(struct names *n)
{
	struct names bigger = { .cap = n->cap ? n->cap * 2 : 256 };

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -1;
	for (size_t i = 0; i < n->cap; i++)
		if (n->slots[i].text)
			bigger.slots[slot_of(&bigger, &n->slots[i].key)] = n->slots[i];
	bigger.n = n->n;
	free(n->slots);
	*n = bigger;
	return 0;
}

/*
 * The slot's name goes to its earlier names (once each) before text replaces it. They are
 * kept NUL-separated, an empty one last: a name may hold any other byte, a newline too.
 */
static int remember(struct named *s, const char *text)
{
	size_t len = 0, add = strlen(s->text) + 1;
	char *grown;

	if (!strcmp(s->text, text)) {
		free(s->text);
		return 0;
	}
	for (const char *p = s->others; p && *p; p += strlen(p) + 1, len = p - s->others)
		if (!strcmp(p, s->text)) {
			free(s->text);
			return 0;
		}
	grown = realloc(s->others, len + add + 1);
	if (!grown)
		return -1;
	memcpy(grown + len, s->text, add);
	grown[len + add] = '\0';
	free(s->text);
	s->others = grown;
	return 0;
}

int names_add(struct names *n, const struct path_key *key, const struct file_name *name)
{
	struct named *s;
	char *text;

	if ((n->n + 1) * 10 > n->cap * 7 && grow(n))
		return -1;
	text = name_format(key, name);
	if (!text)
		return -1;
	s = &n->slots[slot_of(n, key)];
	/* One of the inode's names (no file was at hand) does not replace a file's own. */
	if (s->text && name->from_alias && !s->from_alias) {
		free(text);
		return 0;
	}
	if (!s->text)
		n->n++;
	else if (remember(s, text))
		return -1;
	*s = (struct named){ .key = *key, .kind = name->kind,
			     .deleted = name->deleted, .from_alias = name->from_alias, .text = text,
			     .others = s->text ? s->others : NULL };
	return 0;
}

const char *names_find(const struct names *n, const struct path_key *key, uint32_t *kind,
		       bool *deleted, const char **others)
{
	const struct named *s;

	if (!n->cap)
		return NULL;
	s = &n->slots[slot_of(n, key)];
	if (!s->text)
		return NULL;
	*kind = s->kind;
	*deleted = s->deleted;
	*others = s->others;
	return s->text;
}

const char *names_mark_deleted(struct names *n, const struct path_key *key)
{
	struct named *s;
	char *text, **grown;

	if (!n->cap)
		return NULL;
	s = &n->slots[slot_of(n, key)];

	if (!s->text || s->deleted)
		return s->text;
	grown = realloc(n->retired, (n->nretired + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	n->retired = grown;
	if (asprintf(&text, "%s (deleted)", s->text) < 0)
		return NULL;
	n->retired[n->nretired++] = s->text;
	s->text = text;
	s->deleted = true;
	return text;
}

/*
 * The path of a regular file the kernel side met only through the page cache (a mapped
 * library, the dynamic loader, an executable): opened by its handle, the (inode number,
 * generation) pair that ext4, xfs and tmpfs export (FILEID_INO32_GEN), on its mount, and
 * read back from /proc/self/fd. NULL when the filesystem or the file does not allow it.
 */
static char *path_by_handle(const struct path_key *key)
{
	struct {
		struct file_handle fh;
		uint32_t ino, gen;
	} h = { .fh = { .handle_bytes = 8, .handle_type = 1 /* FILEID_INO32_GEN */ },
		.ino = (uint32_t)key->ino, .gen = key->igen };
	const char *mnt = mount_point_of(key->dev);
	char link[64], path[PATH_MAX];
	int mfd, fd;
	ssize_t n;

	if (!mnt || key->ino > UINT32_MAX)
		return NULL;
	mfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return NULL;
	fd = open_by_handle_at(mfd, &h.fh, O_PATH | O_CLOEXEC);
	close(mfd);
	if (fd < 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	close(fd);
	if (n <= 0 || path[0] != '/')
		return NULL; /* a disconnected dentry names no path */
	path[n] = '\0';
	return strdup(path);
}

const char *names_lookup(struct names *n, const struct path_key *key)
{
	const char *others, *name;
	uint32_t kind;
	bool deleted;

	name = names_find(n, key, &kind, &deleted, &others);
	return name ? name : names_resolve(n, key);
}

const char *names_resolve(struct names *n, const struct path_key *key)
{
	struct file_name none = { .kind = FK_FILE, .from_alias = 1 };
	const unsigned ring = sizeof(n->unnamed) / sizeof(n->unnamed[0]);
	struct named *s;
	char *text;

	/* Opening by handle costs a syscall or two: not again for a file that had no path. */
	for (unsigned i = 0; i < ring && i < n->nunnamed; i++)
		if (!memcmp(&n->unnamed[i], key, sizeof(*key)))
			return NULL;
	text = path_by_handle(key);
	if (!text)
		n->unnamed[n->nunnamed++ % ring] = *key;
	if (!text || ((n->n + 1) * 10 > n->cap * 7 && grow(n))) {
		free(text);
		return NULL;
	}
	s = &n->slots[slot_of(n, key)];
	if (s->text) { /* named meanwhile */
		free(text);
		return s->text;
	}
	n->n++;
	*s = (struct named){ .key = *key, .kind = none.kind, .from_alias = true, .text = text };
	return text;
}
