// SPDX-License-Identifier: GPL-2.0
/*
 * iotrace snoop: one line per completed block request, live (biosnoop-style), charged the
 * way run mode charges it (writeback to the process that dirtied the pages).
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <cjson/cJSON.h>
#include "report/cells.h"
#include "report/json_cells.h"
#include "util/residency.h"
#include "args.h"
#include "snoop.h"
#include "kernel/tracer.h"
#include "util/util.h"
#include "util/cgroup.h"
#include "filters.h"
#include "util/container.h"
#include "util/output.h"
#include "util/pidinfo.h"

/* How often, at least, requests whose completion was skipped are looked for (and shown late). */
#define SWEEP_MS 200

struct snoop_opts {
	struct tracer_config cfg;
	const char *disk;
	bool queue;
	bool json;
	double duration; /* seconds, 0 = until Ctrl-C */
};

struct snoop_state {
	const struct snoop_opts *o;
	uint64_t start_ns;
	uint64_t events;
};

static const char doc[] =
	"iotrace snoop -- one line per completed block I/O request, as it happens.\n"
	"\v"
	"Columns: TIME(s) since start, COMM and PID the request is charged to (the submitter, or "
	"for writeback the process that dirtied the pages; kernel threads otherwise), CONTAINER "
	"that process runs in (its name, else a short ID; a unit's name; host), DISK, T "
	"(R read, W write, F flush, D discard, O other), SECTOR, BYTES, QUE(ms) queued -> "
	"issued (-Q), LAT(ms) issued -> completed, INODE of the first page's file (- unknown).\n"
	"\n"
	"EXAMPLES:\n"
	"  sudo iotrace snoop                 every request until Ctrl-C\n"
	"  sudo iotrace snoop -d vda -Q 10    disk vda, with queue times, for 10 seconds\n"
	"  sudo iotrace snoop -p 1234 -j      requests charged to pid 1234, as JSON lines\n"
	"  sudo iotrace snoop -c /sys/fs/cgroup/system.slice   charged to its processes\n"
	"  sudo iotrace snoop --container web   charged to container web's processes "
	"(iotrace containers lists them)\n";

enum { OPT_CONTAINER = 0x100 };

static const struct option_row options[] = {
	OPTION("pid", 'p', "PID", 0, "Only requests charged to this process", 0),
	OPTION("cgroup", 'c', "CGROUP", 0,
	       "Only requests charged to processes in this cgroup v2 or below it (its directory, "
	       "or its path below the cgroup v2 mount point); repeatable", 0),
	OPTION("container", OPT_CONTAINER, "NAME|ID", 0,
	       "Only requests charged to this container's processes (its name, or the start of its "
	       "ID; a pod by its UID); repeatable", 0),
	OPTION("disk", 'd', "DISK", 0, "Only this disk (name as in /sys/block)", 0),
	OPTION_STORING(STORE_ON, offsetof(struct snoop_opts, queue), "queue", 'Q', NULL, 0,
		       "Show the time from queued to issued", 0),
	OPTION_STORING(STORE_ON, offsetof(struct snoop_opts, json), "json", 'j', NULL, 0,
		       "One JSON object per line", 0),
	OPTION_STORING(STORE_ON, offsetof(struct snoop_opts, cfg.verbose), "verbose", 'v', NULL, 0,
		       "Show libbpf's log", 0),
	{},
};

