// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer's handle (struct tracer, tracer_impl.h) and what every part of the libbpf layer
 * shares: an array map mmapped, the one hash-map walker (batch lookups), the walk of the
 * in-flight table, slots, drops, the event ring. The loading (tracer_load.c) and the parts
 * (tracer_hooks.c, tracer_read.c, tracer_files.c, tracer_trace.c, tracer_stacks.c) stand on
 * this file; it calls none of them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "tracer_impl.h"
#include "util/vec.h"

void *map_mmap(struct bpf_map *map, size_t *len)
{
	size_t page = sysconf(_SC_PAGESIZE);
	size_t bytes = (size_t)bpf_map__value_size(map) * bpf_map__max_entries(map);
	void *p;

	*len = (bytes + page - 1) / page * page;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	return p == MAP_FAILED ? NULL : p;
}

void map_munmap(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

/* ---- the map walker ---- */

/* Elements per bpf() call of the walker; a hash bucket longer than this makes it grow. */
#define WALK_BATCH 256

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
	size_t kcap = *cap, vcap = *cap;

	if (vec_reserve(keys, &kcap, (size_t)*cap * 2, ksize) ||
	    vec_reserve(values, &vcap, (size_t)*cap * 2, vsize))
		return -ENOMEM;
	*cap *= 2;
	return 0;
}

int map_take(int fd, const void *key, void *value)
{
	if (!bpf_map_lookup_and_delete_elem(fd, key, value))
		return 0;
	if (errno != EINVAL && errno != EOPNOTSUPP && errno != 524 /* ENOTSUPP */)
		return -1;
	if (bpf_map_lookup_elem(fd, key, value))
		return -1;
	bpf_map_delete_elem(fd, key);
	return 0;
}

/*
 * Calls visit on every element of a hash map, read WALK_BATCH at a time with
 * BPF_MAP_LOOKUP_BATCH (one syscall per batch instead of two per element). Elements added
 * or removed meanwhile may or may not be seen, as with any walk of a live map.
 */
int map_walk(int fd, uint32_t ksize, uint32_t vsize, map_visit_fn visit, void *ctx)
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

uint64_t tracer_sweep_blocks(struct tracer *t)
{
	struct bpf_link **slot = tracer_link_slot(t, tracer_prog(t, t->skel->progs.sweep_block_inflight));
	struct bpf_link *link = slot ? *slot : NULL;
	char buf[256];
	uint64_t swept = 0;
	ssize_t n;
	int fd;

	if (!link)
		return 0;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		swept += n > 0 ? (uint64_t)n : 0;
	close(fd);
	return swept;
}

static bool is_charged(const struct block_rq_info *info, void *found)
{
	*(bool *)found = info->charge != CHARGE_NONE;
	return *(bool *)found;
}

void tracer_wait_block_idle(struct tracer *t, int max_ms)
{
	bool found = true;

	for (int ms = 0; ms < max_ms && found; ms++) {
		found = false;
		tracer_sweep_blocks(t);
		tracer_for_each_inflight(t, is_charged, &found);
		if (found)
			usleep(1000);
	}
}

struct stale_count {
	uint64_t before_ns, count;
	uint32_t dev, tgid; /* snoop's filters: a request it would not show is not lost */
	bool filtered;      /* ... and its cgroup filters (info->cgroup: inside them) */
};

static bool count_stale(const struct block_rq_info *info, void *ctx)
{
	struct stale_count *c = ctx;

	c->count += info->start_ns < c->before_ns && (!c->dev || info->dev == c->dev) &&
		    (!c->tgid || info->tgid == c->tgid) && (!c->filtered || info->cgroup);
	return false;
}

uint64_t tracer_count_stale_block(struct tracer *t, uint64_t now_ns, uint64_t age_ns)
{
	struct stale_count c = { .before_ns = now_ns - age_ns,
				 .dev = t->skel->rodata->snoop_dev,
				 .tgid = t->skel->rodata->snoop_tgid,
				 .filtered = t->skel->rodata->nr_cgroup_filters > 0 };

	tracer_for_each_inflight(t, count_stale, &c);
	return c.count;
}

/* ---- the handle: limits, hooks, slots ---- */

