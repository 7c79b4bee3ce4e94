// SPDX-License-Identifier: GPL-2.0
/*
 * Part of bpf/iotrace.bpf.c, which builds every part into one object.
 *
 * What a file is, and what it is called (docs/files.md, "What a file is, and its name").
 *
 * A file is (device, inode number, generation). Filesystems that hand a deleted file's
 * number to the next one (ext4, xfs, tmpfs, btrfs, f2fs) give that one a new generation:
 * the pair is how the kernel itself tells a file from a later one with its number (NFS file
 * handles, open_by_handle_at). Filesystems without generations (overlayfs, FUSE, NFS's
 * client: i_generation 0) get the ledger's own count instead (inode_instance). Pipes and
 * sockets take their numbers from a counter that does not come back (get_next_ino), and
 * anonymous-inode files (eventfd, epoll, timerfd...), which all share one inode, are told
 * apart by their name (anon_key).
 *
 * A file's name is its dentry's, sent to the loader (struct file_name) when a syscall first
 * meets the file and again whenever it differs from the last one sent (named). Renames are
 * followed two ways, with no fentry or kprobe:
 *  - a traced process's rename advances names_epoch: every thread's fd cache then misses
 *    once, so a renamed file's next call finds its new name (and, in file_index_of_file,
 *    the entry its calls go to under that name);
 *  - while a traced thread is in a rename, link or unlink (the syscall catalogue's NAMING
 *    family, bpf/iotrace.h), the kernel stamps the ctime of each inode it changes (the
 *    file, the one it replaces, the directories): the timestamp tracepoints (6.13+) note
 *    them, and the call's sys_exit sends their new names (a file renamed while no one had
 *    it open: git's HEAD.lock), or that they were deleted (the file a rename replaced).
 */
#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define S_IFLNK 0120000
#define S_IFREG 0100000
#define S_IFBLK 0060000
#define S_IFDIR 0040000
#define S_IFCHR 0020000
#define S_IFIFO 0010000
#define PIPEFS_MAGIC 0x50495045
#define SOCKFS_MAGIC 0x534F434B
#define ANON_INODE_FS_MAGIC 0x09041934
#define TMPFS_MAGIC 0x01021994
#define EXT4_SUPER_MAGIC 0xEF53
#define XFS_SUPER_MAGIC 0x58465342
#define BTRFS_SUPER_MAGIC 0x9123683E
#define F2FS_SUPER_MAGIC 0xF2F52010
/* Key inode numbers of anonymous-inode files: a hash of the name, with this bit set. */
#define ANON_KEY_BIT (1ULL << 63)
#define ANON_NAME_LEN 32
/* Inodes a rename, link or unlink changes: the file, the one replaced, two directories. */
#define NOTED_INODES 4
/* Numbers of files counted per number (overlayfs, FUSE, NFS: inode_instance) at once. */
#define MAX_COUNTED 4096
/*
 * Deleted files whose (number, generation) a new file might have again, remembered at once:
 * a random 32-bit generation comes back among 10,000 files that had one number in turn in
 * about one run in a hundred (the birthday bound), and a pair farther apart than this many
 * deletions in one run in 2,500. And the step a file's key generation takes for each file
 * that had both before it (reused_count).
 */
#define MAX_DEAD 8192
#define REUSE_STEP 0x9E3779B9u

/* File names, as events (struct file_name): a file's every name reaches the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} name_events SEC(".maps");

/*
 * Names being made (too big for the BPF stack); only the bytes used are sent. Several per
 * CPU, each taken by one program at a time (name_scratch_used): where the syscall
 * tracepoints run their programs preemptibly (7.x, PREEMPT_RT), sys_enter, sys_exit and
 * exec of different tasks may each be making a name on one CPU at once, and one scratch
 * for all of them sent a name another had half overwritten.
 */
#define NAME_SCRATCHES 4

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NAME_SCRATCHES);
	__type(key, __u32);
	__type(value, struct file_name);
} name_scratch SEC(".maps");

