// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "collect.h"
#include "engine.h"
#include "serve_scrape.h"
#include "stacks.h"
#include "top_collect.h"
#include "kernel/tracer.h"
#include "model/names.h"
#include "model/syscall_table.h"
#include "report/cells.h"
#include "report/trace.h"
#include "util/container.h"
#include "util/pidinfo.h"

/* top: names kept before they are all forgotten (the kernel sends live files' names again). */
#define TOP_NAMES_MAX 65536

/*
 * One engine, three refresh policies: run mode's (the process table and ledger of
 * collect.c, harvested into one result at the end), top's (top_collect.c: each refresh, the
 * interval's differences of every live counter) and serve's (serve_scrape.c: each scrape,
 * the cumulative counters by label).
 */
struct engine {
	const struct options *opt;  /* run mode's command line (NULL in top and serve) */
	struct run_result *r;
	struct tracer *tracer;
	struct collector *coll;     /* run: the process table and the ledger's records */
	struct top_collector *top;  /* top: its processes, files and disks, each refresh */
	struct path_key *name_keys; /* top: the names kept, to forget them past TOP_NAMES_MAX */
	size_t nname_keys;
	bool serve;                 /* serve: labels, not processes */
	struct scrape_config scrape; /* serve: what each scrape reads */
	pthread_mutex_t cgroup_lock; /* serve: the cgroup path cache, events' and scrapes' threads */
	struct scrape *scraped;     /* serve: the scrape being answered */
	struct names *names;        /* every file name the kernel recorded: the one table */
	bool names_given;           /* ... which the result owns once the run is over */
	struct trace_writer *trace; /* --trace, or NULL */
	struct stacks *stacks;      /* --stacks, or NULL */
	uint64_t start_ns;
	uint64_t next_tick;         /* when the collector's regular work is due */
	uint64_t next_sample;       /* --trace: when the counter tracks are sampled next */
	bool room_wanted;           /* the kernel asked for a tick now (EV_LEDGER_FULL) */
	bool names_failed;          /* a name could not be kept */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- names: one table for the collector, the timeline and the stacks ---- */

static const char *file_name_of(void *ctx, uint32_t dev, uint64_t ino, uint32_t igen)
{
	struct engine *e = ctx;
	struct path_key key = { .dev = dev, .ino = ino, .igen = igen };

	return names_lookup(e->names, &key);
}

static void add_name(struct engine *e, void *data, size_t size)
{
	struct path_key key;
	int err = names_add_event(e->names, data, size, &key);

	if (err < 0)
		e->names_failed = true;
	else if (!err && e->name_keys && e->nname_keys < TOP_NAMES_MAX)
		e->name_keys[e->nname_keys++] = key;
}

/*
 * top: past TOP_NAMES_MAX names all are forgotten at once, and the kernel told to send each
 * again with its file's next new entry, so files in use are named again within a refresh or
 * two.
 */
static void forget_names(struct engine *e)
{
	if (e->nname_keys < TOP_NAMES_MAX)
		return;
	tracer_forget_names(e->tracer, e->name_keys, e->nname_keys);
	names_free(e->names);
	e->names = names_new();
	e->nname_keys = 0;
	if (!e->names)
		e->names_failed = true;
}

/* ---- the kernel's events ---- */

static int on_proc_event(void *ctx, void *data, size_t size)
{
	struct engine *e = ctx;
	const struct iot_proc_event *ev = data;

	if (size < sizeof(*ev))
		return 0;
	if (ev->kind == EV_LEDGER_FULL) {
		e->room_wanted = true;
		return 0;
	}
	if (e->top)
		return top_on_event(e->top, data, size);
	if (e->serve) {
		/* A new label: its cgroup's path noted while the cgroup exists. */
		if (ev->kind == EV_LABEL) {
			pthread_mutex_lock(&e->cgroup_lock);
			cgroup_note(ev->ts_ns);
			pthread_mutex_unlock(&e->cgroup_lock);
		}
		return 0;
	}
	if (e->trace)
		trace_on_proc(e->trace, ev);
	return collector_on_event(e->coll, data, size);
}

static int on_name(void *ctx, void *data, size_t size)
{
	add_name(ctx, data, size);
	return 0;
}

/* The trace's ring: file names (in order with the events naming them) and events. */
static int on_trace(void *ctx, void *data, size_t size)
{
	struct engine *e = ctx;
	uint32_t kind;

	if (size < sizeof(kind))
		return 0;
	memcpy(&kind, data, sizeof(kind));
	if (kind == TE_NAME)
		return on_name(e, data, size);
	return trace_on_event(e->trace, data, size);
}

static int on_stack(void *ctx, void *data, size_t size)
{
	return stacks_on_event(((struct engine *)ctx)->stacks, data, size);
}

struct pending_ctx {
	struct stacks *stacks;
	uint32_t pid;
};

static void add_pending(uint32_t nr, const struct stack_pending *p, void *ctx)
{
	struct pending_ctx *c = ctx;

	stacks_add_pending(c->stacks, c->pid, nr, p);
}

/* A process leaves its slot (exited, or the run ends): what the kernel kept per slot. */
static void slot_retired(uint32_t pid, uint32_t slot, void *ctx)
{
	struct engine *e = ctx;
	uint64_t v[TRACE_COUNTERS];

	if (e->trace) {
		tracer_trace_counters(e->tracer, slot, v, true);
		trace_counters(e->trace, pid, v);
	}
	if (e->stacks) {
		struct pending_ctx c = { e->stacks, pid };

		tracer_stack_slot(e->tracer, slot, add_pending, &c);
	}
}

/* ---- opening: the sinks' files first, then the programs ---- */

/* --trace: the file is made before anything runs, so that a bad path fails first. */
static int open_trace(struct engine *e, struct tracer_config *cfg)
{
	const struct options *o = e->opt;
	struct trace_options to = {
		.path = o->trace, .min_ns = o->trace_min_ns, .interval_ns = o->trace_interval_ns,
		.max_events = o->trace_max_events, .name_of = file_name_of, .name_ctx = e,
	};

	if (!o->trace)
		return 0;
	e->trace = trace_open(&to);
	if (!e->trace)
		return -1;
	cfg->trace = true;
	cfg->trace_min_ns = o->trace_min_ns;
	cfg->on_trace = on_trace;
	e->r->trace_path = o->trace;
	return 0;
}

/* --stacks: the file is made now, so that a bad path fails before the command runs. */
static int open_stacks(struct engine *e, struct tracer_config *cfg)
{
	const struct options *o = e->opt;
	char shown[NAME_TEXT_MAX];
	int fd;

	if (!o->stacks)
		return 0;
	fd = open(o->stacks, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "iotrace: cannot write the stacks %s: %s\n",
			name_cell(o->stacks, 0, shown, sizeof(shown)), strerror(errno));
		return -1;
	}
	close(fd);
	e->stacks = stacks_new(o->stacks_unwind,
			       o->stacks_by >= 0 ? o->stacks_by
			       : o->timing ? STACKS_BY_TIME : STACKS_BY_CALLS,
			       file_name_of, e);
	if (!e->stacks) {
		fprintf(stderr, "iotrace: out of memory\n");
		return -1;
	}
	cfg->stacks = o->stacks_unwind;
	cfg->on_stack = on_stack;
	e->r->stacks_path = o->stacks;
	return 0;
}

