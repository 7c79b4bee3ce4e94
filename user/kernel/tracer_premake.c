// SPDX-License-Identifier: GPL-2.0
/*
 * The largest maps created in two threads before libbpf creates the rest.
 *
 * libbpf creates an object's maps one after the other when it loads it, and with two
 * loader threads (tracer_objects.c) the second waits for them: ~12 ms of the start-up here,
 * most of it the kernel allocating and zeroing the large arrays and preallocated hashes
 * (tens of MiB) while the other CPU idles. So the maps of PREMAKE_MIN bytes or more are
 * made beforehand, split by size between this thread and a helper, from the configured
 * object's own definitions, and handed to libbpf (bpf_map__reuse_fd), which then creates
 * only the small ones and the internal ones it fills (.rodata, .bss). They are made without
 * BTF (libbpf would give them the object's, loaded only later): nothing reads it, no value
 * holds a lock, timer or kernel pointer. A map that fails to be made here is left to
 * libbpf, which then says why.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tracer_impl.h"

#define PREMAKE_MIN (256 << 10)
#define PREMAKE_MAX 64

struct premake {
	struct bpf_map *maps[PREMAKE_MAX];
	int fds[PREMAKE_MAX];
	int n;
};

static size_t map_bytes(const struct bpf_map *m)
{
	if (bpf_map__type(m) == BPF_MAP_TYPE_RINGBUF) /* its entries are its bytes */
		return bpf_map__max_entries(m);
	return ((size_t)bpf_map__key_size(m) + bpf_map__value_size(m)) * bpf_map__max_entries(m);
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
		       !bpf_map__ifindex(m) && map_bytes(m) >= PREMAKE_MIN;
	default:
		return false;
	}
}

static void *make_maps(void *arg)
{
	struct premake *p = arg;

	for (int i = 0; i < p->n; i++) {
		const struct bpf_map *m = p->maps[i];
		LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = bpf_map__map_flags(m),
			    .numa_node = bpf_map__numa_node(m), .map_extra = bpf_map__map_extra(m));
		char name[BPF_OBJ_NAME_LEN];

		snprintf(name, sizeof(name), "%s", bpf_map__name(m));
		p->fds[i] = bpf_map_create(bpf_map__type(m), name, bpf_map__key_size(m),
					   bpf_map__value_size(m), bpf_map__max_entries(m), &opts);
	}
	return NULL;
}

int tracer_premake_maps(struct bpf_object *obj)
{
	struct premake half[2] = { { .n = 0 }, { .n = 0 } };
	size_t bytes[2] = { 0, 0 };
	struct bpf_map *m, *order[PREMAKE_MAX]; /* so that either half holds them all */
	int n = 0, made = 0, helper;
	pthread_t thread;

	/* Largest first, each to the lighter half. */
	bpf_object__for_each_map(m, obj) {
		int j = n;

		if (!premakeable(m) || n == PREMAKE_MAX)
			continue;
		for (; j > 0 && map_bytes(order[j - 1]) < map_bytes(m); j--)
			order[j] = order[j - 1];
		order[j] = m;
		n++;
	}
	for (int i = 0; i < n; i++) {
		int side = bytes[1] < bytes[0];

		bytes[side] += map_bytes(order[i]);
		half[side].maps[half[side].n++] = order[i];
	}
	helper = !pthread_create(&thread, NULL, make_maps, &half[1]);
	make_maps(&half[0]);
	if (helper)
		pthread_join(thread, NULL);
	else
		make_maps(&half[1]);
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < half[s].n; i++) {
			if (half[s].fds[i] < 0)
				continue;
			made += !bpf_map__reuse_fd(half[s].maps[i], half[s].fds[i]); /* dups it */
			close(half[s].fds[i]);
		}
	return made;
}
