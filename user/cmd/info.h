/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOTRACE_INFO_H
#define IOTRACE_INFO_H

/* `iotrace info [--json] [-v]` with argv[0] = "info"; returns the exit status. */
int info_main(int argc, char **argv);

#endif
