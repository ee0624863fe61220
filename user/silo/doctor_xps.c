// SPDX-License-Identifier: GPL-2.0
/* silo doctor: each CPU in a TX queue's XPS map. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"
#include "doctor.h"

/* The TX queue for a CPU in a fix: the one whose RX IRQ runs there. */
static unsigned int txq_of_cpu(const struct doctor *d, unsigned int cpu,
			       unsigned int ntx)
{
	unsigned int q;

	for (q = 0; q < ntx && q < 256; q++)
		if (d->irq_cpu[q] == (int)cpu)
			return q;
	return cpu % ntx;
}

/* Commands that write each changed queue's xps_cpus, into fix. */
static void xps_fix(const char *dir, const struct set *old,
		    const struct set *new, unsigned int ntx, char *fix,
		    size_t len)
{
	char mask[1200];
	size_t used = 0;
	unsigned int q;

	fix[0] = '\0';
	for (q = 0; q < ntx; q++) {
		if (!memcmp(&old[q], &new[q], sizeof(*old)))
			continue;
		set_mask(&new[q], mask, sizeof(mask));
		if (used + strlen(dir) + strlen(mask) + 40 >= len) {
			snprintf(fix + used, len - used, "; ...");
			return;
		}
		used += snprintf(fix + used, len - used,
				 "%secho %s > %s/tx-%u/xps_cpus",
				 used ? "; " : "", mask, dir, q);
	}
}

/* The TX queues of dev (tx-N in its queues directory dir), into *ntx. */
static int tx_queues(struct doctor *d, const char *dev, const char *dir,
		     unsigned int *ntx)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dd;

	path_of(d, dir, path, sizeof(path));
	dd = opendir(path);
	if (!dd) {
		report(d, INFO, "xps", NULL, "%s: cannot read %s", dev, path);
		return -ENOENT;
	}
	while ((e = readdir(dd)))
		if (!strncmp(e->d_name, "tx-", 3) &&
		    (unsigned int)atoi(e->d_name + 3) + 1 > *ntx)
			*ntx = atoi(e->d_name + 3) + 1;
	closedir(dd);
	return 0;
}

/* The map's lines: each TX queue and the CPUs its XPS map names. */
static void xps_map(struct doctor *d, const char *dev, const struct set *cpus,
		    unsigned int ntx)
{
	char list[256];
	unsigned int q;

	for (q = 0; q < ntx; q++) {
		json_object *o;

		if (set_empty(&cpus[q]))
			continue;
		set_list(&cpus[q], list, sizeof(list));
		if (!cli.json) {
			printf("map   %s tx-%u <- XPS CPUs %s\n", dev, q, list);
			continue;
		}
		o = json_object_new_object();
		json_object_object_add(o, "device",
				       json_object_new_string(dev));
		json_object_object_add(o, "tx_queue", json_object_new_int(q));
		json_object_object_add(o, "xps_cpus",
				       json_object_new_string(list));
		json_object_array_add(d->map, o);
	}
}

/*
 * XPS: with several TX queues, a CPU should send on a queue of its own
 * (the one whose completions it handles), else queues are shared and
 * picked by hash.
 */
void check_xps(struct doctor *d, const char *dev)
{
	char dir[PATH_MAX], rel[PATH_MAX + 32], buf[1200];
	char fix[2048], list[256];
	struct set *cpus = NULL, *want = NULL, all = {}, online = {}, missing;
	unsigned int ntx = 0, q, c;
	bool rxqs = false, have_online;

	snprintf(dir, sizeof(dir), "/sys/class/net/%s/queues", dev);
	if (tx_queues(d, dev, dir, &ntx))
		return;
	if (ntx <= 1) {
		report(d, INFO, "xps", NULL, "%s: one TX queue, no XPS to map",
		       dev);
		return;
	}
	cpus = calloc(ntx, sizeof(*cpus));
	want = calloc(ntx, sizeof(*want));
	if (!cpus || !want)
		goto out;
	for (q = 0; q < ntx; q++) {
		snprintf(rel, sizeof(rel), "%s/tx-%u/xps_cpus", dir, q);
		if (read_line(d, rel, buf, sizeof(buf)) ||
		    set_parse_mask(&cpus[q], buf)) {
			report(d, INFO, "xps", NULL, "%s: cannot read %s", dev,
			       rel);
			goto out;
		}
		for (c = 0; c < sizeof(all.b); c++)
			all.b[c] |= cpus[q].b[c];
		snprintf(rel, sizeof(rel), "%s/tx-%u/xps_rxqs", dir, q);
		if (!read_line(d, rel, buf, sizeof(buf)) &&
		    !set_parse_mask(&missing, buf) && !set_empty(&missing))
			rxqs = true;
	}
	have_online = !read_line(d, "/sys/devices/system/cpu/online", buf,
				 sizeof(buf)) &&
		      !set_parse_list(&online, buf) && !set_empty(&online);
	memcpy(want, cpus, ntx * sizeof(*cpus));
	memset(&missing, 0, sizeof(missing));
	for (c = 0; have_online && c < SET_MAX; c++) {
		if (!set_has(&online, c) || set_has(&all, c))
			continue;
		set_add(&missing, c);
		set_add(&want[txq_of_cpu(d, c, ntx)], c);
	}
	xps_fix(dir, cpus, want, ntx, fix, sizeof(fix));
	if (set_empty(&all) && rxqs) {
		report(d, OK, "xps", NULL,
		       "%s: XPS by RX queue (xps_rxqs) over %u TX queues", dev,
		       ntx);
	} else if (set_empty(&all)) {
		report(d, WARN, "xps", have_online ? fix : NULL,
		       "%s has %u TX queues and no XPS map: a CPU picks its queue by hash, and CPUs share queues",
		       dev, ntx);
	} else if (!set_empty(&missing)) {
		set_list(&missing, list, sizeof(list));
		report(d, WARN, "xps", fix,
		       "%s: CPUs %s are in no TX queue's XPS map: they pick queues by hash",
		       dev, list);
	} else {
		report(d, OK, "xps", NULL,
		       "%s: XPS maps every CPU to a TX queue (%u queues)", dev,
		       ntx);
	}
	xps_map(d, dev, cpus, ntx);
out:
	free(cpus);
	free(want);
}
