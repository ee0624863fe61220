// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Reading and managing silo's state: genid, route cache, stats, FIB. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "pins.h"
#include "fib_probe.skel.h"

static int open_maps(struct silo *s, struct silo_maps *m)
{
	int err = silo_maps_open(s, m);

	if (err == -ENOENT)
		pr_err("silo is not loaded in this network namespace (no pins in %s): see 'silo xdp load --help'\n",
		       s->pin_dir);
	else if (err == -ESTALE)
		pr_err("the pins in %s are of another silo version or a namespace that is gone: load silo again to replace them\n",
		       s->pin_dir);
	else if (err)
		pr_err("cannot open the maps in %s: %s\n", s->pin_dir,
		       strerror(-err));
	return err;
}

int silo_info(struct silo *s, struct silo_info *info)
{
	struct silo_maps m;
	struct silo_meta meta;
	struct silo_genid g;
	struct silo_addr key, next;
	struct bpf_map_info mi = {};
	__u32 zero = 0, len = sizeof(mi);
	bool has_key = false;
	int err;

	memset(info, 0, sizeof(*info));
	err = silo_maps_open(s, &m);
	if (err)
		return err;
	if (bpf_map_lookup_elem(m.fd[SILO_MAP_META], &zero, &meta) ||
	    bpf_map_lookup_elem(m.fd[SILO_MAP_GENID], &zero, &g)) {
		err = -errno;
		goto out;
	}
	info->layout_version = meta.layout_version;
	info->nr_nodes = meta.nr_nodes;
	info->genid = g.genid;
	info->genid_flags = g.flags;
	if (m.nr_nodes && !bpf_obj_get_info_by_fd(m.node_fd[0], &mi, &len))
		info->cache_size = mi.max_entries;
	while (!bpf_map_get_next_key(m.fd[SILO_MAP_LOCAL_ADDRS],
				     has_key ? &key : NULL, &next)) {
		info->local_addrs++;
		key = next;
		has_key = true;
	}
out:
	silo_maps_close(&m);
	return err;
}

int silo_genid_bump(struct silo *s, __u64 *genid)
{
	struct silo_maps m;
	struct silo_genid g;
	__u32 zero = 0;
	int err;

	err = open_maps(s, &m);
	if (err)
		return err;
	err = silo_genid_bump_fd(m.fd[SILO_MAP_GENID], 1);
	if (!err && bpf_map_lookup_elem(m.fd[SILO_MAP_GENID], &zero, &g))
		err = -errno;
	if (!err)
		*genid = g.genid;
	silo_maps_close(&m);
	return err;
}

int silo_route_foreach(struct silo *s, silo_route_fn fn, void *ctx)
{
	struct silo_route_key key, next;
	struct silo_route_entry e;
	struct silo_maps m;
	__u32 node;
	int err;

	err = open_maps(s, &m);
	if (err)
		return err;
	for (node = 0; node < m.nr_nodes && !err; node++) {
		bool has_key = false;

		while (!err &&
		       !bpf_map_get_next_key(m.node_fd[node],
					     has_key ? &key : NULL, &next)) {
			key = next;
			has_key = true;
			if (bpf_map_lookup_elem(m.node_fd[node], &key, &e))
				continue; /* evicted meanwhile */
			err = fn(node, &key, &e, ctx);
		}
	}
	silo_maps_close(&m);
	return err;
}

int silo_route_flush(struct silo *s)
{
	struct silo_route_key key;
	struct silo_maps m;
	int err, deleted = 0;
	__u32 node;

	err = open_maps(s, &m);
	if (err)
		return err;
	for (node = 0; node < m.nr_nodes; node++) {
		while (!bpf_map_get_next_key(m.node_fd[node], NULL, &key)) {
			if (bpf_map_delete_elem(m.node_fd[node], &key) &&
			    errno != ENOENT) {
				err = -errno;
				goto out;
			}
			deleted++;
		}
	}
	/* The data path's per-CPU copies of them go too. */
	err = silo_genid_sweeps_fd(m.fd[SILO_MAP_GENID]);
	if (!err)
		err = deleted;
out:
	silo_maps_close(&m);
	return err;
}

