// SPDX-License-Identifier: GPL-2.0
/*
 * The run derived once (model_derive), from the top: each process's profile, files, page
 * cache, block and io_uring records, then the run's story; and the run given back.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "files.h"
#include "names.h"
#include "story.h"
#include "uring.h"
#include "model.h"

static void profile_derive(struct profile *p)
{
	p->calls = p->errors = p->total_ns = p->timed_calls = 0;
	for (size_t i = 0; i < p->nrows; i++) {
		struct sc_row *r = &p->rows[i];

		p->calls += r->calls;
		p->errors += r->errors;
		p->total_ns += r->total_ns;
		p->timed_calls += r->timed_calls;
	}
	p->avg_ns = p->calls ? p->total_ns / p->calls : 0;
	for (size_t i = 0; i < p->nrows; i++) {
		struct sc_row *r = &p->rows[i];

		r->avg_ns = r->calls ? r->total_ns / r->calls : 0;
		r->time_share = p->total_ns ? (double)r->total_ns / p->total_ns : 0.0;
	}
	for (int k = 0; k < IO_KINDS; k++) {
		struct io_summary *io = p->io[k];

		if (!io)
			continue;
		io->size_bytes = hist_summary_of(HIST_LOG2, io->size_hist, true, io->size_min,
						 io->size_max);
		io->latency_ns = hist_summary_of(HIST_FINE, io->lat_hist, true, io->lat_min,
						 io->lat_max);
	}
}

int model_derive(struct run_result *r)
{
	page_cache_reset(&r->pc);
	for (size_t i = 0; i < r->nprocs; i++) {
		struct proc_record *p = &r->procs[i];

		profile_derive(&p->prof);
		files_finish(p, r->files_by_path);
		page_cache_reset(&p->pc);
		memcpy(p->pc.window_hist, p->window_hist, sizeof(p->window_hist));
		for (size_t j = 0; j < p->nfiles; j++)
			if (p->files[j].kind != FK_METADATA)
				page_cache_add(&p->pc, &p->files[j].pc);
		page_cache_merge(&r->pc, &p->pc);
		for (size_t j = 0; j < p->nblocks; j++)
			block_record_derive(&p->blocks[j]);
		uring_finish(p->urings, p->nurings);
	}
	uring_finish(r->uring_totals, r->nuring_totals);
	for (size_t j = 0; j < r->nother_blocks; j++)
		block_record_derive(&r->other_blocks[j]);
	files_finish(&r->other_files, false);
	profile_derive(&r->overflow);
	profile_derive(&r->totals);
	return story_derive(r);
}

void run_result_free(struct run_result *r)
{
	free(r->kernel);
	for (size_t i = 0; i < r->nprocs; i++) {
		free(r->procs[i].args);
		profile_free(&r->procs[i].prof);
		files_free(&r->procs[i]);
		free(r->procs[i].blocks);
		free(r->procs[i].urings);
		for (size_t k = 0; k < r->procs[i].nsites; k++) {
			free(r->procs[i].sites[k].syscall);
			free(r->procs[i].sites[k].where);
		}
		free(r->procs[i].sites);
	}
	story_free(r);
	for (size_t i = 0; i < r->ncontainers; i++)
		free(r->containers[i].cgroup);
	free(r->containers);
	free(r->cwd);
	free(r->other_blocks);
	disk_table_free(&r->disks);
	free(r->uring_totals);
	files_free(&r->other_files);
	names_free(r->names);
	free(r->procs);
	profile_free(&r->overflow);
	profile_free(&r->totals);
}

int run_exit_code(const struct run_result *r)
{
	if (!r->exit_known)
		return r->partial ? 128 + (r->stop_signal ? r->stop_signal : SIGINT) : 0;
	if (WIFSIGNALED(r->exit_status))
		return 128 + WTERMSIG(r->exit_status);
	return WEXITSTATUS(r->exit_status);
}

int run_killed_status(const struct run_result *r)
{
	return r->exit_known && WIFSIGNALED(r->exit_status) ? r->exit_status : -1;
}

bool run_outputs_failed(const struct run_result *r)
{
	return r->trace_failed || r->stacks_failed;
}
