// SPDX-License-Identifier: GPL-2.0
/*
 * Part of bpf/iotrace.bpf.c, which builds every part into one object.
 *
 * The per-file ledger: one entry per (owner, file) in file_stats, found through file_index,
 * with a row per syscall in file_rows, its page-cache counters (pagecache.bpf.c) and the
 * pages it dirtied; what a file is and its names: names.bpf.c. The loader reads the entries
 * of exited processes, and of files no longer in use, while the run goes on and gives their
 * indexes back (free_files) and their rows (free_rows), so the tables hold what is in use:
 * gen tells a per-thread cache that an index was given to another file, epoch when an
 * entry was last touched (user/kernel/tracer_files.c). A renamed file's later calls go to
 * an entry of their own (rename_entry), so each entry's calls were made under one name.
 */
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

/*
 * Each entry's owner (its key's), apart from the entry: the loader finds an exited
 * process's entries in these 32 KiB rather than by reading the owner of every entry
 * (984 bytes apart: 8 MiB once the table has filled, ~1,000 pages, read at every exit).
 * Zeroed by the loader when it recycles the entry, before the entry is free.
 */
__u32 file_owners[MAX_FILES] = {};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MAX_FILE_ROWS);
	__type(key, __u32);
	__type(value, struct file_row);
} file_rows SEC(".maps");

/*
 * file_rows indexes the loader gave back with their entries, as free_files: the loader sets
 * bits in place (a queue map took a syscall per row, a sixth of the loader's time while a
 * shell ran short processes), programs take them with an atomic and. The compat build
 * (no bpf_loop) takes them from a queue instead, which the loader fills a row a syscall;
 * in the other builds the queue is made with room for one.
 */
__u64 free_rows[MAX_FILE_ROWS / 64] = {};

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, MAX_FILE_ROWS);
	__type(value, __u32);
} free_rows_queue SEC(".maps");

__u32 nr_files = 0;
/*
 * Entries in use: created here, less those the loader recycled. Passing half the table,
 * and three quarters, wakes the loader (EV_LEDGER_FULL) to take idle entries at once
 * instead of at its next tick: a fast reader (tar over a cached tree) opens tens of
 * thousands of files a second, and fills the other half in less than a tick.
 */
__u32 files_live = 0;
__u32 nr_rows = 0;
/*
 * Rows the entries in use hold: taken here, less those the loader gave back with a
 * recycled entry. Past half the table the loader takes idle entries as when files_live is
 * high.
 */
__u32 rows_taken = 0;
/* Advanced by the loader on every poll: an entry's epoch says when it was last used. */
__u32 ledger_epoch = 0;

/* Set by the loader: where each file op (file_op_of, maps.bpf.h) finds its fds. */
const volatile __u8 fd_arg[FILE_OP_SLOTS] = {};
const volatile __u8 fd2_arg[FILE_OP_SLOTS] = {}; /* the other side of a copy ... */
const volatile __u8 fd2_op[FILE_OP_SLOTS] = {};  /* ... and its op */

static const struct file_row zero_row;

/* ---- entries ---- */

/*
 * Index of (owner, file) in file_stats, created on first use; -1 when the table is full.
 * Global, so the verifier checks it once rather than in every program that calls it;
 * the inode and file (0: none, as in page-cache events) come as plain addresses.
 */
struct free_search {
	__u32 start, idx;
};

/* Word w of a bitmap of given-back indexes (free_files, free_rows): take its lowest set bit. */
static __always_inline long take_free_bit(__u64 *word, __u32 w, struct free_search *s)
{
	__u64 bits = *word, bit;

	if (!bits)
		return 0;
	bit = bits & -bits;
	if (FETCH_AND(word, ~bit) & bit) {
		s->idx = w * 64 + bit_index(bit);
		return 1;
	}
	return 0; /* another CPU took it: the next word */
}

/* One word of free_files (from the search's start). */
static long take_free_word(__u32 i, void *data)
{
	struct free_search *s = data;
	__u32 w = (s->start + i) & (MAX_FILES / 64 - 1);

	return take_free_bit(&free_files[w], w, s);
}

#if HAVE_COMPAT
/*
 * compat: word i of free_files from start, a global function: the search unrolled is
 * calls (compat.bpf.h). (Its rows come back through a queue: 512 words of rows unrolled
 * added a tenth to that build's verification.)
 */
__noinline int take_free_word_at(__u32 start, __u32 i)
{
	struct free_search s = { .start = start, .idx = MAX_FILES };

	take_free_word(i, &s);
	return s.idx;
}
#endif

