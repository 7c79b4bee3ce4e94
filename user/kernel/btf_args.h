/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tracepoint's or a function's arguments as the kernel's BTF gives them, against those a
 * program of iotrace reads (tracer_hooks.c): a way whose arguments differ on this kernel is
 * refused, never read as if they were the same.
 */
#ifndef IOTRACE_BTF_ARGS_H
#define IOTRACE_BTF_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <bpf/btf.h>

/*
 * Whether the prototype reached from type id (a function, or a tracepoint's btf_trace_X
 * typedef of a pointer to one) has, after its first skip arguments, the arguments want
 * names: types as BTF names them, comma-separated ("struct bio *,int", "u64"; "?" takes any
 * type, qualifiers are ignored). When not, why says what this kernel has instead.
 */
bool btf_args_match(const struct btf *btf, int id, int skip, const char *want, char *why,
		    size_t len);

/* The arguments after the first skip of the prototype reached from id, as want names them. */
int btf_args_describe(const struct btf *btf, int id, int skip, char *buf, size_t len);

#endif /* IOTRACE_BTF_ARGS_H */
