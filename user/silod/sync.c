// SPDX-License-Identifier: GPL-2.0
/*
 * The side maps the data path reads beside the cache, kept as the kernel
 * has them: cpu_node and the caches per node (topology), devices, and the
 * genid fields counted from routes and sysctls (config_poll, once a
 * second, for what changes without a notification).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "config.h"
#include "silod.h"

static int refresh_group(struct silo_group *g, void *ctx)
{
	struct silo_group_info info;

	(void)ctx;
	/* Setting its policy again rebuilds its per-node socket lists. */
	if (!silo_group_info(g, &info))
		silo_group_set_policy(g, info.group.policy);
	return 0;
}

/* cpu_node from the configuration or sysfs; one cache per node; and the
 * reuseport groups' node lists, which follow cpu_node. */
int apply_topology(struct silod *d)
{
	int nr_cpus = libbpf_num_possible_cpus();
	__u32 *node_of, nr_nodes;
	int err;

	node_of = calloc(nr_cpus, sizeof(*node_of));
	if (!node_of)
		return -ENOMEM;
	if (d->cfg.cpu_nodes[0])
		err = parse_cpu_nodes(d->cfg.cpu_nodes, node_of, nr_cpus,
				      &nr_nodes);
	else
		err = silo_read_cpu_nodes(node_of, nr_cpus, &nr_nodes);
	/* Caches first: a CPU must never point at a missing one. */
	if (!err)
		err = silo_maps_set_nodes(d->silo, &d->maps, nr_nodes);
	if (!err)
		err = silo_write_cpu_node(d->maps.fd[SILO_MAP_CPU_NODE],
					  node_of, nr_cpus);
	free(node_of);
	if (err) {
		pr_err("cannot set the CPU to node map: %s\n", strerror(-err));
		return err;
	}
	if (d->cfg.cpu_nodes[0])
		pr_info("CPU to node map: %s (%u nodes)\n", d->cfg.cpu_nodes,
			nr_nodes);
	silo_group_foreach(d->silo, refresh_group, NULL);
	return 0;
}

static int refresh_device(struct silo *s, __u32 ifindex, void *ctx)
{
	struct silod *d = ctx;
	char name[IF_NAMESIZE];
	int err;

	(void)s;
	/* A device that went away keeps its link pin until unloaded. */
	if (!if_indextoname(ifindex, name))
		return 0;
	err = silo_fill_device(d->maps.fd[SILO_MAP_DEVICES],
			       d->maps.fd[SILO_MAP_GENID],
			       d->maps.fd[SILO_MAP_TX_PORTS], ifindex);
	if (err) {
		pr_warn("cannot refresh device %s\n", name);
		/* The others still get theirs; the caller fails. */
		d->device_err = err < 0 ? err : -EIO;
	}
	return 0;
}

int refresh_devices(struct silod *d)
{
	int err;

	d->device_err = 0;
	/* A changed device bumps genid, as the regrace thread may. */
	pthread_mutex_lock(&d->genid_lock);
	err = silo_for_each_link_pin(d->silo, refresh_device, d);
	pthread_mutex_unlock(&d->genid_lock);
	return err ? err : d->device_err;
}

static int sync_genid(struct silod *d, unsigned int what)
{
	int err;

	/* The regrace thread may bump genid meanwhile. */
	pthread_mutex_lock(&d->genid_lock);
	err = silo_sync_genid(d->maps.fd[SILO_MAP_GENID],
			      d->maps.fd[SILO_MAP_ROUTE_MTUS],
			      d->maps.fd[SILO_MAP_SRC_CHECKED],
			      d->maps.fd[SILO_MAP_DIRECT_SKIP], what);
	pthread_mutex_unlock(&d->genid_lock);
	return err;
}

/* Whether a nexthop group may exist: a failure to tell says yes. */
void nexthop_groups(struct silod *d)
{
	d->nh_groups = silo_nl_nexthop_groups() != 0;
	d->nh_lazy = false;
}

/* Routes too, in the same walk as their MTUs. */
int sync_routes(struct silod *d, unsigned int what)
{
	int err;

	if (d->nh_lazy)
		nexthop_groups(d);
	/* Tests count these: an ordinary route must cost none. */
	if (what & SILO_SYNC_ROUTES)
		pr_debug("counting multipath and source routes\n");
	err = sync_genid(d, what);
	if (!err && (what & SILO_SYNC_ROUTES))
		d->routes_lazy = false;
	/* After the sync: a rule added since is a message of its own. A
	 * failure (< 0) leaves them unknown. */
	if (what & SILO_SYNC_DIRECT)
		d->nr_dtables = err ? -1 : silo_direct_tables(d->dtables);
	return err;
}

void config_poll(struct silod *d)
{
	unsigned int what = SILO_SYNC_SYSCTLS;
	struct silo_genid g;
	__u32 zero = 0;

	if (!bpf_map_lookup_elem(d->maps.fd[SILO_MAP_GENID], &zero, &g)) {
		if (g.route_mtu[SILO_FAM_V4] || g.route_mtu[SILO_FAM_V6])
			what |= SILO_SYNC_ROUTE_MTU;
		/* A field set by the routes may have stopped mattering;
		 * unset ones are set as the routes come. */
		if (d->routes_lazy && (g.flags & SILO_GENID_ROUTES_BITS))
			what |= SILO_SYNC_ROUTES;
		else
			d->routes_lazy = false;
	}
	/* Changes bump genid; a failure leaves silod unsynced. */
	if (sync_routes(d, what) || refresh_devices(d))
		invalidation_lost(d);
}
