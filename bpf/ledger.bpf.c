// SPDX-License-Identifier: GPL-2.0
/*
 * Part of bpf/iotrace.bpf.c, which builds every part into one object.
 *
 * The per-file ledger: one entry per (owner, file) in file_stats, found through file_index,
 * with a row per syscall in file_rows, the file's name in file_names, its page-cache
 * counters (pagecache.bpf.c) and the pages it dirtied. The loader reads the entries of
 * exited processes, and of files no longer in use, while the run goes on and gives their
 * indexes back (free_files; an entry keeps its rows), so the tables hold what is in use:
 * gen tells a
 * per-thread cache that an index was given to another file, epoch when an entry was last
 * touched (user/kernel/tracer_read.c, ledger_evict).
 *
 * A file is (dev, inode number), except anonymous-inode files (eventfd, epoll, timerfd...),
 * which all share one inode: those are told apart by the name of their dentry, as
 * /proc/PID/fd shows them ("anon_inode:[eventfd]").
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
#define ANON_INODE_FS_MAGIC 0x09041934
#define TMPFS_MAGIC 0x01021994
/* Key inode numbers of anonymous-inode files: a hash of the name, with this bit set. */
#define ANON_KEY_BIT (1ULL << 63)
#define ANON_NAME_LEN 32

/* (owner, file) -> index into file_stats */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_FILES);
	__type(key, struct file_key);
	__type(value, __u32);
} file_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MAX_FILES);
	__type(key, __u32);
	__type(value, struct file_stat);
} file_stats SEC(".maps");

/*
 * file_stats indexes the loader read and gave back: a set bit is free. The loader sets bits
 * in place (no syscall per entry), programs take them with an atomic and.
 */
__u64 free_files[MAX_FILES / 64] = {};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MAX_FILE_ROWS);
	__type(key, __u32);
	__type(value, struct file_row);
} file_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, MAX_FILE_ROWS);
	__type(value, __u32);
} free_rows SEC(".maps");

/* File names, as events (struct file_name): a file's every name reaches the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} name_events SEC(".maps");

/* A name being made (too big for the BPF stack); only the bytes used are sent. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct file_name);
} name_scratch SEC(".maps");

/* The name a file had when last sent: its leaf's hash and length, and its parent dentry. */
struct sent_name {
	__u64 leaf;
	__u64 parent;
};

/* (dev, ino) -> the name last sent, so an unchanged name is not walked and sent again. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_NAMED);
	__type(key, struct path_key);
	__type(value, struct sent_name);
} named SEC(".maps");

__u32 nr_files = 0;
/*
 * Entries in use: created here, less those the loader recycled. Passing half the table,
 * and three quarters, wakes the loader (EV_LEDGER_FULL) to take idle entries at once
 * instead of at its next tick: a fast reader (tar over a cached tree) opens tens of
 * thousands of files a second, and fills the other half in less than a tick.
 */
__u32 files_live = 0;
__u32 nr_rows = 0;
/* Advanced by the loader on every poll: an entry's epoch says when it was last used. */
__u32 ledger_epoch = 0;

/* Set by the loader: the file op of each syscall and where it finds its fds. */
const volatile __u8 file_op_of[MAX_SYSCALLS] = {};
const volatile __u8 fd_arg[FILE_OP_SLOTS] = {};
const volatile __u8 fd2_arg[FILE_OP_SLOTS] = {}; /* the other side of a copy ... */
const volatile __u8 fd2_op[FILE_OP_SLOTS] = {};  /* ... and its op */

static const struct file_row zero_row;

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
	bpf_loop(64, name_step, &w, 0);
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

/* The dentry naming the file: the file's own (hard links!), else one of the inode's. */
static __always_inline __u64 name_dentry(struct inode *inode, struct file *file)
{
	struct hlist_node *alias;

	if (file)
		return (__u64)BPF_CORE_READ(file, f_path.dentry);
	alias = BPF_CORE_READ(inode, i_dentry.first);
	return alias ? (__u64)container_of(alias, struct dentry, d_u.d_alias) : 0;
}

/* The name's header and path; returns the bytes of n to send. */
static __u32 fill_name(struct file_name *n, struct path_key *pk, struct inode *inode,
		       struct file *file, __u64 d)
{
	__u64 magic;
	__u32 used = 0;