static uint32_t disk_kdev(const char *name)
{
	char path[PATH_MAX];
	unsigned int major, minor;
	FILE *f;
	int n;

	if (strchr(name, '/'))
		return 0;
	snprintf(path, sizeof(path), "/sys/block/%s/dev", name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fscanf(f, "%u:%u", &major, &minor);
	fclose(f);
	return n == 2 ? (major << 20) | minor : 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct snoop_opts *o = state->input;
	unsigned long v;
	char why[160];

	if (option_stored(options, key, arg, o))
		return 0;
	switch (key) {
	case 'p':
		v = pid_arg(state, arg);
		/* Kernel threads do block I/O (writeback, journal): they may be snooped. */
		if (pid_refusal(v, false, why, sizeof(why)))
			argp_failure(state, 1, 0, "-p %s: %s", arg, why);
		o->cfg.snoop_tgid = v;
		break;
	case 'c':
	case OPT_CONTAINER:
		filter_add(state, &o->cfg, NULL, key == OPT_CONTAINER, arg);
		break;
	case 'd':
		o->disk = arg;
		o->cfg.snoop_dev = disk_kdev(arg);
		if (!o->cfg.snoop_dev)
			argp_failure(state, 1, 0, "disk '%s': not in /sys/block", arg);
		break;
	case ARGP_KEY_ARG:
		if (state->arg_num > 0)
			argp_failure(state, 1, 0, "unexpected argument '%s' (one DURATION at most)",
				     arg);
		if (parse_seconds(arg, 1e7, &o->duration))
			argp_failure(state, 1, 0, "invalid duration '%s': expected seconds in digits "
				     "(2, 0.5), more than 0 and at most 10000000", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char op_letter[BLOCK_OPS] = { 'R', 'W', 'F', 'D', 'O' };

#define CONTAINER_COLUMN 20 /* as wide as iotrace containers' */

/*
 * The container of the charged process's cgroup (0: not known, e.g. a request the kernel
 * started for no process): its name once its runtime has answered, else what the path says.
 */
static bool container_of_event(const struct block_event *e, struct container_info *c)
{
	if (!e->cgroup)
		return false;
	container_of_path(cgroup_path_of(e->cgroup), c);
	return true;
}

static void print_header(const struct snoop_opts *o)
{
	if (o->json)
		return;
	printf("%-11s %-16s %-7s %-*s %-7s %s %-12s %8s ", "TIME(s)", "COMM", "PID",
	       CONTAINER_COLUMN, "CONTAINER", "DISK", "T", "SECTOR", "BYTES");
	if (o->queue)
		printf("%8s ", "QUE(ms)");
	printf("%8s %s\n", "LAT(ms)", "INODE");
}

static void print_json(const struct snoop_state *s, const struct block_event *e,
		       const char *disk)
{
	cJSON *obj = cJSON_CreateObject();
	char op[2] = { op_letter[e->op % BLOCK_OPS], 0 }, label[256];
	struct container_info c;
	char *text;

	cJSON_AddNumberToObject(obj, "time_s", (e->ts_ns - s->start_ns) / 1e9);
	add_name(obj, "comm", e->comm);
	cJSON_AddNumberToObject(obj, "pid", e->tgid);
	if (container_of_event(e, &c)) {
		add_name(obj, "container", container_label(&c, label, sizeof(label)));
		if (c.path.id[0])
			cJSON_AddStringToObject(obj, "container_id", c.path.id);
		else
			cJSON_AddNullToObject(obj, "container_id");
	} else {
		cJSON_AddNullToObject(obj, "container");
		cJSON_AddNullToObject(obj, "container_id");
	}
	if (!e->tgid && !e->comm[0]) /* begun before snoop started: no one seen */
		cJSON_AddNullToObject(obj, "charged_by");
	else
		cJSON_AddStringToObject(obj, "charged_by",
					e->charge == CHARGE_DIRTIER ? "dirtier" : "submitter");
	cJSON_AddStringToObject(obj, "disk", disk);
	cJSON_AddStringToObject(obj, "op", op);
	cJSON_AddNumberToObject(obj, "sector", e->sector);
	cJSON_AddNumberToObject(obj, "bytes", e->bytes);
	cJSON_AddNumberToObject(obj, "queue_ns", e->lat_ns <= e->qlat_ns ? e->qlat_ns - e->lat_ns
									 : 0);
	cJSON_AddNumberToObject(obj, "latency_ns", e->lat_ns);
	if (e->ino)
		cJSON_AddNumberToObject(obj, "ino", e->ino);
	else
		cJSON_AddNullToObject(obj, "ino");
	cJSON_AddNumberToObject(obj, "error", e->error);
	cJSON_AddBoolToObject(obj, "late", e->late);
	/* Submitted by one of the process's io_uring threads (comm iou-wrk-N / iou-sqp-N). */
	if (e->via == VIA_IOWQ || e->via == VIA_SQPOLL)
		cJSON_AddStringToObject(obj, "via", e->via == VIA_IOWQ ? "io-wq" : "sqpoll");
	else
		cJSON_AddNullToObject(obj, "via");
	text = cJSON_PrintUnformatted(obj);
	if (text)
		puts(text);
	cJSON_free(text);
	cJSON_Delete(obj);
}

static int on_block_event(void *ctx, void *data, size_t size)
{
	struct snoop_state *s = ctx;
	const struct block_event *e = data;
	char disk[64], ino[32] = "-", comm[4 * sizeof(e->comm) + 1], label[256], cell[1024];
	struct container_info c;

	if (size < sizeof(*e))
		return 0;
	s->events++;
	disk_name(e->dev, disk, sizeof(disk));
	if (s->o->json) {
		print_json(s, e, disk);
		return 0;
	}
	if (e->ino)
		snprintf(ino, sizeof(ino), "%llu", (unsigned long long)e->ino);
	printf("%-11.6f ", (e->ts_ns - s->start_ns) / 1e9);
	put_padded(stdout, e->comm[0] ? name_cell(e->comm, 0, comm, sizeof(comm)) : "-", 16);
	printf(" %-7u ", e->tgid);
	put_padded(stdout, container_of_event(e, &c)
			   ? name_cell(container_label(&c, label, sizeof(label)), CONTAINER_COLUMN,
				       cell, sizeof(cell))
			   : "-", CONTAINER_COLUMN);
	printf(" %-7s %c %-12llu %8u ", disk, op_letter[e->op % BLOCK_OPS],
	       (unsigned long long)e->sector, e->bytes);
	if (s->o->queue)
		printf("%8.3f ", e->lat_ns <= e->qlat_ns ? (e->qlat_ns - e->lat_ns) / 1e6 : 0.0);
	if (e->late)
		printf("%8s %s\n", "late", ino);
	else
		printf("%8.3f %s\n", e->lat_ns / 1e6, ino);
	return 0;
}

static int add_fd(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * The signals that end snoop, blocked (read from a signalfd): before "tracing" is said, so
 * that one sent as soon as it is read ends snoop cleanly rather than killing it.
 */
static void stop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGHUP);
	sigprocmask(SIG_BLOCK, mask, NULL);
}

/*
 * Waits for events until a signal or the duration ends; returns 0, -1 on an error of its
 * own (errno), or -2 when standard output could not be written (already said).
 */
static int snoop_loop(struct tracer *t, double duration)
{
	int sfd = -1, tfd = -1, epfd = epoll_create1(EPOLL_CLOEXEC), err = 0;
	struct itimerspec its = { 0 };
	struct epoll_event ev;
	double swept_ms = now_ms();
	sigset_t mask;

	stop_signals(&mask);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (epfd < 0 || sfd < 0 || add_fd(epfd, sfd) || add_fd(epfd, tracer_events_fd(t)))
		err = -1;
	if (!err && duration > 0) {
		its.it_value.tv_sec = (time_t)duration;
		its.it_value.tv_nsec = (long)((duration - (time_t)duration) * 1e9);
		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL) || add_fd(epfd, tfd))
			err = -1;
	}
	while (!err) {
		/* Woken at least every SWEEP_MS for the requests whose completion was skipped. */
		int n = epoll_wait(epfd, &ev, 1, SWEEP_MS);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -1;
			break;
		}
		if (n > 0 && (ev.data.fd == sfd || ev.data.fd == tfd))
			break;
		if (now_ms() - swept_ms >= SWEEP_MS) {
			tracer_sweep_blocks(t);
			swept_ms = now_ms();
		}
		tracer_poll_events(t);
		/* Each batch reaches its reader now, or the write error ends snoop (said once). */
		if (output_flush(&(struct output){ .f = stdout })) {
			err = -2;
			break;
		}
	}
	tracer_sweep_blocks(t);
	tracer_poll_events(t);
	if (tfd >= 0)
		close(tfd);
	if (sfd >= 0)
		close(sfd);
	if (epfd >= 0)
		close(epfd);
	return err;
}

