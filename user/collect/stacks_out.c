// SPDX-License-Identifier: GPL-2.0
/*
 * The stacks, out (stacks.h): each aggregate's frames symbolized (libdw: sym.c) through the
 * mappings of its process's exec, written as folded stacks, root first ("comm;main;f;read
 * 1234"; identical lines of processes of one name summed; each frame escaped by esc_folded,
 * so a ';' or a newline in a name cannot break a line), and each process's top call sites:
 * its stacks' innermost frames outside the C library, summed (names as they are: the
 * reports escape them).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/cells.h"
#include "stacks_impl.h"
#include "model/syscall_table.h"
#include "util/escape.h"

#define SITE_FRAMES 3 /* frames of a call site: the caller of the C library and two more */
#define TOP_SITES 5

/* One line of the folded file, and what it adds up to. */
struct line {
	char *text; /* without the weight */
	uint32_t pid, nr;
	char *where; /* its call site */
	uint64_t calls, bytes, time_ns;
};

struct frame {
	const char *name;
	bool libc;    /* in the C library or the dynamic loader */
	bool wrapper; /* a language runtime's or a static C library's syscall wrapper, by name */
};

/*
 * Frames that only pass a call on to the kernel, by name, where no file says whose they are:
 * Go's (internal/runtime/syscall.Syscall6 <- syscall.RawSyscall6 <- syscall.Syscall <-
 * syscall.read <- internal/poll.(*FD).Read <- os.(*File).Read: a Go binary is one file),
 * and a statically linked C library's (__libc_read, _IO_file_xsgetn, fread, and the
 * wrappers of the syscall catalogue's calls on files: read, open64...).
 */
static bool wrapper_name(const char *name)
{
	static const char *const prefixes[] = { "internal/", "runtime/internal/", "syscall.",
						"os.", "golang.org/x/sys/unix.", "__libc_", "__GI_",
						"_IO_", "__read", "__write", "__open", "__close",
						"__pread", "__pwrite", "__fsync", "__lseek" };
	static const char *const names[] = { "syscall", "fread", "fwrite", "fflush", "fclose",
					     "fopen", "fopen64", "fgets", "fputs", "puts", "getline",
					     "getdelim", "printf", "fprintf", "vfprintf" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return syscall_wrapper_name(name);
}

static bool in_libc(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	return base && (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
			!strncmp(base, "ld-linux", 8) || !strncmp(base, "libpthread", 10));
}

static const struct stack_vma *vma_of(const struct stack_space *sp, uint64_t pc)
{
	for (size_t i = 0; sp && i < sp->nvmas; i++)
		if (pc >= sp->vmas[i].start && pc < sp->vmas[i].end)
			return &sp->vmas[i];
	return NULL;
}

/* The frames of an aggregate, root first; how many (at most max). */
static int frames_of(struct stacks *s, const struct stack_agg *a, struct frame *out, int max,
		     struct stacks_summary *sum)
{
	struct stack_space *sp = stacks_space(s, a->pid, a->exec_id);
	int n = 0;

	for (int d = a->depth - 1; d >= 0 && n < max; d--) {
		/* A return address's call is just before it: look the call up. */
		uint64_t pc = a->pcs[d], at = d ? pc - 1 : pc;
		const struct stack_vma *v = vma_of(sp, at);
		const char *path = v ? stacks_vma_path(s, sp, v) : NULL;
		const char *names[SYM_MAX_INLINE];
		int k = path ? sym_frames(s->sym, path, pc - v->start + v->pgoff * 4096, d > 0,
					 names) : 0;

		if (!k) {
			names[0] = "[unknown]";
			k = 1;
		}
		for (int i = 0; i < k && n < max; i++) {
			sum->unknown_frames += !strncmp(names[i], "[unknown]", 9);
			out[n++] = (struct frame){ names[i], in_libc(path),
						   wrapper_name(names[i]) };
		}
	}
	return n;
}

/*
 * Where a site starts, innermost first ("reader_a ← middle ← main"): the innermost frame of
 * the program's own code, past the C library's and the syscall wrappers'. A stack with no
 * such frame (frames without a name do not count) is the C library's, the dynamic loader's
 * or a runtime's own I/O: it starts at the innermost frame that is not a wrapper of the C
 * library (ld.so loading a library: "open_verify ← _dl_map_object ← openaux", not its
 * outermost "_start"), or outside the C library (Go's runtime calling the kernel itself).
 */
static int site_start(const struct frame *f, int n)
{
	int inner = n - 1;
	bool own = false;

	for (int i = 0; i < n; i++)
		own |= !f[i].libc && !f[i].wrapper && strcmp(f[i].name, "[unknown]");
	if (own) {
		while (inner > 0 && (f[inner].libc || f[inner].wrapper))
			inner--;
		return inner;
	}
	while (inner > 0 && f[inner].libc && f[inner].wrapper)
		inner--;
	return inner;
}

static char *site_of(const struct frame *f, int n)
{
	char buf[512] = "";
	size_t used = 0;
	int taken = 0;

	for (int i = site_start(f, n); i >= 0 && taken < SITE_FRAMES; i--, taken++)
		used += snprintf(buf + used, used < sizeof(buf) ? sizeof(buf) - used : 0, "%s%s",
				 taken ? " ← " : "", f[i].name);
	return strdup(n ? buf : "[no frame]");
}

static const char *comm_of(const struct run_result *r, uint32_t pid)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid)
			return r->procs[i].comm;
	return "?";
}