void tracer_exclude(struct tracer *t, pid_t tgid)
{
	if ((uint32_t)tgid < t->pid_max)
		t->proc_slot[tgid] = SLOT_NONE;
}

bool tracer_timing(const struct tracer *t)
{
	return t->skel->rodata->timing;
}

bool tracer_sampled(const struct tracer *t)
{
	return t->skel->rodata->sample_period != 0;
}

uint32_t tracer_nr_slots(const struct tracer *t)
{
	return t->nr_slots;
}

const char *tracer_hooks_missing(const struct tracer *t, enum tracer_hooks group)
{
	return group < TRACER_HOOK_GROUPS ? t->missing[group] : NULL;
}

uint32_t tracer_claim_slot(struct tracer *t)
{
	for (uint32_t w = 0; w < MAX_SLOTS / 64; w++) {
		__u64 *word = &t->skel->bss->slot_used[w];
		__u64 used = __atomic_load_n(word, __ATOMIC_RELAXED);

		while (used != ~0ULL) {
			__u64 bit = ~used & (used + 1);

			used = __atomic_fetch_or(word, bit, __ATOMIC_SEQ_CST);
			if (!(used & bit))
				return w * 64 + __builtin_ctzll(bit);
		}
	}
	return 0;
}

uint32_t tracer_slot_of(const struct tracer *t, pid_t tgid)
{
	if (tgid <= 0 || (uint32_t)tgid >= t->pid_max)
		return 0;
	return __atomic_load_n(&t->proc_slot[tgid], __ATOMIC_RELAXED);
}

int tracer_watch(struct tracer *t, pid_t tgid, uint32_t slot, bool pending)
{
	if (tgid <= 0 || (uint32_t)tgid >= t->pid_max)
		return -1;
	__atomic_store_n(&t->proc_slot[tgid], (uint16_t)(slot | (pending ? SLOT_PENDING : 0)),
			 __ATOMIC_SEQ_CST);
	return 0;
}

void tracer_release_slot(struct tracer *t, uint32_t slot)
{
	if (slot <= OVERFLOW_SLOT || slot >= t->nr_slots)
		return;
	/* Its row says "no process" before the kernel can give the slot to another. */
	if (t->slot_rows) {
		t->slot_rows[slot].args_len = 0;
		__atomic_store_n(&t->slot_rows[slot].state, SP_FREE, __ATOMIC_SEQ_CST);
	}
	__atomic_fetch_and(&t->skel->bss->slot_used[slot / 64], ~(1ULL << (slot % 64)),
			   __ATOMIC_SEQ_CST);
}

int tracer_start_slot(struct tracer *t, uint32_t slot, const struct slot_proc *row)
{
	struct slot_proc *to;

	if (!t->slot_rows || slot <= OVERFLOW_SLOT || slot >= t->nr_slots)
		return -1;
	/* Written before the process is watched: no program writes the row meanwhile. */
	to = &t->slot_rows[slot];
	memcpy((char *)to + sizeof(to->seq) + sizeof(to->state),
	       (const char *)row + sizeof(row->seq) + sizeof(row->state),
	       sizeof(*row) - sizeof(row->seq) - sizeof(row->state));
	__atomic_store_n(&to->state, SP_LIVE, __ATOMIC_SEQ_CST);
	return 0;
}

/*
 * A row is read between two even values of its seqcount (bpf/proc.bpf.c). A program writes
 * it in a few hundred instructions, but an interrupt, or the hypervisor stopping the vCPU,
 * may hold it odd much longer: then the row is not read at all (-EAGAIN, read it later),
 * never taken half written.
 */
int tracer_read_slot_proc(struct tracer *t, uint32_t slot, struct slot_proc *out)
{
	const struct slot_proc *row;

	if (!t->slot_rows || slot <= OVERFLOW_SLOT || slot >= t->nr_slots)
		return -1;
	row = &t->slot_rows[slot];
	for (int tries = 0; tries < 1000; tries++) {
		uint32_t seq = __atomic_load_n(&row->seq, __ATOMIC_ACQUIRE);

		if (seq & 1)
			continue;
		memcpy(out, row, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&row->seq, __ATOMIC_RELAXED) != seq)
			continue;
		out->comm[COMM_LEN - 1] = '\0';
		if (out->args_len > ARGS_LEN)
			out->args_len = ARGS_LEN;
		return out->state == SP_LIVE || out->state == SP_EXITED ? 0 : -1;
	}
	return -EAGAIN;
}