/* Per CPU, a bit per scratch: taken. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} name_scratch_used SEC(".maps");

struct scratch {
	struct file_name *n;
	__u32 *used, bit;
};

/*
 * A scratch of this CPU's no other program is using; s->n NULL when all are (the name is
 * lost, and counted). A program runs on one CPU from start to end, so it gives the scratch
 * back on the CPU it took it on.
 */
/* Claims the lowest scratch bit clear in *old; false when none is or another took it. */
static __always_inline bool scratch_claim(struct scratch *s, __u32 *old)
{
	__u32 free = ~*old & ((1u << NAME_SCRATCHES) - 1);

	if (!free)
		return false;
	s->bit = free & -free;
	*old = FETCH_OR(s->used, s->bit);
	return !(*old & s->bit);
}

static __always_inline void scratch_take(struct scratch *s)
{
	__u32 zero = 0, old, key;

	s->n = NULL;
	s->used = bpf_map_lookup_elem(&name_scratch_used, &zero);
	if (!s->used)
		return;
	old = *(volatile __u32 *)s->used;
	/*
	 * Written out, not a loop: 5.10's verifier took the compat build's lock in a loop of
	 * them for a loop that never ends. The scratch's index is found after the claims, from
	 * the bit taken: a constant per claim, it kept the naming after it apart four times
	 * over in the verifier's walk (docs/startup.md, "Branches the verifier kept apart").
	 */
	_Static_assert(NAME_SCRATCHES == 4, "one claim per scratch, at most");
	if (!scratch_claim(s, &old) && !scratch_claim(s, &old) && !scratch_claim(s, &old) &&
	    !scratch_claim(s, &old)) {
		__sync_fetch_and_add(&drops[DROP_PATHS], 1);
		return;
	}
	key = (s->bit >> 1) - (s->bit >> 3); /* 1, 2, 4, 8: 0, 1, 2, 3 */
	s->n = bpf_map_lookup_elem(&name_scratch, &key);
	if (!s->n)
		ATOMIC_AND(s->used, ~s->bit);
}

static __always_inline void scratch_give(struct scratch *s)
{
	if (s->n)
		ATOMIC_AND(s->used, ~s->bit);
}

/* The name a file had when last sent (name_id_of), and whether it was deleted then. */
struct sent_name {
	__u64 id;
	__u64 deleted;
};

/* (dev, ino) -> the name last sent, so an unchanged name is not walked and sent again. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_NAMED);
	__type(key, struct path_key);
	__type(value, struct sent_name);
} named SEC(".maps");

/* A number on a filesystem without generations: the inode last seen with it (inode_instance). */
struct instance {
	__u64 inode;
	__u32 count; /* files seen with the number before this one */
	__u32 state; /* INST_LINKED once seen with a link, then INST_DEAD once seen with none */
};
/* INST_LOST: its last name went to another file (a rename replaced it; it may live on). */
enum { INST_LINKED = 1, INST_DEAD, INST_LOST };

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_COUNTED);
	__type(key, struct path_key);
	__type(value, struct instance);
} instances SEC(".maps");

/* (dev, ino, generation) of a file seen deleted -> the files seen with them since. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_DEAD);
	__type(key, struct path_key);
	__type(value, struct instance);
} dead SEC(".maps");

/* A name (name_id_of) -> the file last named so, for inode_instance's INST_LOST. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_COUNTED);
	__type(key, __u64);
	__type(value, struct path_key);
} name_owner SEC(".maps");

/*
 * A traced thread's rename, link or unlink: the inodes it changed, until its sys_exit, and
 * their numbers then (an inode whose last link went may be freed by the sys_exit).
 */
struct noted {
	__u64 inode[NOTED_INODES];
	struct path_key raw[NOTED_INODES]; /* dev, ino, i_generation */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32); /* tid */
	__type(value, struct noted);
} noted_inodes SEC(".maps");

/*
 * Advanced by every rename of a traced process: the threads' fd caches (thread_io.fds) are
 * checked against it, so a file renamed since is named again.
 */
__u32 names_epoch = 0;

/* ---- names ---- */

struct name_walk {
	__u64 d; /* struct dentry *, kept as a number: CO-RE reads start from it */
	struct file_name *n;
	__u32 off;
	bool done;
};

