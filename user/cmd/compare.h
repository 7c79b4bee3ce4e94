/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOTRACE_COMPARE_H
#define IOTRACE_COMPARE_H

/* `iotrace compare ...` with argv[0] = "compare"; returns the exit status. */
int compare_main(int argc, char **argv);

#endif
