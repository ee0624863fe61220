// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* genid: its bumps, and the cache key's fields and MTU floors it carries,
 * from the policy rules, routes and sysctls (silo_sync_genid). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <linux/rtnetlink.h>
#include "maps.h"
#include "maps_genid.h"
#include "nl.h"
#include "util.h"

int silo_genid_bump_fd(int genid_fd, unsigned int n)
{
	struct silo_genid g;
	__u32 zero = 0;

	/* Only user space writes genid, so read-modify-write is safe as long
	 * as one writer runs at a time (the daemon, or the CLI by hand). */
	if (bpf_map_lookup_elem(genid_fd, &zero, &g))
		return -errno;
	silo_genid_advance(&g, n);
	if (bpf_map_update_elem(genid_fd, &zero, &g, BPF_ANY))
		return -errno;
	return 0;
}

int silo_genid_sweeps_fd(int genid_fd)
{
	struct silo_genid g;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(genid_fd, &zero, &g))
		return -errno;
	g.sweeps++;
	if (bpf_map_update_elem(genid_fd, &zero, &g, BPF_ANY))
		return -errno;
	return 0;
}

static void read_policy(const char *family, int *policy, int *fields)
{
	char path[96];

	*policy = 0;
	*fields = 0;
	snprintf(path, sizeof(path),
		 "/proc/sys/net/%s/fib_multipath_hash_policy", family);
	silo_read_sysctl_int(path, policy);
	snprintf(path, sizeof(path),
		 "/proc/sys/net/%s/fib_multipath_hash_fields", family);
	silo_read_sysctl_int(path, fields);
}

/* fib_multipath_hash_fields: IP protocol, source and destination port. */
#define HASH_FIELDS_L4 0x0034
/* and the IPv6 flow label */
#define HASH_FIELD_FLOWLABEL 0x0008

/* Does a family's multipath hash take ports (policy 1; 3 with them)? */
static bool hash_takes_ports(int policy, int fields)
{
	return policy == 1 || (policy == 3 && (fields & HASH_FIELDS_L4));
}

#define RULES_BITS                                       \
	(SILO_GENID_RULES_L4 | SILO_GENID_RULES_SRC_V4 | \
	 SILO_GENID_RULES_SRC_V6)
#define KEY_BITS                                        \
	(SILO_GENID_KEY_L4 | SILO_GENID_KEY_FLOWLABEL | \
	 SILO_GENID_KEY_SRC_V4 | SILO_GENID_KEY_SRC_V6)

/*
 * The cache key's fields, and what the data path checks sizes against,
 * from the rules, routes and sysctls (what: SILO_SYNC_*; the rest is kept
 * as the map has it). A field is in the key when the FIB's answer may
 * depend on it:
 *  - the source of a family: a rule selects on a source prefix, or a
 *    multipath route hashes it (every IPv4 policy does; IPv6's too), or
 *    (IPv6) a route is source-specific;
 *  - protocol and ports: a rule selects on them, or a family with a
 *    multipath route hashes them (policy 1; 3 with those fields);
 *  - the IPv6 flow label (and next header): an IPv6 multipath route and a
 *    hash that takes it (policy 0 and 2; 3 with the flow label field).
 * And the least IPv4 PMTU (net.ipv4.route.min_pmtu) and whether IPv4
 * forwarding applies every PMTU exception (ip_forward_use_pmtu); the least
 * unlocked route MTU of each family, which bpf_fib_lookup does not apply.
 * A change writes the flags first and bumps genid after: no entry made
 * under the old key is used.
 */
/* min_pmtu, and whether IPv4 forwarding applies every exception. */
static void read_pmtu_sysctls(struct silo_genid *g)
{
	int floor = 0, use_pmtu = 0;

	silo_read_sysctl_int("/proc/sys/net/ipv4/route/min_pmtu", &floor);
	g->pmtu_floor_v4 = floor > 0 ? floor : 0;
	silo_read_sysctl_int("/proc/sys/net/ipv4/ip_forward_use_pmtu",
			     &use_pmtu);
	g->pmtu_flags = (g->pmtu_flags & ~SILO_PMTU_F_USE_V4) |
			(use_pmtu > 0 ? SILO_PMTU_F_USE_V4 : 0);
}