/* The tracer and the collector its events go to; prints one line and returns -1 on failure. */
static int open_tracing(struct engine *e, const struct tracer_config *cfg)
{
	e->names = names_new();
	e->coll = e->names ? collector_new(e->names) : NULL;
	if (!e->coll) {
		fprintf(stderr, "iotrace: out of memory\n");
		return -1;
	}
	e->tracer = tracer_open(cfg, on_proc_event, e);
	if (!e->tracer)
		return -1;
	if (collector_start(e->coll, e->tracer)) {
		fprintf(stderr, "iotrace: out of memory\n");
		return -1;
	}
	if (e->trace || e->stacks)
		collector_on_retire(e->coll, slot_retired, e);
	return 0;
}

/* What the result says of the run before it starts: the command, its options, its cwd. */
static void begin_result(struct run_result *r, const struct options *o)
{
	memset(r, 0, sizeof(*r));
	r->command = o->command;
	r->timing = o->timing;
	r->files_by_path = o->files_by_path;
	r->cwd = pid_cwd(o->command ? 0 : o->pid);
}

struct engine *engine_open(const struct options *o, struct run_result *r)
{
	struct tracer_config cfg = {
		.timing = o->timing, .time_all = o->time_all, .verbose = o->verbose,
		.max_procs = o->max_procs, .on_name = on_name,
	};
	struct engine *e = calloc(1, sizeof(*e));

	if (!e) {
		fprintf(stderr, "iotrace: out of memory\n");
		return NULL;
	}
	e->opt = o;
	e->r = r;
	begin_result(r, o);
	if (open_trace(e, &cfg) || open_stacks(e, &cfg) || open_tracing(e, &cfg)) {
		engine_close(e);
		return NULL;
	}
	return e;
}

