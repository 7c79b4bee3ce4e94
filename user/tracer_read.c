// SPDX-License-Identifier: GPL-2.0
/*
 * Readers: the kernel's maps copied into the model's plain records. No arithmetic on what
 * they read (sums over CPUs and conversions are the model's: dense_add_counters,
 * model_derive_file); one walker for every hash map.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "tracer_impl.h"

/* Elements per bpf() call of the walker; a hash bucket longer than this makes it grow. */
#define WALK_BATCH 256

/* Returns true to stop the walk. */
typedef bool (*map_visit_fn)(const void *key, const void *value, void *ctx);

/* The fallback for kernels or maps without batch lookups: one key at a time. */
static int walk_by_key(int fd, uint32_t ksize, char *key, char *value, map_visit_fn visit,
		       void *ctx)
{
	char *next = malloc(ksize);
	void *prev = NULL;

	if (!next)
		return -ENOMEM;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, ksize);
		prev = key;
		if (!bpf_map_lookup_elem(fd, key, value) && visit(key, value, ctx))
			break;
	}
	free(next);
	return 0;
}

/* Doubles the walker's buffers (a hash bucket longer than the batch). */
static int grow_batch(char **keys, char **values, uint32_t *cap, uint32_t ksize, uint32_t vsize)
{
	char *k = realloc(*keys, (size_t)*cap * 2 * ksize), *v;

	if (!k)
		return -ENOMEM;
	*keys = k;
	v = realloc(*values, (size_t)*cap * 2 * vsize);
	if (!v)
		return -ENOMEM;
	*values = v;
	*cap *= 2;
	return 0;
}

/*
 * Calls visit on every element of a hash map, read WALK_BATCH at a time with
 * BPF_MAP_LOOKUP_BATCH (one syscall per batch instead of two per element). Elements added
 * or removed meanwhile may or may not be seen, as with any walk of a live map.
 */
static int map_walk(int fd, uint32_t ksize, uint32_t vsize, map_visit_fn visit, void *ctx)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t cap = WALK_BATCH;
	char *keys = malloc((size_t)cap * ksize), *values = malloc((size_t)cap * vsize);
	__u64 token_in = 0, token_out = 0; /* a hash map's batch token is a bucket number */
	bool first = true, stop = false;
	int err = keys && values ? 0 : -ENOMEM;

	while (!err && !stop) {
		__u32 count = cap;

		err = bpf_map_lookup_batch(fd, first ? NULL : &token_in, &token_out, keys, values,
					   &count, &opts);
		if (err == -ENOSPC) {
			err = grow_batch(&keys, &values, &cap, ksize, vsize);
			continue;
		}
		if (err && err != -ENOENT) {
			if (first) /* no batch lookups here */
				err = walk_by_key(fd, ksize, keys, values, visit, ctx);
			break;
		}
		for (uint32_t i = 0; i < count && !stop; i++)
			stop = visit(keys + (size_t)i * ksize, values + (size_t)i * vsize, ctx);
		if (err == -ENOENT) { /* that was the last batch */
			err = 0;
			break;
		}
		token_in = token_out;
		first = false;
	}
	free(keys);
	free(values);
	return err;
}

#define MAP_WALK(t, map, visit, ctx)                                                          \
	map_walk(bpf_map__fd((t)->skel->maps.map), bpf_map__key_size((t)->skel->maps.map),    \
		 bpf_map__value_size((t)->skel->maps.map), visit, ctx)

/* ---- syscall counters ---- */

void tracer_read_slot(struct tracer *t, uint32_t slot, struct dense_profile *d, bool take)
{
	for (uint32_t cpu = 0; cpu < t->ncpus; cpu++) {
		size_t base = (size_t)(cpu * t->nr_slots + slot);
		struct syscall_stat *sc = &t->sc[base * MAX_SYSCALLS];
		struct io_stat *io = &t->io[base * IO_KINDS];

		dense_add_counters(d, sc, io);
		if (!take)
			continue;
		memset(sc, 0, MAX_SYSCALLS * sizeof(*sc));
		memset(io, 0, IO_KINDS * sizeof(*io));
	}
}