/* Every unlocked route MTU into route_mtus, by prefix, and the least per
 * family into genid.route_mtu, which applies where route_mtus is not
 * whole (no map, too many) or the program is an earlier release's. */
static int sync_route_mtus(struct silo_genid *g, int mtus_fd,
			   struct silo_nl_routes *routes, bool *changed)
{
	bool whole = mtus_fd >= 0 && !routes->mtus_lost;
	int f, err;

	*changed = false;
	if (whole) {
		err = silo_route_mtus_write(mtus_fd, routes, changed);
		if (err)
			return err;
	}
	/* Larger than any packet: as good as none. Kept when route_mtus is
	 * whole too: an earlier release's program reads only this. */
	for (f = 0; f < 2; f++)
		g->route_mtu[f] =
			routes->mtu_min[f] > 0xFFFF ? 0 : routes->mtu_min[f];
	g->pmtu_flags = (g->pmtu_flags & ~SILO_PMTU_F_ROUTE_MTUS) |
			(whole ? SILO_PMTU_F_ROUTE_MTUS : 0);
	return 0;
}

/* src_checked, and genid's flag that it is whole. */
static int sync_srcs(struct silo_genid *g, int srcs_fd,
		     struct silo_nl_routes *routes)
{
	bool whole = false;
	int err = 0;

	if (srcs_fd >= 0)
		err = silo_src_checked_write(srcs_fd, routes, &whole);
	g->flags = (g->flags & ~SILO_GENID_SRCS_WHOLE) |
		   (whole ? SILO_GENID_SRCS_WHOLE : 0);
	return err;
}

/* direct_skip, and genid's flags that allow it: the rules read now, the
 * local table's and the rules' tables' routes by the walk (tables: which
 * it read). Clear where the map is not there. */
static int sync_direct(struct silo_genid *g, int direct_fd,
		       struct silo_nl_routes *routes,
		       const struct silo_nl_tables *tables)
{
	__u32 flags = 0;
	int err = 0;

	if (direct_fd >= 0) {
		err = silo_direct_cover(routes);
		if (!err)
			err = silo_nl_rules_direct(routes, tables, &flags);
		if (!err && flags)
			err = silo_direct_skip_write(direct_fd, routes);
	}
	g->flags &= ~SILO_GENID_DIRECT_BITS;
	if (!err)
		g->flags |= flags;
	return err;
}

/* One walk of the routes for what asks it (the table may hold many):
 * route_mtus, src_checked and direct_skip, and the flags SILO_SYNC_ROUTES
 * decides. */
static int sync_walk(struct silo_genid *g, const int *fds, unsigned int what,
		     bool *mtus_changed)
{
	int mtus_fd = fds[0], srcs_fd = fds[1], direct_fd = fds[2];
	struct silo_nl_routes routes = {};
	struct silo_nl_tables tables = {};
	int err;

	/* The tables whose routes direct_skip takes, before the walk. */
	if ((what & SILO_SYNC_DIRECT) && direct_fd >= 0) {
		err = silo_nl_rules_tables(&tables);
		if (err) {
			pr_err("cannot read the policy rules: %s\n",
			       strerror(-err));
			return err;
		}
	}
	err = silo_nl_routes_scan(&routes, &tables);
	if (err) {
		pr_err("cannot read the routes: %s\n", strerror(-err));
		goto free_routes;
	}
	if (what & SILO_SYNC_ROUTE_MTU) {
		err = sync_route_mtus(g, mtus_fd, &routes, mtus_changed);
		if (err) {
			pr_err("cannot write the route MTUs: %s\n",
			       strerror(-err));
			goto free_routes;
		}
	}
	if (what & SILO_SYNC_SRCS) {
		err = sync_srcs(g, srcs_fd, &routes);
		if (err) {
			pr_err("cannot write the checked sources: %s\n",
			       strerror(-err));
			goto free_routes;
		}
	}
	if (what & SILO_SYNC_DIRECT) {
		err = sync_direct(g, direct_fd, &routes, &tables);
		if (err) {
			pr_err("cannot write the rules' prefixes: %s\n",
			       strerror(-err));
			goto free_routes;
		}
	}
	if (what & SILO_SYNC_ROUTES)
		g->flags = (g->flags & ~SILO_GENID_ROUTES_BITS) | routes.flags;
free_routes:
	silo_nl_routes_free(&routes);
	return err;
}

