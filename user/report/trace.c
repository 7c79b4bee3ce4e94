// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline's events (trace.h): calls, block and io_uring requests, the flows from a call
 * to the block requests it started, and process instants. The document around them, names,
 * counter tracks and the end: trace_out.c.
 *
 * Flows. A block request started inside a syscall of a traced thread carries that call's
 * (thread, start) from the kernel; the call's own event comes when it returns and says how
 * many requests it started. A request that completes before (a read's own requests do) waits
 * here; then the call's slice gets "flow_out" and each of its requests "flow_in", with one
 * "bind_id" (Perfetto's JSON flows: one source, any number of ends). A call under
 * --trace-min has no slice: the kernel sends a note (TE_UNLINKED), and its requests go out
 * without a flow.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "model/syscall_table.h"
#include "trace.h"
#include "trace_out_impl.h"
#include "util/vec.h"

static const char *file_name(struct trace_writer *w, const struct trace_file *f)
{
	const char *name = f->ino ? w->o.name_of(w->o.name_ctx, f->dev, f->ino, f->igen) : NULL;

	return name ? name : f->ino ? "(name unknown)" : NULL;
}

static uint32_t disk_pid(struct trace_writer *w, uint32_t dev)
{
	size_t i;

	for (i = 0; i < w->ndisks && w->disks[i] != dev; i++)
		;
	if (i == w->ndisks && w->ndisks < sizeof(w->disks) / sizeof(w->disks[0]))
		w->disks[w->ndisks++] = dev;
	return DISK_PID_BASE + (uint32_t)i;
}

static void put_flags(FILE *f, uint32_t flags, uint32_t charge)
{
	static const char *const names[] = { "sync", "readahead", "meta", "fua", "preflush" };
	const char *sep = "";

	fputs(",\"flags\":\"", f);
	if (charge == CHARGE_DIRTIER) {
		fputs("writeback", f);
		sep = ",";
	}
	for (unsigned b = 0; b < sizeof(names) / sizeof(names[0]); b++)
		if (flags & (1u << b)) {
			fprintf(f, "%s%s", sep, names[b]);
			sep = ",";
		}
	fputc('"', f);
}

/* A request as an async slice on its disk's track, issue (or start) to completion. */
static void write_request(struct trace_writer *w, const struct trace_block *b, bool flow)
{
	static const char *const via[] = { "task", "io-wq", "sqpoll" };
	uint32_t disk = disk_pid(w, b->dev);
	uint64_t begin = b->issue_ns ? b->issue_ns : b->start_ns ? b->start_ns : b->done_ns;
	const char *op = block_op_names[b->op % BLOCK_OPS], *file;
	struct trace_proc *p;
	uint64_t id = ++w->seq;

	if (!out_room(w, 2))
		return; /* past --trace-max-events: no name looked up (it may cost a syscall) */
	file = file_name(w, &b->file);
	p = b->tgid ? trace_proc_of(w, b->tgid) : NULL;
	out_begin(w, 'b', op, disk, disk, begin < b->done_ns ? begin : b->done_ns);
	fprintf(w->f, ",\"cat\":\"block\",\"id\":\"b%llu\"", (unsigned long long)id);
	if (flow)
		fprintf(w->f, ",\"bind_id\":\"%llx\",\"flow_in\":true",
			(unsigned long long)flow_id(b->sys_tid, b->sys_start_ns));
	fprintf(w->f, ",\"args\":{\"pid\":%u", b->tgid);
	out_str(w, "process", p && p->comm[0] ? p->comm : b->tgid ? "?" : "(other I/O)");
	out_str(w, "file", file ? file : "(metadata)");
	fprintf(w->f, ",\"sector\":%llu,\"bytes\":%u", (unsigned long long)b->sector, b->bytes);
	put_flags(w->f, b->flags, b->charge);
	out_str(w, "via", via[b->via < 3 ? b->via : 0]);
	if (b->start_ns && b->issue_ns >= b->start_ns) {
		fputs(",\"queued_us\":", w->f);
		out_us(w->f, b->issue_ns - b->start_ns);
	}
	if (b->late)
		fputs(",\"late\":true", w->f);
	if (b->error)
		fprintf(w->f, ",\"error\":%d", b->error);
	fputs("}}", w->f);
	out_begin(w, 'e', op, disk, disk, b->done_ns);
	fprintf(w->f, ",\"cat\":\"block\",\"id\":\"b%llu\"}", (unsigned long long)id);
	w->st.block_requests++;
	w->st.flows += flow;
}

static struct trace_link *link_of(struct trace_writer *w, uint32_t tid, uint64_t start_ns)
{
	struct trace_link *l;

	for (size_t i = 0; i < w->nlinks; i++)
		if (w->links[i].tid == tid && w->links[i].start_ns == start_ns)
			return &w->links[i];
	l = VEC_PUSH(w->links, w->nlinks);
	if (l)
		*l = (struct trace_link){ .tid = tid, .start_ns = start_ns };
	return l;
}

/* A link whose requests all went out is forgotten. */
static void drop_if_done(struct trace_writer *w, struct trace_link *l)
{
	if (l->state == LINK_PENDING || l->remaining > 0)
		return;
	free(l->waiting);
	*l = w->links[--w->nlinks];
}

/* The call's event came (drawn: it has a slice) or its note (none): release its requests. */
static void settle(struct trace_writer *w, struct trace_link *l, int state, uint32_t linked)
{
	if (!l)
		return;
	l->state = state;
	l->remaining += linked;
	for (size_t i = 0; i < l->nwaiting; i++)
		write_request(w, &l->waiting[i], state == LINK_DRAWN);
	l->remaining -= l->nwaiting;
	l->nwaiting = 0;
	drop_if_done(w, l);
}

static void on_block(struct trace_writer *w, const struct trace_block *b)
{
	struct trace_proc *p = b->tgid ? trace_proc_of(w, b->tgid) : NULL;
	struct trace_link *l;
	struct trace_block *waiting;

	if (p && b->op == BOP_READ)
		p->now[CT_BLOCK_READ] += b->bytes;
	else if (p && b->op == BOP_WRITE)
		p->now[CT_BLOCK_WRITE] += b->bytes;
	l = b->sys_start_ns ? link_of(w, b->sys_tid, b->sys_start_ns) : NULL;
	if (!l || l->state != LINK_PENDING) {
		write_request(w, b, l && l->state == LINK_DRAWN);
		if (l) {
			l->remaining--;
			drop_if_done(w, l);
		}
		return;
	}
	waiting = VEC_PUSH(l->waiting, l->nwaiting);
	if (!waiting) {
		write_request(w, b, false);
		return;
	}
	*waiting = *b;
}

static void on_syscall(struct trace_writer *w, const struct trace_syscall *s)
{
	bool drawn = out_room(w, 1);

	if (drawn) {
		const char *file = file_name(w, &s->files[0]), *file2 = file_name(w, &s->files[1]);

		out_begin(w, 'X', syscall_name(s->nr), s->tgid, s->tid, s->start_ns);
		fputs(",\"cat\":\"syscall\",\"dur\":", w->f);
		out_us(w->f, s->dur_ns);
		if (s->linked)
			fprintf(w->f, ",\"bind_id\":\"%llx\",\"flow_out\":true",
				(unsigned long long)flow_id(s->tid, s->start_ns));
		fprintf(w->f, ",\"args\":{\"ret\":%lld", (long long)s->ret);
		if (s->nr < MAX_SYSCALLS && w->data_call[s->nr] && s->ret >= 0)
			fprintf(w->f, ",\"bytes\":%lld", (long long)s->ret);
		if (file)
			out_str(w, "file", file);
		if (file2)
			out_str(w, "to", file2);
		fputs("}}", w->f);
		w->st.syscalls++;
	}
	if (s->linked)
		settle(w, link_of(w, s->tid, s->start_ns), drawn ? LINK_DRAWN : LINK_NONE,
		       s->linked);
}

/* An io_uring request: an async slice in its process, submission to first completion. */
static void on_uring(struct trace_writer *w, const struct trace_uring *u)
{
	static const char *const how[] = { "inline", "async", "poll" };
	char buf[16];
	const char *name = uring_op_name(u->op, buf, sizeof(buf));
	uint64_t id = ++w->seq;

	if (!out_room(w, 2))
		return;
	out_begin(w, 'b', name, u->tgid, u->tid, u->submit_ns);
	fprintf(w->f, ",\"cat\":\"io_uring\",\"id\":\"u%llu\",\"args\":{\"res\":%d",
		(unsigned long long)id, u->res);
	out_str(w, "ran", how[u->how < 3 ? u->how : 0]);
	fputs("}}", w->f);
	out_begin(w, 'e', name, u->tgid, u->tid, u->done_ns);
	fprintf(w->f, ",\"cat\":\"io_uring\",\"id\":\"u%llu\"}", (unsigned long long)id);
	w->st.io_uring_requests++;
}

static void on_thread(struct trace_writer *w, const struct trace_thread *t)
{
	char comm[COMM_LEN + 1] = "";

	if (!out_room(w, 1))
		return;
	memcpy(comm, t->comm, COMM_LEN);
	out_begin(w, 'M', "thread_name", t->tgid, t->tid, 0);
	out_only_arg(w, "name", comm);
}

int trace_on_event(struct trace_writer *w, const void *data, size_t size)
{
	uint32_t kind;

	if (size < sizeof(kind))
		return 0;
	memcpy(&kind, data, sizeof(kind));
	if (kind == TE_SYSCALL && size >= sizeof(struct trace_syscall)) {
		on_syscall(w, data);
	} else if (kind == TE_UNLINKED && size >= sizeof(struct trace_unlinked)) {
		const struct trace_unlinked *u = data;

		settle(w, link_of(w, u->tid, u->start_ns), LINK_NONE, u->linked);
	} else if (kind == TE_BLOCK && size >= sizeof(struct trace_block)) {
		on_block(w, data);
	} else if (kind == TE_URING && size >= sizeof(struct trace_uring)) {
		on_uring(w, data);
	} else if (kind == TE_THREAD && size >= sizeof(struct trace_thread)) {
		on_thread(w, data);
	}
	return 0;
}

void trace_unseen(struct trace_writer *w, const struct block_rq_info *info, uint64_t now_ns)
{
	struct trace_block b = {
		.kind = TE_BLOCK, .tgid = info->tgid,
		.dev = info->dev, .op = info->op, .sector = info->sector, .bytes = info->bytes,
		.charge = info->charge, .via = info->via, .late = 1, .start_ns = info->start_ns,
		.issue_ns = info->issue_ns, .done_ns = now_ns,
		.file = { .ino = info->ino, .dev = info->fdev, .igen = info->igen },
		.sys_tid = info->sys_tid, .sys_start_ns = info->sys_start_ns,
	};

	if (info->charge != CHARGE_NONE) /* others' requests are not in the timeline */
		on_block(w, &b);
}

/* The requests still waiting for their call's event (lost, or the run cut short). */
static void flush_links(struct trace_writer *w)
{
	for (size_t i = 0; i < w->nlinks; i++) {
		for (size_t k = 0; k < w->links[i].nwaiting; k++)
			write_request(w, &w->links[i].waiting[k], false);
		free(w->links[i].waiting);
	}
	free(w->links);
	w->links = NULL;
	w->nlinks = 0;
}

int trace_finish(struct trace_writer *w, const struct run_result *r, uint64_t end_ns,
		 uint64_t lost, struct trace_stats *out)
{
	flush_links(w);
	return trace_end(w, r, end_ns, lost, out);
}

void trace_on_proc(struct trace_writer *w, const struct iot_proc_event *e)
{
	static const char *const names[] = { [EV_FORK] = "fork", [EV_EXEC] = "exec",
					     [EV_EXIT] = "exit" };
	struct trace_proc *p = trace_proc_of(w, e->pid);
	uint32_t on = e->kind == EV_FORK ? e->ppid : e->pid;

	if (p && (e->kind == EV_EXEC || e->kind == EV_COMM || e->kind == EV_FORK))
		memcpy(p->comm, e->comm, sizeof(p->comm) - 1);
	if (e->kind > EV_EXIT || !names[e->kind] || !out_room(w, 1))
		return;
	out_begin(w, 'i', names[e->kind], on, on, e->ts_ns);
	fprintf(w->f, ",\"s\":\"p\",\"cat\":\"process\",\"args\":{\"pid\":%u", e->pid);
	if (e->kind == EV_EXIT && WIFSIGNALED(e->exit_code))
		fprintf(w->f, ",\"signal\":%d", WTERMSIG(e->exit_code));
	else if (e->kind == EV_EXIT)
		fprintf(w->f, ",\"status\":%d", WEXITSTATUS(e->exit_code));
	if (e->kind == EV_EXEC)
		out_str(w, "comm", p ? p->comm : "");
	fputs("}}", w->f);
}
