// SPDX-License-Identifier: GPL-2.0
/* silo doctor: irqbalance, the queues' IRQs and RPS. */
#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"
#include "doctor.h"
#include "netns_sysfs.h"

void check_irqbalance(struct doctor *d)
{
	char path[PATH_MAX], comm[64], rel[64];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/proc", d->root);
	dir = opendir(path);
	if (!dir) {
		report(d, INFO, "irqbalance", NULL, "cannot read %s", path);
		return;
	}
	while ((e = readdir(dir))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(rel, sizeof(rel), "/proc/%.20s/comm", e->d_name);
		if (read_line(d, rel, comm, sizeof(comm)) ||
		    strcmp(comm, "irqbalance"))
			continue;
		/* d_name lives in dir: report before closing it. */
		report(d, WARN, "irqbalance",
		       "systemctl disable --now irqbalance",
		       "irqbalance runs (pid %s): it moves queue IRQs to other CPUs",
		       e->d_name);
		closedir(dir);
		return;
	}
	closedir(dir);
	report(d, OK, "irqbalance", NULL, "not running");
}

/* The queue number at the end of an IRQ's name ("eth0-TxRx-3"), or -1. */
static int queue_of(const char *name)
{
	size_t n = strlen(name);

	while (n && isdigit((unsigned char)name[n - 1]))
		n--;
	return name[n] ? atoi(name + n) : -1;
}

/* Each IRQ /proc/interrupts names after dev: on one CPU, on its node. */
void check_irqs(struct doctor *d, const char *dev, int node,
		const char *node_cpus)
{
	char path[PATH_MAX], line[4096], rel[64], aff[256], fix[256];
	int irqs = 0, cpu, q;
	char *name;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/interrupts", d->root);
	f = fopen(path, "r");
	if (!f) {
		report(d, INFO, "irq", NULL, "cannot read %s", path);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned int irq;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, " %u:", &irq) != 1)
			continue;
		name = strrchr(line, ' ');
		if (!name || strncmp(name + 1, dev, strlen(dev)) ||
		    (name[1 + strlen(dev)] != '-' &&
		     name[1 + strlen(dev)] != '\0'))
			continue;
		name++;
		irqs++;
		snprintf(rel, sizeof(rel), "/proc/irq/%u/smp_affinity_list",
			 irq);
		if (read_line(d, rel, aff, sizeof(aff))) {
			report(d, INFO, "irq", NULL,
			       "%s: IRQ %u: cannot read %s", name, irq, rel);
			continue;
		}
		cpu = single_cpu(aff);
		q = queue_of(name);
		if (q >= 0 && q < 256)
			d->irq_cpu[q] = cpu;
		if (cpu < 0) {
			snprintf(fix, sizeof(fix),
				 "echo %d > /proc/irq/%u/smp_affinity_list",
				 q >= 0 ? q : 0, irq);
			report(d, WARN, "irq", fix,
			       "%s: IRQ %u may run on CPUs %s: one CPU keeps its flows on one CPU",
			       name, irq, aff);
		} else if (node >= 0 && node_cpus[0] &&
			   !cpu_in_list(cpu, node_cpus)) {
			snprintf(
				fix, sizeof(fix),
				"echo <a CPU of %s> > /proc/irq/%u/smp_affinity_list",
				node_cpus, irq);
			report(d, WARN, "irq", fix,
			       "%s: IRQ %u on CPU %d, off the device's NUMA node %d (CPUs %s)",
			       name, irq, cpu, node, node_cpus);
		} else {
			report(d, OK, "irq", NULL, "%s: IRQ %u on CPU %d", name,
			       irq, cpu);
		}
	}
	fclose(f);
	if (!irqs)
		report(d, INFO, "irq", NULL,
		       "%s: no IRQs (a virtual device: packets are processed on the CPU that sends them)",
		       dev);
}

/* RPS moves packets off the queue's CPU. */
int check_queues(struct doctor *d, const char *dev)
{
	char path[PATH_MAX], rel[PATH_MAX], mask[256], fix[PATH_MAX + 64];
	int rx = 0, q;
	struct dirent *e;
	DIR *dir;

	snprintf(rel, sizeof(rel), "/sys/class/net/%s/queues", dev);
	path_of(d, rel, path, sizeof(path));
	dir = opendir(path);
	if (!dir) {
		report(d, INFO, "rps", NULL, "%s: cannot read %s", dev, path);
		return 0;
	}
	while ((e = readdir(dir))) {
		if (strncmp(e->d_name, "rx-", 3))
			continue;
		rx++;
		q = atoi(e->d_name + 3);
		snprintf(rel, sizeof(rel),
			 "/sys/class/net/%s/queues/%s/rps_cpus", dev,
			 e->d_name);
		if (read_line(d, rel, mask, sizeof(mask)))
			continue;
		if (!sysfs_mask_any(mask)) {
			report(d, OK, "rps", NULL, "%s rx-%d: RPS off", dev, q);
			continue;
		}
		snprintf(fix, sizeof(fix), "echo 0 > %s", rel);
		report(d, WARN, "rps", fix,
		       "%s rx-%d: RPS sends packets to CPUs %s, off the queue's CPU",
		       dev, q, mask);
	}
	closedir(dir);
	return rx;
}
