/*
 * storm: many short processes whose every countable call follows from their number, so a
 * tracer's per-process counts can be checked against arithmetic (tests/test_scale.py).
 *
 *   storm [-j JOBS] [-t THREADS] [-x EVERY] N
 *
 * Forks N children, at most JOBS alive at once (default 1). Child i (from 0):
 *   - names itself "s<i>" (prctl PR_SET_NAME: a rename);
 *   - with -x EVERY, when i % EVERY == 0, first execs this program again ("storm -c i"), so
 *     the calls below are made by a new image;
 *   - calls getppid() 1 + i % 7 times;
 *   - with -t THREADS, when i % 4 == 1, starts THREADS threads; thread k calls
 *     getpgid(0) 1 + (i + k) % 3 times;
 *   - exits with status i % 5.
 * The parent waits for each child and checks its status: exit 0 when every child exited
 * as said, 1 otherwise. getppid and getpgid are called through syscall(2), so the C
 * library adds none of its own.
 */
#define _GNU_SOURCE
#include <err.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define MAX_THREADS 16

static unsigned long threads;

static void usage(void)
{
	fprintf(stderr, "usage: storm [-j JOBS] [-t THREADS] [-x EVERY] N\n");
	exit(2);
}

static unsigned long number(const char *s, unsigned long min, unsigned long max)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		usage();
	v = strtoul(s, &end, 10);
	if (*end || v < min || v > max)
		usage();
	return v;
}

struct thread_arg {
	unsigned long i, k;
};

static void *thread_main(void *p)
{
	const struct thread_arg *a = p;

	for (unsigned long n = 0; n < 1 + (a->i + a->k) % 3; n++)
		syscall(SYS_getpgid, 0);
	return NULL;
}

/* What child i does once it runs its own image (forked or exec'd). */
static void child_work(unsigned long i)
{
	pthread_t tid[MAX_THREADS];
	struct thread_arg args[MAX_THREADS];
	char name[16];

	snprintf(name, sizeof(name), "s%lu", i);
	prctl(PR_SET_NAME, name);
	for (unsigned long n = 0; n < 1 + i % 7; n++)
		syscall(SYS_getppid);
	if (threads && i % 4 == 1) {
		for (unsigned long k = 0; k < threads; k++) {
			args[k] = (struct thread_arg){ i, k };
			if (pthread_create(&tid[k], NULL, thread_main, &args[k]))
				_exit(100);
		}
		for (unsigned long k = 0; k < threads; k++)
			pthread_join(tid[k], NULL);
	}
	_exit(i % 5);
}

static int reap(pid_t *pids, unsigned long n)
{
	int status, bad = 0;
	pid_t pid = wait(&status);

	if (pid < 0)
		err(1, "wait");
	for (unsigned long i = 0; i < n; i++)
		if (pids[i] == pid)
			bad = !WIFEXITED(status) || WEXITSTATUS(status) != i % 5;
	return bad;
}

int main(int argc, char **argv)
{
	unsigned long jobs = 1, every = 0, n, alive = 0;
	char self[4096], num[32], nthreads[32];
	pid_t *pids;
	int opt, bad = 0;
	ssize_t len;

	while ((opt = getopt(argc, argv, "j:t:x:c:")) != -1) {
		switch (opt) {
		case 'j': jobs = number(optarg, 1, 4096); break;
		case 't': threads = number(optarg, 0, MAX_THREADS); break;
		case 'x': every = number(optarg, 1, 1UL << 30); break;
		case 'c': child_work(number(optarg, 0, 1UL << 30)); break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	n = number(argv[optind], 1, 1UL << 24);
	pids = calloc(n, sizeof(*pids));
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (!pids || len < 0)
		err(1, "start");
	self[len] = '\0';
	for (unsigned long i = 0; i < n; i++) {
		if (alive == jobs) {
			bad |= reap(pids, i);
			alive--;
		}
		pids[i] = fork();
		if (pids[i] < 0)
			err(1, "fork");
		if (pids[i] == 0 && every && i % every == 0) {
			snprintf(num, sizeof(num), "%lu", i);
			snprintf(nthreads, sizeof(nthreads), "%lu", threads);
			/* -t first: -c starts the child's work as it is read. */
			execl(self, "storm", "-t", nthreads, "-c", num, (char *)NULL);
			_exit(101);
		}
		if (pids[i] == 0)
			child_work(i);
		alive++;
	}
	while (alive--)
		bad |= reap(pids, n);
	return bad;
}
