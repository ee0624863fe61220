// SPDX-License-Identifier: GPL-2.0
/* silo doctor: each reuseport slot's reader on the slot's CPU. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"
#include "doctor.h"

/* Each occupied slot's reader may run only on the slot's CPU. */
int check_group(struct silo_group *g, void *ctx)
{
	struct doctor *d = ctx;
	struct silo_group_info info;
	struct silo_group_slot *slots;
	char rel[128], line[256], fix[128];
	unsigned int i;
	FILE *f;

	if (silo_group_info(g, &info))
		return 0;
	slots = calloc(info.group.nr_slots, sizeof(*slots));
	if (!slots || silo_group_slots(g, slots)) {
		free(slots);
		return 0;
	}
	for (i = 0; i < info.group.nr_slots; i++) {
		const struct silo_reuseport_slot *p = &slots[i].placed;
		char path[PATH_MAX], allowed[256] = "";
		__u32 tid = p->tid ? p->tid : p->pid;

		if (!slots[i].cookie || !p->pid)
			continue;
		snprintf(rel, sizeof(rel), "/proc/%u/task/%u/status", p->pid,
			 tid);
		snprintf(path, sizeof(path), "%s%s", d->root, rel);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "Cpus_allowed_list:", 18))
				sscanf(line + 18, " %255s", allowed);
		if (f)
			fclose(f);
		if (cli.json) {
			json_object *o = json_object_new_object();

			json_object_object_add(
				o, "group",
				json_object_new_string(info.group.name));
			json_object_object_add(o, "slot_cpu",
					       json_object_new_int(i));
			json_object_object_add(o, "reader_tid",
					       json_object_new_int(tid));
			json_object_object_add(o, "reader_cpus",
					       json_object_new_string(allowed));
			json_object_array_add(d->map, o);
		} else {
			printf("map   socket slot %u (group %s) -> reader %u on CPUs %s\n",
			       i, info.group.name, tid,
			       allowed[0] ? allowed : "?");
		}
		if (!allowed[0]) {
			report(d, INFO, "reader", NULL,
			       "group %s slot %u: reader %u is gone",
			       info.group.name, i, tid);
		} else if (single_cpu(allowed) == (int)i) {
			report(d, OK, "reader", NULL,
			       "group %s slot %u: reader %u pinned to CPU %u",
			       info.group.name, i, tid, i);
		} else {
			snprintf(fix, sizeof(fix), "taskset -pc %u %u", i, tid);
			report(d, WARN, "reader", fix,
			       "group %s slot %u: reader %u may run on CPUs %s, not only on CPU %u",
			       info.group.name, i, tid, allowed, i);
		}
	}
	free(slots);
	return 0;
}
