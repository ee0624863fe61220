// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Which CPU reads each RX queue of a device: the affinity of the queue's IRQ,
 * found by its name in /proc/interrupts. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../service.h"
#include "../util.h"

/*
 * The RX queue an IRQ serves, from its name in /proc/interrupts:
 * "eth0-TxRx-3", "eth0-rx-3", "virtio0-input.3", "mlx5_comp3@pci:...": the
 * last number before any '@'. A transmit-only IRQ ("eth0-tx-0") is none.
 */
static int irq_queue(const char *name)
{
	char low[128], *at;
	const char *p, *digits = NULL;
	size_t i;

	for (i = 0; name[i] && i < sizeof(low) - 1; i++)
		low[i] = tolower((unsigned char)name[i]);
	low[i] = '\0';
	at = strchr(low, '@');
	if (at)
		*at = '\0';
	if ((strstr(low, "-tx-") || strstr(low, "output")) &&
	    !strstr(low, "rx"))
		return -1;
	for (p = low; *p; p++)
		if (isdigit((unsigned char)*p) &&
		    (p == low || !isdigit((unsigned char)p[-1])))
			digits = p;
	return digits ? atoi(digits) : -1;
}

/* The name /proc/interrupts gives irq: its last field. */
static int irq_name(const char *root, unsigned int irq, char *name, size_t len)
{
	char path[PATH_MAX], line[4096], *tok, *last = NULL, *save;
	FILE *f;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "%s/proc/interrupts", root);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *end;

		if (strtoul(line, &end, 10) != irq || *end != ':')
			continue;
		for (tok = strtok_r(end + 1, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save))
			last = tok;
		if (last) {
			snprintf(name, len, "%s", last);
			err = 0;
		}
		break;
	}
	fclose(f);
	return err;
}

int silo_irq_queue_cpus(const char *ifname, const char *root, __u32 *cpus,
			__u32 n)
{
	char path[PATH_MAX], buf[256], name[128];
	unsigned char bits[SILO_MAX_CPUS / 8];
	struct dirent *de;
	int found = 0, q;
	__u32 cpu;
	DIR *d;

	if (!root)
		root = "";
	for (cpu = 0; cpu < n; cpu++)
		cpus[cpu] = SILO_SERVICE_NO_CPU;
	snprintf(path, sizeof(path), "%s/sys/class/net/%s/device/msi_irqs",
		 root, ifname);
	d = opendir(path);
	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		unsigned long irq;
		char *end;

		irq = strtoul(de->d_name, &end, 10);
		if (*end || end == de->d_name)
			continue;
		if (irq_name(root, irq, name, sizeof(name)))
			continue;
		q = irq_queue(name);
		if (q < 0 || (__u32)q >= n)
			continue;
		snprintf(path, sizeof(path),
			 "%s/proc/irq/%lu/smp_affinity_list", root, irq);
		if (silo_read_file(path, buf, sizeof(buf)) <= 0 ||
		    silo_parse_cpulist(buf, bits, SILO_MAX_CPUS))
			continue;
		for (cpu = 0; cpu < SILO_MAX_CPUS; cpu++)
			if (bits[cpu / 8] & (1 << (cpu % 8)))
				break;
		if (cpu >= (__u32)silo_nr_cpus())
			continue;
		if (cpus[q] == SILO_SERVICE_NO_CPU)
			found++;
		cpus[q] = cpu;
	}
	closedir(d);
	return found;
}