static long name_step(__u32 i, void *data)
{
	struct name_walk *w = data;
	struct dentry *d = (struct dentry *)w->d;
	struct dentry *parent = BPF_CORE_READ(d, d_parent);
	__u32 off = w->off;
	long len;

	if (!parent || parent == d) {
		w->done = true;
		return 1;
	}
	/* buf has NAME_PART_MAX bytes of room past NAME_BUF for the last name. */
	if (off > NAME_BUF)
		return 1;
	/*
	 * The same offset masked (no-op: off <= NAME_BUF) in the register the read takes, so
	 * that a verifier which keeps no bound of a spilled register (5.10's) sees it in buf
	 * (NAME_SLACK bytes past the room for the mask's largest value).
	 */
	barrier_var(off);
	off &= NAME_MASK;
	len = bpf_probe_read_kernel_str(w->n->buf + off, NAME_PART_MAX,
					BPF_CORE_READ(d, d_name.name));
	if (len <= 0)
		return 1;
	w->off = off + len;
	w->n->nparts = i + 1;
	w->d = (__u64)parent;
	return 0;
}

/* Names from the dentry up to its filesystem's root, leaf first; the bytes they take. */
static __u32 walk_names(struct file_name *n, __u64 d)
{
	struct name_walk w = { .d = d, .n = n };

	/* bpf_loop: the verifier checks one step, not every level unrolled. */
	BPF_LOOP(64, name_step, &w, 64);
	n->truncated = !w.done;
	return w.off;
}

/* A pseudo file's own name ("[eventfd]", "memfd:NAME"): its dentry is its own root. */
static __u32 leaf_name(struct file_name *n, __u64 d)
{
	long len = bpf_probe_read_kernel_str(n->buf, NAME_PART_MAX,
					     BPF_CORE_READ((struct dentry *)d, d_name.name));

	if (len <= 0)
		return 0;
	n->nparts = 1;
	return len;
}

/*
 * Whether a file of generation 0 on this filesystem has the ledger count its number's files
 * (inode_instance): not where every new inode gets a generation (ext4, xfs, btrfs, tmpfs,
 * f2fs: a 0 there is a file older than that, never a reused number), nor for pipes, sockets
 * and anonymous inodes (numbers that do not come back, or one inode for all).
 */
static __always_inline bool counted_fs(__u64 magic)
{
	switch (magic) {
	case EXT4_SUPER_MAGIC:
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case F2FS_SUPER_MAGIC:
	case PIPEFS_MAGIC:
	case SOCKFS_MAGIC:
	case ANON_INODE_FS_MAGIC:
		return false;
	}
	return true;
}

static __always_inline __u32 kind_of(__u32 mode, __u64 magic)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return FK_DIR;
	case S_IFIFO:
		return magic == PIPEFS_MAGIC ? FK_PIPE : FK_FIFO;
	case S_IFSOCK:
		return FK_SOCKET;
	case S_IFCHR:
		return FK_CHR;
	case S_IFBLK:
		return FK_BLK;
	case S_IFLNK:
		return FK_LINK;
	}
	return magic == ANON_INODE_FS_MAGIC ? FK_ANON : FK_FILE;
}

static void socket_of(struct file_name *n, struct file *file)
{
	struct socket *sock = BPF_CORE_READ(file, private_data);
	struct sock *sk = BPF_CORE_READ(sock, sk);

	n->sock_family = BPF_CORE_READ(sk, __sk_common.skc_family);
	n->sock_type = BPF_CORE_READ(sk, sk_type);
	n->sock_protocol = BPF_CORE_READ(sk, sk_protocol);
}

/*
 * An inode's alias list runs through its dentries' d_alias: a member of the union d_u in
 * older kernels, of an anonymous union in newer ones (asked per field, as folio_flags).
 */
struct dentry___alias_direct {
	struct hlist_node d_alias;
} __attribute__((preserve_access_index));

struct dentry___alias_in_u {
	union {
		struct hlist_node d_alias;
	} d_u;
} __attribute__((preserve_access_index));

