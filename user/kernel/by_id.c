// SPDX-License-Identifier: GPL-2.0
/*
 * Loading on the kernel iotrace was built on without libbpf's parse of the kernel's BTF.
 *
 * libbpf 1.1 parses the kernel's BTF (5.5 MB, ~127k types: ~10 ms here, in each instance of
 * the object, before it creates the maps) for three things: CO-RE, which already relocates
 * against the minimal BTF cut at build time (kbtf.h); the ids of the tracepoints and
 * iterators the tp_btf and iter programs attach to; and the ids of the kfuncs the programs
 * call. scripts/min_btf.py records the latter two from the build kernel's BTF, and the
 * by-id build of the programs (KFUNC_BY_ID, bpf/maps.bpf.h) calls its kfuncs as numbered
 * helpers, so that libbpf has no extern to resolve. The handlers below give those programs
 * to libbpf as raw tracepoints, which need no kernel BTF, and right before each is loaded
 * make it the tracing program it is: its attach type and target id, and each numbered call
 * turned into a call of the kfunc's id (what libbpf's own relocation would have written).
 * A program whose id the build did not record fails to load, and the loader then loads the
 * usual way (tracer_load.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "iotrace.h"
#include "by_id.h"

enum { BY_ID_TP, BY_ID_ITER };

#define KFN_NAME_ENTRY(name) [KFN_##name] = #name,
static const char *const kfunc_names[NR_KFUNCS] = { KFUNCS(KFN_NAME_ENTRY) };

static const struct kbtf_cut *by_cut;
static int handlers[2] = { -1, -1 };

/* The build kernel's id of the typedef or function "<kind>:<prefix><name>", or -ESRCH. */
static int cut_id(const char *kind, const char *prefix, const char *name)
{
	char key[160];
	uint32_t id;

	snprintf(key, sizeof(key), "%s:%s%s", kind, prefix, name);
	id = kbtf_type_id(by_cut, key);
	return id && id <= INT32_MAX ? (int)id : -ESRCH;
}

/* prog's numbered kfunc calls made calls of the kfuncs' kernel ids. */
static int patch_kfuncs(struct bpf_program *prog)
{
	const struct bpf_insn *insns = bpf_program__insns(prog);
	size_t n = bpf_program__insn_cnt(prog);
	struct bpf_insn *copy = NULL;
	int err = 0, id;

	for (size_t i = 0; i < n && !err; i++) {
		uint32_t k = (uint32_t)insns[i].imm - KFUNC_CALL_BASE;

		if (insns[i].code != (BPF_JMP | BPF_CALL) || insns[i].src_reg || k >= NR_KFUNCS)
			continue;
		id = cut_id("func", "", kfunc_names[k]);
		if (id < 0) {
			err = id;
			break;
		}
		if (!copy) {
			copy = malloc(n * sizeof(*copy));
			if (!copy) {
				err = -ENOMEM;
				break;
			}
			memcpy(copy, insns, n * sizeof(*copy));
		}
		copy[i].src_reg = BPF_PSEUDO_KFUNC_CALL;
		copy[i].off = 0; /* the kernel's own BTF, not a module's */
		copy[i].imm = id;
	}
	if (!err && copy)
		err = bpf_program__set_insns(prog, copy, n);
	free(copy);
	return err;
}

/*
 * libbpf calls it right before loading prog, a tp_btf or iter program it opened as a raw
 * tracepoint (cookie: which): the tracing program it is, with its target's id.
 */
static int prepare(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long cookie)
{
	const char *target = strchr(bpf_program__section_name(prog), '/') + 1;
	enum bpf_attach_type type = cookie == BY_ID_ITER ? BPF_TRACE_ITER : BPF_TRACE_RAW_TP;
	int id = cookie == BY_ID_ITER ? cut_id("func", "bpf_iter_", target)
				      : cut_id("typedef", "btf_trace_", target);

	if (id < 0)
		return id;
	bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING);
	bpf_program__set_expected_attach_type(prog, type);
	opts->expected_attach_type = type;
	opts->attach_btf_obj_fd = 0;
	opts->attach_btf_id = id;
	return patch_kfuncs(prog);
}

/* A tp_btf program attached as libbpf's own handler would; an iterator is attached with
 * its map (tracer_load.c), not here: no link, which libbpf's skeleton attach skips. */
static int attach(const struct bpf_program *prog, long cookie, struct bpf_link **link)
{
	*link = NULL;
	if (cookie == BY_ID_ITER)
		return 0;
	*link = bpf_program__attach_trace(prog);
	return *link ? 0 : -errno;
}

bool by_id_begin(const struct kbtf_cut *cut)
{
	LIBBPF_OPTS(libbpf_prog_handler_opts, tp, .cookie = BY_ID_TP,
		    .prog_prepare_load_fn = prepare, .prog_attach_fn = attach);
	LIBBPF_OPTS(libbpf_prog_handler_opts, iter, .cookie = BY_ID_ITER,
		    .prog_prepare_load_fn = prepare, .prog_attach_fn = attach);

	if (by_id_on())
		return true;
	by_cut = cut;
	handlers[0] = libbpf_register_prog_handler("tp_btf/", BPF_PROG_TYPE_RAW_TRACEPOINT, 0,
						   &tp);
	handlers[1] = libbpf_register_prog_handler("iter/", BPF_PROG_TYPE_RAW_TRACEPOINT, 0,
						   &iter);
	if (handlers[0] < 0 || handlers[1] < 0) {
		by_id_end();
		return false;
	}
	return true;
}

void by_id_end(void)
{
	for (int i = 0; i < 2; i++) {
		if (handlers[i] >= 0)
			libbpf_unregister_prog_handler(handlers[i]);
		handlers[i] = -1;
	}
}

bool by_id_on(void)
{
	return handlers[0] >= 0 && handlers[1] >= 0;
}
