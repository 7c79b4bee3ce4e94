// SPDX-License-Identifier: GPL-2.0
/*
 * The largest maps created in the two loader threads before libbpf creates the rest.
 *
 * libbpf creates an object's maps one after the other when it loads it, and with two
 * loader threads (tracer_objects.c) the second waits for them: ~12 ms of the start-up here,
 * most of it the kernel allocating and zeroing the large arrays and preallocated hashes
 * (tens of MiB) while the other CPU idles. So the maps that cost the kernel PREMAKE_MIN
 * bytes or more to make (map_cost) are made beforehand, from the configured object's own
 * definitions, split by that cost in two halves: the first loader thread makes one, the
 * second makes the other before it opens its own instance, and the first hands them all
 * to libbpf (bpf_map__reuse_fd), which then creates only the small ones and the internal
 * ones it fills (.rodata, .bss). They are made
 * without BTF (libbpf would give them the object's, loaded only later): nothing reads it,
 * no value holds a lock, timer or kernel pointer. A map that fails to be made here is left
 * to libbpf, which then says why.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tracer_impl.h"

#define PREMAKE_MIN (256 << 10)

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/*
 * What making m costs the kernel, in bytes of zeroed memory: an array's values, a ring's
 * pages, a preallocated hash's elements (~48 bytes of header each) zeroed at ~0.19 ms per
 * MiB here; a hash's buckets (16 bytes, a power of two of them), each also initialised
 * one by one, ~0.7 ms per MiB, so counted four times (bpf_map_create of each map alone,
 * 2026-11-28: a hash of 131,072 entries unallocated costs more than an array of 7 MiB).
 */
static size_t map_cost(const struct bpf_map *m)
{
	size_t n = bpf_map__max_entries(m), buckets = 1;

	switch (bpf_map__type(m)) {
	case BPF_MAP_TYPE_RINGBUF: /* its entries are its bytes */
		return n;
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return round8(bpf_map__value_size(m)) * n;
	default:
		while (buckets < n)
			buckets <<= 1;
		if (bpf_map__type(m) == BPF_MAP_TYPE_HASH &&
		    (bpf_map__map_flags(m) & BPF_F_NO_PREALLOC))
			n = 0; /* elements come with their updates */
		return 4 * 16 * buckets +
		       n * (48 + round8(bpf_map__key_size(m)) + round8(bpf_map__value_size(m)));
	}
}

/* Maps libbpf would make plainly, by one call: no inner map, nothing to fill. */
static bool premakeable(const struct bpf_map *m)
{
	switch (bpf_map__type(m)) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_RINGBUF:
		return !bpf_map__is_internal(m) && bpf_map__autocreate(m) && bpf_map__fd(m) < 0 &&
		       !bpf_map__ifindex(m) && map_cost(m) >= PREMAKE_MIN;
	default:
		return false;
	}
}

void tracer_premake_half(struct premake *p, int side)
{
	struct premake_half *h = &p->half[side];

	for (int i = 0; i < h->n; i++) {
		const struct bpf_map *m = h->maps[i];
		LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = bpf_map__map_flags(m),
			    .numa_node = bpf_map__numa_node(m), .map_extra = bpf_map__map_extra(m));
		char name[BPF_OBJ_NAME_LEN];

		snprintf(name, sizeof(name), "%s", bpf_map__name(m));
		h->fds[i] = bpf_map_create(bpf_map__type(m), name, bpf_map__key_size(m),
					   bpf_map__value_size(m), bpf_map__max_entries(m), &opts);
	}
}

void tracer_premake_plan(struct bpf_object *obj, struct premake *p)
{
	struct bpf_map *m, *maps[PREMAKE_MAX];
	unsigned long cost[PREMAKE_MAX];
	int side[PREMAKE_MAX], n = 0;

	/* Two halves of about equal cost: they are made at the same time, and libbpf goes
	 * on once both are. */
	p->half[0].n = p->half[1].n = 0;
	bpf_object__for_each_map(m, obj)
		if (premakeable(m) && n < PREMAKE_MAX) {
			maps[n] = m;
			cost[n++] = map_cost(m);
		}
	split_by_cost(cost, n, side);
	for (int i = 0; i < n; i++) {
		struct premake_half *h = &p->half[side[i] > 0];

		h->maps[h->n] = maps[i];
		h->fds[h->n++] = -1;
	}
}

int tracer_premake_adopt(struct premake *p)
{
	int made = 0;

	for (int s = 0; s < 2; s++)
		for (int i = 0; i < p->half[s].n; i++) {
			if (p->half[s].fds[i] < 0)
				continue;
			made += !bpf_map__reuse_fd(p->half[s].maps[i], p->half[s].fds[i]); /* dups */
			close(p->half[s].fds[i]);
			p->half[s].fds[i] = -1;
		}
	return made;
}
