// SPDX-License-Identifier: GPL-2.0
/*
 * Argument lists from BTF (btf_args.h). Tracepoints and kernel functions change their
 * arguments between kernels under the same name (block_getrq took a queue, a bio and an op
 * before it took the bio alone; io_uring_poll_arm and io_uring_queue_async_work took the
 * ring and numbers before they took the request): a tp_btf or fentry program reads its
 * arguments by position, so the loader compares the types, not only their number.
 */
#include <stdio.h>
#include <string.h>
#include "btf_args.h"

/* The prototype behind a function or a typedef of a pointer to one, or NULL. */
static const struct btf_type *proto_of(const struct btf *btf, int id)
{
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;

	while (t && (btf_is_typedef(t) || btf_is_ptr(t) || btf_is_func(t)))
		t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) ? t : NULL;
}

static bool is_qualifier(const struct btf_type *t)
{
	return btf_is_const(t) || btf_is_volatile(t) || btf_is_restrict(t) || btf_is_type_tag(t);
}

/* A type as C names it: "struct bio *", "int", "u64" (a typedef by its own name). */
static void type_name(const struct btf *btf, unsigned int id, char *buf, size_t len)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const char *name;
	char inner[96];

	while (id && t && is_qualifier(t)) {
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	if (!id || !t) {
		snprintf(buf, len, "void");
		return;
	}
	if (btf_is_ptr(t)) {
		type_name(btf, t->type, inner, sizeof(inner));
		snprintf(buf, len, "%s *", inner);
		return;
	}
	name = btf__name_by_offset(btf, t->name_off);
	snprintf(buf, len, "%s%s", btf_is_struct(t) ? "struct " : btf_is_union(t) ? "union " :
				   btf_is_any_enum(t) ? "enum " : "", name && *name ? name : "?");
}

int btf_args_describe(const struct btf *btf, int id, int skip, char *buf, size_t len)
{
	const struct btf_type *proto = proto_of(btf, id);
	const struct btf_param *p;
	size_t used = 0;

	buf[0] = '\0';
	if (!proto)
		return -1;
	p = btf_params(proto);
	for (int i = skip; i < btf_vlen(proto) && used < len; i++) {
		char name[128];

		type_name(btf, p[i].type, name, sizeof(name));
		used += snprintf(buf + used, len - used, "%s%s", i > skip ? "," : "", name);
	}
	return 0;
}

/* Whether have (one argument of describe's list) is want's, "?" taking any. */
static bool arg_matches(const char *want, size_t wlen, const char *have, size_t hlen)
{
	return (wlen == 1 && want[0] == '?') || (wlen == hlen && !strncmp(want, have, wlen));
}

bool btf_args_match(const struct btf *btf, int id, int skip, const char *want, char *why,
		    size_t len)
{
	char have[512];
	const char *w = want, *h = have;

	if (btf_args_describe(btf, id, skip, have, sizeof(have))) {
		snprintf(why, len, "no prototype in the kernel's BTF");
		return false;
	}
	for (;;) {
		size_t wl = strcspn(w, ","), hl = strcspn(h, ",");

		if (!arg_matches(w, wl, h, hl))
			break;
		w += wl;
		h += hl;
		if (!*w && !*h)
			return true;
		if (!*w || !*h)
			break;
		w++;
		h++;
	}
	snprintf(why, len, "arguments (%s) here, not (%s)", have, want);
	return false;
}
