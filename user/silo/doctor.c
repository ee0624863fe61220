// SPDX-License-Identifier: GPL-2.0
/*
 * silo doctor [DEV] [--root DIR]: do the CPUs line up? silo keeps a flow on
 * one CPU from the queue to the reader; an IRQ on another CPU, RPS, a
 * reader pinned elsewhere or irqbalance undo that. Each check prints ok,
 * warn or fail and the command that fixes it; then the queue -> IRQ CPU ->
 * socket -> reader CPU map. RSS (through ethtool netlink) and XPS decide
 * which queue, and so which CPU, a flow meets first.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"
#include "doctor.h"
#include "netns_sysfs.h"

struct doctor_cfg {
	const char *root;
};

static const struct opt doctor_opts[] = {
	OPTION_STR("root", doctor_cfg, root, "DIR",
		   "read /proc and /sys under DIR (a copy, for tests),\n"
		   "and DEV's RSS from DIR/ethtool/DEV/rss: lines\n"
		   "'combined N', 'rx N', 'tx N', 'hfunc toeplitz',\n"
		   "'key 6d:5a:..', 'indir 0 1 2 3 ..', or 'unsupported'"),
	OPTION_END,
};

static void check_device(struct doctor *d, const char *dev)
{
	char rel[PATH_MAX], buf[64], cpus[256] = "";
	int node = -1, rx, q;

	snprintf(rel, sizeof(rel), "/sys/class/net/%s/device/numa_node", dev);
	if (!read_line(d, rel, buf, sizeof(buf)))
		node = atoi(buf);
	if (node >= 0) {
		snprintf(rel, sizeof(rel),
			 "/sys/devices/system/node/node%d/cpulist", node);
		read_line(d, rel, cpus, sizeof(cpus));
		report(d, OK, "numa", NULL, "%s: on NUMA node %d (CPUs %s)",
		       dev, node, cpus);
	} else {
		report(d, INFO, "numa", NULL,
		       "%s: no NUMA node (virtual, or one node)", dev);
	}
	memset(d->irq_cpu, 0xff, sizeof(d->irq_cpu));
	check_irqs(d, dev, node, cpus);
	rx = check_queues(d, dev);
	check_rss(d, dev, node, cpus, rx);
	check_vlan(d, dev);
	check_csum(d, dev);
	for (q = 0; q < rx && q < 256; q++) {
		json_object *o;

		if (!cli.json) {
			if (d->irq_cpu[q] < 0 && d->rss_entries[q] < 0)
				continue;
			printf("map   %s rx-%d -> IRQ CPU ", dev, q);
			if (d->irq_cpu[q] >= 0)
				printf("%d", d->irq_cpu[q]);
			else
				printf("?");
			if (d->rss_entries[q] >= 0)
				printf(", %d RSS entries", d->rss_entries[q]);
			printf("\n");
			continue;
		}
		o = json_object_new_object();
		json_object_object_add(o, "device",
				       json_object_new_string(dev));
		json_object_object_add(o, "queue", json_object_new_int(q));
		json_object_object_add(
			o, "irq_cpu",
			d->irq_cpu[q] >= 0 ?
				json_object_new_int(d->irq_cpu[q]) :
				NULL);
		json_object_object_add(
			o, "rss_entries",
			d->rss_entries[q] >= 0 ?
				json_object_new_int(d->rss_entries[q]) :
				NULL);
		json_object_array_add(d->map, o);
	}
	check_xps(d, dev);
}

/* Is DEV there: in ROOT's /sys when one is given, else in the namespace
 * open_silo() entered (the caller's, or --netns's). */
static bool device_exists(const struct doctor *d, const char *dev)
{
	char rel[PATH_MAX], path[PATH_MAX];

	if (!d->root[0])
		return if_nametoindex(dev) != 0;
	snprintf(rel, sizeof(rel), "/sys/class/net/%s", dev);
	path_of(d, rel, path, sizeof(path));
	return access(path, F_OK) == 0;
}

