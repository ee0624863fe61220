// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The services' maps opened (saying why not), and queue_cpu: each RX
 * queue's CPU for queue mode, set by hand or from the IRQs' affinity. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include "../pins.h"
#include "svc.h"

int silo_svc_maps_open(struct silo *s, struct silo_maps *m)
{
	int err = silo_maps_open(s, m);

	if (err == -ENOENT || err == -ESTALE)
		pr_err("silo is not loaded in this network namespace (no usable pins in %s): load it first with 'silo xdp load DEV'\n",
		       s->pin_dir);
	else if (err)
		pr_err("cannot open the maps in %s: %s\n", s->pin_dir,
		       strerror(-err));
	return err;
}

/*
 * Queue mode reads queue_cpu: a device silo runs on whose queues have no
 * CPU yet gets the default, its IRQs' affinity, so that a queue-mode
 * service steers from the start on a NIC. A device with no MSI IRQs (veth)
 * keeps none: its queues are passed until 'silo service queue-map' sets
 * them.
 */
void silo_svc_queue_map_defaults(struct silo *s)
{
	struct silo_xdp_dev *devs = NULL;
	__u32 *cpus = calloc(SILO_MAX_QUEUES, sizeof(*cpus));
	size_t n = 0, i;
	__u32 q;
	int set;

	if (!cpus || silo_xdp_list(s, &devs, &n))
		goto out;
	for (i = 0; i < n; i++) {
		if (!devs[i].attached || !devs[i].ifname[0] ||
		    silo_queue_map_get(s, devs[i].ifindex, cpus,
				       SILO_MAX_QUEUES))
			continue;
		for (q = 0; q < SILO_MAX_QUEUES; q++)
			if (cpus[q] != SILO_SERVICE_NO_CPU)
				break;
		if (q < SILO_MAX_QUEUES) /* set already: kept */
			continue;
		set = 0;
		if (silo_irq_queue_cpus(devs[i].ifname, "", cpus,
					SILO_MAX_QUEUES) <= 0)
			continue; /* no MSI IRQs: a veth, say */
		for (q = 0; q < SILO_MAX_QUEUES; q++)
			if (cpus[q] != SILO_SERVICE_NO_CPU &&
			    !silo_queue_map_set(s, devs[i].ifindex, q, cpus[q]))
				set++;
		if (set > 0)
			pr_info("queue map of %s from its IRQs' affinity: %d queue%s\n",
				devs[i].ifname, set, set == 1 ? "" : "s");
	}
out:
	free(devs);
	free(cpus);
}

int silo_queue_map_set(struct silo *s, __u32 ifindex, __u32 queue, __u32 cpu)
{
	struct silo_queue_key k = { .ifindex = ifindex, .queue = queue };
	struct silo_maps m;
	int err;

	if (cpu != SILO_SERVICE_NO_CPU && cpu >= (__u32)silo_nr_cpus()) {
		pr_err("CPU %u does not exist here (CPUs 0-%d)\n", cpu,
		       silo_nr_cpus() - 1);
		return -EINVAL;
	}
	err = silo_svc_maps_open(s, &m);
	if (err)
		return err;
	if (cpu == SILO_SERVICE_NO_CPU) {
		if (bpf_map_delete_elem(m.fd[SILO_MAP_QUEUE_CPU], &k) &&
		    errno != ENOENT)
			err = -errno;
	} else if (bpf_map_update_elem(m.fd[SILO_MAP_QUEUE_CPU], &k, &cpu,
				       BPF_ANY)) {
		err = -errno;
		pr_err("cannot set queue %u: %s\n", queue, strerror(-err));
	}
	silo_maps_close(&m);
	return err;
}

int silo_queue_map_get(struct silo *s, __u32 ifindex, __u32 *cpus, __u32 n)
{
	struct silo_queue_key k = { .ifindex = ifindex };
	struct silo_maps m;
	int err;

	err = silo_svc_maps_open(s, &m);
	if (err)
		return err;
	for (k.queue = 0; k.queue < n; k.queue++)
		if (bpf_map_lookup_elem(m.fd[SILO_MAP_QUEUE_CPU], &k,
					&cpus[k.queue]))
			cpus[k.queue] = SILO_SERVICE_NO_CPU;
	silo_maps_close(&m);
	return 0;
}

int silo_queue_map_default(struct silo *s, const char *ifname, const char *root)
{
	__u32 ifindex, q, *cpus;
	int set = 0, err = 0, found;

	ifindex = if_nametoindex(ifname);
	if (!ifindex) {
		pr_err("no device '%s' in this network namespace\n", ifname);
		return -ENODEV;
	}
	cpus = calloc(SILO_MAX_QUEUES, sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	found = silo_irq_queue_cpus(ifname, root, cpus, SILO_MAX_QUEUES);
	if (found == -ENOENT) {
		pr_err("%s has no MSI IRQs (a virtual device?): set its queues with 'silo service queue-map %s QUEUE=CPU ...'\n",
		       ifname, ifname);
		err = -ENOENT;
	} else if (found <= 0) {
		pr_err("no RX queue IRQ of %s found in /proc/interrupts: set its queues with 'silo service queue-map %s QUEUE=CPU ...'\n",
		       ifname, ifname);
		err = -ENOENT;
	}
	for (q = 0; !err && q < SILO_MAX_QUEUES; q++) {
		if (cpus[q] == SILO_SERVICE_NO_CPU)
			continue;
		err = silo_queue_map_set(s, ifindex, q, cpus[q]);
		if (!err)
			set++;
	}
	free(cpus);
	return err ? err : set;
}