	__builtin_memset(n, 0, __builtin_offsetof(struct file_name, buf));
	n->record = TE_NAME;
	n->dev = pk->dev;
	n->ino = pk->ino;
	n->igen = pk->igen;
	magic = KREAD(inode, i_sb, s_magic);
	n->kind = kind_of(KREAD(inode, i_mode), magic);
	n->deleted = !KREAD(inode, __i_nlink);
	n->rdev = KREAD(inode, i_rdev);
	n->from_alias = !file;
	/* memfd_create makes an unlinked file on the kernel's shm mount, "memfd:NAME". */
	if (n->kind == FK_FILE && magic == TMPFS_MAGIC && file && n->deleted)
		n->kind = FK_MEMFD;
	if (n->kind == FK_SOCKET && file)
		socket_of(n, file);
	if (d && (n->kind == FK_ANON || n->kind == FK_MEMFD))
		used = leaf_name(n, d);
	else if (d && n->kind != FK_PIPE && n->kind != FK_SOCKET)
		used = walk_names(n, d);
	return __builtin_offsetof(struct file_name, buf) + used;
}

/*
 * Sends the file's name to the loader when its ledger entry starts, unless it was sent
 * already and is the same: a file that was opened (its own dentry) is checked each time, so
 * a rename since (git's config.lock -> config) sends the new name; page-cache events, which
 * have no file, send one of the inode's names only for a file never named.
 */
static void record_name(struct path_key *pk, struct inode *inode, struct file *file)
{
	struct sent_name now = {}, *sent = bpf_map_lookup_elem(&named, pk);
	__u64 d = name_dentry(inode, file);
	struct file_name *n;
	__u32 zero = 0, size;

	if (sent && !file)
		return;
	if (d) {
		now.leaf = BPF_CORE_READ((struct dentry *)d, d_name.hash_len);
		now.parent = (__u64)BPF_CORE_READ((struct dentry *)d, d_parent);
	}
	if (sent && sent->leaf == now.leaf && sent->parent == now.parent)
		return;
	n = bpf_map_lookup_elem(&name_scratch, &zero);
	if (!n)
		return;
	size = fill_name(n, pk, inode, file, d);
	if (size > sizeof(*n))
		size = sizeof(*n);
	/*
	 * Drained by the loader's clock; a buffer past a quarter full wakes it. With --trace,
	 * in the trace's ring, so that a file's name reaches the loader before the events
	 * that name it.
	 */
	if (trace ? trace_output(n, size)
		  : bpf_ringbuf_output(&name_events, n, size,
				       bpf_ringbuf_query(&name_events, BPF_RB_AVAIL_DATA) > (1 << 20)
					       ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP)) {
		__sync_fetch_and_add(&drops[DROP_PATHS], 1);
		return;
	}
	bpf_map_update_elem(&named, pk, &now, BPF_ANY);
}

/* ---- entries ---- */

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
	bpf_loop(ANON_NAME_LEN, fnv_step, &h, 0);
	return h.h | ANON_KEY_BIT;
}

/*
 * The ledger's key of a file: its device, inode number and generation (a number freed by a
 * deleted file comes back for a new one: git's and sqlite's temporary files), or for an
 * anonymous inode a hash of its name.
 */
static __always_inline void file_key_of(struct inode *inode, struct file *file,
					struct path_key *pk)
{
	__u64 file_addr = 0;

	pk->dev = KREAD(inode, i_sb, s_dev);
	pk->ino = KREAD(inode, i_ino);
	pk->igen = KREAD(inode, i_generation);
	if (!file || KREAD(inode, i_sb, s_magic) != ANON_INODE_FS_MAGIC)
		return;
	/* Global functions take numbers only: the pointer's value copied out as one. */
	bpf_probe_read_kernel(&file_addr, sizeof(file_addr), &file);
	pk->ino = anon_key(file_addr);
	pk->igen = 0;
}

/*
 * Index of (owner, file) in file_stats, created on first use; -1 when the table is full.
 * Global, so the verifier checks it once rather than in every program that calls it;
 * the inode and file (0: none, as in page-cache events) come as plain addresses.
 */
struct free_search {
	__u32 start, idx;
};

