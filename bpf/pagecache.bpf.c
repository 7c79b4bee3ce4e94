// SPDX-License-Identifier: GPL-2.0
/*
 * Part of bpf/iotrace.bpf.c, which builds every part into one object.
 *
 * Page cache and readahead per (traced process, file), from the readahead:* and filemap:*
 * tracepoints. All of them fire in the reading or faulting task itself, synchronously:
 *
 *   read:  [page_cache_sync_ra | page_cache_async_ra] -> page_cache_ra_order (the window)
 *          -> mm_filemap_add_to_page_cache per folio -> mm_filemap_get_pages (the request)
 *   fault: mm_filemap_fault -> [window] -> adds -> mm_filemap_map_pages (fault-around)
 *
 * so a small per-thread state links adds to the window that caused them and requests to the
 * adds that served them. Pages are counted as 1 << folio order (large folios on ext4).
 * Readahead pages and requested pages are kept in per-(process, file) bitmaps so that
 * "unused readahead" (brought in, never requested) is exact, not a resident-minus-read guess.
 */
#define PAGE_SHIFT 12
#define FMODE_RANDOM 0x1000
#define O_DIRECT 040000
/* Threads with page-cache state at once; tids equal modulo this share a slot (tag check). */
#define THREAD_STATES 4096

/*
 * Kernels before page_cache_ra_order (5.18) size a read's window (ondemand_readahead) and
 * the mmap fault's read-around and read them straight through page_cache_ra_unbounded:
 * there that hook opens those windows too (the loader sets it with that way, tracer_hooks.c).
 */
const volatile bool windows_in_unbounded = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MAX_CHUNKS);
	__type(key, struct chunk_key);
	__type(value, struct chunk_bits);
} page_bits SEC(".maps");

/* Per-thread links between events; see the header comment. */
struct thread_state {
	__u32 tid;
	__u32 pending;       /* RA_SYNC/RA_ASYNC + 1 announced, window not seen yet */
	void *mapping;       /* file of the pending/window/adds state */
	__u64 win_start, win_end;
	__u32 win_kind, win_active;
	__u64 fault_idx;
	void *fault_mapping;
	__u32 nadds, pad;
	void *adds_mapping;
	__u64 add_s[4], add_e[4]; /* pages added since the last request, [s, e) */
	__u8 add_ra[4];           /* ... and whether readahead added them */
	__u32 pad3;
	void *req_mapping;        /* previous request, to spot a read's continuation batches */
	__u64 req_idx, req_last;
	void *used_mapping;       /* range last marked used, skipped while add_gen is unchanged */
	__u64 used_lo, used_hi;
	__u32 used_gen, used_file;
	void *cached_inode; /* file_stat_of()'s last answer */
	__u64 cached_ino;
	__u32 cached_idx, cached_gen;
	__u32 cached_igen, pad4; /* the inode's generation: its address and number come back */
	__u32 dio_dev, dio_gen; /* the file of the O_DIRECT call in progress (block.bpf.c) */
	__u64 dio_ino;
	__u64 dio_iocb; /* ... and its kiocb */
	void *ondemand_mapping; /* before 5.18: ondemand_readahead's file, its window to come */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, THREAD_STATES);
	__type(key, __u32);
	__type(value, struct thread_state);
} thread_states SEC(".maps");

static const struct chunk_bits zero_bits;

/* The current task if its process is traced (and past its execve), else NULL. */
static __always_inline struct task_struct *traced_task(void *ctx)
{
	struct task_struct *task = hook_task(ctx);
	__u16 *entry = slot_entry(TASK_READ(task, tgid));

	if (!entry || !*entry || (*entry & SLOT_PENDING))
		return NULL;
	return task;
}

static __always_inline struct thread_state *thread_state(struct task_struct *task)
{
	__u32 key = TASK_READ(task, pid) & (THREAD_STATES - 1);
	struct thread_state *t = bpf_map_lookup_elem(&thread_states, &key);

	if (t && t->tid != TASK_READ(task, pid)) {
		/* Another thread's leftovers: start clean rather than link unrelated events. */
		__builtin_memset(t, 0, sizeof(*t));
		t->tid = TASK_READ(task, pid);
	}
	return t;
}

/*
 * tp_btf arguments are BTF pointers: plain dereferences compile to checked loads with CO-RE
 * offsets, with no helper call (BPF_CORE_READ would cost a bpf_probe_read_kernel each).
 */
static __always_inline bool regular_file(struct inode *inode)
{
	return inode && (inode->i_mode & S_IFMT) == S_IFREG;
}

static __always_inline __u64 last_page(struct inode *inode)
{
	__s64 size = inode->i_size;

	return size > 0 ? ((__u64)size - 1) >> PAGE_SHIFT : 0;
}

/* An inode as the ledger keys it, with its address (a thread's cache of its last file). */
struct inode_ids {
	__u64 addr, ino;
	__u32 dev, igen;
};