static __always_inline struct dentry *alias_dentry(struct hlist_node *alias)
{
	if (bpf_core_field_exists(struct dentry___alias_direct, d_alias))
		return (void *)container_of(alias, struct dentry___alias_direct, d_alias);
	return (void *)container_of(alias, struct dentry___alias_in_u, d_u.d_alias);
}

/*
 * The dentry naming the file: the file's own (hard links!), else one of the inode's, the
 * newest (d_instantiate adds at the head): a link's new name, a renamed file's only one.
 */
static __always_inline __u64 name_dentry(struct inode *inode, struct file *file)
{
	struct hlist_node *alias;
	struct dentry *d;

	if (file)
		return (__u64)BPF_CORE_READ(file, f_path.dentry);
	alias = BPF_CORE_READ(inode, i_dentry.first);
	d = alias ? alias_dentry(alias) : NULL;
	/* An unlinked name an open file still holds stays an alias, unhashed: the next one. */
	if (d && !BPF_CORE_READ(d, d_hash.pprev) && (alias = BPF_CORE_READ(alias, next)))
		d = alias_dentry(alias);
	return (__u64)d;
}

/*
 * A name as one number: its leaf (hash and length) and the parent dentry it is under, which
 * a rename changes (d_move) and nothing else does. Never 0 (0: no name).
 */
static __always_inline __u64 name_id_of(__u64 d)
{
	__u64 leaf = BPF_CORE_READ((struct dentry *)d, d_name.hash_len);
	__u64 parent = (__u64)BPF_CORE_READ((struct dentry *)d, d_parent);

	return (leaf ^ (parent * 0x9E3779B97F4A7C15ULL)) | 1;
}

/* inode_kind's result: the kind in the low byte, then whether the number's files are counted. */
#define KIND_MASK 0xff
#define KIND_COUNTED 0x100

/*
 * An inode's kind (enum file_kind) and whether the ledger counts its number's files. Global:
 * the verifier walks the switches on the mode and the filesystem's magic once, not once per
 * kind along the rest of the naming (each kind a constant of its own there, which later
 * tests of the kind kept apart).
 */
__noinline __u32 inode_kind(__u64 inode_addr, __u64 file_addr)
{
	struct inode *inode = UNTRUSTED(inode, (void *)inode_addr);
	__u64 magic = KREAD(inode, i_sb, s_magic);
	__u32 kind = kind_of(KREAD(inode, i_mode), magic);

	/* memfd_create makes an unlinked file on the kernel's shm mount, "memfd:NAME". */
	if (kind == FK_FILE && magic == TMPFS_MAGIC && file_addr && !KREAD(inode, __i_nlink))
		kind = FK_MEMFD;
	if (!KREAD(inode, i_generation) && counted_fs(magic))
		kind |= KIND_COUNTED;
	return kind;
}

/* The name's header and path; returns the bytes of n to send. */
static __u32 fill_name(struct file_name *n, struct path_key *pk, struct inode *inode,
		       struct file *file, __u64 d, bool again)
{
	__u64 inode_addr = 0, file_addr = 0;
	__u32 used = 0, kind;

	__builtin_memset(n, 0, __builtin_offsetof(struct file_name, buf));
	n->record = TE_NAME;
	n->dev = pk->dev;
	n->ino = pk->ino;
	n->igen = pk->igen;
	/* Global functions take numbers only: the pointers' values copied out as such. */
	bpf_probe_read_kernel(&inode_addr, sizeof(inode_addr), &inode);
	if (file)
		bpf_probe_read_kernel(&file_addr, sizeof(file_addr), &file);
	kind = inode_kind(inode_addr, file_addr);
	n->kind = kind & KIND_MASK;
	n->counted = !!(kind & KIND_COUNTED);
	n->deleted = !KREAD(inode, __i_nlink);
	n->rdev = KREAD(inode, i_rdev);
	n->gen = KREAD(inode, i_generation);
	n->from_alias = !file;
	n->again = again;
	if (n->kind == FK_SOCKET && file)
		socket_of(n, file);
	if (d)
		n->name_id = name_id_of(d);
	if (d && (n->kind == FK_ANON || n->kind == FK_MEMFD))
		used = leaf_name(n, d);
	else if (d && n->kind != FK_PIPE && n->kind != FK_SOCKET)
		used = walk_names(n, d);
	return __builtin_offsetof(struct file_name, buf) + used;
}

