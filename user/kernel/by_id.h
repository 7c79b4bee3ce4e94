/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading on the kernel iotrace was built on without libbpf's parse of the kernel's BTF
 * (by_id.c): the attach targets and the kfuncs by the ids recorded at build time.
 */
#ifndef IOTRACE_BY_ID_H
#define IOTRACE_BY_ID_H

#include <stdbool.h>
#include "kbtf.h"

/*
 * Registers the handlers that load the by-id build's tp_btf and iter programs with the ids
 * of cut (which must fit the running kernel: kbtf_open). false if libbpf refused them.
 * Every object opened from then on gets them, until by_id_end.
 */
bool by_id_begin(const struct kbtf_cut *cut);
/* Unregisters them; no object opened since by_id_begin may be alive. */
void by_id_end(void);
/* Whether they are registered: the full build is then opened as its by-id build. */
bool by_id_on(void);

#endif
