// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <fcntl.h>
#include <stdint.h>
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
	size_t digits = strspn(user, "0123456789");
	struct passwd *pw = getpwnam(user);

	/* A uid with a passwd entry too, as serve's -u takes it (initgroups wants its name). */
	if (!pw && digits && !user[digits] && digits <= 10 && strtoul(user, NULL, 10) <= UINT32_MAX)
		pw = getpwuid((uid_t)strtoul(user, NULL, 10));
	if (!pw) {
		fprintf(stderr, "iotrace: unknown user '%s'\n", user);
		return -1;
	}
	c->user = strdup(pw->pw_name);
	if (!c->user) {
		fprintf(stderr, "iotrace: out of memory\n");
		return -1;
	}
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

/*
 * Why execve failed, in a few words: ENOENT for a file that is there means its interpreter
 * (the #! line) or its ELF loader is missing, not the file.
 */
const char *spawn_error(const char *path, int err, char *buf, size_t len)
{
	char line[256] = "", shown[NAME_TEXT_MAX];
	ssize_t n = -1;
	int fd;

	if (err != ENOENT || access(path, F_OK))
		return strerror(err);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, line, sizeof(line) - 1);
		close(fd);
	}
	if (n > 2 && line[0] == '#' && line[1] == '!') {
		line[n] = '\0';
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, len, "its interpreter %s: not found",
			 name_cell(line + 2 + strspn(line + 2, " \t"), 0, shown, sizeof(shown)));
	} else {
		snprintf(buf, len, "its program loader (ELF interpreter) is not found");
	}
	return buf;
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
	if (c->go_fd >= 0) {
		close(c->go_fd);
		/* Never released: it exits at the pipe's end of file (child_main). */
		if (c->pid > 0)
			waitpid(c->pid, NULL, 0);
	}
	if (c->error_fd >= 0)
		close(c->error_fd);
	c->go_fd = c->error_fd = -1;
	free(c->path);
	c->path = NULL;
	free((char *)c->user);
	c->user = NULL;
}