/*
 * The file an inode number stands for on a filesystem without generations, counted from 0:
 * a new one once the file last seen with the number was seen with no link left (deleted: a
 * rename's or unlink's sys_exit tells, or a call on the file) and the number then comes
 * with another inode, or with links again; or once its name went to another file and the
 * number comes with another inode. The same inode after an eviction is the same file.
 * Global: one map lookup that only those filesystems pay, verified once.
 */
__noinline __u32 inode_instance(__u64 inode_addr, __u32 dev, __u64 ino, __u32 nlink)
{
	struct path_key pk = { .dev = dev, .ino = ino };
	struct instance *v = bpf_map_lookup_elem(&instances, &pk);
	struct instance fresh = { .inode = inode_addr, .state = nlink ? INST_LINKED : 0 };

	if (!v) {
		bpf_map_update_elem(&instances, &pk, &fresh, BPF_NOEXIST);
		return 0;
	}
	if ((v->state == INST_DEAD && (v->inode != inode_addr || nlink)) ||
	    (v->state == INST_LOST && v->inode != inode_addr)) {
		fresh.count = v->count + 1;
		*v = fresh;
	} else if (nlink) {
		v->inode = inode_addr;
		v->state = INST_LINKED;
	} else if (v->inode == inode_addr && v->state) {
		v->state = INST_DEAD; /* an O_TMPFILE file, never linked yet, is not dead */
	}
	return v->count;
}

/*
 * A file of a filesystem without generations was named id: the file named so before lost
 * its name (a rename replaced it: overlayfs renames stamp no ctime on the file replaced),
 * so its number on another inode is another file.
 */
static void name_taken(__u64 id, struct path_key *pk)
{
	struct path_key *was = bpf_map_lookup_elem(&name_owner, &id), key;
	struct instance *v;

	if (was && (was->ino != pk->ino || was->dev != pk->dev || was->igen != pk->igen)) {
		key = (struct path_key){ .dev = was->dev, .ino = was->ino };
		v = bpf_map_lookup_elem(&instances, &key);
		if (v && v->count == was->igen && v->state == INST_LINKED)
			v->state = INST_LOST;
	}
	bpf_map_update_elem(&name_owner, &id, pk, BPF_ANY);
}


/*
 * On a filesystem with generations, how many files before this one had its number and its
 * generation too (0 but for one file in 2^32 pairs): a new one once the last was seen
 * deleted (mark_dead) and these come with another inode or with links again. Only numbers
 * seen deleted are in the map: for the others, one lookup that misses. Global: verified
 * once.
 */
__noinline __u32 reused_count(__u64 inode_addr, __u32 dev, __u64 ino, __u32 gen, __u32 nlink)
{
	struct path_key pk = { .dev = dev, .ino = ino, .igen = gen };
	struct instance *v = bpf_map_lookup_elem(&dead, &pk);

	if (!v)
		return 0;
	if (v->state == INST_DEAD && (v->inode != inode_addr || nlink)) {
		v->count++;
		v->inode = inode_addr;
		v->state = INST_LINKED;
	}
	return v->count;
}

/* A file of a filesystem with generations was seen deleted; its key's generation. */
static __u32 mark_dead(__u64 inode_addr, struct path_key *raw)
{
	struct instance fresh = { .inode = inode_addr, .state = INST_DEAD };
	struct instance *v = bpf_map_lookup_elem(&dead, raw);

	if (!v) {
		bpf_map_update_elem(&dead, raw, &fresh, BPF_ANY);
		return raw->igen;
	}
	v->inode = inode_addr;
	v->state = INST_DEAD;
	return raw->igen + v->count * REUSE_STEP;
}