/* ---- serve's labels ---- */

struct label_walk {
	tracer_label_fn fn;
	void *ctx;
};

static bool visit_label(const void *key, const void *value, void *ctx)
{
	struct label_walk *w = ctx;

	w->fn(key, *(const uint32_t *)value, w->ctx);
	return false;
}

int tracer_for_each_label(struct tracer *t, tracer_label_fn fn, void *ctx)
{
	struct label_walk w = { fn, ctx };

	return MAP_WALK(t, label_slots, visit_label, &w);
}

/* ---- block requests in flight ---- */

struct inflight_walk {
	inflight_visit_fn visit;
	void *ctx;
};

static bool visit_inflight(const void *key, const void *value, void *ctx)
{
	struct inflight_walk *w = ctx;

	return w->visit(value, w->ctx);
}

void tracer_for_each_inflight(struct tracer *t, inflight_visit_fn visit, void *ctx)
{
	struct inflight_walk w = { visit, ctx };

	MAP_WALK(t, block_inflight, visit_inflight, &w);
}

/* ---- page cache ---- */

/* "dir/sub/name" from the leaf-first dentry names the kernel side recorded. */
static char *join_path(const struct path_parts *pp)
{
	size_t len = 1;
	char *path;

	for (uint32_t i = 0; i < pp->nparts && i < PATH_PARTS; i++)
		len += strnlen(pp->part[i], PART_LEN) + 1;
	path = calloc(1, len);
	for (int i = (int)(pp->nparts < PATH_PARTS ? pp->nparts : PATH_PARTS) - 1; path && i >= 0;
	     i--) {
		strncat(path, pp->part[i], PART_LEN);
		if (i)
			strcat(path, "/");
	}
	return path;
}

/* The path recorded for a file entry ("dir/name" below its mount), or NULL. */
static char *recorded_path(struct tracer *t, const struct file_key *key)
{
	struct path_key pk = { .dev = key->dev, .ino = key->ino };
	struct path_parts pp;

	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.file_paths), &pk, &pp) ||
	    !pp.nparts || pp.truncated)
		return NULL;
	return join_path(&pp);
}

