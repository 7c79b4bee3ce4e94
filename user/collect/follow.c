// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "follow.h"

void follow_start(struct follow *f, struct tracer *t, follow_row_fn take_row,
		  ledger_entry_fn give_entry, void *ctx)
{
	*f = (struct follow){ .tracer = t, .take_row = take_row, .give_entry = give_entry,
			      .ctx = ctx };
}

void follow_slot(struct follow *f, uint32_t slot)
{
	struct slot_proc row;

	if (!tracer_read_slot_proc(f->tracer, slot, &row))
		f->take_row(slot, &row, f->ctx);
	else /* free, or a fork or exit writing its row now: look again at the next tick */
		f->rescan |= tracer_slot_in_use(f->tracer, slot);
}

static void follow_used_slot(uint32_t slot, void *ctx)
{
	follow_slot(ctx, slot);
}

void follow_sync_all(struct follow *f)
{
	f->rescan = false;
	f->notices_lost = tracer_notices_lost(f->tracer);
	tracer_for_each_used_slot(f->tracer, follow_used_slot, f);
}

int follow_take_files(struct follow *f, uint32_t pid)
{
	if (!tracer_take_files(f->tracer, pid, f->give_entry, f->ctx))
		return 0;
	f->error = -ENOMEM;
	return -ENOMEM;
}

int follow_tick(struct follow *f)
{
	size_t n = 0;

	/* Notices were lost (the loader fell behind): the table says what they said. */
	if (f->rescan || tracer_notices_lost(f->tracer) != f->notices_lost)
		follow_sync_all(f);
	/* Entries whose file was not used since the last tick leave the kernel. */
	if (tracer_evict_idle(f->tracer, 1, f->give_entry, f->ctx, &n))
		f->error = -ENOMEM;
	/*
	 * Files come and go fast (tar, find): tick again soon, a smaller batch each time, and
	 * while the table stays over half full (its newest entries were too young to take).
	 */
	return n >= MAX_FILES / 8 || tracer_files_filling(f->tracer) ? 10 : 50;
}