/* A key's generation and device as one number, for record_name. */
static __always_inline __u64 path_key_word(const struct path_key *pk)
{
	return (__u64)pk->igen << 32 | pk->dev;
}

/* How record_name names a file. */
enum name_how {
	NAME_OWN,   /* a syscall: the file's own dentry, if not the name sent last */
	NAME_AGAIN, /* a rename, link or unlink changed it: its newest name, if it was named */
};

/*
 * Sends the file's name to the loader unless it is the one sent last (NAME_AGAIN: or the
 * file was never named, so no row shows it); returns the name's id (0: none). Syscalls and
 * exec (the program and its interpreter, note_exec_files) name files: the verifier checks
 * the naming code in their programs alone (files met only through the page cache are named
 * by the loader from their inode: user/kernel/tracer_names.c).
 */
static __always_inline __u64 send_name(struct path_key *pk, struct inode *inode,
					struct file *file, enum name_how how)
{
	struct sent_name now = {}, *sent = bpf_map_lookup_elem(&named, pk);
	__u64 d = name_dentry(inode, file);
	struct scratch s;
	__u32 size, counted;
	long err;

	if (!sent && how == NAME_AGAIN)
		return 0;
	now.id = d ? name_id_of(d) : sent ? sent->id : 0; /* no name at hand: the one sent */
	now.deleted = !KREAD(inode, __i_nlink);
	if (sent && sent->id == now.id && (sent->deleted == now.deleted || how == NAME_OWN))
		return now.id;
	scratch_take(&s);
	if (!s.n)
		return now.id;
	size = fill_name(s.n, pk, inode, file, d, how == NAME_AGAIN);
	if (size > sizeof(*s.n))
		size = sizeof(*s.n);
	/*
	 * Drained by the loader's clock; a buffer past a quarter full wakes it. With --trace,
	 * in the trace's ring, so that a file's name reaches the loader before the events
	 * that name it.
	 */
	err = trace ? trace_output(s.n, size)
		    : bpf_ringbuf_output(&name_events, s.n, size,
					 bpf_ringbuf_query(&name_events, BPF_RB_AVAIL_DATA) > (1 << 20)
						 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	counted = s.n->counted;
	scratch_give(&s);
	if (err) {
		__sync_fetch_and_add(&drops[DROP_PATHS], 1);
		return now.id;
	}
	bpf_map_update_elem(&named, pk, &now, BPF_ANY);
	if (d && counted)
		name_taken(now.id, pk);
	return now.id;
}

/*
 * send_name, global: the verifier checks it once per program, apart from its callers'
 * paths (a file's first use, a rename), which it multiplied when inlined there. Global
 * functions take at most five numbers: the key (its generation and device in one), and
 * the inode's and file's addresses (file 0: none).
 */
__noinline __u64 record_name(__u64 igen_dev, __u64 ino, __u64 inode_addr, __u64 file_addr,
			     __u32 how)
{
	struct path_key pk = { .dev = igen_dev, .ino = ino, .igen = igen_dev >> 32 };
	struct file *file = file_addr ? UNTRUSTED(file, (void *)file_addr) : NULL;

	return send_name(&pk, UNTRUSTED(inode, (void *)inode_addr), file, how);
}

/* ---- identity ---- */

struct hash_ctx {
	const char *s;
	__u64 h;
};

static long fnv_step(__u32 i, void *data)
{
	struct hash_ctx *c = data;
	char ch = c->s[i & (ANON_NAME_LEN - 1)];

	if (!ch)
		return 1;
	c->h = (c->h ^ (__u8)ch) * 1099511628211ULL;
	return 0;
}

/*
 * The key number of an anonymous-inode file: a hash of its name ("[eventfd]"). Global, off
 * the frame of its callers: with the name there, sys_exit's deepest call chain passed the
 * 512 bytes 6.1's verifier allows all its frames together.
 */
__noinline __u64 anon_key(__u64 file_addr)
{
	char name[ANON_NAME_LEN] = {};
	struct hash_ctx h = { .s = name, .h = 14695981039346656037ULL };

	bpf_probe_read_kernel_str(name, sizeof(name),
				  BPF_CORE_READ((struct file *)file_addr, f_path.dentry, d_name.name));
	BPF_LOOP(ANON_NAME_LEN, fnv_step, &h, ANON_NAME_LEN);
	return h.h | ANON_KEY_BIT;
}

/*
 * The ledger's key of a file: its device, inode number and generation (or instance), or
 * for an anonymous inode a hash of its name.
 */
static __always_inline void file_key_of(struct inode *inode, struct file *file,
					struct path_key *pk)
{
	__u64 magic = KREAD(inode, i_sb, s_magic);
	__u64 file_addr = 0, inode_addr = 0;