/* A given-back entry from word start on, or MAX_FILES when none is free. */
COMPAT_GLOBAL(static __always_inline) __u32 search_free_entries(__u32 start)
{
	struct free_search s = { .start = start, .idx = MAX_FILES };

#if HAVE_COMPAT
	for (__u32 i = 0; i < MAX_FILES / 64 && s.idx >= MAX_FILES; i++)
		s.idx = take_free_word_at(start, i);
#else
	bpf_loop(MAX_FILES / 64, take_free_word, &s, 0);
#endif
	return s.idx;
}

/* A given-back entry, or MAX_FILES when none is free (starts where the last one was). */
static __always_inline __u32 take_free_entry(void)
{
	static __u32 hint;
	__u32 idx = search_free_entries(hint);

	if (idx >= MAX_FILES)
		return MAX_FILES;
	hint = idx / 64;
	return idx;
}

/* Gives idx back (a CPU that lost a race for a key). */
static __always_inline void free_entry(__u32 idx)
{
	ATOMIC_OR(&free_files[(idx / 64) & (MAX_FILES / 64 - 1)], 1ULL << (idx % 64));
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
	idx = nr_files < MAX_FILES ? TAKE_NEXT(&nr_files) : MAX_FILES;
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
	file_owners[idx & (MAX_FILES - 1)] = key->owner;
	live = COUNT_ADD(&files_live, 1);
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
 * A file's calls since its rename go to an entry of their own, so that the report can say
 * under which name each call was made (as strace -yy shows it): the entry of the old name
 * leaves file_index (closed, so that the loader's retiring misses the new one) and its gen
 * changes (the threads' caches miss it), and the loader takes it when idle as any other.
 * The new entry's index, or -1. Global: verified once, run only after a rename.
 */
__noinline int rename_entry(__u32 idx, __u64 name_id)
{
	struct file_stat *st = bpf_map_lookup_elem(&file_stats, &idx);
	struct file_key key;
	__u32 *found;
	int fresh;

	if (!st)
		return -1;
	key = st->key;
	key.closed = 0;
	if (!bpf_map_delete_elem(&file_index, &key)) {
		st->key.closed = 1;
		__sync_fetch_and_add(&st->gen, 1);
	}
	/* Not deleted: another CPU did it (or the loader took the entry); find its successor. */
	found = bpf_map_lookup_elem(&file_index, &key);
	fresh = found ? *found : new_entry(&key);
	idx = fresh;
	st = fresh >= 0 ? bpf_map_lookup_elem(&file_stats, &idx) : NULL;
	if (st)
		ATOMIC_CMPXCHG(&st->name_id, 0, name_id);
	return fresh;
}

/*
 * The same for a file a syscall used (an fd, first used by this thread: most often just
 * opened), whose name is sent too, or again if it was renamed since: then its calls go to a
 * new entry, under the new name (rename_entry). Not after a hard link's other name: the
 * entry keeps the name it started with.
 */
__noinline int file_index_of_file(__u32 owner, __u64 file_addr)
{
	struct file *file = UNTRUSTED(file, (void *)file_addr);
	struct inode *inode = KREAD(file, f_inode);
	struct file_stat *st;
	struct path_key pk;
	__u64 name, was, inode_addr = 0;
	__u32 idx;
	int found;

	if (!inode)
		return -1;
	file_key_of(inode, file, &pk);
	found = file_index_of(owner, pk.dev, pk.ino, pk.igen);
	if (found < 0 || serve) /* serve reports labels, never files */
		return found;
	bpf_probe_read_kernel(&inode_addr, sizeof(inode_addr), &inode); /* as a number */
	name = record_name(path_key_word(&pk), pk.ino, inode_addr, file_addr, NAME_OWN);
	idx = found;
	st = bpf_map_lookup_elem(&file_stats, &idx);
	if (!st || !name)
		return found;
	was = CMPXCHG(&st->name_id, 0, name);
	if (!was || was == name || KREAD(inode, __i_nlink) > 1)
		return found;
	return rename_entry(idx, name);
}

/* ---- rows ---- */

#if !HAVE_COMPAT
/* One word of free_rows (from the search's start). */
static long take_free_row_word(__u32 i, void *data)
{
	struct free_search *s = data;
	__u32 w = (s->start + i) & (MAX_FILE_ROWS / 64 - 1);

	return take_free_bit(&free_rows[w], w, s);
}
#endif

/* A given-back row, or MAX_FILE_ROWS when none is free (starts where the last one was). */
static __always_inline __u32 take_free_row(void)
{
#if HAVE_COMPAT
	__u32 row;

	return bpf_map_pop_elem(&free_rows_queue, &row) ? MAX_FILE_ROWS : row;
#else
	static __u32 hint;
	struct free_search s = { .start = hint, .idx = MAX_FILE_ROWS };

	bpf_loop(MAX_FILE_ROWS / 64, take_free_row_word, &s, 0);
	if (s.idx < MAX_FILE_ROWS)
		hint = s.idx / 64;
	return s.idx;
#endif
}

/* Gives row back (a thread that lost the race for its entry's op). */
static __always_inline void free_row(__u32 row)
{
#if HAVE_COMPAT
	bpf_map_push_elem(&free_rows_queue, &row, 0);
#else
	ATOMIC_OR(&free_rows[(row / 64) & (MAX_FILE_ROWS / 64 - 1)], 1ULL << (row % 64));
#endif
}

/* A new row for op on entry idx; 0 when the table is full, else its index + 1. */
__noinline __u32 file_row_alloc(__u32 idx, __u32 op)
{
	struct file_stat *st = bpf_map_lookup_elem(&file_stats, &idx);
	__u32 row, old;
	struct file_row *r;

	if (!st)
		return 0;
	/* Fresh rows first, then the ones given back (as entries: new_entry). */
	row = nr_rows < MAX_FILE_ROWS ? TAKE_NEXT(&nr_rows) : MAX_FILE_ROWS;
	if (row >= MAX_FILE_ROWS)
		row = take_free_row();
	if (row >= MAX_FILE_ROWS) {
		__sync_fetch_and_add(&drops[DROP_FILE_ROWS], 1);
		return 0;
	}
	__sync_fetch_and_add(&rows_taken, 1);
	r = bpf_map_lookup_elem(&file_rows, &row);
	if (r)
		*r = zero_row;
	/*
	 * Another thread of the process may have made the row meanwhile: keep the first. The
	 * compat build's exchange returns all ones when its lock could not be had (a program
	 * nested on this CPU): the call is then lost, and counted so.
	 */
	old = CMPXCHG(&st->row[op & (FILE_OP_SLOTS - 1)], 0, row + 1);
	if (old) {
		free_row(row);
		__sync_fetch_and_add(&rows_taken, -1);
		if (old > MAX_FILE_ROWS) {
			__sync_fetch_and_add(&drops[DROP_FILE_ROWS], 1);
			return 0;
		}
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
#if HAVE_COMPAT
	struct files_struct *files = TASK_READ(task, files);
#else
	struct files_struct *files = UNTRUSTED(task_struct, task)->files;
#endif
	struct fdtable *fdt;
	void *slot;

	if (!files)
		return NULL;
	fdt = TASK_READ(files, fdt); /* compat: files is a number, read with probe reads */
	if (!fdt || fd >= TASK_READ(fdt, max_fds))
		return NULL;
	/*
	 * fdt->fd is an array of pointers, which a BTF walk cannot index: read the slot as the
	 * first member of a struct that starts with a struct file * (kiocb's ki_filp).
	 */
	slot = (void *)((__u64)TASK_READ(fdt, fd) + fd * sizeof(void *));
	return KREAD(UNTRUSTED(kiocb, slot), ki_filp);
}

/*
 * The ledger entry of fd for the current process, from the thread's small cache when the
 * fd still holds the same file and no rename happened since, else through file_index
 * (creating the entry). An open (opening) always takes the long way: the fd it returns may
 * hold a new file where the cache saw an old one, and its name is checked there. *idxp
 * gets its index.
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
	if (c->file == (__u64)file && c->ino == ino && c->igen == igen &&
	    c->names == names_epoch && !opening) {
		st = entry_at(c->idx, c->gen);
		if (st) {
			*idxp = c->idx;
			return st;
		}
	}
	/* Global functions take scalars only: copy the pointer's value out as a number. */
	bpf_probe_read_kernel(&file_addr, sizeof(file_addr), &file);
	c->names = names_epoch; /* before: a rename from now on is seen at the next call */
	idx = file_index_of_file(TASK_READ(task, tgid), file_addr);
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

/* ---- code a process loaded (docs/run-mode.md, "What the run worked on, what it loaded") ---- */

/*
 * Entry st is code its process loaded, by way how (enum load_bit). At the first executable
 * mapping, the reads made of it so far are the loader's (the ELF header and program
 * headers it reads before it maps the segments); later ones are the program's own data
 * (a linker reading a library as its input).
 */
static __always_inline void mark_loaded(struct file_stat *st, __u32 how)
{
	static const __u32 reads[] = { READ_FILE_OPS };
	__u64 calls = 0, bytes = 0;

	if (how == LOAD_MAPPED_EXEC && !(st->loaded & LOAD_MAPPED_EXEC)) {
		for (int i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
			__u32 row = st->row[reads[i] & (FILE_OP_SLOTS - 1)];
			struct file_row *r;

			if (!row)
				continue;
			row--;
			r = bpf_map_lookup_elem(&file_rows, &row);
			if (r) {
				calls += r->calls;
				bytes += r->transferred;
			}
		}
		st->load_read_calls = calls;
		st->load_read_bytes = bytes;
	}
	ATOMIC_OR(&st->loaded, how);
}
