/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Following the kernel, for the process table (procs.c) of run mode and top: the slot
 * table, read again whole when a notice was lost or a row was caught being written (a notice
 * only says which slot to look at); the ledger's regular work (the entries of files not used
 * lately leave the kernel) and when to do it next.
 */
#ifndef IOTRACE_FOLLOW_H
#define IOTRACE_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/tracer.h"

/* A slot's row as the table has it now, to the owner's records. */
typedef void (*follow_row_fn)(uint32_t slot, const struct slot_proc *row, void *ctx);

struct follow {
	struct tracer *tracer;
	follow_row_fn take_row;
	ledger_entry_fn give_entry; /* a ledger entry that left the kernel, to its record */
	void *ctx;                  /* the owner's, for both */
	uint64_t notices_lost;      /* the kernel's count of lost notices when the table was read */
	bool rescan;                /* a slot's row was being written: read the table again */
	int error;                  /* -ENOMEM when an entry could not be kept */
};

void follow_start(struct follow *f, struct tracer *t, follow_row_fn take_row,
		  ledger_entry_fn give_entry, void *ctx);
/*
 * A notice named slot: its row read and taken. Whatever notice led here, the table says
 * what is true now, so notices read late, twice or never change nothing; a row being
 * written is read again at the next tick.
 */
void follow_slot(struct follow *f, uint32_t slot);
/* Every slot in use, against the table: after lost notices, and at the end. */
void follow_sync_all(struct follow *f);
/* An exited process's entries leave the kernel (room for others), to give_entry; -ENOMEM. */
int follow_take_files(struct follow *f, uint32_t pid);
/*
 * The regular work, after a new ledger epoch and the events read (tracer_tick,
 * tracer_poll_events): the table read again if a notice was lost, the idle files' entries
 * out. Returns the ms until the next time.
 */
int follow_tick(struct follow *f);

#endif
