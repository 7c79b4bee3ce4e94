// SPDX-License-Identifier: GPL-2.0
/*
 * The text report's first screen (docs/run-mode.md, "The first screen"): the command, its
 * wall time and exit; one line per layer with the run's totals; the top files across every
 * process; the processes ranked by I/O, the rest folded into one line. At most 30 lines of
 * 100 columns whatever the number of processes. The model derived every number (story.c).
 */
#include <stdlib.h>
#include <string.h>
#include "cells.h"
#include "report.h"
#include "model/story.h"
#include "util/hash.h"

/* Rows of the first screen's tables: with the rest, every line fits in 30. */
#define STORY_FILES 6
#define STORY_PROCS 6
/* The processes table's command column: what is left of 100 columns. */
#define COMMAND_COLUMN 41

static const struct field *story_field(const char *name)
{
	for (size_t i = 0; i < story_fields.n; i++)
		if (!strcmp(story_fields.f[i].name, name))
			return &story_fields.f[i];
	return NULL;
}

/* Why the run's story field name has no value, or NULL. */
static const char *unknown(const struct run_result *r, const char *name)
{
	return story_field_unknown(story_field(name), &r->story, &r->pc.v, r);
}

static void print_command(FILE *out, const struct run_result *r)
{
	char exit[64], line[512] = "", cut[NAME_TEXT_MAX];
	size_t len = 0;

	format_exit(exit, sizeof(exit), r->exit_known, r->exit_status);
	fprintf(out, "iotrace: %zu process%s, %.3f s wall, %s%s\n", r->nprocs,
		r->nprocs == 1 ? "" : "es", r->wall_ns / 1e9, exit,
		r->partial ? " — PARTIAL: interrupted before the command ended" : "");
	/* The words as they are, escaped once, as the line is cut (name_head). */
	for (char **a = r->command; a && *a && len + 1 < sizeof(line); a++)
		len += snprintf(line + len, sizeof(line) - len, "%s%s", len ? " " : "", *a);
	if (len)
		fprintf(out, "command: %s\n", name_head(line, 91, cut, sizeof(cut)));
}

/*
 * Which containers the processes were in, when any was in one: "containers: web (3
 * processes), db (1), host (2)"; a container not named by its runtime by its short ID.
 */
static void print_containers(FILE *out, const struct run_result *r)
{
	char label[CONTAINER_TEXT_MAX], cell[NAME_TEXT_MAX];

	if (!r->ncontainers && !r->unknown_procs)
		return;
	fputs("containers:", out);
	for (size_t i = 0; i < r->ncontainers; i++) {
		const struct run_container *c = &r->containers[i];

		fprintf(out, "%s %s (%u%s)", i ? "," : "",
			name_head(container_label(&c->info, label, sizeof(label)), 40, cell,
				  sizeof(cell)),
			c->procs, i ? "" : c->procs == 1 ? " process" : " processes");
	}
	if (r->host_procs)
		fprintf(out, "%s host (%u)", r->ncontainers ? "," : "", r->host_procs);
	if (r->unknown_procs)
		fprintf(out, "%s not known (%u: cgroup gone before it was read)",
			r->ncontainers || r->host_procs ? "," : "", r->unknown_procs);
	fputc('\n', out);
}

/* Lines of the first screen that say what was lost; more kinds share the last. */
#define STORY_LOST 3

static void print_lost_line(FILE *out, const char *text)
{
	char cut[NAME_TEXT_MAX];

	fprintf(out, "%-12s%s\n", "lost:", name_head(text, 88, cut, sizeof(cut)));
}

/*
 * What the run's bounded tables dropped (docs/hardening.md), at the top of the first screen
 * so that no number below is taken for whole: a line per kind of loss, with its key in
 * JSON's "drops" ("lost: 5,248 events of (process, file) pairs beyond the ledger's entries
 * [files]"). Nothing when nothing was.
 */
static void print_lost(FILE *out, const struct run_result *r)
{
	char line[256], n[CELL_MAX];
	int lost[DROP_COUNTERS], nlost = 0;
	size_t len;

	for (int i = 0; i < DROP_COUNTERS; i++)
		if (r->drops[i] && drop_loses(i))
			lost[nlost++] = i;
	for (int k = 0; k < nlost && (k < STORY_LOST - 1 || nlost == STORY_LOST); k++) {
		snprintf(line, sizeof(line), "%s %s [%s]", cell_grouped(r->drops[lost[k]], n),
			 drop_help[lost[k]], drop_names[lost[k]]);
		print_lost_line(out, line);
	}
	if (nlost <= STORY_LOST)
		return;
	len = snprintf(line, sizeof(line), "and");
	for (int k = STORY_LOST - 1; k < nlost && len < sizeof(line); k++)
		len += snprintf(line + len, sizeof(line) - len, "%s %s %s",
				k > STORY_LOST - 1 ? "," : "", drop_names[lost[k]],
				cell_grouped(r->drops[lost[k]], n));
	print_lost_line(out, line);
}

