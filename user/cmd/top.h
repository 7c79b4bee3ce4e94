/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOTRACE_TOP_CMD_H
#define IOTRACE_TOP_CMD_H

/* `iotrace top ...` with argv[0] = "top"; returns the exit status. */
int top_main(int argc, char **argv);

#endif
