/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one growable array of user/: a pointer, a count and a capacity the caller keeps, grown
 * here by doubling (no realloc elsewhere). A failed growth leaves the array as it was.
 */
#ifndef IOTRACE_VEC_H
#define IOTRACE_VEC_H

#include <stddef.h>

/*
 * Makes room for at least need elements of size elem in *items (capacity *cap, updated);
 * new room is zeroed. 0, or -ENOMEM (the array and *cap unchanged).
 */
int vec_reserve(void *items, size_t *cap, size_t need, size_t elem);

/* Room for one more element after n: vec_reserve(&p, &cap, n + 1, sizeof(*p)). */
#define VEC_ROOM(p, n, cap) vec_reserve(&(p), &(cap), (n) + 1, sizeof(*(p)))

#endif
