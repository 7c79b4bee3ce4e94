// SPDX-License-Identifier: GPL-2.0
/*
 * The trace document (trace_out.h): {"traceEvents": [...], "displayTimeUnit": "ns",
 * "metadata": {...}}, written as events come, so a run of any length needs no memory for
 * them; counter tracks; process and disk names and lifetimes; the end, on any way out of a
 * run (a second Ctrl-C too), so the file is always valid JSON.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cells.h"
#include "util/escape.h"
#include "util/disks.h"
#include "model/syscall_table.h"
#include "trace_out_impl.h"
#include "util/vec.h"
#include "version.h" /* $(OUTPUT)'s: the Makefile writes it */

/* Counter tracks' names (args of the "io" counter event), by COUNTER_TRACKS index. */
static const char *const track_names[COUNTER_TRACKS] = {
	[TC_SYS_READ] = "syscall_read_bytes", [TC_SYS_WRITE] = "syscall_write_bytes",
	[TC_PAGES_ADDED] = "pages_added", [TC_PAGES_DIRTIED] = "pages_dirtied",
	[CT_BLOCK_READ] = "block_read_bytes", [CT_BLOCK_WRITE] = "block_write_bytes",
};

struct trace_writer *trace_open(const struct trace_options *o)
{
	struct trace_writer *w = calloc(1, sizeof(*w));
	char shown[NAME_TEXT_MAX];

	if (!w) {
		fprintf(stderr, "iotrace: out of memory\n");
		return NULL;
	}
	w->o = *o;
	w->f = fopen(o->path, "we");
	if (!w->f) {
		fprintf(stderr, "iotrace: cannot write the trace %s: %s\n",
			name_cell(o->path, 0, shown, sizeof(shown)),
			strerror(errno));
		free(w);
		return NULL;
	}
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	return w;
}

void trace_start(struct trace_writer *w, uint64_t origin_ns)
{
	w->origin_ns = w->last_sample_ns = origin_ns;
	for (int k = 1; k < IO_KINDS; k++) {
		int nr = io_kind_nr(k);

		if (nr >= 0 && nr < MAX_SYSCALLS)
			w->data_call[nr] = true;
	}
	fputs("{\"traceEvents\":[\n", w->f);
}

bool out_room(struct trace_writer *w, unsigned n)
{
	if (w->st.events + n <= w->o.max_events)
		return true;
	w->st.not_written += n; /* truncated: not_written > 0 */
	return false;
}

void out_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

/* A JSON string: the same value as cJSON's reports hold (esc_json_quoted, util/escape.h). */
static void put_escaped(FILE *f, const char *s)
{
	esc_fputs(esc_json_quoted, s, f);
}

void out_str(struct trace_writer *w, const char *key, const char *s)
{
	fprintf(w->f, ",\"%s\":", key);
	put_escaped(w->f, s);
}

void out_only_arg(struct trace_writer *w, const char *key, const char *s)
{
	fprintf(w->f, ",\"args\":{\"%s\":", key);
	put_escaped(w->f, s);
	fputs("}}", w->f);
}

void out_begin(struct trace_writer *w, char ph, const char *name, uint32_t pid, uint32_t tid,
	       uint64_t ts_ns)
{
	fputs(w->st.events++ ? ",\n{\"ph\":\"" : "{\"ph\":\"", w->f);
	fputc(ph, w->f);
	fputs("\",\"name\":", w->f);
	put_escaped(w->f, name);
	fprintf(w->f, ",\"pid\":%u,\"tid\":%u,\"ts\":", pid, tid);
	out_us(w->f, ts_ns > w->origin_ns ? ts_ns - w->origin_ns : 0);
}

