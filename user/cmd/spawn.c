// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "report/cells.h"
#include "spawn.h"

extern char **environ;

static int check_executable(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return errno == ENOENT || errno == ENOTDIR ? 127 : 126;
	if (S_ISDIR(st.st_mode) || access(path, X_OK))
		return 126;
	return 0;
}

int spawn_resolve(const char *cmd, char **path)
{
	const char *env = getenv("PATH");
	char *dirs, *dir, *save = NULL, shown[NAME_TEXT_MAX];
	int status = 127, s;

	*path = NULL;
	if (!*cmd) {
		fprintf(stderr, "iotrace: empty command name\n");
		return 127;
	}
	if (strchr(cmd, '/')) {
		status = check_executable(cmd);
		if (!status)
			*path = strdup(cmd);
	} else {
		dirs = strdup(env && *env ? env : "/usr/local/bin:/usr/bin:/bin");
		for (dir = strtok_r(dirs, ":", &save); dir && !*path; dir = strtok_r(NULL, ":", &save)) {
			char *cand;

			if (asprintf(&cand, "%s/%s", *dir ? dir : ".", cmd) < 0)
				break;
			s = check_executable(cand);
			if (!s)
				*path = cand;
			else
				free(cand);
			/* A found-but-unrunnable file wins over "not found", as in sh. */
			if (s == 126)
				status = 126;
		}
		free(dirs);
	}
	if (*path)
		return 0;
	name_cell(cmd, 0, shown, sizeof(shown));
	if (status == 127)
		fprintf(stderr, "iotrace: %s: command not found\n", shown);
	else
		fprintf(stderr, "iotrace: %s: permission denied or not an executable file\n",
			shown);
	return status;
}

int spawn_set_user(struct child *c, const char *user)
{
	struct passwd *pw = getpwnam(user);

	if (!pw) {
		fprintf(stderr, "iotrace: unknown user '%s'\n", user);
		return -1;
	}
	c->user = user;
	c->uid = pw->pw_uid;
	c->gid = pw->pw_gid;
	return 0;
}

/* Drops to -u USER's ids and groups (like strace -u); the error goes back as errno. */
static int become_user(const struct child *c)
{
	if (!c->user)
		return 0;
	if (initgroups(c->user, c->gid) || setgid(c->gid) || setuid(c->uid))
		return errno ? errno : EPERM;
	return 0;
}

static void child_main(struct child *c, int go_rd, int err_wr, char *const argv[],
		       const sigset_t *mask)
{
	char byte;
	int err;

	close(c->go_fd);
	close(c->error_fd);
	/* EOF without a byte means iotrace gave up before tracing started. */
	if (read(go_rd, &byte, 1) != 1)
		_exit(127);
	close(go_rd);
	sigprocmask(SIG_SETMASK, mask, NULL);
	err = become_user(c);
	if (!err) {
		execve(c->path, argv, environ);
		err = errno;
	}
	if (write(err_wr, &err, sizeof(err)) != sizeof(err))
		_exit(127);
	_exit(err == ENOENT ? 127 : 126);
}

int spawn_prepare(struct child *c, char *const argv[], const sigset_t *child_mask)
{
	int go[2], err[2];

	if (pipe2(go, O_CLOEXEC))
		return -1;
	if (pipe2(err, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	c->go_fd = go[1];
	c->error_fd = err[0];
	c->pid = fork();
	if (c->pid < 0) {
		close(go[0]);
		close(err[1]);
		spawn_cleanup(c);
		return -1;
	}
	if (c->pid == 0)
		child_main(c, go[0], err[1], argv, child_mask);
	close(go[0]);
	close(err[1]);
	return 0;
}

int spawn_release(struct child *c)
{
	int child_errno = 0;
	ssize_t n;

	if (write(c->go_fd, "x", 1) != 1)
		return errno;
	close(c->go_fd);
	c->go_fd = -1;
	do
		n = read(c->error_fd, &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(c->error_fd);
	c->error_fd = -1;
	return n == sizeof(child_errno) ? child_errno : 0;
}

void spawn_cleanup(struct child *c)
{
	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->error_fd >= 0)
		close(c->error_fd);
	c->go_fd = c->error_fd = -1;
	free(c->path);
	c->path = NULL;
}
