/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Shared by the files of service/: service.c (add, delete, list, sync),
 * service_slots.c (slot tables) and service_queue.c (maps, queue_cpu). */
#ifndef SILO_SVC_H
#define SILO_SVC_H

#include "../service.h"

static inline bool silo_svc_cpu_isset(const __u64 *cpus, __u32 cpu)
{
	return cpu < SILO_MAX_CPUS && (cpus[cpu / 64] >> (cpu % 64)) & 1;
}

/* service_queue.c */
/* silo_maps_open, saying why not. */
int silo_svc_maps_open(struct silo *s, struct silo_maps *m);
/* The IRQ affinity's queue map for the devices silo runs on that have
 * none yet (queue mode). */
void silo_svc_queue_map_defaults(struct silo *s);

#endif /* SILO_SVC_H */
