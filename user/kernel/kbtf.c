// SPDX-License-Identifier: GPL-2.0
/* Whether the minimal BTF cut at build time fits the running kernel (kbtf.h). */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "kbtf.h"
#include "util/util.h"

/* The kernel's notes are a few hundred bytes; anything near this is not them. */
#define NOTES_MAX 65536

int kbtf_open(const struct kbtf_cut *cut, const char *vmlinux_btf, const char *notes_path,
	      const char **why)
{
	static unsigned char notes[NOTES_MAX];
	const unsigned char *id;
	struct stat st;
	ssize_t len;
	int fd;

	if (!cut->btf_len) {
		*why = cut->why_none;
		return -1;
	}
	fd = open(notes_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*why = "the running kernel's build ID is unreadable";
		return -1;
	}
	len = read(fd, notes, sizeof(notes));
	close(fd);
	if (len <= 0 || len == sizeof(notes) ||
	    notes_build_id(notes, len, &id) != cut->build_id_len ||
	    memcmp(id, cut->build_id, cut->build_id_len)) {
		*why = "the running kernel is not the one iotrace was built on";
		return -1;
	}
	if (stat(vmlinux_btf, &st) || (uint64_t)st.st_size != cut->vmlinux_btf_size) {
		*why = "the running kernel's BTF differs from the build kernel's";
		return -1;
	}
	fd = memfd_create("iotrace-min-btf", MFD_CLOEXEC);
	if (fd < 0 || write(fd, cut->btf, cut->btf_len) != (ssize_t)cut->btf_len) {
		*why = "cannot stage the minimal BTF in memory";
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*why = NULL;
	return fd;
}

uint32_t kbtf_type_id(const struct kbtf_cut *cut, const char *name)
{
	for (const struct kbtf_type *t = cut->types; t->name; t++)
		if (!strcmp(t->name, name))
			return t->id;
	return 0;
}