static int doctor_run(void *parsed, int argc, char **argv)
{
	struct doctor_cfg *cfg = parsed;
	struct doctor d = {};
	struct silo_xdp_dev *devs = NULL;
	struct silo *s = NULL;
	const char *dev = NULL;
	size_t n = 0, i;

	d.root = cfg->root;
	if (argc > 0)
		dev = argv[0];
	/* Checks of a tree or a device that is not there would read as a
	 * machine without the problems they look for. */
	if (d.root[0] && access(d.root, F_OK))
		return usage_error("no directory '%s' (--root): give the root "
				   "of a tree with proc/ and sys/\n",
				   d.root);
	s = open_silo();
	d.s = s;
	if (dev && (s || !cli.netns) && !device_exists(&d, dev)) {
		if (d.root[0])
			return usage_error(
				"no device '%s' in %s/sys/class/net\n", dev,
				d.root);
		if (cli.netns)
			return usage_error(
				"no device '%s' in network namespace "
				"'%s': see 'ip -n %s link show'\n",
				dev, cli.netns, cli.netns);
		return usage_error("no device '%s': see 'ip link show'\n", dev);
	}
	if (cli.json) {
		d.checks = json_object_new_array();
		d.map = json_object_new_array();
		d.rss = json_object_new_array();
	}
	if (s && cli.netns && !d.root[0])
		netns_sysfs_mount(d.sys, sizeof(d.sys));
	if (s)
		check_silo(&d, s);
	else
		report(&d, FAIL, "silod", "silo xdp load DEV",
		       "cannot open silo here");
	check_irqbalance(&d);
	if (dev) {
		check_device(&d, dev);
	} else if (s && !silo_xdp_list(s, &devs, &n)) {
		for (i = 0; i < n; i++)
			if (devs[i].ifname[0])
				check_device(&d, devs[i].ifname);
		if (!n)
			report(&d, INFO, "devices", NULL,
			       "silo runs on no device: name one");
		free(devs);
	}
	if (s)
		silo_group_foreach(s, check_group, &d);
	netns_sysfs_umount(d.sys);
	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "checks", d.checks);
		json_object_object_add(o, "map", d.map);
		json_object_object_add(o, "rss", d.rss);
		json_object_object_add(o, "ok",
				       json_object_new_int(d.counts[OK]));
		json_object_object_add(o, "warn",
				       json_object_new_int(d.counts[WARN]));
		json_object_object_add(o, "fail",
				       json_object_new_int(d.counts[FAIL]));
		json_print(o);
	} else {
		printf("%d ok, %d warn, %d fail\n", d.counts[OK],
		       d.counts[WARN], d.counts[FAIL]);
	}
	return d.counts[FAIL] ? 1 : 0;
}

static const struct cmd_spec doctor_spec = {
	.name = "doctor",
	.fn = doctor_run,
	.args = "[DEV]",
	.max_args = 1,
	.opts = doctor_opts,
	.help = "checks that the CPUs line up for DEV (default: every device\n"
		"silo runs on): irqbalance not running, each RX queue's IRQ on\n"
		"one CPU (/proc/irq/N/smp_affinity_list) and on the device's\n"
		"NUMA node, no RPS, the RSS table over the queues whose IRQs\n"
		"are on the node (ethtool netlink), a non-zero hash key and\n"
		"more than one queue, every CPU in a TX queue's XPS map, each\n"
		"reuseport slot's reader pinned to the slot's CPU, silod\n"
		"running with a live heartbeat, the forwarding envelope,\n"
		"and that silo sees the VLAN tags DEV strips (a program\n"
		"bound to DEV that asks its driver).\n"
		"Prints ok, warn or fail and the command that fixes it, then\n"
		"the map queue -> IRQ CPU (RSS entries) -> socket -> reader\n"
		"CPU, and each TX queue's XPS CPUs. Exits 1 when a check fails.",
	.cfg_size = sizeof(struct doctor_cfg),
	.cfg_init = &(const struct doctor_cfg){ .root = "" },
};

const struct cmd_object doctor_object = {
	.name = "doctor",
	.summary = "do the CPUs line up: IRQs, RPS, readers, silod",
	.self = &doctor_spec,
};
