// SPDX-License-Identifier: GPL-2.0
/* Cells of the JSON report (see json_cells.h). */
#include <stdio.h>
#include <stdlib.h>
#include "json_cells.h"
#include "util/escape.h"

/* JSON numbers are doubles: counts stay exact up to 2^53, far beyond any run. */
void add_u64(cJSON *obj, const char *key, uint64_t v)
{
	cJSON_AddNumberToObject(obj, key, (double)v);
}

cJSON *json_name(const char *name)
{
	char buf[512], *big = NULL;
	cJSON *s;

	if (esc_json(buf, sizeof(buf), name) >= sizeof(buf) && !(big = esc_dup(esc_json, name)))
		return cJSON_CreateNull();
	s = cJSON_CreateString(big ? big : buf);
	free(big);
	return s;
}

void add_name(cJSON *obj, const char *key, const char *name)
{
	cJSON_AddItemToObject(obj, key, json_name(name));
}

/* A text, or null when it is empty. */
static void add_text(cJSON *obj, const char *key, const char *v)
{
	if (v && *v)
		add_name(obj, key, v);
	else
		cJSON_AddNullToObject(obj, key);
}

void add_container(cJSON *obj, const struct container_info *c)
{
	const struct container_path *p = &c->path;

	cJSON_AddStringToObject(obj, "runtime", container_runtime_names[p->runtime]);
	add_text(obj, "container_id", p->id);
	add_text(obj, "name", c->meta.name[0] ? c->meta.name : p->name);
	add_text(obj, "image", c->meta.image);
	add_text(obj, "pod_uid", p->pod_uid);
	add_text(obj, "pod_name", c->meta.pod_name);
	add_text(obj, "pod_namespace", c->meta.pod_namespace);
	add_text(obj, "qos", pod_qos_names[p->qos]);
	cJSON_AddBoolToObject(obj, "monitor", p->monitor);
	add_text(obj, "source", c->meta.source);
	cJSON_AddBoolToObject(obj, "answered", c->state != META_UNANSWERED &&
					      c->state != META_PENDING);
}

void add_null_reason(cJSON *obj, const char *key, const char *reason)
{
	char name[64];

	cJSON_AddNullToObject(obj, key);
	snprintf(name, sizeof(name), "%s_reason", key);
	cJSON_AddStringToObject(obj, name, reason);
}

cJSON *hist_json(enum hist_layout l, const __u64 *hist, const struct hist_summary *s)
{
	cJSON *h = cJSON_CreateObject(), *buckets = cJSON_CreateArray();

	add_u64(h, "count", s->count);
	/* Histograms without kernel extremes (block, readahead windows) leave min/max out. */
	if (s->count && s->minmax_known) {
		add_u64(h, "min", s->min);
		add_u64(h, "max", s->max);
	}
	if (s->count) {
		add_u64(h, "p50", s->p50);
		add_u64(h, "p90", s->p90);
		add_u64(h, "p99", s->p99);
	}
	for (int b = 0; b < hist_buckets(l); b++) {
		cJSON *bucket;

		if (!hist[b])
			continue;
		bucket = cJSON_CreateObject();
		add_u64(bucket, "lo", hist_bucket_lo(l, b));
		add_u64(bucket, "hi", hist_bucket_hi(l, b));
		add_u64(bucket, "count", hist[b]);
		cJSON_AddItemToArray(buckets, bucket);
	}
	cJSON_AddItemToObject(h, "buckets", buckets);
	return h;
}

/*
 * Every field of a table as "key": value. An unknown one is null with its reason beside it
 * ("<key>_reason"; one "direct_reason" for the O_DIRECT counters).
 */
void add_fields(cJSON *obj, const struct field_table *t, const void *rec,
		       unknown_fn unknown, const void *ctx)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct field *f = &t->f[i];
		const char *why = unknown ? unknown(f, rec, ctx) : NULL;

		if (!why)
			add_u64(obj, f->name, field_get(f, rec));
		else if (!(f->flags & FIELD_NEEDS_DIRECT_HOOK))
			add_null_reason(obj, f->name, why);
		else if (cJSON_AddNullToObject(obj, f->name) &&
			 !cJSON_HasObjectItem(obj, "direct_reason"))
			cJSON_AddStringToObject(obj, "direct_reason", why);
	}
}