void engine_close(struct engine *e)
{
	if (!e)
		return;
	trace_abort(e->trace); /* a run that ended early: no timeline, no stacks */
	if (e->stacks)
		unlink(e->opt->stacks);
	stacks_free(e->stacks);
	tracer_close(e->tracer);
	collector_free(e->coll);
	top_collector_free(e->top);
	free(e->name_keys);
	scrape_free(e->scraped);
	if (e->serve)
		pthread_mutex_destroy(&e->cgroup_lock);
	if (!e->names_given)
		names_free(e->names);
	free(e);
}

int engine_events_fd(struct engine *e)
{
	return tracer_events_fd(e->tracer);
}

/* ---- while the run goes on ---- */

/*
 * Process events that did not wake the caller (bpf/proc.bpf.c, submit_event) are collected
 * at least this often.
 */
#define RUN_POLL_MS 50

void engine_start(struct engine *e)
{
	e->start_ns = now_ns();
	e->next_tick = e->start_ns + RUN_POLL_MS * 1000000ULL;
	if (e->trace) {
		trace_start(e->trace, e->start_ns);
		e->next_sample = e->start_ns + e->opt->trace_interval_ns;
	}
}

int engine_add_root(struct engine *e, pid_t pid, pid_t ppid, const char *comm, const char *args,
		    bool pending)
{
	uint32_t slot = tracer_claim_slot(e->tracer);

	if (!slot || collector_add_root(e->coll, pid, ppid, slot, comm, args, now_ns()) ||
	    tracer_watch(e->tracer, pid, slot, pending))
		return -1;
	if (e->trace)
		trace_process(e->trace, pid, comm);
	return 0;
}

int engine_wait_ms(struct engine *e)
{
	uint64_t due = e->trace && e->next_sample < e->next_tick ? e->next_sample : e->next_tick;
	uint64_t now = now_ns();
	int wait = due > now && !e->room_wanted ? (due - now) / 1000000 + 1 : 0;

	return wait < RUN_POLL_MS ? wait : RUN_POLL_MS;
}

/* The regular work, now. */
static void tick_now(struct engine *e)
{
	e->room_wanted = false;
	tracer_tick(e->tracer);
	tracer_poll_events(e->tracer); /* names first: what the collector evicts needs them */
	e->next_tick = now_ns() + (e->top ? top_tick(e->top) : collector_tick(e->coll)) * 1000000ULL;
}

void engine_tick(struct engine *e)
{
	if (now_ns() >= e->next_tick || e->room_wanted)
		tick_now(e);
}

static void sample_live(uint32_t pid, uint32_t slot, void *ctx)
{
	struct engine *e = ctx;
	uint64_t v[TRACE_COUNTERS];

	tracer_trace_counters(e->tracer, slot, v, false);
	trace_counters(e->trace, pid, v);
}

int engine_read_events(struct engine *e, bool ready)
{
	int err = ready ? tracer_poll_events(e->tracer) : 0;
	uint64_t now;

	/* After the events: the interval's block requests are in its counters. */
	now = now_ns();
	if (!e->trace || now < e->next_sample)
		return err < 0 ? err : 0;
	collector_for_each_live(e->coll, sample_live, e);
	trace_sample(e->trace, now);
	e->next_sample = now + e->opt->trace_interval_ns;
	return err < 0 ? err : 0;
}

void engine_command_exited(struct engine *e, int status)
{
	e->r->exit_known = true;
	e->r->exit_status = status;
}

void engine_stopped(struct engine *e, int signo, bool partial)
{
	e->r->partial = partial;
	e->r->stop_signal = signo;
}

/* ---- the end: every sink finished, then the model derived once ---- */

static void trace_unseen_request(const struct block_rq_info *info, void *ctx)
{
	struct engine *e = ctx;

	trace_unseen(e->trace, info, now_ns());
}

static void add_fp_stack(const struct stack_key *k, const struct stack_val *v, const __u64 *ips,
			 int depth, void *ctx)
{
	stacks_add_fp(ctx, k, v, ips, depth);
}

/*
 * Once the programs are detached and their last events read: the requests whose completion
 * the kernel skipped go to the timeline, the frame-pointer aggregates to the stacks (the
 * processes still alive come as the collector retires them, slot_retired).
 */
static void last_sink_events(struct engine *e)
{
	if (e->trace)
		tracer_unseen_requests(e->tracer, trace_unseen_request, e);
	if (e->stacks && e->opt->stacks_unwind == STACKS_FP)
		tracer_read_stacks(e->tracer, add_fp_stack, e->stacks);
}

/* The timeline's and the stacks' ends, with the run's records (names, lifetimes, sites). */
static void finish_sinks(struct engine *e)
{
	struct run_result *r = e->r;

	if (e->trace) {
		r->trace_failed = trace_finish(e->trace, r, now_ns(), r->drops[DROP_TRACE],
					       &r->trace) != 0;
		e->trace = NULL;
	}
	if (e->stacks) {
		r->stacks_failed = stacks_finish(e->stacks, r, e->opt->stacks) != 0;
		stacks_free(e->stacks);
		e->stacks = NULL;
	}
}