/* Appends ";" (unless first) and frame, escaped for the folded format (esc_folded). */
static size_t add_frame(char *text, size_t used, const char *frame)
{
	if (used)
		text[used++] = ';';
	return used + esc_folded(text + used, SIZE_MAX, frame);
}

static int line_of(struct stacks *s, const struct run_result *r, const struct stack_agg *a,
		   struct line *l, struct stacks_summary *sum)
{
	struct frame f[MAX_STACK_DEPTH * SYM_MAX_INLINE];
	int n = frames_of(s, a, f, sizeof(f) / sizeof(f[0]), sum);
	const char *comm = comm_of(r, a->pid), *call = syscall_name(a->nr);
	size_t len = esc_folded(NULL, 0, comm) + esc_folded(NULL, 0, call) + 2, used;

	for (int i = 0; i < n; i++)
		len += esc_folded(NULL, 0, f[i].name) + 1;
	*l = (struct line){ .pid = a->pid, .nr = a->nr, .calls = a->calls, .bytes = a->bytes,
			    .time_ns = a->time_ns, .text = malloc(len), .where = site_of(f, n) };
	if (!l->text || !l->where)
		return -1;
	used = add_frame(l->text, 0, comm);
	for (int i = 0; i < n; i++)
		used = add_frame(l->text, used, f[i].name);
	add_frame(l->text, used, call);
	if ((uint64_t)n > sum->max_depth)
		sum->max_depth = n;
	return 0;
}

static uint64_t weight(const struct stacks *s, const struct line *l)
{
	return s->by == STACKS_BY_BYTES ? l->bytes : s->by == STACKS_BY_TIME ? l->time_ns : l->calls;
}

