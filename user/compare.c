// SPDX-License-Identifier: GPL-2.0
/*
 * iotrace compare: run each variant under run mode (this same binary, --json), interleaved
 * A B A B ..., and put the medians side by side. Each run is a full run-mode report, so
 * the table carries exactly the numbers `iotrace --json -- CMD` gives.
 */
#include <argp.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cjson/cJSON.h>
#include "compare.h"
#include "util.h"

#define MAX_VARIANTS 32

struct compare_opts {
	bool drop_caches;
	bool json;
	int repeat;
	const char *output;
	const char *labels[MAX_VARIANTS];
	int nlabels;
	char **commands;
	int ncommands;
};

/* One row of the table: a number taken from each run's report. */
struct metric {
	const char *name; /* JSON summary key and table label */
	double (*get)(const cJSON *run);
};

static const char doc[] =
	"iotrace compare -- run command variants under iotrace, interleaved, and compare them "
	"side by side (medians over --repeat runs).\n"
	"\v"
	"Each CMD is one shell command line (run with /bin/sh -c, output discarded).\n"
	"\n"
	"EXAMPLES:\n"
	"  sudo iotrace compare --drop-caches --repeat 3 -l normal -l sequential \\\n"
	"       -- './workloads/read-file -n 64m f' './workloads/read-file -s -n 64m f'\n"
	"  sudo iotrace compare --json -o cmp.json -- './workloads/tr2u a b < in' "
	"'./workloads/tr2b a b < in'\n";

static const struct argp_option opts[] = {
	{ "drop-caches", 'D', NULL, 0, "sync and drop the page cache before every run", 0 },
	{ "repeat", 'n', "N", 0, "Runs per variant (default 1)", 0 },
	{ "label", 'l', "NAME", 0, "Name of the next variant (repeat in order)", 0 },
	{ "json", 'j', NULL, 0, "Print one JSON document with every run", 0 },
	{ "output", 'o', "FILE", 0, "Write the result to FILE instead of stdout", 0 },
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct compare_opts *o = state->input;
	unsigned long v;

	switch (key) {
	case 'D':
		o->drop_caches = true;
		break;
	case 'n':
		if (parse_uint(arg, 1000, &v))
			argp_failure(state, 1, 0, "invalid --repeat '%s': expected 1..1000", arg);
		o->repeat = v;
		break;
	case 'l':
		if (o->nlabels == MAX_VARIANTS)
			argp_failure(state, 1, 0, "at most %d variants", MAX_VARIANTS);
		o->labels[o->nlabels++] = arg;
		break;
	case 'j':
		o->json = true;
		break;
	case 'o':
		o->output = arg;
		break;
	case ARGP_KEY_ARGS:
		o->commands = state->argv + state->next;
		o->ncommands = state->argc - state->next;
		break;
	case ARGP_KEY_END:
		if (o->ncommands < 1)
			argp_failure(state, 1, 0, "no commands (usage: iotrace compare [OPTIONS] -- "
						  "'CMD A' 'CMD B' ...)");
		if (o->ncommands > MAX_VARIANTS)
			argp_failure(state, 1, 0, "at most %d variants", MAX_VARIANTS);
		if (o->nlabels > o->ncommands)
			argp_failure(state, 1, 0, "%d labels for %d commands", o->nlabels,
				     o->ncommands);
		for (int i = 0; i < o->ncommands; i++)
			if (!*o->commands[i])
				argp_failure(state, 1, 0, "command %d is empty", i + 1);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- numbers from one run-mode report ---- */

static double num(const cJSON *obj, const char *path)
{
	char buf[256], *save = NULL;
	const cJSON *cur = obj;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && cur; k = strtok_r(NULL, ".", &save))
		cur = cJSON_GetObjectItemCaseSensitive(cur, k);
	return cJSON_IsNumber(cur) ? cur->valuedouble : 0;
}

static double sum_children(const cJSON *obj, const char *field)
{
	const cJSON *child;
	double sum = 0;

	cJSON_ArrayForEach(child, obj)
		sum += num(child, field);
	return sum;
}

static double io_bytes(const cJSON *run, const char *const *names)
{
	const cJSON *io = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "totals"), "io");
	double sum = 0;

	for (; *names; names++)
		sum += num(cJSON_GetObjectItem(io, *names), "transferred_bytes");
	return sum;
}

