// SPDX-License-Identifier: GPL-2.0
/*
 * iotrace serve: every process on the machine counted in the kernel under a label (its
 * cgroup, or the -c cgroup it is in, and with --comm its name), served as Prometheus
 * metrics on /metrics. Labels never include a PID: a label's counters live as long as
 * serve does, so every counter only grows, as Prometheus expects.
 *
 * The counting is the one engine's (collect/engine.h) with serve's refresh policy: each
 * scrape reads the labels' cumulative counters. HTTP is libmicrohttpd with its own polling
 * thread, which also builds each response; the main thread only reads new labels' events
 * and waits for SIGINT/SIGTERM.
 */
#include <argp.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/signalfd.h>
#include "filters.h"
#include "mhd.h"
#include "util/cgroup.h"
#include "util/container.h"
#include "privdrop.h"
#include "report/prom.h"
#include "args.h"
#include "serve.h"
#include "collect/engine.h"
#include "kernel/tracer.h"
#include "util/util.h"

#define DEFAULT_LISTEN "127.0.0.1:9435"
/*
 * Label sets with series of their own, at most (--max-labels): any user can start processes
 * under thousands of names, and every label set adds series to every metric. The label sets
 * beyond share the (overflow) set (docs/prometheus.md, "Bounds").
 */
#define DEFAULT_MAX_LABELS 1000
#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct serve_opts {
	const char *listen;
	struct tracer_config cfg;
	struct cgroup_ref cgroups[MAX_CGROUP_FILTERS];
	const char *user;
	struct privdrop_user as;
};

static const char doc[] =
	"iotrace serve -- count every process's I/O in the kernel, by cgroup (and name), and "
	"serve it as Prometheus metrics on http://LISTEN/metrics until SIGINT or SIGTERM.\n"
	"\v"
	"EXAMPLES:\n"
	"  sudo iotrace serve\n"
	"        every cgroup on 127.0.0.1:9435; scrape http://127.0.0.1:9435/metrics\n"
	"  sudo iotrace serve -c system.slice/nginx.service -c user.slice --comm\n"
	"        only those two cgroups (with everything below them), split by process name\n"
	"\n"
	"Labels are cgroup (a path below the cgroup v2 mount point), comm with --comm, and disk/op for "
	"block I/O, never a PID. A process is labelled when it forks or execs (or, if it was "
	"running before serve, at its first syscall); a move to another cgroup counts from its "
	"next exec. Metrics are listed in docs/prometheus.md.";

enum { OPT_LISTEN = 0x100, OPT_COMM, OPT_CONTAINER, OPT_MAX_LABELS, OPT_TIME_ALL };

