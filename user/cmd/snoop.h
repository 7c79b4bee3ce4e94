/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOTRACE_SNOOP_H
#define IOTRACE_SNOOP_H

/* `iotrace snoop ...` with argv[0] = "snoop"; returns the exit status. */
int snoop_main(int argc, char **argv);

#endif
