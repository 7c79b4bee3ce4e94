// SPDX-License-Identifier: GPL-2.0
/*
 * iotrace top -j: one JSON object per interval, on one line (NDJSON). Keys are the field
 * tables' members (TOP_COUNT_FIELDS, TOP_RATE_FIELDS, TOP_DISK_FIELDS); docs/json.md.
 */
#include <stdlib.h>
#include "top_out.h"
#include "json_cells.h"
#include "model/model.h"

/* A value without a value (TOP_NONE) is null; a column whose hooks are missing too, with why. */
static void add_rate(cJSON *o, const char *key, double v, const char *na)
{
	if (na)
		add_null_reason(o, key, na);
	else if (v == TOP_NONE)
		cJSON_AddNullToObject(o, key);
	else
		cJSON_AddNumberToObject(o, key, v);
}

#define TOP_JSON_COUNT(name, ...) add_u64(o, #name, c->name);
#define TOP_JSON_RATE(name, ...) add_rate(o, #name, r->name, v->na[TOP_SORT_READ + i++]);
#define TOP_JSON_DISK(name, ...) add_rate(o, #name, d->name, NULL);

static void add_counts(cJSON *o, const struct top_view *v, const struct top_counts *c,
		       const struct top_rates *r)
{
	int i = 0;

	TOP_COUNT_FIELDS(TOP_JSON_COUNT)
	TOP_RATE_FIELDS(TOP_JSON_RATE)
}

static void add_disk(cJSON *o, const struct top_disk_rates *d)
{
	TOP_DISK_FIELDS(TOP_JSON_DISK)
}

static void add_name_or_null(cJSON *o, const char *key, const char *name)
{
	if (name)
		add_name(o, key, name);
	else
		cJSON_AddNullToObject(o, key);
}

static cJSON *row_json(const struct top_view *v, const struct top_row *r, bool file)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	if (!file && r->pid)
		add_u64(o, "pid", r->pid);
	add_name(o, file ? "file" : v->o.group != TOP_BY_PROCESS ? "group" : "comm", r->name);
	if (!file && r->cgroup && v->o.group == TOP_BY_PROCESS)
		add_name(o, "cgroup", r->cgroup);
	/* A process's container and pod; a container's ID (a group by container, not by name). */
	if (!file && (r->pid || (v->o.group == TOP_BY_CONTAINER && !v->o.by_comm))) {
		if (r->pid)
			add_name_or_null(o, "container", r->container);
		add_name_or_null(o, "container_id", r->container_id);
		if (r->pid)
			add_name_or_null(o, "pod", r->pod);
	}
	if (file || !r->pid)
		add_u64(o, "processes", r->procs);
	if (!file)
		cJSON_AddBoolToObject(o, "exited", r->exited);
	add_counts(o, v, &r->c, &r->r);
	return o;
}

static cJSON *rows_json(const struct top_view *v, struct top_row *const *rows, size_t n,
			bool file)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < n; i++)
		cJSON_AddItemToArray(a, row_json(v, rows[i], file));
	return a;
}

static cJSON *header_json(const struct top_view *v)
{
	cJSON *o = cJSON_CreateObject(), *disks = cJSON_CreateArray();

	if (!o || !disks)
		return o;
	add_counts(o, v, &v->h.c, &v->h.r);
	add_disk(o, &v->h.d);
	for (size_t i = 0; i < v->ndisks; i++) {
		cJSON *d = cJSON_CreateObject();

		add_name(d, "disk", v->disks[i].name);
		add_counts(d, v, &v->disks[i].c, &v->disks[i].r);
		add_disk(d, &v->disks[i].d);
		cJSON_AddItemToArray(disks, d);
	}
	cJSON_AddItemToObject(o, "disks", disks);
	return o;
}

int top_print_json(FILE *out, const struct top_view *v, uint64_t unix_ms)
{
	cJSON *o = cJSON_CreateObject(), *drops = cJSON_CreateObject();
	char *text;

	if (!o || !drops)
		return -1;
	add_u64(o, "time_ms", unix_ms);
	cJSON_AddNumberToObject(o, "interval_s", v->seconds);
	add_u64(o, "block_until_ns", v->block_until_ns);
	add_u64(o, "processes_live", v->h.live);
	cJSON_AddStringToObject(o, "sort", top_sort_name(v->o.sort));
	cJSON_AddStringToObject(o, "group_by", top_group_name(v->o.group));
	cJSON_AddItemToObject(o, "machine", header_json(v));
	cJSON_AddItemToObject(o,
			      v->o.group != TOP_BY_PROCESS || v->o.by_comm ? "groups" : "processes",
			      rows_json(v, v->shown, v->nshown, false));
	cJSON_AddItemToObject(o, "files", rows_json(v, v->shown_files, v->nshown_files, true));
	for (int i = 0; i < DROP_COUNTERS; i++)
		add_u64(drops, drop_names[i], v->drops[i]);
	cJSON_AddItemToObject(o, "drops", drops);
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!text)
		return -1;
	fprintf(out, "%s\n", text);
	fflush(out);
	free(text);
	return 0;
}
