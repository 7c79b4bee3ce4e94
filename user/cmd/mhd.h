/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libmicrohttpd, opened only by `iotrace serve` (mhd.c): linked, it and the ten libraries it
 * brings (GnuTLS and its own) were loaded by every command, ~1.7 ms of each start-up
 * (docs/startup.md). Its functions are called through mhd.
 */
#ifndef IOTRACE_MHD_H
#define IOTRACE_MHD_H

#include <stddef.h>
#include <microhttpd.h>

struct mhd_api {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
};

extern struct mhd_api mhd;

/* Opens the library and fills mhd: 0, or -1 with why (one line) set. */
int mhd_open(char *why, size_t len);

#endif