void engine_finish(struct engine *e)
{
	struct run_result *r = e->r;
	int err;

	r->wall_ns = now_ns() - e->start_ns;
	if (e->opt->sync) {
		/* Write back what the command left dirty while still attached, so it is charged. */
		sync();
		r->synced = true;
	}
	/* Requests the processes started may complete after they exit: let them finish. */
	tracer_wait_block_idle(e->tracer, 200);
	/* Stop counting, then read the last events and whatever the kernel still holds. */
	tracer_detach(e->tracer);
	tracer_poll_events(e->tracer);
	last_sink_events(e);
	err = collector_finish(e->coll, r);
	r->names = e->names; /* the result owns the table now; the sinks still look names up */
	e->names_given = true;
	if (!e->opt->command && r->nprocs) {
		/* -p: its process's end, if it came while traced. */
		r->exit_known = r->procs[0].exit_seen;
		r->exit_status = r->procs[0].exit_status;
	}
	finish_sinks(e);
	/* The kernel's part is read: its maps (~30 MiB mapped in a 50,000-file run) go before
	 * the files' residency memo and the model's derived records are made. */
	tracer_close(e->tracer);
	e->tracer = NULL;
	if (collect_resolve_files(r))
		err = -ENOMEM;
	if (model_derive(r) || e->names_failed)
		err = -ENOMEM;
	if (err)
		fprintf(stderr, "iotrace: out of memory: some processes are missing\n");
}

/* ---- top: the machine's processes, each refresh the interval's differences ---- */

struct engine *engine_open_top(const struct tracer_config *cfg, const struct cgroup_ref *cgroups)
{
	struct tracer_config tc = *cfg;
	struct engine *e = calloc(1, sizeof(*e));
	bool oom = !e;

	tc.on_name = on_name;
	if (e) {
		e->names = names_new();
		e->name_keys = calloc(TOP_NAMES_MAX, sizeof(*e->name_keys));
		e->top = top_collector_new();
		oom = !e->names || !e->name_keys || !e->top;
	}
	if (!oom && (e->tracer = tracer_open(&tc, on_proc_event, e)))
		oom = top_collector_start(e->top, e->tracer, cgroups, cfg->ncgroups) != 0;
	if (oom)
		fprintf(stderr, "iotrace: top: out of memory\n");
	if (oom || !e->tracer) {
		engine_close(e);
		return NULL;
	}
	/* The containers running now are named from the first refresh. */
	container_prime(CONTAINER_PRIME_MS);
	e->start_ns = e->next_tick = now_ns();
	return e;
}

int engine_refresh(struct engine *e, const struct top_view_opts *o, struct top_view *out)
{
	struct top_sample sample;
	int err;

	/* The regular work first (as at every wake), so the next is a tick's time away. */
	tick_now(e);
	if (top_collect(e->top, e->names, &sample) || e->names_failed) {
		fprintf(stderr, "iotrace: top: out of memory reading the counters\n");
		return -1;
	}
	err = top_view_build(&sample, o, out);
	top_sample_free(&sample);
	/* The view keeps its own copies of the names. */
	forget_names(e);
	if (err) {
		fprintf(stderr, "iotrace: top: out of memory building the view\n");
		return -1;
	}
	return 0;
}

/* ---- serve: the labels' counters, cumulative, at each scrape ---- */

struct engine *engine_open_serve(const struct tracer_config *cfg,
				 const struct cgroup_ref *cgroups)
{
	struct engine *e = calloc(1, sizeof(*e));

	if (!e || syscall_table_init()) {
		fprintf(stderr, "iotrace serve: out of memory\n");
		free(e);
		return NULL;
	}
	e->serve = true;
	pthread_mutex_init(&e->cgroup_lock, NULL);
	e->tracer = tracer_open(cfg, on_proc_event, e);
	if (!e->tracer) {
		engine_close(e);
		return NULL;
	}
	e->scrape = (struct scrape_config){
		.tracer = e->tracer, .label_comm = cfg->label_comm, .timing = cfg->timing,
		.cgroups = cgroups, .ncgroups = cfg->ncgroups, .cgroup_lock = &e->cgroup_lock,
	};
	return e;
}

const struct prom_report *engine_scrape(struct engine *e)
{
	scrape_free(e->scraped);
	e->scraped = scrape_collect(&e->scrape);
	return e->scraped ? scrape_report(e->scraped) : NULL;
}

void engine_scrape_done(struct engine *e)
{
	scrape_free(e->scraped);
	e->scraped = NULL;
}