int snoop_main(int argc, char **argv)
{
	struct snoop_opts o = { .cfg = { .snoop = true } };
	const struct subcommand cmd = { "iotrace snoop", options, parse_opt, "[DURATION]", doc, 0 };
	struct snoop_state s = { .o = &o };
	struct tracer *t;
	uint64_t drops[DROP_COUNTERS], lost;
	struct timespec ts;
	int err;

	subcommand_parse(&cmd, argc, argv, &o);
	/* Before the programs attach: every event's time (its completion) comes after it. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s.start_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	t = tracer_open(&o.cfg, on_block_event, &s);
	if (!t)
		return 1;
	container_prime(CONTAINER_PRIME_MS);
	stop_signals(&(sigset_t){ 0 });
	fprintf(stderr, "iotrace: tracing block I/O%s; Ctrl-C to end\n",
		o.duration > 0 ? " for the given duration" : "");
	errno = 0;
	print_header(&o);
	err = output_flush(&(struct output){ .f = stdout }) ? -2 : snoop_loop(t, o.duration);
	tracer_read_drops(t, drops);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* Skipped completions whose request struct was never reused: lost, and said so. */
	lost = drops[DROP_BLOCK_EVENTS] +
	       tracer_count_stale_block(t, (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec,
					100000000ULL);
	if (err == -1)
		fprintf(stderr, "iotrace: snoop: %s\n", strerror(errno));
	/*
	 * Runs of the block programs the kernel skipped (nested, or on 7.x preempted inside
	 * one on the same CPU): a request whose start or issue was skipped is not shown.
	 */
	if (o.json && err != -2)
		printf("{\"summary\":true,\"events\":%llu,\"lost_events\":%llu,"
		       "\"skipped_runs\":%llu}\n",
		       (unsigned long long)s.events, (unsigned long long)lost,
		       (unsigned long long)drops[DROP_NESTED]);
	if (err != -2 && output_flush(&(struct output){ .f = stdout }))
		err = -2;
	fprintf(stderr, "iotrace: %llu requests shown, %llu lost (ring buffer full), %llu "
			"program runs the kernel skipped\n",
		(unsigned long long)s.events, (unsigned long long)lost,
		(unsigned long long)drops[DROP_NESTED]);
	tracer_close(t);
	return err ? 1 : 0;
}