/* One word of free_files (from the search's start): take its lowest set bit. */
static long take_free_word(__u32 i, void *data)
{
	struct free_search *s = data;
	__u32 w = (s->start + i) & (MAX_FILES / 64 - 1);
	__u64 bits = free_files[w], bit;

	if (!bits)
		return 0;
	bit = bits & -bits;
	if (__sync_fetch_and_and(&free_files[w], ~bit) & bit) {
		s->idx = w * 64 + bit_index(bit);
		return 1;
	}
	return 0; /* another CPU took it: the next word */
}

/* A given-back index, or MAX_FILES when none is free (starts where the last one was). */
static __always_inline __u32 take_free_entry(void)
{
	static __u32 hint;
	struct free_search s = { .start = hint, .idx = MAX_FILES };

	bpf_loop(MAX_FILES / 64, take_free_word, &s, 0);
	if (s.idx < MAX_FILES)
		hint = s.idx / 64;
	return s.idx;
}

/* Gives idx back (a CPU that lost a race for a key). */
static __always_inline void free_entry(__u32 idx)
{
	__sync_fetch_and_or(&free_files[(idx / 64) & (MAX_FILES / 64 - 1)], 1ULL << (idx % 64));
}

/*
 * Tells the loader the ledger wants room now (see files_live). Inlined: as a call it was
 * the fifth frame of sys_exit's deepest chain, past 6.1's 512 bytes for all of them.
 */
static __always_inline int ledger_wake_loader(void)
{
	struct iot_proc_event *e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&drops[DROP_RINGBUF], 1);
		return 0;
	}
	__builtin_memset(e, 0, __builtin_offsetof(struct iot_proc_event, comm));
	e->kind = EV_LEDGER_FULL;
	submit_event(e, true);
	return 0;
}

/* A new entry for key; its index, or -1 when the table is full. */
static __always_inline int new_entry(struct file_key *key)
{
	struct file_stat *st;
	__u32 *found, idx, live;
	bool created;

	/* Fresh entries first, then the ones given back. */
	idx = nr_files < MAX_FILES ? __sync_fetch_and_add(&nr_files, 1) : MAX_FILES;
	if (idx >= MAX_FILES)
		idx = take_free_entry();
	if (idx >= MAX_FILES) {
		__sync_fetch_and_add(&drops[DROP_FILES], 1);
		return -1;
	}
	found = lookup_or_init(&file_index, key, &idx, DROP_FILES, &created);
	if (!created) {
		/* Another CPU created it first (use its index), or the hash is full. */
		free_entry(idx);
		return found ? *found : -1;
	}
	st = bpf_map_lookup_elem(&file_stats, &idx);
	if (st)
		st->key = *key;
	live = __sync_fetch_and_add(&files_live, 1) + 1;
	if (live == MAX_FILES / 2 || live == MAX_FILES / 4 * 3)
		ledger_wake_loader();
	return idx;
}

/*
 * Index of (owner, file) in file_stats, created on first use; -1 when the table is full.
 * Global, so the verifier checks it once per program rather than at every call; the
 * page-cache and block programs call it with the inode's key.
 */
__noinline int file_index_of(__u32 owner, __u32 dev, __u64 ino, __u32 igen)
{
	struct file_key key = { .owner = owner, .dev = dev, .ino = ino, .igen = igen };
	__u32 *found = bpf_map_lookup_elem(&file_index, &key);

	return found ? *found : new_entry(&key);
}

/*
 * The same for a file a syscall used (an fd, first used by this thread: most often just
 * opened), whose name is sent too, or again if it was renamed since. Only the syscall
 * programs name files: the verifier checks the naming code in them alone (the others' files
 * without a name are named by the loader from their inode: user/model/names.c).
 */
__noinline int file_index_of_file(__u32 owner, __u64 file_addr)
{
	struct file *file = UNTRUSTED(file, (void *)file_addr);
	struct inode *inode = KREAD(file, f_inode);
	struct path_key pk;
	int idx;

	if (!inode)
		return -1;
	file_key_of(inode, file, &pk);
	idx = file_index_of(owner, pk.dev, pk.ino, pk.igen);
	if (idx >= 0 && !serve) /* serve reports labels, never files */
		record_name(&pk, inode, file);
	return idx;
}

/* ---- rows ---- */

