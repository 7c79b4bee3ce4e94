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

#endif
