// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* A service's slot table: its CPUs' even shares, rebuilt from the old
 * table so that as few slots as possible move. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "svc.h"

struct share {
	__u32 cpu;
	__u32 count; /* slots it holds */
	__u32 quota;
	__u32 order;
};

static int by_count_desc(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_cpu(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/*
 * Rebuilds slots[] (the old table in, SILO_SERVICE_NO_CPU for none) over
 * the CPUs in cpus[], each holding SILO_SERVICE_SLOTS / N slots or one
 * more, and moving as few slots as that allows: a CPU that leaves gives
 * up only its slots, one that joins takes only its share, from the CPUs
 * that hold most. Returns the number of CPUs, or -errno.
 */
int silo_service_slots_build(__u16 *slots, const __u64 *cpus)
{
	struct share *sh;
	int *idx_of;
	__u32 n = 0, i, j, cpu, base, extra;

	idx_of = malloc(SILO_MAX_CPUS * sizeof(*idx_of));
	sh = calloc(SILO_MAX_CPUS, sizeof(*sh));
	if (!idx_of || !sh) {
		free(idx_of);
		free(sh);
		return -ENOMEM;
	}
	for (cpu = 0; cpu < SILO_MAX_CPUS; cpu++) {
		idx_of[cpu] = -1;
		if (silo_svc_cpu_isset(cpus, cpu) &&
		    cpu < SILO_SERVICE_NO_CPU) {
			idx_of[cpu] = n;
			sh[n].cpu = cpu;
			sh[n].order = n;
			n++;
		}
	}
	if (!n) {
		for (i = 0; i < SILO_SERVICE_SLOTS; i++)
			slots[i] = SILO_SERVICE_NO_CPU;
		goto out;
	}
	/* Slots of CPUs that left are free; count the others' shares. */
	for (i = 0; i < SILO_SERVICE_SLOTS; i++) {
		if (slots[i] >= SILO_MAX_CPUS || idx_of[slots[i]] < 0)
			slots[i] = SILO_SERVICE_NO_CPU;
		else
			sh[idx_of[slots[i]]].count++;
	}
	/* The one-more shares go to those that hold most already. */
	base = SILO_SERVICE_SLOTS / n;
	extra = SILO_SERVICE_SLOTS % n;
	qsort(sh, n, sizeof(*sh), by_count_desc);
	for (i = 0; i < n; i++)
		sh[i].quota = base + (i < extra);
	qsort(sh, n, sizeof(*sh), by_cpu);
	/* Over quota: give up the excess. */
	for (i = 0; i < SILO_SERVICE_SLOTS; i++) {
		struct share *o;

		if (slots[i] == SILO_SERVICE_NO_CPU)
			continue;
		o = &sh[idx_of[slots[i]]];
		if (o->count > o->quota) {
			o->count--;
			slots[i] = SILO_SERVICE_NO_CPU;
		}
	}
	/* Free slots to those under quota. */
	for (i = 0, j = 0; i < SILO_SERVICE_SLOTS; i++) {
		if (slots[i] != SILO_SERVICE_NO_CPU)
			continue;
		while (j < n && sh[j].count >= sh[j].quota)
			j++;
		if (j == n)
			break; /* cannot happen: the quotas sum to the slots */
		slots[i] = sh[j].cpu;
		sh[j].count++;
	}
out:
	free(idx_of);
	free(sh);
	return n;
}