void tracer_for_each_used_slot(struct tracer *t, tracer_slot_fn fn, void *ctx)
{
	for (uint32_t w = 0; w < (t->nr_slots + 63) / 64; w++) {
		uint64_t used = __atomic_load_n(&t->skel->bss->slot_used[w], __ATOMIC_SEQ_CST);

		for (; used; used &= used - 1) {
			uint32_t slot = w * 64 + __builtin_ctzll(used);

			if (slot > OVERFLOW_SLOT && slot < t->nr_slots)
				fn(slot, ctx);
		}
	}
}

bool tracer_slot_in_use(struct tracer *t, uint32_t slot)
{
	uint64_t word = __atomic_load_n(&t->skel->bss->slot_used[slot / 64], __ATOMIC_SEQ_CST);

	return slot > OVERFLOW_SLOT && slot < t->nr_slots && (word >> (slot % 64)) & 1;
}

/* ---- drops and events ---- */

uint64_t tracer_notices_lost(struct tracer *t)
{
	return __atomic_load_n(&t->skel->bss->drops[DROP_RINGBUF], __ATOMIC_SEQ_CST);
}

void tracer_read_drops(struct tracer *t, uint64_t drops[DROP_COUNTERS])
{
	struct bpf_program *prog;

	for (int i = 0; i < DROP_COUNTERS; i++)
		drops[i] = __atomic_load_n(&t->skel->bss->drops[i], __ATOMIC_SEQ_CST);
	/* The kernel counts the runs it skipped itself, per program (bpftool prog show). */
	drops[DROP_NESTED] = 0;
	for (int i = 0; i < t->skel->skeleton->prog_cnt; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd;

		prog = tracer_prog(t, *t->skel->skeleton->progs[i].prog);
		fd = bpf_program__fd(prog);
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			drops[DROP_NESTED] += info.recursion_misses;
	}
}

int tracer_events_fd(struct tracer *t)
{
	return ring_buffer__epoll_fd(t->events);
}

int tracer_poll_events(struct tracer *t)
{
	int n;

	/* Each round reads one record at least: a callback that stops it has taken its own. */
	while ((n = ring_buffer__consume(t->events)) == TRACER_EVENTS_AGAIN)
		;
	return n;
}

void split_by_cost(const unsigned long *cost, int n, int *side)
{
	int order[n > 0 ? n : 1], m = 0;
	unsigned long sum[2] = { 0, 0 };

	for (int i = 0; i < n; i++) {
		int j = m;

		side[i] = -1;
		if (!cost[i])
			continue;
		for (; j > 0 && cost[order[j - 1]] < cost[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
		m++;
	}
	for (int k = 0; k < m; k++) {
		int half = sum[1] < sum[0];

		sum[half] += cost[order[k]];
		side[order[k]] = half;
	}
}

double tracer_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct bpf_program *tracer_prog(struct tracer *t, struct bpf_program *prog)
{
	struct bpf_object_skeleton *sk = t->skel->skeleton;

	if (!prog || !t->skel2 || bpf_program__autoload(prog))
		return prog;
	for (int i = 0; i < sk->prog_cnt; i++)
		if (*sk->progs[i].prog == prog)
			return bpf_program__autoload(*t->skel2->skeleton->progs[i].prog)
			       ? *t->skel2->skeleton->progs[i].prog : prog;
	return prog;
}

struct bpf_link **skel_link_slot(struct iotrace_bpf *s, const struct bpf_program *prog)
{
	for (int i = 0; i < s->skeleton->prog_cnt; i++)
		if (*s->skeleton->progs[i].prog == prog)
			return s->skeleton->progs[i].link;
	return NULL;
}

struct bpf_link **tracer_link_slot(struct tracer *t, const struct bpf_program *prog)
{
	struct bpf_link **slot = skel_link_slot(t->skel, prog);

	return slot || !t->skel2 ? slot : skel_link_slot(t->skel2, prog);
}