static int add_chunk(struct page_bits *bits, const struct chunk_bits *chunk)
{
	struct chunk_bits *grown = realloc(bits->chunks, (bits->n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	bits->chunks = grown;
	bits->chunks[bits->n++] = *chunk;
	return 0;
}

/* A record of entry i of file_stats, raw: counters, path, whether chunks were lost. */
static void file_record_of(struct tracer *t, struct file_record *r, const struct file_stat *st)
{
	memset(r, 0, sizeof(*r));
	r->st = *st;
	r->chunks_lost = t->skel->bss->drops[DROP_CHUNKS] != 0;
	r->path = recorded_path(t, &st->key);
}

struct chunk_walk {
	struct file_record *recs;
	uint32_t n;
	int err;
};

static bool visit_chunk(const void *key, const void *value, void *ctx)
{
	const struct chunk_key *k = key;
	struct chunk_walk *w = ctx;

	if (k->file < w->n && add_chunk(&w->recs[k->file].bits, value))
		w->err = -ENOMEM;
	return false;
}

int tracer_read_files(struct tracer *t, struct file_record **out, size_t *n)
{
	uint32_t count = t->skel->bss->nr_files;
	struct chunk_walk w;

	*out = NULL;
	*n = 0;
	if (count > MAX_FILES)
		count = MAX_FILES;
	w = (struct chunk_walk){ .recs = calloc(count ? count : 1, sizeof(*w.recs)), .n = count };
	if (!w.recs)
		return -1;
	for (uint32_t i = 0; i < count; i++)
		file_record_of(t, &w.recs[i], &t->files[i]);
	if (MAP_WALK(t, page_bits, visit_chunk, &w) || w.err) {
		for (uint32_t i = 0; i < count; i++) {
			free(w.recs[i].path);
			free(w.recs[i].bits.chunks);
		}
		free(w.recs);
		return -1;
	}
	*out = w.recs;
	*n = count;
	return 0;
}

/* Entry i's page-bitmap chunks, read into r and removed from the kernel. */
static void take_chunks(struct tracer *t, uint32_t i, struct file_record *r)
{
	int fd = bpf_map__fd(t->skel->maps.page_bits);

	for (__u64 c = 0; c < r->st.chunk_end; c++) {
		struct chunk_key ck = { .file = i, .chunk = c };
		struct chunk_bits bits;

		if (bpf_map_lookup_elem(fd, &ck, &bits))
			continue;
		if (add_chunk(&r->bits, &bits))
			r->chunks_lost = true;
		bpf_map_delete_elem(fd, &ck);
	}
}

/* The process is gone, so nothing writes entry i any more: give it back to the kernel. */
static void free_file_entry(struct tracer *t, uint32_t i)
{
	struct file_key key = t->files[i].key;

	bpf_map_delete_elem(bpf_map__fd(t->skel->maps.file_index), &key);
	memset(&t->files[i], 0, sizeof(t->files[i]));
	bpf_map_update_elem(bpf_map__fd(t->skel->maps.free_files), NULL, &i, BPF_ANY);
}

int tracer_take_files(struct tracer *t, uint32_t owner, struct file_record **out, size_t *n)
{
	uint32_t count = t->files ? t->skel->bss->nr_files : 0;
	struct file_record *recs = NULL, *grown;

	*out = NULL;
	*n = 0;
	if (!count || !owner)
		return 0;
	if (count > MAX_FILES)
		count = MAX_FILES;
	for (uint32_t i = 0; i < count; i++) {
		if (t->files[i].key.owner != owner)
			continue;
		grown = realloc(recs, (*n + 1) * sizeof(*recs));
		if (!grown)
			break; /* left in the kernel: collected at the end */
		recs = grown;
		file_record_of(t, &recs[*n], &t->files[i]);
		take_chunks(t, i, &recs[(*n)++]);
		free_file_entry(t, i);
	}
	*out = recs;
	return 0;
}

/* ---- block ---- */

struct block_walk {
	struct block_record *recs;
	size_t n;
};

static bool visit_block(const void *key, const void *value, void *ctx)
{
	struct block_walk *w = ctx;

	if (w->n == MAX_BLOCK_KEYS)
		return true;
	memset(&w->recs[w->n], 0, sizeof(w->recs[w->n]));
	w->recs[w->n].key = *(const struct block_key *)key;
	w->recs[w->n++].st = *(const struct block_stat *)value;
	return false;
}

static bool visit_charged(const struct block_rq_info *info, void *ctx)
{
	struct block_walk *w = ctx;
	struct block_record *r;

	if (info->charge == CHARGE_NONE || w->n == MAX_BLOCK_KEYS)
		return false;
	r = &w->recs[w->n++];
	memset(r, 0, sizeof(*r));
	r->key = (struct block_key){ .owner = info->tgid, .dev = info->dev, .op = info->op };
	r->st.requests = 1;
	r->st.bytes = info->bytes;
	return false;
}

int tracer_read_blocks(struct tracer *t, struct block_record **out, size_t *n)
{
	struct block_walk w = { .recs = calloc(MAX_BLOCK_KEYS, sizeof(*w.recs)) };

	*out = w.recs;
	*n = 0;
	if (!w.recs)
		return -1;
	MAP_WALK(t, block_stats, visit_block, &w);
	*n = w.n;
	return 0;
}

int tracer_read_charged_inflight(struct tracer *t, struct block_record **out, size_t *n)
{
	struct block_walk w = { .recs = calloc(MAX_BLOCK_KEYS, sizeof(*w.recs)) };

	*out = w.recs;
	*n = 0;
	if (!w.recs)
		return -1;
	tracer_for_each_inflight(t, visit_charged, &w);
	*n = w.n;
	return 0;
}
