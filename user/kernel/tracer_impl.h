/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracer's insides, shared by tracer*.c only (the libbpf layer). tracer.c owns them and
 * the helpers every part uses (map_mmap, map_walk, tracer_for_each_inflight); the parts below
 * are set up by tracer_load.c alone, so no part calls up into the loading.
 */
#ifndef IOTRACE_TRACER_IMPL_H
#define IOTRACE_TRACER_IMPL_H

#include <bpf/libbpf.h>
#include <bpf/btf.h>
#include "iotrace.skel.h"
#include "tracer.h"

/* How the running kernel gives one event (tracer_hooks.c). */
#define HOOK_WAYS 4
#define HOOK_WHY_LEN 320
struct hook_choice {
	int way;       /* index of the way taken, -1: none */
	int cands[HOOK_WAYS], ncands; /* the ways this kernel may offer, best first */
	bool wanted;   /* this mode uses the event */
	char kind[16]; /* the way's program kind: tp_btf, fentry, fexit, kprobe, kretprobe */
	char target[64];
	char why[HOOK_WHY_LEN]; /* why the better ways (or all) could not be taken */
	bool linked;   /* attach_own_hooks attached it (or tried): link_err says how it went */
	int link_err;
};

struct tracer {
	struct iotrace_bpf *skel;  /* every map, and the programs it loaded */
	/* The second instance of the same object, which loaded the other programs in a second
	 * thread over skel's maps (tracer_objects.c, "Loading in two threads"), or NULL. */
	struct iotrace_bpf *skel2;
	enum tracer_build build;
	const char *build_why;
	bool probed;  /* the kernel's BTF was asked (not the build kernel's defaults) */
	bool mapped;  /* map_counters did (tracer_load.c) */
	char core[160]; /* what CO-RE relocated against, and why */
	double load_ms, attach_ms;
	struct hook_choice hooks[NR_HOOKS];
	struct ring_buffer *events;
	uint16_t *proc_slot;          /* mmap of proc_slot: u16 per tgid */
	struct sc_cache_row *sc;      /* mmap of sc_cache: [cpu][SC_CACHE_ROWS] */
	struct io_cache_row *io;      /* mmap of io_cache: [cpu][IO_CACHE_ROWS] */
	uint64_t *moves;              /* mmap of cache_moves: [cpu] (read atomically) */
	struct slot_marks *marks;     /* mmap of slot_marks: [slot] */
	struct dense_profile *scratch; /* a consistent read of a live slot's counters */
	struct live_rows *live;        /* ... the same, row by row (tracer_read_live_slots) */
	struct file_stat *files;      /* mmap of file_stats */
	struct file_row *rows;        /* mmap of file_rows */
	uint64_t *trace_ctr;          /* mmap of trace_counters (--trace), or NULL */
	struct slot_proc *slot_rows;  /* mmap of slot_procs (run mode), or NULL */
	uint32_t stack_nrs[MAX_SYSCALLS], nstack_nrs; /* --stacks: the syscalls stacked */
	size_t proc_slot_len, sc_len, io_len, moves_len, marks_len, files_len, rows_len, trace_ctr_len;
	size_t slot_rows_len;
	uint32_t pid_max, ncpus, nr_slots;
	const char *missing[TRACER_HOOK_GROUPS]; /* why a hook group is off, or NULL */
};

/*
 * Chooses each event's way from the kernel's BTF (btf NULL: every event's first way, as on
 * the kernel iotrace was built on; a failed load then makes the caller ask the BTF), switches
 * the other ways' programs off and records what is missing in t->missing (tracer_hooks.c).
 * Returns -1 when syscalls, processes or block I/O cannot be traced.
 */
/*
 * The copy of prog (a program of t->skel) that was loaded: t->skel2's when that instance
 * loaded it. And the skeleton's link slot of a loaded program, in whichever instance holds
 * it, so that detaching and destroying close what is attached (NULL if none).
 */
struct bpf_program *tracer_prog(struct tracer *t, struct bpf_program *prog);
struct bpf_link **tracer_link_slot(struct tracer *t, const struct bpf_program *prog);
struct bpf_link **skel_link_slot(struct iotrace_bpf *s, const struct bpf_program *prog);

struct btf_index;
/* What loading does beside loading (tracer_load.c's). */
struct load_steps {
	void (*forget_warnings)(void); /* the warnings of a failed load, before loading again */
	/* Maps what user space reads in place (t->mapped), with two loader threads by the
	 * first done, beside the other's load; 0 or -errno, nothing left mapped then. */
	int (*map)(struct tracer *t, void *arg);
	void (*unmap)(struct tracer *t);
	void *arg;
};