static __always_inline struct file_stat *file_stat_lookup(struct task_struct *task,
							  const struct inode_ids *id, __u32 *idxp)
{
	struct inode *inode = UNTRUSTED(inode, (void *)id->addr);
	__u32 igen, owner = TASK_READ(task, tgid);
	__u64 addr = 0;
	int idx;

	/* serve keeps files per label: the owner is the process's label slot. */
	if (serve) {
		__u16 *entry = slot_entry(TASK_READ(task, tgid));

		owner = entry ? *entry : 0;
	}
	/*
	 * The key's generation (names.bpf.c, file_key_of): reused_count, or on a filesystem
	 * without generations the count of the number's files (global functions take numbers:
	 * the inode's address copied out as one).
	 */
	igen = id->igen;
	if (igen || counted_fs(KREAD(inode, i_sb, s_magic)))
		bpf_probe_read_kernel(&addr, sizeof(addr), &id->addr);
	if (igen)
		igen += reused_count(addr, id->dev, id->ino, igen, KREAD(inode, __i_nlink)) *
			REUSE_STEP;
	else if (addr)
		igen = inode_instance(addr, id->dev, id->ino, KREAD(inode, __i_nlink));
	idx = file_index_of(owner, id->dev, id->ino, igen);

	if (idx < 0)
		return NULL;
	*idxp = idx;
	return bpf_map_lookup_elem(&file_stats, idxp);
}

static __always_inline struct inode *mapping_host(struct address_space *m)
{
	return m ? m->host : NULL;
}

/*
 * Counters of (current process, inode). A thread reads one file many times in a row, so
 * it remembers the last inode's index and skips the hash lookup.
 */
static __always_inline struct file_stat *file_stat_of_ids(struct task_struct *task,
							   struct thread_state *t,
							   const struct inode_ids *id, __u32 *idxp)
{
	if (t && (__u64)t->cached_inode == id->addr && t->cached_ino == id->ino &&
	    t->cached_igen == id->igen) {
		/* A recycled entry has another gen; a reused tid another owner. */
		struct file_stat *cached = entry_at(t->cached_idx, t->cached_gen);

		*idxp = t->cached_idx;
		if (cached && (serve || cached->key.owner == TASK_READ(task, tgid)))
			return cached;
	}
	struct file_stat *st = file_stat_lookup(task, id, idxp);

	if (!st)
		return NULL;
	st->epoch = ledger_epoch;
	if (t) {
		t->cached_inode = (void *)id->addr;
		t->cached_ino = id->ino;
		t->cached_igen = id->igen;
		t->cached_idx = *idxp;
		t->cached_gen = st->gen;
	}
	return st;
}

static __always_inline struct file_stat *file_stat_of(struct task_struct *task,
						      struct thread_state *t, struct inode *inode,
						      __u32 *idxp)
{
	struct inode_ids id = { .addr = (__u64)inode, .ino = inode->i_ino,
				.dev = inode->i_sb->s_dev, .igen = inode->i_generation };

	return file_stat_of_ids(task, t, &id, idxp);
}

/* ---- page bitmaps ---- */

enum { MARK_RA_ADD = 1, MARK_DEMAND_ADD, MARK_USED };

struct mark_ctx {
	__u32 file, pad;
	__u64 first, last; /* inclusive page range */
	/* What the operation does to each bit in range, as all-ones or zero masks. */
	__u64 set_ra, clear_ra, set_used, clear_used;
	struct chunk_bits *bits; /* the chunk being marked, pages [lo, hi] of it */
	__u64 lo, hi;
	__u32 w0, pad2; /* the word of lo */
};

/* Word w of the chunk being marked: its pages within [lo, hi] get op's bits. */
static __always_inline void mark_word_at(struct mark_ctx *c, __u32 w)
{
	struct chunk_bits *b = c->bits;
	__u64 wl = (__u64)w * 64, a, z, m;

	/* hi < 512 (mark_one_chunk) stops a w past the chunk; the mask is for the verifier. */
	if (!b || c->hi < wl || c->lo > wl + 63)
		return;
	w &= CHUNK_WORDS - 1;
	a = c->lo > wl ? c->lo - wl : 0;
	z = c->hi - wl > 63 ? 63 : c->hi - wl;
	m = (~0ULL >> (63 - (z - a))) << a;
	b->ra[w] = (b->ra[w] & ~(m & c->clear_ra)) | (m & c->set_ra);
	b->used[w] = (b->used[w] & ~(m & c->clear_used)) | (m & c->set_used);
}

/* bpf_loop's step i over the words of the range in a chunk: word w0 + i (mark_one_chunk). */
static long mark_word(__u32 i, void *data)
{
	struct mark_ctx *c = data;

	mark_word_at(c, c->w0 + i);
	return 0;
}

/* Keeps file_stats[file].chunk_end above every chunk made, so the loader can free them. */
static __always_inline void note_chunk(__u32 file, __u64 chunk)
{
	struct file_stat *st = bpf_map_lookup_elem(&file_stats, &file);

	for (int tries = 0; st && tries < 4; tries++) {
		__u64 end = st->chunk_end;

		if (end > chunk || CMPXCHG(&st->chunk_end, end, chunk + 1) == end)
			return;
	}
}

