// SPDX-License-Identifier: GPL-2.0
/*
 * How the kernel was traced, for people (`iotrace info`) and programs (`iotrace info --json`,
 * the JSON report's "kernel"): what the kernel is, what CO-RE relocated against, which build
 * of the programs it loaded, each feature's state and each event's hook.
 */
#include <string.h>
#include "report_kernel.h"

#define MIB (1024.0 * 1024.0)

static void text_header(FILE *out, const struct kernel_report *k)
{
	fprintf(out, "kernel    %s %s, %s, %u CPUs%s\n", k->release, k->version, k->machine,
		k->cpus, k->preempt_rt ? ", PREEMPT_RT" : "");
	fprintf(out, "BTF       %s (%.1f MiB)%s\n", k->btf, k->btf_bytes / MIB,
		k->probed ? ", asked what this kernel has" : "");
	fprintf(out, "CO-RE     %s\n", k->core);
	fprintf(out, "programs  build \"%s\": %s\n", k->build, k->build_why);
	fprintf(out, "load      %.0f ms, attach %.0f ms; %u BPF maps, %.1f MiB of kernel memory\n",
		k->load_ms, k->attach_ms, k->nmaps, k->map_bytes / MIB);
}

static void text_groups(FILE *out, const struct kernel_report *k)
{
	fprintf(out, "\n%-24s %s\n", "feature", "state");
	for (int g = 0; g < KERNEL_GROUPS; g++)
		fprintf(out, "%-24s %s%s\n", k->groups[g].name,
			k->groups[g].available ? "yes" : "n/a: ", k->groups[g].why);
	if (k->stacks_na)
		fprintf(out, "%-24s n/a: %s\n", "--stacks", k->stacks_na);
	else
		fprintf(out, "%-24s %s\n", "--stacks",
			k->vma_iter ? "yes" : "yes; frames of processes that exited before the end "
					      "are unnamed (no task VMA iterator)");
}

/* Why a better way was not taken: under the hook, indented, within 100 columns. */
static void wrap(FILE *out, const char *why)
{
	const int indent = 33, width = 100 - indent;

	while (*why) {
		int n = strlen(why) > (size_t)width ? width : (int)strlen(why);

		while (n < (int)strlen(why) && n > width / 2 && why[n] != ' ')
			n--; /* break at a blank when there is one in the second half */
		fprintf(out, "%*s%.*s\n", indent, "", n, why);
		why += n;
		while (*why == ' ')
			why++;
	}
}

static void text_hooks(FILE *out, const struct kernel_report *k)
{
	fprintf(out, "\n%-30s %s\n", "event (its tracepoint)", "hook");
	for (uint32_t i = 0; i < k->nhooks; i++) {
		const struct kernel_hook *h = &k->hooks[i];
		char way[96];

		if (!h->wanted)
			snprintf(way, sizeof(way), "not used in this mode");
		else if (h->kind[0] && h->way > 0 && !strcmp(h->target, h->event))
			snprintf(way, sizeof(way), "%s %s (its older arguments)", h->kind, h->target);
		else if (h->kind[0])
			snprintf(way, sizeof(way), "%s %s", h->kind, h->target);
		else
			snprintf(way, sizeof(way), "none");
		fprintf(out, "%-30s %s\n", h->event, way);
		if (h->wanted && h->why[0])
			wrap(out, h->why);
	}
}

void kernel_report_text(FILE *out, const struct kernel_report *k)
{
	text_header(out, k);
	text_groups(out, k);
	text_hooks(out, k);
}

static cJSON *hooks_json(const struct kernel_report *k)
{
	cJSON *arr = cJSON_CreateArray();

	for (uint32_t i = 0; i < k->nhooks; i++) {
		const struct kernel_hook *h = &k->hooks[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "event", h->event);
		cJSON_AddStringToObject(o, "group", k->groups[h->group].key);
		cJSON_AddBoolToObject(o, "used", h->wanted);
		cJSON_AddNumberToObject(o, "way", h->way);
		if (h->kind[0]) {
			cJSON_AddStringToObject(o, "kind", h->kind);
			cJSON_AddStringToObject(o, "target", h->target);
		} else {
			cJSON_AddNullToObject(o, "kind");
			cJSON_AddNullToObject(o, "target");
		}
		cJSON_AddStringToObject(o, "why", h->why);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static cJSON *features_json(const struct kernel_report *k)
{
	cJSON *obj = cJSON_CreateObject(), *f;

	for (int g = 0; g < KERNEL_GROUPS; g++) {
		f = cJSON_CreateObject();
		cJSON_AddBoolToObject(f, "available", k->groups[g].available);
		if (k->groups[g].available)
			cJSON_AddNullToObject(f, "reason");
		else
			cJSON_AddStringToObject(f, "reason", k->groups[g].why);
		cJSON_AddItemToObject(obj, k->groups[g].key, f);
	}
	f = cJSON_CreateObject();
	cJSON_AddBoolToObject(f, "available", k->groups[0].available && !k->stacks_na);
	if (k->stacks_na)
		cJSON_AddStringToObject(f, "reason", k->stacks_na);
	cJSON_AddBoolToObject(f, "exited_processes", k->vma_iter);
	cJSON_AddItemToObject(obj, "stacks", f);
	return obj;
}

cJSON *kernel_report_json(const struct kernel_report *k)
{
	cJSON *root = cJSON_CreateObject(), *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "release", k->release);
	cJSON_AddStringToObject(o, "version", k->version);
	cJSON_AddStringToObject(o, "machine", k->machine);
	cJSON_AddNumberToObject(o, "cpus", k->cpus);
	cJSON_AddBoolToObject(o, "preempt_rt", k->preempt_rt);
	cJSON_AddItemToObject(root, "kernel", o);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "path", k->btf);
	cJSON_AddNumberToObject(o, "bytes", (double)k->btf_bytes);
	cJSON_AddBoolToObject(o, "asked", k->probed);
	cJSON_AddStringToObject(o, "core", k->core);
	cJSON_AddItemToObject(root, "btf", o);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", k->build);
	cJSON_AddStringToObject(o, "why", k->build_why);
	cJSON_AddItemToObject(root, "build", o);
	cJSON_AddNumberToObject(root, "load_ms", k->load_ms);
	cJSON_AddNumberToObject(root, "attach_ms", k->attach_ms);
	cJSON_AddNumberToObject(root, "map_bytes", (double)k->map_bytes);
	cJSON_AddNumberToObject(root, "maps", k->nmaps);
	cJSON_AddItemToObject(root, "features", features_json(k));
	cJSON_AddItemToObject(root, "hooks", hooks_json(k));
	return root;
}