uint64_t flow_id(uint32_t tid, uint64_t start_ns)
{
	uint64_t x = start_ns ^ ((uint64_t)tid << 44) ^ 0x9e3779b97f4a7c15ULL;

	/* splitmix64's finalizer: ids of nearby calls spread over all 64 bits. */
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

struct trace_proc *trace_proc_of(struct trace_writer *w, uint32_t pid)
{
	static size_t last;
	struct trace_proc *grown;

	if (last < w->nprocs && w->procs[last].pid == pid)
		return &w->procs[last];
	for (size_t i = 0; i < w->nprocs; i++)
		if (w->procs[i].pid == pid)
			return &w->procs[last = i];
	grown = VEC_PUSH(w->procs, w->nprocs);
	if (!grown)
		return NULL;
	grown->pid = pid;
	last = w->nprocs - 1;
	return grown;
}

void trace_process(struct trace_writer *w, uint32_t pid, const char *comm)
{
	struct trace_proc *p = trace_proc_of(w, pid);

	if (p)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
}

void trace_counters(struct trace_writer *w, uint32_t pid, const uint64_t v[TRACE_COUNTERS])
{
	struct trace_proc *p = trace_proc_of(w, pid);

	for (int i = 0; p && i < TRACE_COUNTERS; i++)
		p->now[i] = v[i];
}

/*
 * One "io" counter event per process with a change: what each track did during the interval
 * that ends now, at the interval's start (a counter holds its value until the next sample),
 * so that a track's values add up to the run's total. A process gone quiet gets one zero.
 */
void trace_sample(struct trace_writer *w, uint64_t now_ns)
{
	for (size_t i = 0; i < w->nprocs; i++) {
		struct trace_proc *p = &w->procs[i];
		bool any = false;

		for (int k = 0; k < COUNTER_TRACKS; k++)
			any |= p->now[k] != p->last[k];
		if ((!any && !p->shown) || !out_room(w, 1))
			continue;
		out_begin(w, 'C', "io", p->pid, p->pid, w->last_sample_ns);
		fputs(",\"args\":{", w->f);
		for (int k = 0; k < COUNTER_TRACKS; k++)
			fprintf(w->f, "%s\"%s\":%llu", k ? "," : "", track_names[k],
				(unsigned long long)(p->now[k] - p->last[k]));
		fputs("}}", w->f);
		memcpy(p->last, p->now, sizeof(p->last));
		p->shown = any;
	}
	w->last_sample_ns = now_ns;
}

/* process_name and process_labels, and the lifetime as an async slice in the process. */
static void write_process(struct trace_writer *w, const struct proc_record *p, uint64_t end_ns)
{
	uint64_t start = p->start_ns > w->origin_ns ? p->start_ns : w->origin_ns;
	uint64_t end = p->end_ns ? p->end_ns : end_ns;

	if (!p->pid || !out_room(w, 4))
		return;
	out_begin(w, 'M', "process_name", p->pid, p->pid, 0);
	out_only_arg(w, "name", p->comm);
	out_begin(w, 'M', "process_labels", p->pid, p->pid, 0);
	out_only_arg(w, "labels", p->args ? p->args : p->comm);
	out_begin(w, 'b', "lifetime", p->pid, p->pid, start);
	fprintf(w->f, ",\"cat\":\"process\",\"id\":\"p%u\",\"args\":{\"ppid\":%u}}", p->pid,
		p->ppid);
	out_begin(w, 'e', "lifetime", p->pid, p->pid, end > start ? end : start);
	fprintf(w->f, ",\"cat\":\"process\",\"id\":\"p%u\"}", p->pid);
}

static void write_disk_names(struct trace_writer *w, const struct disk_table *names)
{
	char name[64], label[80];

	for (size_t i = 0; i < w->ndisks && out_room(w, 2); i++) {
		snprintf(label, sizeof(label), "disk %s",
			 disk_table_name(names, w->disks[i], name, sizeof(name)));
		out_begin(w, 'M', "process_name", DISK_PID_BASE + i, DISK_PID_BASE + i, 0);
		out_only_arg(w, "name", label);
		out_begin(w, 'M', "process_sort_index", DISK_PID_BASE + i, DISK_PID_BASE + i, 0);
		fputs(",\"args\":{\"sort_index\":1000}}", w->f);
	}
}

static void write_metadata(struct trace_writer *w, const struct run_result *r)
{
	FILE *f = w->f;

	fputs("\n],\"displayTimeUnit\":\"ns\",\"metadata\":{\"tool\":\"iotrace\"", f);
	out_str(w, "version", IOTRACE_VERSION);
	fputs(",\"command\":[", f);
	for (char **a = r->command; a && *a; a++) {
		if (a != r->command)
			fputc(',', f);
		put_escaped(f, *a);
	}
	fprintf(f, "],\"clock\":\"CLOCK_MONOTONIC\",\"origin_ns\":%llu,\"trace_min_ns\":%llu,"
		   "\"interval_ns\":%llu,\"max_events\":%llu,\"events\":%llu,"
		   "\"not_written\":%llu,\"truncated\":%s,\"lost_events\":%llu,\"partial\":%s,"
		   "\"syscalls\":%llu,\"block_requests\":%llu,\"io_uring_requests\":%llu,"
		   "\"flows\":%llu}}\n",
		(unsigned long long)w->origin_ns, (unsigned long long)w->o.min_ns,
		(unsigned long long)w->o.interval_ns, (unsigned long long)w->o.max_events,
		(unsigned long long)w->st.events, (unsigned long long)w->st.not_written,
		w->st.not_written ? "true" : "false", (unsigned long long)w->st.lost_events,
		r->partial ? "true" : "false", (unsigned long long)w->st.syscalls,
		(unsigned long long)w->st.block_requests,
		(unsigned long long)w->st.io_uring_requests,
		(unsigned long long)w->st.flows);
}

int trace_end(struct trace_writer *w, const struct run_result *r, uint64_t end_ns,
	      uint64_t lost, struct trace_stats *out)
{
	char shown[NAME_TEXT_MAX];
	int err;

	trace_sample(w, end_ns);
	trace_sample(w, end_ns); /* the zeros that end the tracks still showing */
	for (size_t i = 0; i < r->nprocs; i++)
		write_process(w, &r->procs[i], end_ns);
	write_disk_names(w, &r->disks);
	w->st.lost_events = lost;
	write_metadata(w, r);
	err = ferror(w->f) | fflush(w->f);
	if (fclose(w->f) || err)
		fprintf(stderr, "iotrace: writing the trace %s failed: %s\n",
			name_cell(w->o.path, 0, shown, sizeof(shown)),
			strerror(errno ? errno : EIO));
	*out = w->st;
	free(w->procs);
	free(w);
	return err ? -1 : 0;
}

void trace_abort(struct trace_writer *w)
{
	if (!w)
		return;
	fclose(w->f);
	unlink(w->o.path);
	free(w->links);
	free(w->procs);
	free(w);
}