int silo_fib_lookup(struct silo *s, struct silo_fib_probe *probe)
{
	struct silo_fib_probe out;
	struct xdp_md ctx = { .data_end = sizeof(*probe),
			      .ingress_ifindex = probe->params.ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = probe,
		    .data_size_in = sizeof(*probe), .data_out = &out,
		    .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);
	struct fib_probe *skel;
	int err;

	(void)s; /* the namespace is the thread's, entered by silo_open */
	skel = fib_probe__open_and_load();
	if (!skel) {
		err = -errno;
		pr_err("cannot load the FIB probe program: %s\n",
		       strerror(-err));
		return err;
	}
	err = bpf_prog_test_run_opts(
		bpf_program__fd(skel->progs.silo_fib_probe), &opts);
	if (err) {
		err = -errno;
		if (err == -ENODEV)
			pr_err("no device with ifindex %u here\n",
			       probe->params.ifindex);
		else
			pr_err("cannot run the FIB probe: %s\n",
			       strerror(-err));
	} else if (opts.retval != XDP_PASS ||
		   opts.data_size_out != sizeof(out)) {
		pr_err("the FIB probe answered %u with %u bytes\n", opts.retval,
		       opts.data_size_out);
		err = -EIO;
	} else {
		memcpy(probe, &out, sizeof(out));
	}
	fib_probe__destroy(skel);
	return err;
}

int silo_route_resolve(struct silo *s, const struct silo_route_key *key,
		       struct silo_route_entry *entry)
{
	struct silo_fib_probe p = {};
	int err;

	/* The request the data path builds from the same key. */
	p.params.family = key->family == SILO_AF_INET ? AF_INET : AF_INET6;
	p.params.ifindex = key->ifindex;
	p.params.l4_protocol = key->l4_proto;
	p.params.sport = key->sport;
	p.params.dport = key->dport;
	if (key->family == SILO_AF_INET)
		p.params.tos = key->tos;
	else
		p.params.flowinfo =
			htonl((__u32)key->tos << 20) | key->flowlabel;
	memcpy(p.params.ipv6_src, key->src, 16);
	memcpy(p.params.ipv6_dst, key->dst, 16);
	err = silo_fib_lookup(s, &p);
	if (err)
		return err;
	memset(entry, 0, sizeof(*entry));
	entry->key = *key;
	/* The nexthop's family: an IPv4 route may have an IPv6 gateway. */
	entry->family =
		p.params.family == AF_INET6 ? SILO_AF_INET6 : SILO_AF_INET;
	/* Only these answers say where the packet would go. */
	if (p.rc != BPF_FIB_LKUP_RET_SUCCESS &&
	    p.rc != BPF_FIB_LKUP_RET_NO_NEIGH)
		return p.rc;
	entry->ifindex = p.params.ifindex;
	entry->mtu = p.params.mtu_result;
	memcpy(entry->smac, p.params.smac, 6);
	memcpy(entry->dmac, p.params.dmac, 6);
	memcpy(entry->nexthop, p.params.ipv6_dst, 16);
	return p.rc;
}

int silo_daemon_info(struct silo *s, struct silo_daemon_info *info)
{
	struct silo_maps m;
	struct silo_genid g;
	__u32 zero = 0;
	__u64 now;
	int err;

	memset(info, 0, sizeof(*info));
	err = silo_maps_open(s, &m);
	if (err)
		return err;
	if (bpf_map_lookup_elem(m.fd[SILO_MAP_DAEMON], &zero, &info->state) ||
	    bpf_map_lookup_elem(m.fd[SILO_MAP_HEARTBEAT], &zero,
				&info->heartbeat) ||
	    bpf_map_lookup_elem(m.fd[SILO_MAP_GENID], &zero, &g)) {
		err = -errno;
		goto out;
	}
	info->genid = g.genid;
	info->running = silo_daemon_pid(s) != 0;
	/* The data path's rule, on the data path's clock. */
	now = silo_clock_ns(CLOCK_MONOTONIC_COARSE);
	info->cache_trusted = info->heartbeat.last_ns &&
			      (__s64)(now - info->heartbeat.last_ns) >= 0 &&
			      (__s64)(now - info->heartbeat.last_ns) <=
				      (__s64)info->heartbeat.timeout_ns;
out:
	silo_maps_close(&m);
	return err;
}

int silo_nr_cpus(void)
{
	return libbpf_num_possible_cpus();
}

int silo_stats_read(struct silo *s, struct silo_stats *stats)
{
	struct silo_maps m;
	__u32 zero = 0;
	int err;

	err = open_maps(s, &m);
	if (err)
		return err;
	if (bpf_map_lookup_elem(m.fd[SILO_MAP_STATS], &zero, stats))
		err = -errno;
	silo_maps_close(&m);
	return err;
}