	pk->dev = KREAD(inode, i_sb, s_dev);
	pk->ino = KREAD(inode, i_ino);
	pk->igen = KREAD(inode, i_generation);
	if (file && magic == ANON_INODE_FS_MAGIC) {
		/* Global functions take numbers only: the pointer's value copied out as one. */
		bpf_probe_read_kernel(&file_addr, sizeof(file_addr), &file);
		pk->ino = anon_key(file_addr);
		pk->igen = 0;
	} else if (!pk->igen && counted_fs(magic)) {
		bpf_probe_read_kernel(&inode_addr, sizeof(inode_addr), &inode);
		pk->igen = inode_instance(inode_addr, pk->dev, pk->ino, KREAD(inode, __i_nlink));
	} else if (pk->igen && magic != PIPEFS_MAGIC && magic != SOCKFS_MAGIC) {
		bpf_probe_read_kernel(&inode_addr, sizeof(inode_addr), &inode);
		pk->igen += reused_count(inode_addr, pk->dev, pk->ino, pk->igen,
					 KREAD(inode, __i_nlink)) * REUSE_STEP;
	}
}

/* ---- renames followed ---- */

/* Whether nr renames, links or unlinks (family NAMING): file_op_of says FOP_NAMING. */
static __always_inline bool naming_syscall(__u64 nr)
{
	return nr < MAX_SYSCALLS && file_op_of[syscall_index(nr)] == FOP_NAMING;
}

/*
 * A ctime stamped: if a traced thread is in a rename, link or unlink, the inode is one it
 * changes. The syscall's number is the one its registers hold (SC_NR): sys_enter has no
 * program with --no-time.
 */
static __always_inline void note_inode(void *ctx, struct inode *arg)
{
	/* Untrusted (design.md, "Start-up"): 4.6 ms of verification per program otherwise. */
	struct inode *inode = UNTRUSTED(inode, arg);
	struct task_struct *task = hook_task(ctx);
	__u16 *slot = slot_entry(TASK_READ(task, tgid));
	struct noted fresh = {}, *n;
	__u32 tid = TASK_READ(task, pid);

	if (serve || !slot || !*slot || (*slot & SLOT_PENDING))
		return;
#if HAVE_COMPAT
	if (!naming_syscall(compat_syscall_nr(task)))
		return;
#else
	struct pt_regs *regs = task_syscall_regs(task);

	if (!regs || !naming_syscall(SC_NR(regs)))
		return;
#endif
	n = lookup_or_init(&noted_inodes, &tid, &fresh, DROP_PATHS, NULL);
	if (!n)
		return;
	for (int i = 0; i < NOTED_INODES; i++) {
		if (n->inode[i] == (__u64)inode)
			return;
		if (!n->inode[i]) {
			n->inode[i] = (__u64)inode;
			n->raw[i] = (struct path_key){ .dev = KREAD(inode, i_sb, s_dev),
						       .ino = KREAD(inode, i_ino),
						       .igen = KREAD(inode, i_generation) };
			return;
		}
	}
}

SEC("tp_btf/inode_set_ctime_to_ts")
int BPF_PROG(handle_inode_set_ctime_to_ts, struct inode *inode, struct timespec64 *ts)
{
	note_inode(ctx, inode);
	return 0;
}

/* Multigrain timestamps (ext4, xfs, btrfs, tmpfs): the ctime swapped in ... */
SEC("tp_btf/ctime_ns_xchg")
int BPF_PROG(handle_ctime_ns_xchg, struct inode *inode, u32 old, u32 new, u32 cur)
{
	note_inode(ctx, inode);
	return 0;
}

/* ... or already the same (two stamps in one clock tick). */
SEC("tp_btf/ctime_xchg_skip")
int BPF_PROG(handle_ctime_xchg_skip, struct inode *inode, struct timespec64 *ctime)
{
	note_inode(ctx, inode);
	return 0;
}

struct noted_walk {
	struct noted *n;
};

/*
 * A noted file that is no longer there (its inode freed, the memory perhaps another's):
 * deleted, if it was named. A name event with no name says only that.
 */
static void record_gone(struct path_key *pk)
{
	struct sent_name *sent = bpf_map_lookup_elem(&named, pk);
	struct scratch s;
	struct file_name *n;
	long err;

	if (!sent || sent->deleted)
		return;
	scratch_take(&s);
	n = s.n;
	if (!n)
		return;
	__builtin_memset(n, 0, __builtin_offsetof(struct file_name, buf));
	n->record = TE_NAME;
	n->dev = pk->dev;
	n->ino = pk->ino;
	n->igen = pk->igen;
	n->deleted = 1;
	n->again = 1;
	n->from_alias = 1;
	err = trace ? trace_output(n, __builtin_offsetof(struct file_name, buf))
		    : bpf_ringbuf_output(&name_events, n, __builtin_offsetof(struct file_name, buf),
					 0);
	scratch_give(&s);
	if (err) {
		__sync_fetch_and_add(&drops[DROP_PATHS], 1);
		return;
	}
	sent->deleted = 1;
}

/*
 * One noted inode, named again (its new name, or that it was deleted) if it was named. Its
 * number tells whether the inode is still the one noted: one whose last link went is freed
 * at the end of the call, and its memory may hold another by now.
 */
static long name_noted(__u32 i, void *data)
{
	struct noted *n = ((struct noted_walk *)data)->n;
	__u32 k = i & (NOTED_INODES - 1);
	struct inode *inode = UNTRUSTED(inode, (void *)n->inode[k]);
	struct path_key pk = n->raw[k];
	bool alive;
	__u64 d = 0;

	if (!n->inode[k])
		return 1;
	alive = KREAD(inode, i_ino) == pk.ino && KREAD(inode, i_sb, s_dev) == pk.dev &&
		KREAD(inode, i_generation) == pk.igen;
	if (alive)
		d = name_dentry(inode, NULL);
	if (d && BPF_CORE_READ((struct dentry *)d, d_hash.pprev)) {
		file_key_of(inode, NULL, &pk);
		record_name(path_key_word(&pk), pk.ino, n->inode[k], 0, NAME_AGAIN);
		return 0;
	}
	if (alive && KREAD(inode, __i_nlink))
		return 0; /* linked still, its names out of the dentry cache: not deleted */
	/* No name leads to it any more: deleted, its number and generation free again. */
	if (pk.igen)
		pk.igen = mark_dead(n->inode[k], &pk);
	else if (!alive || counted_fs(KREAD(inode, i_sb, s_magic)))
		pk.igen = inode_instance(n->inode[k], pk.dev, pk.ino, 0);
	record_gone(&pk);
	return 0;
}

/*
 * sys_exit of a traced rename, link or unlink (ok: it succeeded): the inodes it changed are
 * named again, and after a rename every fd cache checks its file's name. Global: only these
 * calls pay for it, and the verifier checks it once.
 */
__noinline int names_changed(__u32 nr, __u32 ok)
{
	struct task_struct *task = current_task();
	__u32 tid = TASK_READ(task, pid);
	struct noted_walk w = { .n = bpf_map_lookup_elem(&noted_inodes, &tid) };

	if (ok && (nr == nr_rename || nr == nr_renameat || nr == nr_renameat2))
		__sync_fetch_and_add(&names_epoch, 1);
	if (!w.n)
		return 0;
	if (ok)
		BPF_LOOP(NOTED_INODES, name_noted, &w, NOTED_INODES);
	bpf_map_delete_elem(&noted_inodes, &tid);
	return 0;
}