/* A new row for op on entry idx; 0 when the table is full, else its index + 1. */
__noinline __u32 file_row_alloc(__u32 idx, __u32 op)
{
	struct file_stat *st = bpf_map_lookup_elem(&file_stats, &idx);
	__u32 row, old;
	struct file_row *r;

	if (!st)
		return 0;
	if (bpf_map_pop_elem(&free_rows, &row))
		row = __sync_fetch_and_add(&nr_rows, 1);
	if (row >= MAX_FILE_ROWS) {
		__sync_fetch_and_add(&drops[DROP_FILE_ROWS], 1);
		return 0;
	}
	r = bpf_map_lookup_elem(&file_rows, &row);
	if (r)
		*r = zero_row;
	/* Another thread of the process may have made the row meanwhile: keep the first. */
	old = __sync_val_compare_and_swap(&st->row[op & (FILE_OP_SLOTS - 1)], 0, row + 1);
	if (old) {
		bpf_map_push_elem(&free_rows, &row, 0);
		return old;
	}
	return row + 1;
}

static __always_inline struct file_row *file_row_of(struct file_stat *st, __u32 idx, __u32 op)
{
	__u32 row = st->row[op & (FILE_OP_SLOTS - 1)];

	if (!row)
		row = file_row_alloc(idx, op);
	if (!row)
		return NULL;
	row--;
	return bpf_map_lookup_elem(&file_rows, &row);
}

/* The entry at idx if it still is the one a cache saw with gen, else NULL. */
static __always_inline struct file_stat *entry_at(__u32 idx, __u32 gen)
{
	struct file_stat *st = bpf_map_lookup_elem(&file_stats, &idx);

	if (!st || st->gen != gen || !st->key.owner)
		return NULL;
	st->epoch = ledger_epoch;
	return st;
}

/* ---- fds ---- */

/* The struct file behind fd in the current task's table, or NULL (no PROBE_MEM fault). */
static __always_inline struct file *fd_file(struct task_struct *task, __u64 fd)
{
	struct files_struct *files = UNTRUSTED(task_struct, task)->files;
	struct fdtable *fdt;
	void *slot;

	if (!files)
		return NULL;
	fdt = files->fdt;
	if (!fdt || fd >= fdt->max_fds)
		return NULL;
	/*
	 * fdt->fd is an array of pointers, which a BTF walk cannot index: read the slot as the
	 * first member of a struct that starts with a struct file * (kiocb's ki_filp).
	 */
	slot = (void *)((__u64)fdt->fd + fd * sizeof(void *));
	return KREAD(UNTRUSTED(kiocb, slot), ki_filp);
}

/*
 * The ledger entry of fd for the current process, from the thread's small cache when the
 * fd still holds the same file, else through file_index (creating the entry). An open
 * (opening) always takes the long way: the fd it returns may hold a new file where the
 * cache saw an old one. *idxp gets its index.
 */
static __always_inline struct file_stat *entry_of_fd(struct task_struct *task,
						     struct thread_io *ti, __u64 fd, __u32 *idxp,
						     bool opening)
{
	struct file *file = fd_file(task, fd);
	struct fd_cache *c = &ti->fds[fd & (FD_CACHE - 1)];
	__u64 file_addr = 0;
	struct inode *inode;
	struct file_stat *st;
	__u32 igen;
	__u64 ino;
	int idx;

	if (!file)
		return NULL;
	inode = KREAD(file, f_inode);
	if (!inode)
		return NULL;
	ino = KREAD(inode, i_ino);
	igen = KREAD(inode, i_generation);
	if (c->file == (__u64)file && c->ino == ino && c->igen == igen && !opening) {
		st = entry_at(c->idx, c->gen);
		if (st) {
			*idxp = c->idx;
			return st;
		}
	}
	/* Global functions take scalars only: copy the pointer's value out as a number. */
	bpf_probe_read_kernel(&file_addr, sizeof(file_addr), &file);
	idx = file_index_of_file(task->tgid, file_addr);
	if (idx < 0)
		return NULL;
	*idxp = idx;
	st = bpf_map_lookup_elem(&file_stats, idxp);
	if (!st)
		return NULL;
	c->file = (__u64)file;
	c->ino = ino;
	c->igen = igen;
	c->idx = idx;
	c->gen = st->gen;
	st->epoch = ledger_epoch;
	return st;
}