int silo_direct_tables(__u32 *ids)
{
	struct silo_nl_tables t;
	unsigned int f, i, j, n = 0;
	int err;

	_Static_assert(2 * SILO_NL_TABLES_MAX <= SILO_DIRECT_TABLES_MAX,
		       "both families' tables");
	err = silo_nl_rules_tables(&t);
	if (err)
		return err;
	for (f = 0; f < 2; f++)
		for (i = 0; i < t.nr[f]; i++) {
			for (j = 0; j < n && ids[j] != t.id[f][i]; j++)
				;
			if (j == n)
				ids[n++] = t.id[f][i];
		}
	return n;
}

int silo_sync_genid(int genid_fd, int mtus_fd, int srcs_fd, int direct_fd,
		    unsigned int what)
{
	const int fds[] = { mtus_fd, srcs_fd, direct_fd };
	int p4, f4, p6, f6, err;
	bool mtus_changed = false;
	struct silo_genid g, old;
	__u32 zero = 0, rules;
	bool l4_v4, l4_v6;

	if (bpf_map_lookup_elem(genid_fd, &zero, &old))
		return -errno;
	g = old;
	if (what & SILO_SYNC_RULES) {
		err = silo_nl_rules_keys(&rules);
		if (err) {
			pr_err("cannot read the policy rules: %s\n",
			       strerror(-err));
			return err;
		}
		g.flags = (g.flags & ~RULES_BITS) | rules;
	}
	read_policy("ipv4", &p4, &f4);
	read_policy("ipv6", &p6, &f6);
	l4_v4 = hash_takes_ports(p4, f4);
	l4_v6 = hash_takes_ports(p6, f6);
	g.flags &= ~(SILO_GENID_HASH_L4 | SILO_GENID_HASH_FLOWLABEL);
	if (l4_v4 || l4_v6)
		g.flags |= SILO_GENID_HASH_L4;
	if (p6 == 0 || p6 == 2 || (p6 == 3 && (f6 & HASH_FIELD_FLOWLABEL)))
		g.flags |= SILO_GENID_HASH_FLOWLABEL;
	if (what & SILO_SYNC_SYSCTLS)
		read_pmtu_sysctls(&g);
	if (what & (SILO_SYNC_ROUTE_MTU | SILO_SYNC_ROUTES | SILO_SYNC_SRCS |
		    SILO_SYNC_DIRECT)) {
		err = sync_walk(&g, fds, what, &mtus_changed);
		if (err)
			return err;
	}

	/* The hash matters only where a multipath route exists. */
	g.flags &= ~KEY_BITS;
	if (g.flags & (SILO_GENID_RULES_SRC_V4 | SILO_GENID_MPATH_V4))
		g.flags |= SILO_GENID_KEY_SRC_V4;
	if (g.flags & (SILO_GENID_RULES_SRC_V6 | SILO_GENID_MPATH_V6 |
		       SILO_GENID_SRC_ROUTES_V6))
		g.flags |= SILO_GENID_KEY_SRC_V6;
	if ((g.flags & SILO_GENID_RULES_L4) ||
	    (l4_v4 && (g.flags & SILO_GENID_MPATH_V4)) ||
	    (l4_v6 && (g.flags & SILO_GENID_MPATH_V6)))
		g.flags |= SILO_GENID_KEY_L4;
	if ((g.flags & SILO_GENID_MPATH_V6) &&
	    (g.flags & SILO_GENID_HASH_FLOWLABEL))
		g.flags |= SILO_GENID_KEY_FLOWLABEL;
	if (!mtus_changed && g.flags == old.flags &&
	    g.pmtu_floor_v4 == old.pmtu_floor_v4 &&
	    g.pmtu_flags == old.pmtu_flags &&
	    !memcmp(g.route_mtu, old.route_mtu, sizeof(g.route_mtu)))
		return 0;
	if (bpf_map_update_elem(genid_fd, &zero, &g, BPF_ANY))
		return -errno;
	return silo_genid_bump_fd(genid_fd, 1);
}