static const struct option_row options[] = {
	OPTION_STORING(STORE_ARG, offsetof(struct serve_opts, listen), "listen", OPT_LISTEN,
		       "ADDR:PORT", 0,
		       "Address to serve on (default " DEFAULT_LISTEN "; [::1]:PORT for IPv6)", 0),
	OPTION("cgroup", 'c', "CGROUP", 0,
	       "Only processes in this cgroup v2 (or below it), labelled with it; up to 8", 0),
	OPTION("container", OPT_CONTAINER, "NAME|ID", 0,
	       "Only this container's processes, labelled with its cgroup (its name, the start of "
	       "its ID, or a pod's UID); with -c, up to 8 in all", 0),
	OPTION_STORING(STORE_ON, offsetof(struct serve_opts, cfg.label_comm), "comm", OPT_COMM,
		       NULL, 0, "Label by process name (comm) too", 0),
	OPTION_STORING(STORE_OFF, offsetof(struct serve_opts, cfg.timing), "no-time", 'T', NULL, 0,
		       "Do not time syscalls (no latency metrics; cheaper)", 0),
	OPTION_STORING(STORE_ON, offsetof(struct serve_opts, cfg.time_all), "time-all",
		       OPT_TIME_ALL, NULL, 0,
		       "Time every syscall (default: a sample; iotrace_syscall_seconds_total "
		       "only then)", 0),
	OPTION("max-labels", OPT_MAX_LABELS, "N", 0,
	       "Distinct label sets with their own series (default 1000, at most 16382); the rest "
	       "share the cgroup=\"(overflow)\" set", 0),
	OPTION_STORING(STORE_ARG, offsetof(struct serve_opts, user), "user", 'u', "USER", 0,
		       "Once attached, run as USER with no capabilities (default "
		       PRIVDROP_DEFAULT_USER "; root keeps them)", 0),
	OPTION_STORING(STORE_ON, offsetof(struct serve_opts, cfg.verbose), "verbose", 'v', NULL, 0,
		       "Show libbpf's log, including the verifier output", 0),
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct serve_opts *o = state->input;
	const char *reason;

	if (option_stored(options, key, arg, o))
		return 0;
	switch (key) {
	case 'c':
	case OPT_CONTAINER:
		filter_add(state, &o->cfg, o->cgroups, key == OPT_CONTAINER, arg);
		break;
	case OPT_MAX_LABELS:
		o->cfg.max_procs = count_arg(state, "--max-labels", arg, MAX_SLOTS - 2);
		break;
	case ARGP_KEY_END:
		if (!o->cfg.max_procs)
			o->cfg.max_procs = DEFAULT_MAX_LABELS;
		if (o->cfg.time_all && !o->cfg.timing)
			argp_failure(state, 1, 0, "--time-all and --no-time contradict each other");
		if (!o->user)
			o->user = PRIVDROP_DEFAULT_USER;
		if (privdrop_resolve(o->user, &o->as, &reason))
			argp_failure(state, 1, 0, "unknown --user '%s': %s", o->user, reason);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/*
 * Clients: at most MAX_CLIENTS connections at once, any address (every local user shares
 * 127.0.0.1: a per-address limit would let one of them shut the others out); each must send
 * its whole request within REQUEST_SECONDS of connecting, or it is cut (slowloris: a request
 * sent a byte at a time keeps libmicrohttpd's idle timeout from firing); one request per
 * connection. So a few hundred slow clients cannot keep a scrape from being answered.
 */
#define MAX_CLIENTS 512
#define REQUEST_SECONDS 10
#define IDLE_SECONDS 5

struct client {
	bool used, answered;
	int fd;
	uint64_t since_ms;
};

struct serve_ctx {
	struct engine *e;
	struct serve_opts *o;
	pthread_mutex_t clients_lock; /* clients: HTTP thread and main thread */
	struct client clients[MAX_CLIENTS];
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The whole exposition of one scrape, in a malloc'ed buffer; NULL on failure. */
static char *render(struct serve_ctx *c, size_t *len)
{
	const struct prom_report *report = engine_scrape(c->e);
	char *buf = NULL;
	FILE *out;

	if (!report)
		return NULL;
	out = open_memstream(&buf, len);
	if (out && prom_write(out, report)) {
		fclose(out);
		free(buf);
		buf = NULL;
	} else if (out) {
		fclose(out);
	}
	engine_scrape_done(c->e);
	return buf;
}

/* ---- HTTP ---- */

/* A client connects (its slot noted, with the time) or leaves (the slot freed). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct serve_ctx *c = cls;
	const union MHD_ConnectionInfo *fd =
		mhd.get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

	pthread_mutex_lock(&c->clients_lock);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		*socket_context = NULL;
		for (int i = 0; fd && i < MAX_CLIENTS && !*socket_context; i++)
			if (!c->clients[i].used) {
				c->clients[i] = (struct client){ .used = true, .fd = fd->connect_fd,
								 .since_ms = mono_ms() };
				*socket_context = &c->clients[i];
			}
	} else if (*socket_context) {
		((struct client *)*socket_context)->used = false;
	}
	pthread_mutex_unlock(&c->clients_lock);
}

/* The client's request arrived whole: no deadline from now on. */
static void answered(struct serve_ctx *c, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		mhd.get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	pthread_mutex_lock(&c->clients_lock);
	if (ci && ci->socket_context)
		((struct client *)ci->socket_context)->answered = true;
	pthread_mutex_unlock(&c->clients_lock);
}

/*
 * From the main thread, once a second: the connections whose request is not whole after
 * REQUEST_SECONDS are shut down (libmicrohttpd then reads their end and closes them; their
 * slot stays noted until it does, so the descriptor is still theirs).
 */
static void cut_slow_clients(struct serve_ctx *c)
{
	uint64_t now = mono_ms();

	pthread_mutex_lock(&c->clients_lock);
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct client *cl = &c->clients[i];

		if (cl->used && !cl->answered && now - cl->since_ms > REQUEST_SECONDS * 1000) {
			shutdown(cl->fd, SHUT_RDWR);
			cl->answered = true; /* once */
		}
	}
	pthread_mutex_unlock(&c->clients_lock);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int code, const char *text,
			     const char *type)
{
	struct MHD_Response *resp =
		mhd.create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	mhd.add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = mhd.queue_response(conn, code, resp);
	mhd.destroy_response(resp);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_size, void **req_state)
{
	static int seen;
	struct serve_ctx *c = cls;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	size_t len;
	char *body;

	/* First call: headers only. Bodies (nobody should send one) are read and dropped. */
	if (!*req_state) {
		*req_state = &seen;
		answered(c, conn);
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n",
			     "text/plain");
	if (!strcmp(url, "/"))
		return reply(conn, MHD_HTTP_OK,
			     "<html><body><h1>iotrace serve</h1>"
			     "<p><a href=\"/metrics\">/metrics</a></p></body></html>\n",
			     "text/html");
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n", "text/plain");
	body = render(c, &len);
	if (!body)
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", "text/plain");
	resp = mhd.create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE);
	mhd.add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = mhd.queue_response(conn, MHD_HTTP_OK, resp);
	mhd.destroy_response(resp);
	return ret;
}

/* Until SIGINT or SIGTERM: new-label events in, nothing else (HTTP has its own thread). */
static int wait_loop(struct serve_ctx *c, int sfd)
{
	struct pollfd fds[2] = { { .fd = sfd, .events = POLLIN },
				 { .fd = engine_events_fd(c->e), .events = POLLIN } };

	for (;;) {
		int n = poll(fds, 2, 1000);

		cut_slow_clients(c);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "iotrace serve: poll: %s\n", strerror(errno));
			return 1;
		}
		if (fds[0].revents)
			return 0;
		if (fds[1].revents && engine_read_events(c->e, true) < 0) {
			fprintf(stderr, "iotrace serve: reading events: %s\n", strerror(errno));
			return 1;
		}
	}
}