static int cmp_text(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

/* Writes the lines, sorted, identical ones summed; how many went out, or -1. */
static long write_folded(struct stacks *s, struct line *lines, size_t n, const char *path)
{
	FILE *f = fopen(path, "we");
	long out = 0;

	if (!f)
		return -1;
	qsort(lines, n, sizeof(*lines), cmp_text);
	for (size_t i = 0; i < n;) {
		uint64_t w = 0;
		size_t k = i;

		for (; k < n && !strcmp(lines[k].text, lines[i].text); k++)
			w += weight(s, &lines[k]);
		if (w) {
			fprintf(f, "%s %llu\n", lines[i].text, (unsigned long long)w);
			out++;
		}
		i = k;
	}
	if (fclose(f))
		return -1;
	return out;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct line *x = *(const struct line *const *)a, *y = *(const struct line *const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static const struct stacks *sort_by; /* qsort has no context argument */

static int cmp_weight(const void *a, const void *b)
{
	uint64_t x = weight(sort_by, a), y = weight(sort_by, b);

	return (x < y) - (x > y);
}

/* A process's lines summed by (syscall, call site); its top ones into p->sites. */
static int sites_of(struct stacks *s, struct proc_record *p, struct line *const *g, size_t n)
{
	struct line *sum = calloc(n ? n : 1, sizeof(*sum));
	size_t m = 0;

	if (!sum)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		while (k < m && (sum[k].nr != g[i]->nr || strcmp(sum[k].where, g[i]->where)))
			k++;
		if (k == m)
			sum[m++] = (struct line){ .nr = g[i]->nr, .where = g[i]->where };
		sum[k].calls += g[i]->calls;
		sum[k].bytes += g[i]->bytes;
		sum[k].time_ns += g[i]->time_ns;
	}
	sort_by = s;
	qsort(sum, m, sizeof(*sum), cmp_weight);
	p->nsites = m < TOP_SITES ? m : TOP_SITES;
	p->sites = calloc(p->nsites ? p->nsites : 1, sizeof(*p->sites));
	for (size_t i = 0; p->sites && i < p->nsites; i++)
		p->sites[i] = (struct stack_site){ .syscall = strdup(syscall_name(sum[i].nr)),
						   .where = strdup(sum[i].where),
						   .calls = sum[i].calls, .bytes = sum[i].bytes,
						   .time_ns = sum[i].time_ns };
	free(sum);
	return p->sites ? 0 : -1;
}

static void all_sites(struct stacks *s, struct run_result *r, struct line *lines, size_t n)
{
	struct line **by_pid = malloc((n ? n : 1) * sizeof(*by_pid));

	if (!by_pid)
		return;
	for (size_t i = 0; i < n; i++)
		by_pid[i] = &lines[i];
	qsort(by_pid, n, sizeof(*by_pid), cmp_pid);
	for (size_t i = 0; i < n;) {
		size_t k = i;

		while (k < n && by_pid[k]->pid == by_pid[i]->pid)
			k++;
		for (size_t p = 0; p < r->nprocs; p++)
			if (r->procs[p].pid == by_pid[i]->pid)
				sites_of(s, &r->procs[p], &by_pid[i], k - i);
		i = k;
	}
	free(by_pid);
}

int stacks_finish(struct stacks *s, struct run_result *r, const char *path)
{
	static const char *const by[] = { "calls", "bytes", "time" };
	struct line *lines = calloc(s->naggs ? s->naggs : 1, sizeof(*lines));
	struct stacks_summary *sum = &r->stacks;
	char shown[NAME_TEXT_MAX];
	long written = -1;
	size_t n = 0;

	sum->mode = s->mode == STACKS_DWARF ? "dwarf" : "frame pointers";
	sum->by = by[s->by];
	sum->samples = s->samples;
	sum->lost_calls = r->drops[DROP_STACKS];
	for (size_t i = 0; lines && i < s->naggs; i++) {
		if (line_of(s, r, &s->aggs[i], &lines[n], sum))
			break;
		sum->stack_calls += lines[n++].calls;
	}
	if (lines && n == s->naggs) {
		all_sites(s, r, lines, n);
		written = write_folded(s, lines, n, path);
	}
	if (written < 0)
		fprintf(stderr, "iotrace: writing the stacks %s: %s\n",
			name_cell(path, 0, shown, sizeof(shown)),
			lines ? strerror(errno) : "out of memory");
	sum->stacks = written > 0 ? written : 0;
	for (size_t i = 0; lines && i < s->naggs; i++) {
		free(lines[i].text);
		free(lines[i].where);
	}
	free(lines);
	return written < 0 ? -1 : 0;
}
