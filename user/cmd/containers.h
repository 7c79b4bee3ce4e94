/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOTRACE_CONTAINERS_H
#define IOTRACE_CONTAINERS_H

/* iotrace containers [-a] [-j] [PID...]: which container each process is in. */
int containers_main(int argc, char **argv);

#endif