/*
 * The listening socket, bound before the switch of user (so a port below 1024 works too) and
 * handed to the HTTP thread, which starts after it. As libmicrohttpd would make it: address
 * reuse, IPv6 only on an IPv6 address, non-blocking.
 */
static int listen_on(const struct sockaddr_storage *ss, socklen_t len)
{
	int one = 1, fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int err;

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (ss->ss_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    bind(fd, (const struct sockaddr *)ss, len) || listen(fd, SOMAXCONN)) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/*
 * The switch of user, while serve has one thread; the HTTP thread, which inherits what the
 * switch kept (privdrop.h), on the socket bound before; then the filter on both. The daemon,
 * or NULL with one line said (the socket closed).
 */
static struct MHD_Daemon *serve_unprivileged(struct serve_ctx *c, int lfd, int family)
{
	struct MHD_Daemon *d;
	const char *kept;
	char why[160];

	/*
	 * The containers running now are named (their runtimes asked as root); later ones by
	 * their short ID: nothing asks a runtime once the seccomp filter is on.
	 */
	container_prime(CONTAINER_PRIME_MS);
	container_stop_asking();
	if (privdrop_switch(&c->o->as, &kept, why, sizeof(why))) {
		fprintf(stderr, "iotrace serve: dropping privileges: %s\n", why);
		close(lfd);
		return NULL;
	}
	d = mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
				     (family == AF_INET6 ? MHD_USE_IPv6 : 0),
			     0, NULL, NULL, handle, c,
			     MHD_OPTION_LISTEN_SOCKET, (MHD_socket)lfd,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CLIENTS,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)IDLE_SECONDS,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
			     MHD_OPTION_NOTIFY_CONNECTION, on_connection, c,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "iotrace serve: cannot serve on %s: %s\n", c->o->listen,
			errno ? strerror(errno) : "libmicrohttpd did not start");
		close(lfd);
		return NULL;
	}
	if (privdrop_confine(why, sizeof(why))) {
		fprintf(stderr, "iotrace serve: dropping privileges: %s\n", why);
		mhd.stop_daemon(d);
		return NULL;
	}
	if (kept)
		fprintf(stderr, "iotrace serve: this kernel reads BPF maps only with %s: kept it "
				"alone\n", kept);
	return d;
}

int serve_main(int argc, char **argv)
{
	struct serve_opts o = { .listen = DEFAULT_LISTEN, .cfg = { .timing = true, .serve = true } };
	const struct subcommand cmd = { "iotrace serve", options, parse_opt, NULL, doc, 0 };
	struct serve_ctx c = { .o = &o };
	struct sockaddr_storage ss;
	struct MHD_Daemon *d;
	int status, lfd;
	char why[256];
	socklen_t sslen;
	sigset_t mask;
	int sfd;

	subcommand_parse(&cmd, argc, argv, &o);
	if (mhd_open(why, sizeof(why))) {
		fprintf(stderr, "iotrace serve: %s\n", why);
		return 1;
	}
	if (parse_listen(o.listen, &ss, &sslen)) {
		fprintf(stderr, "iotrace serve: invalid --listen '%s': expected ADDR:PORT or "
				"[ADDR]:PORT with a numeric address\n", o.listen);
		return 1;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	/* Blocked before the HTTP thread starts, so that thread inherits the mask. */
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "iotrace serve: signalfd: %s\n", strerror(errno));
		return 1;
	}
	pthread_mutex_init(&c.clients_lock, NULL);
	c.e = engine_open_serve(&o.cfg, o.cgroups);
	if (!c.e)
		return 1;
	lfd = listen_on(&ss, sslen);
	if (lfd < 0) {
		fprintf(stderr, "iotrace serve: cannot listen on %s: %s\n", o.listen,
			strerror(errno));
		engine_close(c.e);
		return 1;
	}
	d = serve_unprivileged(&c, lfd, ss.ss_family);
	if (!d) {
		engine_close(c.e);
		return 1;
	}
	fprintf(stderr, "iotrace serve: metrics on http://%s/metrics\n", o.listen);
	status = wait_loop(&c, sfd);
	mhd.stop_daemon(d);
	engine_close(c.e);
	close(sfd);
	return status;
}
