// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hash.h"
#include "vec.h"

_Thread_local bool hash_oom;

int vec_reserve(void *items, size_t *cap, size_t need, size_t elem)
{
	size_t want = *cap ? *cap : 1;
	void *old, *grown;

	if (need <= *cap)
		return 0;
	while (want < need && want <= SIZE_MAX / 2)
		want *= 2;
	if (want < need || !elem || want > SIZE_MAX / elem)
		return -ENOMEM;
	/* items is the address of the caller's typed pointer: read and written as bytes. */
	memcpy(&old, items, sizeof(old));
	grown = realloc(old, want * elem);
	if (!grown)
		return -ENOMEM;
	memset((char *)grown + *cap * elem, 0, (want - *cap) * elem);
	memcpy(items, &grown, sizeof(grown));
	*cap = want;
	return 0;
}

void *vec_append(void *items, size_t n, size_t elem)
{
	void *old;
	char *grown;

	if (!elem || n >= SIZE_MAX / elem - 1)
		return NULL;
	memcpy(&old, items, sizeof(old));
	grown = realloc(old, (n + 1) * elem);
	if (!grown)
		return NULL;
	memcpy(items, &grown, sizeof(grown));
	return memset(grown + n * elem, 0, elem);
}