static double m_wall_s(const cJSON *r) { return num(r, "wall_ns") / 1e9; }
static double m_syscalls(const cJSON *r)
{
	return sum_children(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "totals"), "syscalls"),
			    "calls");
}
static double m_read_bytes(const cJSON *r)
{
	static const char *const names[] = { "read", "pread64", "readv", "preadv", "preadv2",
					     NULL };
	return io_bytes(r, names);
}
static double m_write_bytes(const cJSON *r)
{
	static const char *const names[] = { "write", "pwrite64", "writev", "pwritev",
					     "pwritev2", NULL };
	return io_bytes(r, names);
}
#define PC(field) static double m_pc_##field(const cJSON *r) \
	{ return num(r, "totals.page_cache." #field); }
PC(hit_pages)
PC(miss_pages)
PC(readahead_pages)
PC(unused_readahead_pages)
static double m_ra_windows(const cJSON *r)
{
	return sum_children(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(
				    r, "totals"), "page_cache"), "readahead_windows"), "windows");
}
#define BLK(op, field) static double m_blk_##op##_##field(const cJSON *r) \
	{ return num(r, "totals.block." #op "." #field); }
BLK(read, requests)
BLK(read, bytes)
BLK(write, requests)
BLK(write, bytes)
static double m_blk_avg(const cJSON *r)
{
	double req = m_blk_read_requests(r) + m_blk_write_requests(r);

	return req ? (m_blk_read_bytes(r) + m_blk_write_bytes(r)) / req : 0;
}
static double m_blk_p50_us(const cJSON *r) { return num(r, "totals.block.latency_ns.p50") / 1e3; }
static double m_blk_p99_us(const cJSON *r) { return num(r, "totals.block.latency_ns.p99") / 1e3; }

/* Pages of every file the run touched still cached at its end (each file once). */
static double m_resident(const cJSON *r)
{
	const cJSON *proc, *file;
	char seen[64][48];
	int nseen = 0;
	double sum = 0;

	cJSON_ArrayForEach(proc, cJSON_GetObjectItem(r, "processes")) {
		cJSON_ArrayForEach(file, cJSON_GetObjectItem(proc, "files")) {
			char id[48];
			int i;

			snprintf(id, sizeof(id), "%s/%.0f",
				 cJSON_GetStringValue(cJSON_GetObjectItem(file, "dev")) ?: "?",
				 num(file, "ino"));
			for (i = 0; i < nseen && strcmp(seen[i], id); i++)
				;
			if (i < nseen)
				continue;
			if (nseen < 64)
				memcpy(seen[nseen++], id, sizeof(id));
			sum += num(file, "resident_pages");
		}
	}
	return sum;
}

static const struct metric metrics[] = {
	{ "wall_s", m_wall_s },
	{ "syscalls", m_syscalls },
	{ "read_bytes", m_read_bytes },
	{ "write_bytes", m_write_bytes },
	{ "page_cache_hit_pages", m_pc_hit_pages },
	{ "page_cache_miss_pages", m_pc_miss_pages },
	{ "readahead_windows", m_ra_windows },
	{ "readahead_pages", m_pc_readahead_pages },
	{ "unused_readahead_pages", m_pc_unused_readahead_pages },
	{ "block_read_requests", m_blk_read_requests },
	{ "block_read_bytes", m_blk_read_bytes },
	{ "block_write_requests", m_blk_write_requests },
	{ "block_write_bytes", m_blk_write_bytes },
	{ "block_avg_request_bytes", m_blk_avg },
	{ "block_p50_latency_us", m_blk_p50_us },
	{ "block_p99_latency_us", m_blk_p99_us },
	{ "resident_pages_at_end", m_resident },
};
#define NMETRICS (sizeof(metrics) / sizeof(metrics[0]))

/* ---- running ---- */

static int drop_caches(void)
{
	int fd;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "3", 1) != 1) {
		fprintf(stderr, "iotrace: cannot drop the page cache: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Runs `iotrace --json -o TMP -- /bin/sh -c CMD`; returns the parsed report or NULL. */
static cJSON *run_variant(const char *cmd)
{
	char tmpl[] = "/tmp/iotrace-compare-XXXXXX", *text = NULL;
	int fd = mkstemp(tmpl), status, devnull;
	cJSON *report = NULL;
	long len;
	FILE *f;
	pid_t pid;

	if (fd < 0)
		return NULL;
	close(fd);
	pid = fork();
	if (pid == 0) {
		devnull = open("/dev/null", O_RDWR);
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
		execl("/proc/self/exe", "iotrace", "--json", "-o", tmpl, "--", "/bin/sh", "-c", cmd,
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		goto out;
	f = fopen(tmpl, "r");
	if (!f)
		goto out;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = len > 0 ? calloc(1, len + 1) : NULL;
	if (text && fread(text, 1, len, f) == (size_t)len)
		report = cJSON_Parse(text);
	fclose(f);
out:
	free(text);
	unlink(tmpl);
	return report;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* summary[m] = median of metric m over the runs of one variant; also min/max of wall. */
static void summarize(cJSON **runs, int n, double *summary, double *wall_min, double *wall_max)
{
	double *v = calloc(n, sizeof(*v));

	for (size_t m = 0; v && m < NMETRICS; m++) {
		for (int i = 0; i < n; i++)
			v[i] = metrics[m].get(runs[i]);
		summary[m] = median(v, n);
		if (m == 0) {
			*wall_min = v[0];
			*wall_max = v[n - 1];
		}
	}
	free(v);
}

static void print_table(FILE *out, const struct compare_opts *o, double (*summary)[NMETRICS],
			const double *wmin, const double *wmax)
{
	fprintf(out, "%-26s", "variant");
	for (int v = 0; v < o->ncommands; v++)
		fprintf(out, " %17.17s", v < o->nlabels ? o->labels[v] : o->commands[v]);
	fprintf(out, "\n%-26s", "wall s (min-max)");
	for (int v = 0; v < o->ncommands; v++) {
		char range[32];

		snprintf(range, sizeof(range), "%.3f-%.3f", wmin[v], wmax[v]);
		fprintf(out, " %17s", range);
	}
	fputc('\n', out);
	for (size_t m = 0; m < NMETRICS; m++) {
		fprintf(out, "%-26s", metrics[m].name);
		for (int v = 0; v < o->ncommands; v++) {
			if (m == 0 || strstr(metrics[m].name, "_us"))
				fprintf(out, " %17.3f", summary[v][m]);
			else
				fprintf(out, " %17.0f", summary[v][m]);
		}
		fputc('\n', out);
	}
	fprintf(out, "(medians of %d run%s per variant, interleaved%s)\n", o->repeat,
		o->repeat == 1 ? "" : "s", o->drop_caches ? ", page cache dropped before each" : "");
}

static void print_json(FILE *out, const struct compare_opts *o, cJSON ***runs,
		       double (*summary)[NMETRICS])
{
	cJSON *root = cJSON_CreateObject(), *vars = cJSON_CreateArray();
	char *text;

	for (int v = 0; v < o->ncommands; v++) {
		cJSON *var = cJSON_CreateObject(), *list = cJSON_CreateArray();
		cJSON *sum = cJSON_CreateObject();

		cJSON_AddStringToObject(var, "label", v < o->nlabels ? o->labels[v] : o->commands[v]);
		cJSON_AddStringToObject(var, "command", o->commands[v]);
		for (int i = 0; i < o->repeat; i++)
			cJSON_AddItemToArray(list, runs[v][i]);
		cJSON_AddItemToObject(var, "runs", list);
		for (size_t m = 0; m < NMETRICS; m++)
			cJSON_AddNumberToObject(sum, metrics[m].name, summary[v][m]);
		cJSON_AddItemToObject(var, "summary", sum);
		cJSON_AddItemToArray(vars, var);
	}
	cJSON_AddItemToObject(root, "variants", vars);
	cJSON_AddBoolToObject(root, "drop_caches", o->drop_caches);
	cJSON_AddNumberToObject(root, "repeat", o->repeat);
	text = cJSON_Print(root);
	if (text)
		fprintf(out, "%s\n", text);
	cJSON_free(text);
	cJSON_Delete(root); /* frees the runs too */
}

int compare_main(int argc, char **argv)
{
	struct compare_opts o = { .repeat = 1 };
	const struct argp argp = { opts, parse_opt, "-- 'CMD A' ['CMD B' ...]", doc, NULL, NULL,
				   NULL };
	double (*summary)[NMETRICS], wmin[MAX_VARIANTS], wmax[MAX_VARIANTS];
	cJSON **runs[MAX_VARIANTS] = { 0 };
	FILE *out = stdout;
	int status = 0;

	argv[0] = "iotrace compare";
	argp_parse(&argp, argc, argv, 0, NULL, &o);
	if (o.output && !(out = fopen(o.output, "w"))) {
		fprintf(stderr, "iotrace: cannot write %s: %s\n", o.output, strerror(errno));
		return 1;
	}
	summary = calloc(o.ncommands, sizeof(*summary));
	for (int v = 0; v < o.ncommands; v++)
		runs[v] = calloc(o.repeat, sizeof(*runs[v]));
	/* Interleaved, so drift in the machine's state hits every variant alike. */
	for (int i = 0; i < o.repeat && !status; i++) {
		for (int v = 0; v < o.ncommands && !status; v++) {
			if (o.drop_caches && drop_caches()) {
				status = 1;
				break;
			}
			runs[v][i] = run_variant(o.commands[v]);
			if (!runs[v][i]) {
				fprintf(stderr, "iotrace: variant %d (%s): run %d gave no report\n",
					v + 1, o.commands[v], i + 1);
				status = 1;
			}
		}
	}
	if (!status) {
		for (int v = 0; v < o.ncommands; v++)
			summarize(runs[v], o.repeat, summary[v], &wmin[v], &wmax[v]);
		if (o.json)
			print_json(out, &o, runs, summary);
		else
			print_table(out, &o, summary, wmin, wmax);
	}
	for (int v = 0; v < o.ncommands; v++) {
		if (!o.json || status)
			for (int i = 0; i < o.repeat; i++)
				cJSON_Delete(runs[v][i]);
		free(runs[v]);
	}
	free(summary);
	if (out != stdout)
		fclose(out);
	return status;
}
