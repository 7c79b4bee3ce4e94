// SPDX-License-Identifier: GPL-2.0
/*
 * Symbols and unwinding with libdwfl (elfutils), as perf's libdw unwinder does. Files are
 * opened once each (an offline Dwfl per file, its PT_LOAD segments turning file offsets
 * into addresses); names are looked up once per (file, offset). Debug information, where
 * there is some (the file's own, or /usr/lib/debug's by build ID), gives inlined frames;
 * otherwise the symbol tables give the function.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include "sym.h"
#include "hash.h"
#include "vec.h"

#define MAX_LOADS 16

struct sym_file {
	char *path;
	Dwfl *dwfl; /* NULL: the file could not be read */
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	size_t nloads;
	struct { uint64_t offset, vaddr, size; } loads[MAX_LOADS];
};

/* A file by its index in files[] (its address moves as the array grows). */
struct sym_name_key {
	uint64_t off;
	uint32_t file;
	uint32_t ret;
};

struct sym_name {
	struct sym_name_key key;
	int n;
	char *names[SYM_MAX_INLINE];
	UT_hash_handle hh;
};

struct sym {
	struct sym_file *files;
	size_t nfiles;
	struct sym_name *names; /* by (file, off, ret) */
};

static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct sym *sym_new(void)
{
	elf_version(EV_CURRENT);
	return calloc(1, sizeof(struct sym));
}

static void name_free(struct sym_name *e)
{
	for (int k = 0; k < e->n; k++)
		free(e->names[k]);
	free(e);
}

void sym_free(struct sym *y)
{
	if (!y)
		return;
	for (size_t i = 0; i < y->nfiles; i++) {
		free(y->files[i].path);
		if (y->files[i].dwfl)
			dwfl_end(y->files[i].dwfl);
	}
	free(y->files);
	HASH_FREE_ALL(hh, y->names, name_free);
	free(y);
}

/* The file's PT_LOAD segments, which turn a file offset into its address. */
static void read_loads(struct sym_file *f)
{
	Elf *elf = dwfl_module_getelf(f->mod, &f->bias);
	size_t phnum;

	if (!elf || elf_getphdrnum(elf, &phnum))
		return;
	for (size_t i = 0; i < phnum && f->nloads < MAX_LOADS; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, i, &mem);

		if (ph && ph->p_type == PT_LOAD)
			f->loads[f->nloads++] = (typeof(f->loads[0])){ ph->p_offset, ph->p_vaddr,
								       ph->p_filesz };
	}
}

static struct sym_file *file_of(struct sym *y, const char *path)
{
	struct sym_file *f;

	for (size_t i = 0; i < y->nfiles; i++)
		if (!strcmp(y->files[i].path, path))
			return &y->files[i];
	f = vec_append(&y->files, y->nfiles, sizeof(*f));
	if (!f)
		return NULL;
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	y->nfiles++;
	f->dwfl = dwfl_begin(&offline_callbacks);
	if (f->dwfl) {
		f->mod = dwfl_report_elf(f->dwfl, path, path, -1, 0, true);
		dwfl_report_end(f->dwfl, NULL, NULL);
	}
	if (f->mod)
		read_loads(f);
	return f;
}

/* The module address of file offset off, or 0. */
static Dwarf_Addr address_of(const struct sym_file *f, uint64_t off)
{
	for (size_t i = 0; i < f->nloads; i++)
		if (off >= f->loads[i].offset && off < f->loads[i].offset + f->loads[i].size)
			return f->loads[i].vaddr + (off - f->loads[i].offset) + f->bias;
	return 0;
}

static bool is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/*
 * Inlined frames from the debug information: names innermost first; how many. The scopes
 * at an address stop at the innermost function (inlined or not) and go on with its own
 * abstract scopes; the scopes around that function's DIE give the chain of its callers
 * into which it was inlined, up to the real function (as eu-addr2line -i finds them).
 */
static int inline_names(struct sym_file *f, Dwarf_Addr addr, char **names)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(f->mod, addr, &bias), *scopes = NULL, *chain = NULL;
	int n = 0, nscopes, i;

	if (!cu)
		return 0;
	nscopes = dwarf_getscopes(cu, addr - bias, &scopes);
	for (i = 0; i < nscopes && !is_function(&scopes[i]); i++)
		;
	nscopes = i < nscopes ? dwarf_getscopes_die(&scopes[i], &chain) : 0;
	free(scopes);
	scopes = chain;
	for (int i = 0; i < nscopes && n < SYM_MAX_INLINE; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Attribute attr;
		const char *name;

		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		name = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &attr));
		if (name)
			names[n++] = strdup(name);
		if (tag == DW_TAG_subprogram)
			break;
	}
	free(scopes);
	return n;
}

static void lookup(struct sym_file *f, uint64_t off, bool ret, struct sym_name *out)
{
	Dwarf_Addr addr = f->mod ? address_of(f, off) : 0;
	const char *base = strrchr(f->path, '/');
	char *inner_first[SYM_MAX_INLINE], buf[320];
	GElf_Off offset;
	GElf_Sym sym;
	const char *name;
	int n = 0;

	if (addr)
		n = inline_names(f, addr - ret, inner_first);
	if (!n && addr && (name = dwfl_module_addrinfo(f->mod, addr - ret, &offset, &sym, NULL,
						       NULL, NULL)))
		inner_first[n++] = strdup(name);
	if (!n) {
		snprintf(buf, sizeof(buf), "[unknown] (%s)", base ? base + 1 : f->path);
		inner_first[n++] = strdup(buf);
	}
	out->n = n;
	for (int i = 0; i < n; i++)
		out->names[i] = inner_first[n - 1 - i];
}

/* The names of (f, off, ret), looked up when new; NULL out of memory. */
static struct sym_name *name_of(struct sym *y, struct sym_file *f, uint64_t off, bool ret)
{
	struct sym_name_key k = { .off = off, .file = f - y->files, .ret = ret };
	struct sym_name *e;
	int err;

	HASH_FIND(hh, y->names, &k, sizeof(k), e);
	if (e || !(e = calloc(1, sizeof(*e))))
		return e;
	e->key = k;
	lookup(f, off, ret, e);
	HASH_ADD_OR_FAIL(hh, y->names, key, sizeof(e->key), e, err);
	if (err) {
		name_free(e);
		return NULL;
	}
	return e;
}

int sym_frames(struct sym *y, const char *path, uint64_t off, bool return_address,
	       const char *names[SYM_MAX_INLINE])
{
	struct sym_file *f = path ? file_of(y, path) : NULL;
	struct sym_name *e = f ? name_of(y, f, off, return_address) : NULL;

	if (!e) {
		names[0] = "[unknown]";
		return 1;
	}
	for (int i = 0; i < e->n; i++)
		names[i] = e->names[i];
	return e->n;
}
