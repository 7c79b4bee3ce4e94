/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one hash table of user/: uthash (Debian's uthash-dev), configured here so that every
 * table handles a failed allocation the same way: the add is not made and the caller sees
 * it (HASH_ADD_OR_FAIL), never uthash's exit(). Include this, never <uthash.h> itself.
 */
#ifndef IOTRACE_HASH_H
#define IOTRACE_HASH_H

#include <errno.h>
#include <stdbool.h>

/* Set by an add that could not allocate its table's buckets (the element was not added). */
extern _Thread_local bool hash_oom;
#define uthash_nonfatal_oom(elt) (hash_oom = true)
#include <uthash.h>

/*
 * Adds elt (whose key is field keyfield, keylen bytes) to head; err (an int) is set to 0,
 * or to -ENOMEM when the table could not grow: elt is then not in it and still the caller's.
 */
#define HASH_ADD_OR_FAIL(hh, head, keyfield, keylen, elt, err)                                     \
	do {                                                                                       \
		hash_oom = false;                                                                  \
		HASH_ADD(hh, head, keyfield, keylen, elt);                                         \
		(err) = hash_oom ? -ENOMEM : 0;                                                    \
	} while (0)

/*
 * Every element of head taken out of it and given to free_elt (a function of one element:
 * free, or the table's own that frees what the element holds, then it); head ends NULL.
 */
#define HASH_FREE_ALL(hh, head, free_elt)                                                          \
	do {                                                                                       \
		__typeof__(head) elt_, tmp_;                                                       \
		HASH_ITER(hh, head, elt_, tmp_) {                                                  \
			HASH_DEL(head, elt_);                                                      \
			free_elt(elt_);                                                            \
		}                                                                                  \
	} while (0)

#endif