#if !HAVE_COMPAT
/*
 * The words of b that c's range covers get c's bits. Global: verified once, whichever map b
 * lies in (the entry's first chunk, or page_bits): inline, the verifier walks what follows
 * once for each (maps' values never merge), ~1,900 instructions more in each page cache
 * program. (Not in the compat build: 5.10's global functions take no pointers to memory.)
 */
__noinline int mark_chunk_words(struct chunk_bits *b, const struct mark_ctx *in)
{
	struct mark_ctx c;

	if (!b || !in)
		return 0;
	c = *in;
	c.bits = b;
	/*
	 * The words the range covers, not all eight: a fault or a fault-around (1 to 16 pages)
	 * lies in one, and each step of the loop is a call. A loop, not the words unrolled:
	 * the verifier checks one word's step.
	 */
	BPF_LOOP(c.hi / 64 - c.w0 + 1, mark_word, &c, CHUNK_WORDS);
	return 0;
}
#endif

/* Chunk i of the range: its bitmap (made if op sets bits), then its words in range. */
static __always_inline long mark_one_chunk(struct mark_ctx *c, __u32 i)
{
	struct chunk_key key = { .file = c->file, .chunk = (c->first >> CHUNK_SHIFT) + i };
	__u64 base = key.chunk << CHUNK_SHIFT, lo, hi;
	struct chunk_bits *b;

	if (base > c->last)
		return 1;
#if !HAVE_COMPAT
	if (!key.chunk) { /* the first chunk: in the entry itself (file_stat.chunk0) */
		struct file_stat *st = bpf_map_lookup_elem(&file_stats, &key.file);

		if (!st)
			return 1;
		barrier_var(st); /* no &st->chunk0 before the test: the verifier refuses it */
		b = &st->chunk0;
	} else
#endif
	if (!(b = bpf_map_lookup_elem(&page_bits, &key))) {
		/* An operation that only clears bits has nothing to do in a chunk never seen. */
		if (!c->set_ra && !c->set_used)
			return 0;
		b = lookup_or_init(&page_bits, &key, &zero_bits, DROP_CHUNKS, NULL);
		if (!b)
			return 1;
		note_chunk(c->file, key.chunk);
	}
	/*
	 * The range's bits in this chunk, by masks (bpf/masks.h): as branches, lo 0 and hi the
	 * last bit were constants kept in the loop's context, and the verifier walked the
	 * steps once per combination.
	 */
	lo = less_or_zero(c->first, base);
	hi = at_most(c->last - base, (1 << CHUNK_SHIFT) - 1);
	c->lo = lo;
	c->hi = hi;
	c->w0 = lo / 64;
#if HAVE_COMPAT
	c->bits = b;
	BPF_LOOP(hi / 64 - c->w0 + 1, mark_word, c, CHUNK_WORDS);
#else
	mark_chunk_words(b, c);
#endif
	return 0;
}

/* bpf_loop's step over the chunks of the range (mark_page_range). */
static long mark_chunk(__u32 i, void *data)
{
	return mark_one_chunk(data, i);
}

/* What op does to each bit of [first, last] of file. */
static __always_inline struct mark_ctx mark_ctx_of(__u32 file, __u64 first, __u64 last, __u32 op)
{
	struct mark_ctx c = {
		.file = file,
		.first = first,
		.last = last,
		.set_ra = op == MARK_RA_ADD ? ~0ULL : 0,
		.clear_ra = op == MARK_USED ? 0 : ~0ULL,
		.set_used = op == MARK_USED ? ~0ULL : 0,
		.clear_used = op == MARK_USED ? 0 : ~0ULL,
	};

	return c;
}

#if HAVE_COMPAT
/*
 * compat: chunk i of the range, a global function (verified once, with its words unrolled):
 * the range's unrolled chunks are then calls, not copies of it. Non-zero: stop.
 */
__noinline int mark_chunk_at(__u32 file, __u64 first, __u64 last, __u32 op, __u32 i)
{
	struct mark_ctx c = mark_ctx_of(file, first, last, op);

	return mark_one_chunk(&c, i);
}
#endif

/*
 * A global function is verified once, on its own, instead of at every call site: this
 * keeps the load time of the programs that mark pages in several places low.
 */
__noinline int mark_page_range(__u32 file, __u64 first, __u64 last, __u32 op)
{
#if HAVE_COMPAT
	/* at most COMPAT_MARK_CHUNKS chunks (256 MiB of 4 KiB pages) per range */
	for (__u32 i = 0; i < COMPAT_MARK_CHUNKS && first <= last &&
			  i <= (last >> CHUNK_SHIFT) - (first >> CHUNK_SHIFT); i++)
		if (mark_chunk_at(file, first, last, op, i))
			break;
#else
	struct mark_ctx c = mark_ctx_of(file, first, last, op);
	struct file_stat *st;

	if (last < first)
		return 0;
	/*
	 * A range within one word of the first chunk (a fault, most fault-arounds, a small
	 * read of a small file: most marks of a short process): its bits set here, without the
	 * two loops' helper and callback calls (each returns through the RET thunk, ~50 ns
	 * with AMD's SRSO mitigation).
	 */
	if (last < 64 * CHUNK_WORDS && first / 64 == last / 64) {
		st = bpf_map_lookup_elem(&file_stats, &file);
		if (!st)
			return 0;
		barrier_var(st); /* no &st->chunk0 before the test: the verifier refuses it */
		c.bits = &st->chunk0;
		c.lo = first;
		c.hi = last;
		mark_word_at(&c, first / 64);
		return 0;
	}
	bpf_loop((last >> CHUNK_SHIFT) - (first >> CHUNK_SHIFT) + 1, mark_chunk, &c, 0);
#endif
	return 0;
}

