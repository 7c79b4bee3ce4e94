// SPDX-License-Identifier: GPL-2.0
/* libmicrohttpd opened by `iotrace serve` (mhd.h). */
#include <dlfcn.h>
#include <stdio.h>
#include "mhd.h"

/* The library's soname, the one Debian's libmicrohttpd12 installs (debian/control). */
#define MHD_SONAME "libmicrohttpd.so.12"

struct mhd_api mhd;

int mhd_open(char *why, size_t len)
{
	static const struct {
		const char *name;
		void **slot;
	} syms[] = {
		{ "MHD_start_daemon", (void **)&mhd.start_daemon },
		{ "MHD_stop_daemon", (void **)&mhd.stop_daemon },
		{ "MHD_get_connection_info", (void **)&mhd.get_connection_info },
		{ "MHD_create_response_from_buffer", (void **)&mhd.create_response_from_buffer },
		{ "MHD_add_response_header", (void **)&mhd.add_response_header },
		{ "MHD_queue_response", (void **)&mhd.queue_response },
		{ "MHD_destroy_response", (void **)&mhd.destroy_response },
	};
	void *lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		snprintf(why, len, "cannot load %s (install libmicrohttpd12): %s", MHD_SONAME,
			 dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].slot = dlsym(lib, syms[i].name);
		if (!*syms[i].slot) {
			snprintf(why, len, "%s has no %s", MHD_SONAME, syms[i].name);
			return -1;
		}
	}
	return 0;
}