static void print_syscalls(FILE *out, const struct run_result *r)
{
	const struct io_story *s = &r->story;
	char a[CELL_MAX], b[CELL_MAX], c[CELL_MAX], t[CELL_MAX];

	fprintf(out, "%-12s%s calls, %s errors", "syscalls", cell_grouped(s->calls, a),
		cell_grouped(s->errors, b));
	if (!unknown(r, "syscall_ns"))
		fprintf(out, ", %s%s in syscalls", r->sampled ? "≈" : "", cell_time(s->syscall_ns, t));
	fprintf(out, "; %s sync calls (fsync, fdatasync, ...)\n", cell_grouped(s->sync_calls, a));
	fprintf(out, "%-12sread %s in %s calls, wrote %s in %s calls", "read/write",
		cell_bytes(s->read_bytes, a), cell_grouped(s->read_calls, b),
		cell_bytes(s->write_bytes, c), cell_grouped(s->write_calls, t));
	if (!unknown(r, "io_ns"))
		fprintf(out, "; I/O time %s", cell_time(s->io_ns, a));
	fputc('\n', out);
}

static void print_page_cache(FILE *out, const struct run_result *r)
{
	const struct io_story *s = &r->story;
	char a[CELL_MAX], b[CELL_MAX], c[CELL_MAX];
	const char *why = unknown(r, "requested_pages");

	if (why) {
		fprintf(out, "%-12sn/a (%s)\n", "page cache", why);
		return;
	}
	fprintf(out, "%-12s%s asked of the cache by reads, %s hit", "page cache",
		cell_bytes(s->requested_pages * 4096, a), cell_bytes(s->hit_pages * 4096, b));
	if (s->requested_pages)
		fprintf(out, " (%llu%%)", (unsigned long long)(100 * s->hit_pages / s->requested_pages));
	fprintf(out, "; readahead %s, unused %s\n", cell_bytes(s->readahead_pages * 4096, c),
		unknown(r, "unused_readahead_pages") ? "n/a (bitmaps overflowed)"
		: cell_bytes(s->unused_readahead_pages * 4096, a));
}

static void print_disk(FILE *out, const struct run_result *r)
{
	const struct io_story *s = &r->story;
	char a[CELL_MAX], b[CELL_MAX], c[CELL_MAX];

	fprintf(out, "%-12sread %s, wrote %s (writeback included), %s requests", "disk",
		cell_bytes(s->disk_read_bytes, a), cell_bytes(s->disk_write_bytes, b),
		cell_grouped(s->disk_requests, c));
	if (!unknown(r, "disk_p99_ns"))
		fprintf(out, ", p99 %s", cell_time_2sig(s->disk_p99_ns, a));
	fputc('\n', out);
	if (r->uring_missing)
		return; /* the report's end says why */
	if (s->uring_ops)
		fprintf(out, "%-12s%s requests, %s moved\n", "io_uring",
			cell_grouped(s->uring_ops, a), cell_bytes(s->uring_bytes, b));
}

/* ---- processes ---- */

static void print_proc_row(FILE *out, const struct proc_record *p, bool timing)
{
	char comm[NAME_TEXT_MAX], args[NAME_TEXT_MAX], c[5][CELL_MAX];
	const struct io_story *s = &p->story;

	fprintf(out, "%7u ", p->pid);
	put_padded(out, name_cell(p->comm, 15, comm, sizeof(comm)), 15);
	fprintf(out, " %6s %6s %6s %6s %6s %s\n", cell_bytes(s->read_bytes, c[0]),
		cell_bytes(s->write_bytes, c[1]), cell_bytes(s->disk_read_bytes, c[2]),
		cell_bytes(s->disk_write_bytes, c[3]), timing ? cell_time(s->io_ns, c[4]) : "-",
		name_head(p->args ? p->args : p->comm, COMMAND_COLUMN, args, sizeof(args)));
}

struct comm_count {
	const char *comm;
	size_t n;
	UT_hash_handle hh;
};

static int cmp_comms(const void *a, const void *b)
{
	const struct comm_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->comm, y->comm);
}

