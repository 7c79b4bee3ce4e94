/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOTRACE_SERVE_H
#define IOTRACE_SERVE_H

/* `iotrace serve ...` with argv[0] = "serve"; returns the exit status. */
int serve_main(int argc, char **argv);

#endif
