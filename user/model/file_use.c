// SPDX-License-Identifier: GPL-2.0
/*
 * What a run did with each file (docs/run-mode.md, "What the run worked on, what it
 * loaded"). Code is what the kernel side saw: a process mapped the file executable (an mmap
 * of one of its fds with PROT_EXEC: the dynamic loader mapping a library), or the kernel
 * mapped it at exec (the program and its ELF interpreter), and how much the process had
 * read of it before (the ELF headers the loader reads). The C library's own start-up files
 * carry no such mark: they are known by the paths glibc has compiled in.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "file_use.h"
#include "syscall_table.h"

/*
 * What the dynamic loader and the C library read for themselves: the loader's cache and
 * preload list, locales and their aliases, message catalogs, the NSS configuration, the
 * time zone; character-set conversions (gconv) are matched below. A path ending in '/'
 * takes everything under it.
 */
static const char *const startup_paths[] = {
	"/etc/ld.so.cache", "/etc/ld.so.preload", "/etc/locale.alias", "/usr/lib/locale/",
	"/usr/share/locale/", "/etc/nsswitch.conf", "/etc/localtime", "/usr/share/zoneinfo/",
};

/* Where installed software and its configuration live (file_of_system). */
static const char *const system_dirs[] = {
	"/usr/", "/etc/", "/opt/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/",
};

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n && dir[n - 1] == '/')
		return !strncmp(path, dir, n);
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

static bool startup_path(const char *path)
{
	for (size_t i = 0; i < sizeof(startup_paths) / sizeof(startup_paths[0]); i++)
		if (under(path, startup_paths[i]))
			return true;
	return !strncmp(path, "/usr/lib", 8) && strstr(path, "/gconv/");
}

/*
 * Whether path is a word of a command line (n bytes at w, its trailing slashes cut), or
 * under it; a relative word is taken from cwd. No copy is made: this runs for each file of
 * each process of a run (a run's 230,000 in a run of 10,000 cat processes).
 */
static bool names_path(const char *path, const char *cwd, const char *w, size_t n)
{
	size_t c = 0;

	while (n > 1 && w[n - 1] == '/')
		n--;
	if (*w != '/') { /* cwd/word ("/word" from "/") */
		if (!cwd)
			return false;
		c = strcmp(cwd, "/") ? strlen(cwd) : 0;
		if (c + 1 + n >= PATH_MAX || strncmp(path, cwd, c) || path[c] != '/')
			return false;
		path += c + 1;
	} else if (n >= PATH_MAX) {
		return false;
	} else if (n == 1) { /* "/": everything */
		return true;
	}
	return !strncmp(path, w, n) && (path[n] == '/' || !path[n]);
}

/*
 * Whether a word of p's command line names the file, or a directory above it (cat
 * /etc/locale.alias, tar cf - /etc): then it is the process's data whatever its path. A
 * relative word is taken from the command's working directory cwd (a process that moved
 * elsewhere is not followed).
 */
static bool named_on_command_line(const struct proc_record *p, const char *path,
				  const char *cwd)
{
	const char *w = p->args, *end;

	if (*path != '/')
		return false;
	for (; w && *w; w = *end ? end + 1 : end) {
		end = strchr(w, ' ');
		end = end ? end : w + strlen(w);
		while (end - w > 2 && !strncmp(w, "./", 2))
			w += 2;
		if (*w != '-' && end != w && names_path(path, cwd, w, (size_t)(end - w)))
			return true;
	}
	return false;
}

/* It wrote to the file in some way: then the file is its data, whatever else it did. */
static bool wrote(const struct file_record *f)
{
	for (size_t i = 0; i < f->nio; i++)
		if (f->io[i].op == FOP_ftruncate || f->io[i].op == FOP_fallocate ||
		    f->io[i].op == FOP_uring_FTRUNCATE || f->io[i].op == FOP_uring_FALLOCATE)
			return true;
	return f->sum.write_calls || f->sum.sync_calls || f->pc.dirtied_pages ||
	       f->pc.direct_writes || f->sum.block_write_bytes;
}

enum file_use file_use_by(const struct file_record *f, const struct proc_record *p,
			  const char *cwd)
{
	if (f->kind == FK_METADATA || wrote(f))
		return FU_DATA;
	if (f->loaded && f->kind == FK_FILE)
		return f->sum.read_calls > f->load.loader_read_calls ||
		       f->sum.read_bytes > f->load.loader_read_bytes ? FU_DATA : FU_CODE;
	if (f->name && (f->kind == FK_FILE || f->kind == FK_DIR) && startup_path(f->name) &&
	    !named_on_command_line(p, f->name, cwd))
		return FU_STARTUP;
	return f->nio ? FU_DATA : FU_INHERITED;
}

enum file_use file_use_add(enum file_use run, enum file_use one)
{
	if (run == FU_INHERITED || one == FU_DATA)
		return one;
	if (one == FU_INHERITED || run == FU_DATA)
		return run;
	return run == FU_CODE || one == FU_CODE ? FU_CODE : FU_STARTUP;
}

const char *file_use_name(enum file_use u)
{
	return u == FU_CODE ? "code" : u == FU_STARTUP ? "startup" : "data";
}

char *file_install_prefix(const struct file_record *f)
{
	const char *name = f->name, *slash = name ? strrchr(name, '/') : NULL, *dir;
	size_t n;

	if (!(f->loaded & LOAD_EXECED) || !slash || slash == name)
		return NULL;
	for (dir = slash - 1; dir > name && *dir != '/'; dir--)
		;
	n = slash - dir - 1;
	if (dir == name || !((n == 3 && !strncmp(dir + 1, "bin", 3)) ||
			     (n == 4 && !strncmp(dir + 1, "sbin", 4))))
		return NULL;
	return strndup(name, dir - name);
}

bool file_of_system(const struct file_record *f, const char *cwd, char *const *prefixes,
		    size_t n)
{
	if (!f->name || (f->kind != FK_FILE && f->kind != FK_DIR) || wrote(f) ||
	    (cwd && strcmp(cwd, "/") && under(f->name, cwd)))
		return false;
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		if (under(f->name, system_dirs[i]))
			return true;
	/* An installation the run ran a program of, neither in cwd nor holding it. */
	for (size_t i = 0; i < n; i++)
		if (under(f->name, prefixes[i]) && !(cwd && under(prefixes[i], cwd)) &&
		    !(cwd && under(cwd, prefixes[i])))
			return true;
	return false;
}
