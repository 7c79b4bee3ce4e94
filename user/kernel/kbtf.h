/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The minimal kernel BTF cut at build time (scripts/min_btf.py), and the check that the
 * running kernel is the one it was cut from.
 */
#ifndef IOTRACE_KBTF_H
#define IOTRACE_KBTF_H

#include <stddef.h>
#include <stdint.h>

struct kbtf_type {
	/* a struct passed to bpf_rdonly_cast; or, for the by-id build (by_id.c),
	 * "typedef:btf_trace_<tracepoint>" or "func:<name>" (a kfunc, an iterator) */
	const char *name;
	uint32_t id; /* its id in the build kernel's BTF */
};

struct kbtf_cut {
	const unsigned char *btf;
	size_t btf_len;              /* 0: no minimal BTF, see why_none */
	const unsigned char *build_id;
	size_t build_id_len;
	uint64_t vmlinux_btf_size;   /* of the build kernel's /sys/kernel/btf/vmlinux */
	const struct kbtf_type *types; /* ends with a NULL name */
	const char *why_none;
};

/* The cut made for this build (.output/min_btf.c). */
extern const struct kbtf_cut kbtf_cut;

/*
 * A file descriptor holding cut's BTF if it was cut from the running kernel (whose BTF and
 * notes are at the paths given), for libbpf's btf_custom_path ("/proc/self/fd/N"); -1 with
 * *why set otherwise.
 */
int kbtf_open(const struct kbtf_cut *cut, const char *vmlinux_btf, const char *notes_path,
	      const char **why);

/* The build kernel's id of struct name, or 0. Valid only when kbtf_open succeeded. */
uint32_t kbtf_type_id(const struct kbtf_cut *cut, const char *name);

#endif
