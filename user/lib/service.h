/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Services and CPU steering (service.c), for libsilo's other files. */
#ifndef SILO_LIB_SERVICE_H
#define SILO_LIB_SERVICE_H

#include "silod.h"

/* Services (service_slots.c): rebuilds a slot table over cpus from the old one,
 * moving as few slots as an even share allows; returns the CPU count. */
int silo_service_slots_build(__u16 *slots, const __u64 *cpus);
/* service_irq.c: cpus[q] (q < n): the first CPU of the affinity of RX queue q's IRQ
 * (under root: "" or a fake tree), SILO_SERVICE_NO_CPU when unknown.
 * Returns the queues found; -ENOENT when the device has no MSI IRQs. */
int silo_irq_queue_cpus(const char *ifname, const char *root, __u32 *cpus,
			__u32 n);

#endif /* SILO_LIB_SERVICE_H */
