// SPDX-License-Identifier: GPL-2.0
/*
 * Services that follow a reuseport group: their CPU sets are the group's
 * occupied slots, which change as sockets come and go without telling
 * silod (a socket that closes leaves its slot by itself). Re-read with the
 * config poll, every second.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include "silod.h"

/* What the program reads of a table, ifindex aside (toeplitz follows key). */
static bool same_table(const struct silo_reuseport_queues *a,
		       const struct silo_reuseport_queues *b)
{
	return a->key_size == b->key_size && a->indir_size == b->indir_size &&
	       a->nr_queues == b->nr_queues && a->hash_ports == b->hash_ports &&
	       !memcmp(a->key, b->key, a->key_size) &&
	       !memcmp(a->indir, b->indir,
		       a->indir_size * sizeof(a->indir[0])) &&
	       !memcmp(a->queue_cpu, b->queue_cpu,
		       a->nr_queues * sizeof(a->queue_cpu[0]));
}

/*
 * A group whose policy queue table was read from a device: read it again,
 * and rewrite it when ethtool or an IRQ's affinity changed it. A device
 * that is gone, or no longer has a table to redo, leaves the group without
 * one: the policy falls back rather than pick by a table that is wrong.
 */
static int queues_refresh(struct silo_group *g, void *ctx)
{
	struct silo_reuseport_queues *cur = ctx, *now = cur + 1;
	char ifname[IF_NAMESIZE];
	int err;

	if (silo_group_queues(g, cur) || !cur->ifindex)
		return 0;
	err = if_indextoname(cur->ifindex, ifname) ?
		      silo_rss_table_read(ifname, now) :
		      -ENODEV;
	if (err) {
		pr_warn("group %s: the RSS table of ifindex %u cannot be read again (%s): policy queue falls back until 'silo reuseport queue-map %s --dev DEV'\n",
			silo_group_name(g), cur->ifindex, strerror(-err),
			silo_group_name(g));
		silo_group_clear_queues(g);
		return 0;
	}
	if (!same_table(cur, now) && !silo_group_set_queues(g, now))
		pr_info("group %s: RSS table of %s changed: rewritten\n",
			silo_group_name(g), ifname);
	return 0;
}

void queues_poll(struct silod *d)
{
	struct silo_reuseport_queues *q = malloc(2 * sizeof(*q));

	if (!q)
		return;
	silo_group_foreach(d->silo, queues_refresh, q);
	free(q);
}

void service_poll(struct silod *d)
{
	int n = silo_service_sync_try(d->silo);

	if (n > 0)
		pr_info("%d service%s now steer%s to their group's CPUs\n", n,
			n == 1 ? "" : "s", n == 1 ? "s" : "");
	else if (n < 0 && n != -EAGAIN) /* taken: the next poll */
		pr_debug("services not synced: %s\n", strerror(-n));
}
