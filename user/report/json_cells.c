// SPDX-License-Identifier: GPL-2.0
/* Cells of the JSON report (see json_cells.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_cells.h"
#include "json_text.h"
#include "util/escape.h"

/*
 * An unsigned count as its decimal digits, exact over all 64 bits (a cJSON number is a
 * double). libcjson 1.7.15 prints every number with "%1.15g" and reads it back with sscanf
 * to check it: ~250 ns a number, more than half of a 20,000-process report's time; the
 * digits as a raw item cost ~50 (docs/performance.md, "The report of a large run"). Keys
 * are the field tables' and literals, never copied (cJSON_AddItemToObjectCS); a count
 * under 100 (most are 0) refers to its digits in a table, and only a larger one is copied.
 */
#define TEN(t) t "0", t "1", t "2", t "3", t "4", t "5", t "6", t "7", t "8", t "9"
static const char small[100][3] = { TEN(""), TEN("1"), TEN("2"), TEN("3"), TEN("4"),
				    TEN("5"), TEN("6"), TEN("7"), TEN("8"), TEN("9") };

void json_add(cJSON *obj, const char *key, cJSON *item)
{
	if (item && !cJSON_AddItemToObjectCS(obj, key, item))
		cJSON_Delete(item);
}

void add_u64(cJSON *obj, const char *key, uint64_t v)
{
	char digits[21];
	cJSON *item;

	if (v < 100) {
		item = cJSON_CreateNull();
		if (item) {
			/* A reference: cJSON_Delete leaves the table's digits alone (and prints
			 * them only: they are never written). */
			item->type = cJSON_Raw | cJSON_IsReference;
			item->valuestring = (char *)small[v];
		}
	} else {
		json_u64_text(v, digits);
		item = cJSON_CreateRaw(digits);
	}
	json_add(obj, key, item);
}

/*
 * A fraction as libcjson prints a number (json_number_text), as a raw item. Its print
 * (printf, then a read back) took ~2 µs; the run's files list a share for each process
 * that used them, 80,000 in a 20,000-process report, nearly all the same few values: the
 * last value's text is kept and copied.
 */
void add_double(cJSON *obj, const char *key, double v)
{
	static _Thread_local struct {
		double v;
		int n;
		char text[32];
	} last;

	if (!last.n || memcmp(&last.v, &v, sizeof(v))) {
		last.n = json_number_text(v, last.text);
		last.v = v;
	}
	json_add(obj, key, last.n > 0 ? cJSON_CreateRaw(last.text) : cJSON_CreateNull());
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
	json_add(obj, key, json_name(name));
}

/* A text, or null when it is empty. */
static void add_text(cJSON *obj, const char *key, const char *v)
{
	if (v && *v)
		add_name(obj, key, v);
	else
		json_add(obj, key, cJSON_CreateNull());
}

void add_container(cJSON *obj, const struct container_info *c)
{
	const struct container_path *p = &c->path;

	json_add(obj, "runtime", cJSON_CreateString(container_runtime_names[p->runtime]));
	add_text(obj, "container_id", p->id);
	add_text(obj, "name", c->meta.name[0] ? c->meta.name : p->name);
	add_text(obj, "image", c->meta.image);
	add_text(obj, "pod_uid", p->pod_uid);
	add_text(obj, "pod_name", c->meta.pod_name);
	add_text(obj, "pod_namespace", c->meta.pod_namespace);
	add_text(obj, "qos", pod_qos_names[p->qos]);
	json_add(obj, "monitor", cJSON_CreateBool(p->monitor));
	add_text(obj, "source", c->meta.source);
	json_add(obj, "answered",
		 cJSON_CreateBool(c->state != META_UNANSWERED && c->state != META_PENDING));
}

void add_null_reason(cJSON *obj, const char *key, const char *reason)
{
	char name[64];

	json_add(obj, key, cJSON_CreateNull());
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
	for (int b = 0, n = hist_buckets(l); b < n; b++) {
		cJSON *bucket;

		if (!hist[b])
			continue;
		bucket = cJSON_CreateObject();
		add_u64(bucket, "lo", hist_bucket_lo(l, b));
		add_u64(bucket, "hi", hist_bucket_hi(l, b));
		add_u64(bucket, "count", hist[b]);
		cJSON_AddItemToArray(buckets, bucket);
	}
	json_add(h, "buckets", buckets);
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
			json_add(obj, "direct_reason", cJSON_CreateString(why));
	}
}