/* Undoes a load that failed, for the next try: mappings, both instances, warnings. */
void tracer_unload_objects(struct tracer *t, const struct load_steps *steps);
/* Opens t->skel (and t->skel2) of t->build configured and loads them (tracer_objects.c). */
int tracer_load_objects(struct tracer *t, const struct tracer_config *cfg, const char *btf_path,
			const uint32_t *ids, const struct btf_index *btf,
			const struct load_steps *steps);
double tracer_now_ms(void); /* CLOCK_MONOTONIC */
/*
 * Splits n items in two halves of about equal cost, costliest first each to the half with
 * less so far: side[i] is 0 or 1, -1 for an item of cost 0 (left out). The programs between
 * the loader threads (tracer_objects.c), the maps made beforehand (tracer_premake.c).
 */
void split_by_cost(const unsigned long *cost, int n, int *side);
/*
 * The configured object's largest maps, made beforehand in two halves for libbpf to reuse
 * (tracer_premake.c): plan splits them, each loader thread makes one half, adopt hands
 * what was made to libbpf and says how many.
 */
#define PREMAKE_MAX 64
struct premake {
	struct premake_half {
		struct bpf_map *maps[PREMAKE_MAX];
		int fds[PREMAKE_MAX];
		int n;
	} half[2];
};
void tracer_premake_plan(struct bpf_object *obj, struct premake *p);
void tracer_premake_half(struct premake *p, int side);
int tracer_premake_adopt(struct premake *p);
int probe_hooks(struct tracer *t, const struct btf_index *btf);
/* After loading: attaches each hook's first way that attaches (tracer_hooks.c). */
int attach_hooks(struct tracer *t);
/* In a loader thread: the hooks whose programs instance `in` loaded, attached now. */
void attach_own_hooks(struct tracer *t, struct iotrace_bpf *in);
/* The build of the programs this kernel can load (btf NULL: the full one), and why. */
enum tracer_build choose_build(const struct btf_index *btf, const char **why);
/* The kernel's functions and tracepoints by name (btf NULL or no memory: NULL). */
struct btf_index *btf_index_new(const struct btf *btf);
void btf_index_free(struct btf_index *ix);
const struct btf *btf_index_btf(const struct btf_index *ix); /* the BTF it indexes */
/* The id of the function (func) or typedef named name, or -1 (btf_index.c). */
int btf_index_find(const struct btf_index *ix, const char *name, bool func);
/* The id of tracepoint tp's btf_trace_TP typedef, or -1. */
int tracepoint_id(const struct btf_index *ix, const char *tp);
/* An mmapable array map's values mapped (len: its length, whole pages); NULL, errno set. */
void *map_mmap(struct bpf_map *map, size_t *len);
/* What map_mmap mapped (p, len) unmapped; p may be NULL (never mapped). */
void map_munmap(void *p, size_t len);

/* Returns true to stop the walk. */
typedef bool (*map_visit_fn)(const void *key, const void *value, void *ctx);

/*
 * Calls visit on every element of a hash map, read in batches; elements added or removed
 * meanwhile may or may not be seen, as with any walk of a live map.
 */
int map_walk(int fd, uint32_t ksize, uint32_t vsize, map_visit_fn visit, void *ctx);
/*
 * A hash map's element read into value and removed: in one call where the kernel takes it
 * for a hash map (5.14), a lookup and a delete before (5.10 refuses it: EINVAL or ENOTSUPP).
 * 0, or -1 (no such key, or unreadable).
 */
int map_take(int fd, const void *key, void *value);
#define MAP_WALK(t, map, visit, ctx)                                                          \
	map_walk(bpf_map__fd((t)->skel->maps.map), bpf_map__key_size((t)->skel->maps.map),    \
		 bpf_map__value_size((t)->skel->maps.map), visit, ctx)

typedef bool (*inflight_visit_fn)(const struct block_rq_info *info, void *ctx);

/* Calls visit on every request in the kernel's in-flight table until it returns true. */
void tracer_for_each_inflight(struct tracer *t, inflight_visit_fn visit, void *ctx);

/* tracer_read.c: the buffers of tracer_read_live_slots freed. */
void tracer_free_live_rows(struct tracer *t);

/* --trace (tracer_trace.c): its rodata and map sizes, its ring and counters, their unmap. */
/* Map sizes, read-only data and which programs load, before the load (tracer_config.c). */
void tracer_configure(struct tracer *t, const struct tracer_config *cfg);
void configure_trace(struct tracer *t, const struct tracer_config *cfg);
int map_trace(struct tracer *t, const struct tracer_config *cfg, void *ctx);
void unmap_trace(struct tracer *t);
/* --stacks (tracer_stacks.c): its rodata and map sizes, its ring. */
void configure_stacks(struct tracer *t, const struct tracer_config *cfg);
int map_stacks(struct tracer *t, const struct tracer_config *cfg, void *ctx);

#endif
