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

/*
 * One more zeroed element after the n of *items (size elem each), growing by one (arrays
 * that stay small: a file's few syscalls); a pointer to it, or NULL when out of memory (the
 * array unchanged).
 */
void *vec_append(void *items, size_t n, size_t elem);

/* VEC_PUSH(array, count): vec_append, and count (of any unsigned type) counted. */
#define VEC_PUSH(p, n)                                                                             \
	({                                                                                         \
		__typeof__(p) elem_ = vec_append(&(p), (n), sizeof(*(p)));                         \
		if (elem_)                                                                         \
			(n)++;                                                                     \
		elem_;                                                                             \
	})

/* Room for one more element after n: vec_reserve(&p, &cap, n + 1, sizeof(*p)). */
#define VEC_ROOM(p, n, cap) vec_reserve(&(p), &(cap), (n) + 1, sizeof(*(p)))

#endif