/* "+ 17 more processes: cc1 ×6, as ×6, …: 1.2M read, 40K written", in 100 columns. */
static void print_proc_rest(FILE *out, const struct run_result *r, size_t from)
{
	struct comm_count *c = calloc(r->nprocs + 1, sizeof(*c)), *by_comm = NULL, *k;
	char line[256], tail[96], name[NAME_TEXT_MAX], a[CELL_MAX], b[CELL_MAX];
	uint64_t rd = 0, wr = 0;
	size_t n = 0, len;
	bool linear = false; /* the table could not grow: each name looked for in the list */

	if (!c || from >= r->nprocs) {
		free(c);
		return;
	}
	/* by name in a hash table: a run of 20,000 renamed processes has 20,000 names */
	for (size_t i = from; i < r->nprocs; i++) {
		const struct proc_record *p = &r->procs[r->ranked[i]];
		size_t klen = strlen(p->comm);

		rd += p->story.read_bytes;
		wr += p->story.write_bytes;
		k = NULL;
		if (!linear)
			HASH_FIND(hh, by_comm, p->comm, klen, k);
		for (size_t j = 0; linear && !k && j < n; j++)
			k = strcmp(c[j].comm, p->comm) ? NULL : &c[j];
		if (!k) {
			k = &c[n++];
			k->comm = p->comm;
			hash_oom = false;
			if (!linear)
				HASH_ADD_KEYPTR(hh, by_comm, k->comm, klen, k);
			linear |= hash_oom;
		}
		k->n++;
	}
	HASH_CLEAR(hh, by_comm);
	qsort(c, n, sizeof(*c), cmp_comms);
	snprintf(tail, sizeof(tail), ": %s read, %s written", cell_bytes(rd, a), cell_bytes(wr, b));
	len = snprintf(line, sizeof(line), "+ %zu more process%s:", r->nprocs - from,
		       r->nprocs - from == 1 ? "" : "es");
	for (size_t k = 0; k < n; k++) {
		char one[NAME_TEXT_MAX + 32];
		snprintf(one, sizeof(one), "%s %s ×%zu", k ? "," : "",
			     name_cell(c[k].comm, 15, name, sizeof(name)), c[k].n);
		if (text_width(line) + text_width(one) + text_width(tail) + 3 > 100) {
			len += snprintf(line + len, sizeof(line) - len, ", …");
			break;
		}
		len += snprintf(line + len, sizeof(line) - len, "%s", one);
	}
	fprintf(out, "%s%s\n", line, tail);
	free(c);
}

static void print_procs(FILE *out, const struct run_result *r)
{
	size_t shown = r->nprocs < STORY_PROCS ? r->nprocs : STORY_PROCS;

	/* Folding one process would take the line it frees. */
	if (r->nprocs == STORY_PROCS + 1)
		shown = r->nprocs;
	fprintf(out, "\nprocesses: %zu of %zu, by %s\n", shown, r->nprocs,
		r->timing ? "I/O time" : "bytes");
	fprintf(out, "%7s %-15s %6s %6s %6s %6s %6s %s\n", "pid", "comm", "read", "write",
		"disk r", "disk w", "time", "command");
	for (size_t i = 0; i < shown; i++)
		print_proc_row(out, &r->procs[r->ranked[i]], r->timing);
	print_proc_rest(out, r, shown);
}

void report_process_list(FILE *out, const struct run_result *r, size_t from)
{
	if (from >= r->nprocs)
		return;
	fprintf(out, "\n%7s %7s %-15s %9s %7s %6s %6s %-10s %s\n", "pid", "ppid", "comm",
		"calls", "errors", "read", "write", "exit", "command");
	for (size_t i = from; i < r->nprocs; i++) {
		const struct proc_record *p = &r->procs[r->ranked[i]];
		char exit[64], comm[NAME_TEXT_MAX], args[NAME_TEXT_MAX], a[CELL_MAX], b[CELL_MAX];
		int room;

		format_exit(exit, sizeof(exit), p->exit_seen, p->exit_status);
		fprintf(out, "%7u %7u ", p->pid, p->ppid);
		/* A comm escaped wider than its 15 columns takes the command's room, not cut. */
		name_cell(p->comm, 15 + 20, comm, sizeof(comm));
		put_padded(out, comm, 15);
		/* 76 columns before the command with a 10-column exit; a longer one takes room. */
		room = 24 - (strlen(exit) > 10 ? (int)strlen(exit) - 10 : 0) -
		       (p->overflow ? 12 : 0) - (text_width(comm) > 15 ? text_width(comm) - 15 : 0);
		fprintf(out, " %9llu %7llu %6s %6s %-10s %s%s\n", (unsigned long long)p->prof.calls,
			(unsigned long long)p->prof.errors, cell_bytes(p->story.read_bytes, a),
			cell_bytes(p->story.write_bytes, b), exit,
			name_head(p->args ? p->args : "", room > 4 ? room : 4, args, sizeof(args)),
			p->overflow ? " (+overflow)" : "");
	}
}

void report_story(FILE *out, const struct run_result *r)
{
	print_command(out, r);
	print_containers(out, r);
	print_lost(out, r);
	print_syscalls(out, r);
	print_page_cache(out, r);
	print_disk(out, r);
	report_run_files(out, r, STORY_FILES);
	print_procs(out, r);
}
