// SPDX-License-Identifier: GPL-2.0
/* io_uring records in the model (see uring.h); bpf/uring.bpf.c counts them. */
#include <stdlib.h>
#include <string.h>
#include "syscall_table.h"
#include "uring.h"
#include "util/vec.h"

void uring_record_add(struct uring_record *dst, const struct uring_record *src)
{
	struct uring_stat *d = &dst->st;
	const struct uring_stat *s = &src->st;

	d->ops += s->ops;
	d->sqpoll_ops += s->sqpoll_ops;
	d->completions += s->completions;
	d->errors += s->errors;
	d->res_bytes += s->res_bytes;
	for (int h = 0; h < URING_HOWS; h++)
		d->ran[h] += s->ran[h];
	d->unseen += s->unseen;
	d->latency_sum_ns += s->latency_sum_ns;
	for (int b = 0; b < FINE_BUCKETS; b++)
		d->lat_hist[b] += s->lat_hist[b];
	dst->in_flight += src->in_flight;
}

void uring_record_derive(struct uring_record *r)
{
	const struct uring_stat *st = &r->st;
	struct uring_view *v = &r->v;
	uint64_t ran = st->ran[URING_INLINE] + st->ran[URING_ASYNC] + st->ran[URING_POLL];

	v->ops = st->ops;
	v->completions = st->completions;
	v->errors = st->errors;
	v->bytes = st->res_bytes;
	v->inline_ops = st->ran[URING_INLINE];
	v->async_ops = st->ran[URING_ASYNC];
	v->poll_ops = st->ran[URING_POLL];
	v->sqpoll_ops = st->sqpoll_ops;
	v->in_flight = r->in_flight;
	v->unseen = st->unseen;
	v->latency_sum_ns = st->latency_sum_ns;
	v->async_pct = ran ? 100 * (v->async_ops + v->poll_ops) / ran : 0;
	v->sqpoll_pct = st->ops ? 100 * st->sqpoll_ops / st->ops : 0;
	/* The kernel keeps no extremes: quantiles within the buckets' bounds. */
	v->lat = hist_summary_of(HIST_FINE, st->lat_hist, false, 0, 0);
}

int uring_add_by_op(struct uring_record **list, size_t *n, const struct uring_record *rec)
{
	size_t i;

	for (i = 0; i < *n && (*list)[i].key.op != rec->key.op; i++)
		;
	if (i == *n) {
		if (!VEC_PUSH(*list, *n))
			return -1;
		(*list)[i].key.op = rec->key.op;
	}
	uring_record_add(&(*list)[i], rec);
	return 0;
}

static int by_op(const void *a, const void *b)
{
	const struct uring_record *x = a, *y = b;

	return (x->key.op > y->key.op) - (x->key.op < y->key.op);
}

void uring_finish(struct uring_record *list, size_t n)
{
	if (n)
		qsort(list, n, sizeof(*list), by_op);
	for (size_t i = 0; i < n; i++)
		uring_record_derive(&list[i]);
}

bool uring_field_unknown(const struct field *f, const struct uring_record *r)
{
	return (f->flags & FIELD_URING_DATA) && !uring_op_has_bytes(r->key.op);
}