static __always_inline void mark_pages(__u32 file, __u64 first, __u64 last, __u32 op)
{
	mark_page_range(file, first, last, op);
}

/* Marks [first, last] used, unless this thread marked a covering range since the last add. */
static __always_inline void mark_used(struct thread_state *t, struct file_stat *st, __u32 file,
				      void *mapping, __u64 first, __u64 last)
{
	if (t->used_mapping == mapping && t->used_file == file && t->used_gen == st->add_gen &&
	    first >= t->used_lo && last <= t->used_hi)
		return;
	mark_pages(file, first, last, MARK_USED);
	t->used_mapping = mapping;
	t->used_file = file;
	t->used_gen = st->add_gen;
	t->used_lo = first;
	t->used_hi = last;
}

/* ---- readahead ---- */

/* fadvise leaves its trace on the file: FMODE_RANDOM, or ra_pages doubled by SEQUENTIAL. */
static __always_inline __u32 advice_of(struct inode *inode, struct file_ra_state *ra)
{
	struct file *f = (void *)ra - bpf_core_field_offset(struct file, f_ra);
	__u32 bdi_pages = BPF_CORE_READ(inode, i_sb, s_bdi, ra_pages);

	if (BPF_CORE_READ(f, f_inode) != inode)
		return 0;
	if (BPF_CORE_READ(f, f_mode) & FMODE_RANDOM)
		return ADVICE_RANDOM;
	if (bdi_pages && BPF_CORE_READ(ra, ra_pages) > bdi_pages)
		return ADVICE_SEQUENTIAL;
	return ADVICE_NORMAL;
}

static __always_inline void announce(void *ctx, struct inode *inode, struct file_ra_state *ra,
				     __u32 kind)
{
	struct task_struct *task = traced_task(ctx);
	struct thread_state *t;
	struct file_stat *st;
	__u32 idx;

	inode = UNTRUSTED(inode, inode);
	if (!task || !regular_file(inode) || !(t = thread_state(task)))
		return;
	t->pending = kind + 1;
	t->mapping = inode->i_mapping;
	t->win_active = 0;
	t->ondemand_mapping = NULL;
	st = file_stat_of(task, t, inode, &idx);
	if (st)
		st->advice |= advice_of(inode, ra);
}

SEC("tp_btf/page_cache_sync_ra")
int BPF_PROG(handle_page_cache_sync_ra, struct inode *inode, unsigned long index,
	     struct file_ra_state *ra, unsigned long req_count)
{
	announce(ctx, inode, ra, RA_SYNC);
	return 0;
}

SEC("tp_btf/page_cache_async_ra")
int BPF_PROG(handle_page_cache_async_ra, struct inode *inode, unsigned long index,
	     struct file_ra_state *ra, unsigned long req_count)
{
	announce(ctx, inode, ra, RA_ASYNC);
	return 0;
}

static __always_inline void open_window(struct task_struct *task, struct thread_state *t,
					struct inode *inode, __u64 start, __u64 pages, __u32 kind)
{
	__u64 end = start + pages, eof = last_page(inode) + 1;
	struct file_stat *st;
	__u32 idx;

	/* The window event is not clamped to the end of the file; the adds are. */
	if (end > eof)
		end = eof;
	t->mapping = inode->i_mapping;
	t->win_start = start;
	t->win_end = end;
	t->win_kind = kind;
	t->win_active = 1;
	t->pending = 0;
	st = file_stat_of(task, t, inode, &idx);
	/* Checked where it indexes: 6.1's verifier loses a bound kept across the call. */
	barrier_var(kind);
	if (!st || kind >= RA_KINDS)
		return;
	st->ra_windows[kind]++;
	st->ra_window_pages[kind] += end > start ? end - start : 0;
	st->window_hist[log2_bucket(end > start ? end - start : 0)]++;
}

/* A readahead window of pages from index (page_cache_ra_order). */
static __always_inline void ra_order(void *ctx, struct inode *inode, __u64 index, __u64 pages)
{
	struct task_struct *task = traced_task(ctx);
	struct thread_state *t;
	__u32 kind;

	inode = UNTRUSTED(inode, inode);
	if (!task || !regular_file(inode) || !(t = thread_state(task)))
		return;
	/* No sync/async announcement: the mmap fault path's read-around. */
	kind = t->pending && t->mapping == inode->i_mapping ? t->pending - 1 : RA_MMAP;
	open_window(task, t, inode, index, pages, kind);
}

