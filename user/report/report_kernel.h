/* SPDX-License-Identifier: GPL-2.0 */
/* How the kernel was traced (model/kernel_report.h): `iotrace info` and JSON's "kernel". */
#ifndef IOTRACE_REPORT_KERNEL_H
#define IOTRACE_REPORT_KERNEL_H

#include <stdio.h>
#include <cjson/cJSON.h>
#include "model/kernel_report.h"

void kernel_report_text(FILE *out, const struct kernel_report *k);
cJSON *kernel_report_json(const struct kernel_report *k);

#endif
