// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel has, by name: an index of its BTF's functions and typedefs (its
 * tracepoints are typedefs btf_trace_X), asked by tracer_hooks.c which events it can get
 * and by which build.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "tracer_impl.h"

/*
 * The kernel's functions and typedefs (btf_trace_X: its tracepoints) by name, indexed in one
 * pass: btf__find_by_name_kind walks every type for each name asked, and the ~60 questions
 * took seconds on a kernel booted under emulation.
 */
struct btf_index {
	const struct btf *btf;
	uint32_t mask;
	uint32_t *ids; /* open addressing by the name's hash; 0: empty */
};

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* An index of btf's functions and typedefs, or NULL (no BTF, or no memory). */
struct btf_index *btf_index_new(const struct btf *btf)
{
	uint32_t n = btf ? btf__type_cnt(btf) : 0, size = 1;
	struct btf_index *ix;

	if (!btf)
		return NULL;
	while (size < 2 * n)
		size <<= 1;
	ix = calloc(1, sizeof(*ix));
	if (ix)
		ix->ids = calloc(size, sizeof(*ix->ids));
	if (!ix || !ix->ids) {
		free(ix);
		return NULL;
	}
	ix->btf = btf;
	ix->mask = size - 1;
	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		uint32_t h;

		if (!btf_is_func(t) && !btf_is_typedef(t))
			continue;
		h = name_hash(btf__name_by_offset(btf, t->name_off)) & ix->mask;
		while (ix->ids[h])
			h = (h + 1) & ix->mask;
		ix->ids[h] = id;
	}
	return ix;
}

const struct btf *btf_index_btf(const struct btf_index *ix)
{
	return ix->btf;
}

void btf_index_free(struct btf_index *ix)
{
	if (ix)
		free(ix->ids);
	free(ix);
}

/* The id of the function or typedef named name, or -1. */
int btf_index_find(const struct btf_index *ix, const char *name, bool func)
{
	for (uint32_t h = name_hash(name) & ix->mask; ix->ids[h]; h = (h + 1) & ix->mask) {
		const struct btf_type *t = btf__type_by_id(ix->btf, ix->ids[h]);

		if (btf_is_func(t) == func && !strcmp(btf__name_by_offset(ix->btf, t->name_off), name))
			return ix->ids[h];
	}
	return -1;
}

/* The id of tracepoint tp's btf_trace_TP typedef, or -1. */
int tracepoint_id(const struct btf_index *ix, const char *tp)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return btf_index_find(ix, name, false);
}