SEC("tp_btf/page_cache_ra_order")
int BPF_PROG(handle_page_cache_ra_order, struct inode *inode, unsigned long index,
	     struct file_ra_state *ra)
{
	ra_order(ctx, inode, index, ra->size);
	return 0;
}

/*
 * Pages read ahead without the window logic, or order-0 pages of a window (fallback); before
 * page_cache_ra_order, also the window logic's own windows (windows_in_unbounded): those
 * have a lookahead, a forced window none.
 */
static __always_inline void ra_unbounded(void *ctx, struct inode *inode, __u64 index,
					 __u64 nr_to_read, __u64 lookahead)
{
	struct task_struct *task = traced_task(ctx);
	struct thread_state *t;
	struct file_stat *st;
	void *mapping;
	__u32 idx;

	inode = UNTRUSTED(inode, inode);
	mapping = inode->i_mapping;
	if (!task || !regular_file(inode) || !(t = thread_state(task)))
		return;
	if (t->win_active && t->mapping == mapping && index >= t->win_start &&
	    index < t->win_end) {
		/* page_cache_ra_order() fell back to order-0 pages: the same window again. */
		st = file_stat_of(task, t, inode, &idx);
		if (st)
			st->ra_fallbacks++;
		return;
	}
	if (windows_in_unbounded && lookahead) {
		/* As page_cache_ra_order's, and its fallback to here on a filesystem of pages. */
		open_window(task, t, inode, index, nr_to_read,
			    t->ondemand_mapping == mapping && t->pending ? t->pending - 1 : RA_MMAP);
		t->ondemand_mapping = NULL;
		st = file_stat_of(task, t, inode, &idx);
		if (st)
			st->ra_fallbacks++;
		return;
	}
	open_window(task, t, inode, index, nr_to_read,
		    t->pending == RA_SYNC + 1 && t->mapping == mapping ? RA_FORCED_SYNC : RA_FORCED);
}

SEC("tp_btf/page_cache_ra_unbounded")
int BPF_PROG(handle_page_cache_ra_unbounded, struct inode *inode, unsigned long index,
	     unsigned long nr_to_read, unsigned long lookahead_size)
{
	ra_unbounded(ctx, inode, index, nr_to_read, lookahead_size);
	return 0;
}

/* ---- insertion and requests ---- */

/*
 * struct folio's first word and its order, per field (libbpf-tools' core_fixes.bpf.h way):
 * flags is a plain word in older kernels and a struct of one word (memdesc_flags_t) in
 * newer ones; the order is a byte of its own (_folio_order) in older kernels and the low
 * byte of _flags_1 in newer ones. The two changed at different times, so each is asked on
 * its own: a kernel with one change and not the other takes the right branch of each.
 */
struct folio___flags_word {
	unsigned long flags;
} __attribute__((preserve_access_index));

struct folio___flags_struct {
	struct {
		unsigned long f;
	} flags;
} __attribute__((preserve_access_index));

struct folio___order_byte {
	unsigned char _folio_order;
} __attribute__((preserve_access_index));

static __always_inline __u64 folio_flags(struct folio *folio)
{
	struct folio___flags_struct *wrapped = (void *)folio;

	if (bpf_core_field_exists(wrapped->flags.f))
		return wrapped->flags.f;
	return ((struct folio___flags_word *)folio)->flags;
}

/* 5.16-6.0's folio had neither: the order is the first tail page's compound_order. */
struct page___compound_order {
	unsigned char compound_order;
} __attribute__((preserve_access_index));

static __always_inline __u32 folio_order(struct folio *folio)
{
	__u64 head = 1UL << bpf_core_enum_value(enum pageflags, PG_head);
	struct page___compound_order *tail;

	if (!(folio_flags(folio) & head))
		return 0;
	if (bpf_core_field_exists(((struct folio___order_byte *)folio)->_folio_order))
		return ((struct folio___order_byte *)folio)->_folio_order;
	if (bpf_core_field_exists(folio->_flags_1))
		return folio->_flags_1 & 0xff;
	tail = (void *)((char *)folio + bpf_core_type_size(struct page));
	if (bpf_core_field_exists(tail->compound_order))
		return BPF_CORE_READ(tail, compound_order);
	return 0;
}

/* pages from first were added to mapping's page cache (one folio, or before folios a page) */
static __always_inline void pages_added(struct task_struct *task, struct address_space *mapping,
					__u64 first, __u64 pages)
{
	struct inode *host = mapping_host(mapping);
	struct thread_state *t;
	struct file_stat *st;
	__u64 end = first + pages;
	__u32 idx, n;
	bool ra;

	if (!task || !regular_file(host) || !(t = thread_state(task)))
		return;
	st = file_stat_of(task, t, host, &idx);
	if (!st)
		return;
	ra = t->win_active && t->mapping == mapping && first >= t->win_start &&
	     first < t->win_end;
	__sync_fetch_and_add(&st->added_pages, pages);
	if (trace)
		trace_count_task(task, TC_PAGES_ADDED, pages);
	__sync_fetch_and_add(&st->added_folios, 1);
	__sync_fetch_and_add(&st->add_gen, 1);
	if (ra)
		__sync_fetch_and_add(&st->ra_pages, pages);
	mark_pages(idx, first, end - 1, ra ? MARK_RA_ADD : MARK_DEMAND_ADD);
	/* The page a fault asked for is used even though its add comes after the fault. */
	if (t->fault_mapping == mapping && t->fault_idx >= first && t->fault_idx < end)
		mark_pages(idx, t->fault_idx, t->fault_idx, MARK_USED);
	/* Remember what this thread added since its last request, for the miss count. */
	if (t->adds_mapping != mapping) {
		t->nadds = 0;
		t->adds_mapping = mapping;
	}
	n = t->nadds;
	if (n && n <= 4 && t->add_e[(n - 1) & 3] == first && t->add_ra[(n - 1) & 3] == ra) {
		t->add_e[(n - 1) & 3] = end;
	} else if (n < 4) {
		t->add_s[n & 3] = first;
		t->add_e[n & 3] = end;
		t->add_ra[n & 3] = ra;
		t->nadds = n + 1;
	} else if (end > t->add_e[3]) {
		t->add_e[3] = end; /* more than 4 runs: widen the last (never seen in a read) */
	}
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(handle_mm_filemap_add_to_page_cache, struct folio *folio)
{
	struct task_struct *task = traced_task(ctx);

	if (!task)
		return 0;
	folio = UNTRUSTED(folio, folio);
	pages_added(task, folio->mapping, folio->index, 1ULL << (folio_order(folio) & 31));
	return 0;
}

/*
 * The first page of the read call the current thread is in, when it is a read, pread64,
 * readv, preadv or preadv2 of mapping's file; else index. filemap_get_pages hands a read
 * a partial batch without its tracepoint when the batch's last folio is not ready yet (its
 * readahead still in flight): when that is a read call's first batch, the call's first
 * traced request starts past the pages it already returned. read and readv work on a
 * copy of the file's position, written back when the call returns: during the call,
 * f_pos is where it began. Not in io_uring's threads: they are in no syscall, and their
 * registers are zeroes (on x86-64, read's number and fd 0).
 */
static __always_inline __u64 read_start_page(struct task_struct *task,
					     struct address_space *mapping, __u64 index)
{
	struct pt_regs *regs = task_syscall_regs(task);
	struct file *file;
	__u64 nr, pos;
	__u32 op;

	if (!regs || (TASK_READ(task, flags) & (PF_IO_WORKER | PF_KTHREAD)))
		return index;
	nr = SC_NR(regs);
	op = nr < MAX_SYSCALLS ? file_op_of[syscall_index(nr)] : FOP_NONE;
	if (op != FOP_read && op != FOP_readv && op != FOP_pread64 && op != FOP_preadv &&
	    op != FOP_preadv2)
		return index;
	file = fd_file(task, SC_ARG1(regs));
	if (!file || KREAD(file, f_mapping) != mapping)
		return index;
	pos = SC_ARG4(regs); /* pread64's offset, preadv's and preadv2's low word */
	if (op == FOP_read || op == FOP_readv || (op == FOP_preadv2 && (__s64)pos == -1))
		pos = KREAD(file, f_pos);
	pos >>= PAGE_SHIFT;
	return pos < index ? pos : index;
}

/* A read's request for pages [index, last_index] (the end not clamped to the file's). */
static __always_inline void get_pages(void *ctx, struct address_space *mapping, __u64 index,
				      __u64 last_index)
{
	struct task_struct *task = traced_task(ctx);
	struct inode *host = mapping_host(UNTRUSTED(address_space, mapping));
	struct thread_state *t;
	struct file_stat *st;
	__u64 last, miss = 0, ra_miss = 0, o, early = 0, first;
	__u32 idx;
	bool continuation;

	if (!task || !regular_file(host) || !(t = thread_state(task)))
		return;
	st = file_stat_of(task, t, host, &idx);
	if (!st)
		return;
	/* The request is not clamped to the end of the file. */
	last = last_index;
	if (last > last_page(host))
		last = last_page(host);
	st->i_size = host->i_size;
	/* One read fetches its folios in batches, each ending the same way. */
	continuation = t->req_mapping == mapping && t->req_last == last_index &&
		       index > t->req_idx;
	/* A read call's first request: from where the call began (read_start_page). */
	first = continuation ? index : read_start_page(task, mapping, index);
	if (!continuation && first <= last)
		__sync_fetch_and_add(&st->requested_pages, last - first + 1);
	/* No adds since the last request (a cached file read on): nothing to add, atomically. */
	if (t->adds_mapping == mapping && t->nadds) {
		for (int i = 0; i < 4; i++) {
			if (i >= t->nadds)
				break;
			/* Masks, not branches (bpf/masks.h): each run's tests split the walk. */
			o = pages_within(t->add_s[i], t->add_e[i], first, last);
			miss += o;
			ra_miss += o & -(__u64)(t->add_ra[i] & 1); /* add_ra: 0 or 1 */
		}
		/*
		 * Where the call's start is not known (a copy, io_uring, a compat kernel): pages
		 * added just before index, in the first run of adds, reaching it: an earlier call
		 * of this read returned them without the tracepoint (filemap_get_pages' error path
		 * hands back a partial batch when its last folio is not ready, e.g. under load).
		 * The read asked for them: count them with this request. (Outside the loop:
		 * inside, the verifier would walk every combination of runs.)
		 */
		if (!continuation && first == index && t->nadds && t->add_s[0] < index &&
		    t->add_e[0] >= index) {
			early = index - t->add_s[0];
			miss += early;
			if (t->add_ra[0])
				ra_miss += early;
			__sync_fetch_and_add(&st->requested_pages, early);
		}
		__sync_fetch_and_add(&st->miss_pages, miss);
		__sync_fetch_and_add(&st->ra_requested_pages, ra_miss);
	}
	t->req_mapping = mapping;
	t->req_idx = index;
	t->req_last = last_index;
	t->nadds = 0;
	t->win_active = 0;
	t->pending = 0;
	t->fault_mapping = NULL;
	t->ondemand_mapping = NULL;
	if (first <= last)
		mark_used(t, st, idx, mapping, first - early, last);
}

SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(handle_mm_filemap_get_pages, struct address_space *mapping, unsigned long index,
	     unsigned long last_index)
{
	get_pages(ctx, mapping, index, last_index);
	return 0;
}

/* A page fault on page index of the file that reached the page cache. */
static __always_inline void filemap_fault(void *ctx, struct address_space *mapping, __u64 index)
{
	struct task_struct *task = traced_task(ctx);
	struct inode *host = mapping_host(UNTRUSTED(address_space, mapping));
	struct thread_state *t;
	struct file_stat *st;
	__u32 idx;

	if (!task || !regular_file(host) || !(t = thread_state(task)))
		return;
	st = file_stat_of(task, t, host, &idx);
	if (!st)
		return;
	__sync_fetch_and_add(&st->faults, 1);
	st->i_size = host->i_size;
	t->win_active = 0;
	t->pending = 0;
	t->nadds = 0;
	t->fault_mapping = mapping;
	t->fault_idx = index;
	mark_pages(idx, index, index, MARK_USED);
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(handle_mm_filemap_fault, struct address_space *mapping, unsigned long index)
{
	filemap_fault(ctx, mapping, index);
	return 0;
}

/* Pages [start, end] offered to fault-around. */
static __always_inline void map_pages(void *ctx, struct address_space *mapping, __u64 start,
				      __u64 end)
{
	struct task_struct *task = traced_task(ctx);
	struct inode *host = mapping_host(UNTRUSTED(address_space, mapping));
	struct file_stat *st;
	__u64 last;
	__u32 idx;

	if (!task || !regular_file(host))
		return;
	/* The thread's state only as file_stat_of's cache: ~50 fault-arounds per exec. */
	st = file_stat_of(task, thread_state(task), host, &idx);
	if (!st)
		return;
	last = end > last_page(host) ? last_page(host) : end;
	if (start > last)
		return;
	/* The fault-around candidates: some may not be mapped, so "used" over-approximates. */
	__sync_fetch_and_add(&st->map_pages, last - start + 1);
	mark_pages(idx, start, last, MARK_USED);
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(handle_mm_filemap_map_pages, struct address_space *mapping, unsigned long start,
	     unsigned long end)
{
	map_pages(ctx, mapping, start, end);
	return 0;
}

/* ---- O_DIRECT (iomap filesystems: ext4, xfs, btrfs) ---- */

/*
 * An O_DIRECT call of bytes on a regular file starts. Its file comes as plain values: a
 * kprobe (bpf/fallbacks.bpf.c) has no BTF pointers to walk.
 */
static __always_inline void dio_begin(void *ctx, const struct inode_ids *id, __s64 i_size,
				      __u64 bytes, bool write, void *iocb)
{
	struct task_struct *task = traced_task(ctx);
	struct thread_state *t;
	struct file_stat *st;
	__u32 idx;

	if (!task)
		return;
	t = thread_state(task);
	st = file_stat_of_ids(task, t, id, &idx);
	if (!st)
		return;
	if (t) {
		/* Its block requests follow in this thread (block.bpf.c, direct_io_file). */
		t->dio_dev = id->dev;
		t->dio_ino = id->ino;
		t->dio_gen = id->igen;
		t->dio_iocb = (__u64)iocb;
	}
	st->advice |= ADVICE_DIRECT;
	st->i_size = i_size;
	if (write) {
		__sync_fetch_and_add(&st->direct_writes, 1);
		__sync_fetch_and_add(&st->direct_write_bytes, bytes);
	} else {
		__sync_fetch_and_add(&st->direct_reads, 1);
		__sync_fetch_and_add(&st->direct_read_bytes, bytes);
	}
}

SEC("tp_btf/iomap_dio_rw_begin")
int BPF_PROG(handle_iomap_dio_rw_begin, struct kiocb *iocb, struct iov_iter *iter,
	     unsigned int dio_flags, size_t done_before)
{
	struct inode *inode = UNTRUSTED(kiocb, iocb)->ki_filp->f_inode;
	struct inode_ids id;

	if (!regular_file(inode))
		return 0;
	id = (struct inode_ids){ .addr = (__u64)inode, .ino = inode->i_ino,
				 .dev = inode->i_sb->s_dev, .igen = inode->i_generation };
	/* data_source: the iterator supplies data, i.e. a write. */
	dio_begin(ctx, &id, inode->i_size, iter->count, iter->data_source, iocb);
	return 0;
}

/*
 * The O_DIRECT call iocb (NULL: whichever) has submitted its requests: later ones of this
 * thread are not its.
 */
static __always_inline void direct_io_done(void *iocb)
{
	struct task_struct *task = current_task();
	__u32 key = TASK_READ(task, pid) & (THREAD_STATES - 1);
	struct thread_state *t = bpf_map_lookup_elem(&thread_states, &key);

	if (t && t->tid == TASK_READ(task, pid) && (!iocb || t->dio_iocb == (__u64)iocb))
		t->dio_ino = 0;
}

/*
 * A synchronous O_DIRECT call ends (in its thread), or an asynchronous one completes: that
 * can be in an interrupt on whichever thread's CPU (iomap_dio_bio_end_io completes reads
 * inline), between another call's start and its request in that thread; only the call's
 * own end clears it (else that request had no file: fio's file rows were short by one in
 * a few runs of 40,000 random reads).
 */
SEC("tp_btf/iomap_dio_complete")
int BPF_PROG(handle_iomap_dio_complete, struct kiocb *iocb, int error, ssize_t ret)
{
	direct_io_done(iocb);
	return 0;
}

SEC("tp_btf/iomap_dio_rw_queued")
int BPF_PROG(handle_iomap_dio_rw_queued, struct inode *inode, loff_t offset, u64 length)
{
	direct_io_done(NULL);
	return 0;
}

/* ---- the program an exec mapped (docs/run-mode.md, "What the run worked on ...") ---- */

/* A file the kernel opened for an exec: its inode's and its own address, as numbers. */
struct exec_file {
	__u64 inode, file;
};

/* The file of the mapping that holds an address (bpf_find_vma's callback). */
static long vma_file_of(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct exec_file *x = data;
	struct file *file = vma->vm_file;
	struct inode *inode = file ? file->f_inode : NULL;

	/* Global functions take numbers only: the pointers' values copied out as such. */
	bpf_probe_read_kernel(&x->inode, sizeof(x->inode), &inode);
	bpf_probe_read_kernel(&x->file, sizeof(x->file), &file);
	return 0;
}

/* The ledger entry of (current process, the inode at inode_addr): code it loaded at exec. */
static __always_inline void mark_exec_inode(struct task_struct *task, __u64 inode_addr)
{
	struct inode *inode = UNTRUSTED(inode, (void *)inode_addr);
	struct inode_ids id = { .addr = inode_addr, .ino = KREAD(inode, i_ino),
				.dev = KREAD(inode, i_sb, s_dev),
				.igen = KREAD(inode, i_generation) };
	struct file_stat *st;
	__u32 idx;

	if ((KREAD(inode, i_mode) & S_IFMT) != S_IFREG)
		return;
	st = file_stat_lookup(task, &id, &idx);
	if (st)
		mark_loaded(st, LOAD_EXECED);
}

/*
 * A file the exec opened, named from the file itself (the path it was opened by): a name
 * found later from its inode alone could be any of its hard links (perf's build-id cache
 * keeps one of every program it profiled, git's commands are one file), and the name
 * matters most here, for the program a process ran.
 */
static __always_inline void name_exec_file(const struct exec_file *x)
{
	struct path_key pk;

	file_key_of(UNTRUSTED(inode, (void *)x->inode), UNTRUSTED(file, (void *)x->file), &pk);
	record_name(path_key_word(&pk), pk.ino, x->inode, x->file, NAME_OWN);
}

/*
 * An execve completed in the current task: the kernel itself mapped the program (exe: its
 * file) and its ELF interpreter (the dynamic loader), with no syscall to see. The new image
 * starts at the interpreter's entry point (the program's, when it has none), so the
 * mapping that holds the task's instruction pointer names it. The entries are made as the
 * page cache's are, by inode; their names are sent from the files the exec opened. Global:
 * verified once, run once per exec.
 */
__noinline int note_exec_files(__u64 exe_inode, __u64 exe_file)
{
	struct task_struct *task = current_task();
	struct pt_regs *regs = TASK_PT_REGS(task);
	struct exec_file exe = { exe_inode, exe_file }, interp = {};

	/* only run mode's report tells loaded code apart */
	if (serve || top || !exe_inode || !exe_file)
		return 0;
	mark_exec_inode(task, exe.inode);
	name_exec_file(&exe);
	if (regs)
		FIND_VMA(task, USER_PC(regs), vma_file_of, &interp);
	if (interp.inode && interp.file && interp.inode != exe.inode) {
		mark_exec_inode(task, interp.inode);
		name_exec_file(&interp);
	}
	return 0;
}
