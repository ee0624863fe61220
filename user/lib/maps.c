// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The shared, pinned maps: open with a layout check, fill, pin, remove. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/rtnetlink.h>
#include "internal.h"

const char *const silo_map_names[SILO_MAP_COUNT] = {
	[SILO_MAP_META] = "meta",	[SILO_MAP_LOCAL_ADDRS] = "local_addrs",
	[SILO_MAP_GENID] = "genid",	[SILO_MAP_CPU_NODE] = "cpu_node",
	[SILO_MAP_DEVICES] = "devices", [SILO_MAP_TX_PORTS] = "tx_ports",
	[SILO_MAP_STATS] = "stats",	[SILO_MAP_ROUTE_CACHE] = "route_cache",
};

void silo_maps_init(struct silo_maps *m)
{
	unsigned int i;

	for (i = 0; i < SILO_MAP_COUNT; i++)
		m->fd[i] = -1;
	for (i = 0; i < SILO_MAX_NODES; i++)
		m->node_fd[i] = -1;
	m->nr_nodes = 0;
}

void silo_maps_close(struct silo_maps *m)
{
	unsigned int i;

	for (i = 0; i < SILO_MAP_COUNT; i++)
		if (m->fd[i] >= 0)
			close(m->fd[i]);
	for (i = 0; i < SILO_MAX_NODES; i++)
		if (m->node_fd[i] >= 0)
			close(m->node_fd[i]);
	silo_maps_init(m);
}

static int node_pin_name(char *buf, size_t len, __u32 node)
{
	if (snprintf(buf, len, "%s%u", SILO_PIN_ROUTE_CACHE_NODE, node) >=
	    (int)len)
		return -ENAMETOOLONG;
	return 0;
}

static int obj_get(const struct silo *s, const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (silo_pin_path(s, path, sizeof(path), name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

int silo_maps_open(struct silo *s, struct silo_maps *m)
{
	struct silo_meta meta;
	char name[64];
	__u32 zero = 0, i;
	int fd, err;

	silo_maps_init(m);
	fd = obj_get(s, SILO_PIN_META);
	if (fd < 0)
		return fd == -ENOENT ? -ENOENT : fd;
	m->fd[SILO_MAP_META] = fd;
	if (bpf_map_lookup_elem(fd, &zero, &meta)) {
		err = -ESTALE;
		goto err_close;
	}
	if (meta.layout_version != SILO_LAYOUT_VERSION) {
		pr_debug("pins in %s have layout %u, this silo %u\n",
			 s->pin_dir, meta.layout_version, SILO_LAYOUT_VERSION);
		err = -ESTALE;
		goto err_close;
	}
	if (meta.netns_cookie != s->netns_cookie) {
		pr_debug("pins in %s belong to another network namespace\n",
			 s->pin_dir);
		err = -ESTALE;
		goto err_close;
	}
	for (i = 0; i < SILO_MAP_COUNT; i++) {
		if (i == SILO_MAP_META)
			continue;
		fd = obj_get(s, silo_map_names[i]);
		if (fd < 0) {
			err = fd == -ENOENT ? -ESTALE : fd;
			goto err_close;
		}
		m->fd[i] = fd;
	}
	if (meta.nr_nodes > SILO_MAX_NODES) {
		err = -ESTALE;
		goto err_close;
	}
	for (i = 0; i < meta.nr_nodes; i++) {
		node_pin_name(name, sizeof(name), i);
		fd = obj_get(s, name);
		if (fd < 0) {
			err = fd == -ENOENT ? -ESTALE : fd;
			goto err_close;
		}
		m->node_fd[i] = fd;
	}
	m->nr_nodes = meta.nr_nodes;
	return 0;

err_close:
	silo_maps_close(m);
	return err;
}

/* Pins every map of m; on failure removes the pins it made. */
int silo_maps_pin(struct silo *s, const struct silo_maps *m)
{
	char path[PATH_MAX], name[64];
	unsigned int i, nodes = 0, maps = 0;
	int err;

	err = mkdir_p(s->pin_dir, 0700);
	if (err) {
		pr_err("cannot create %s: %s\n", s->pin_dir, strerror(-err));
		return err;
	}
	for (; nodes < m->nr_nodes; nodes++) {
		node_pin_name(name, sizeof(name), nodes);
		silo_pin_path(s, path, sizeof(path), name);
		if (bpf_obj_pin(m->node_fd[nodes], path))
			goto err_unpin;
	}
	/* meta last: its presence says the set is complete. */
	for (i = SILO_MAP_COUNT; i-- > 0; maps++) {
		silo_pin_path(s, path, sizeof(path), silo_map_names[i]);
		if (bpf_obj_pin(m->fd[i], path))
			goto err_unpin;
	}
	return 0;

err_unpin:
	err = -errno;
	pr_err("cannot pin %s: %s\n", path, strerror(-err));
	while (maps-- > 0) {
		silo_pin_path(s, path, sizeof(path),
			      silo_map_names[SILO_MAP_COUNT - 1 - maps]);
		unlink(path);
	}
	while (nodes-- > 0) {
		node_pin_name(name, sizeof(name), nodes);
		silo_pin_path(s, path, sizeof(path), name);
		unlink(path);
	}
	return err;
}

/* Removes the map pins (meta first, so a half-removed set is never used). */
void silo_maps_unpin(struct silo *s)
{
	char path[PATH_MAX], name[64];
	unsigned int i;

	for (i = 0; i < SILO_MAP_COUNT; i++) {
		silo_pin_path(s, path, sizeof(path), silo_map_names[i]);
		unlink(path);
	}
	for (i = 0; i < SILO_MAX_NODES; i++) {
		node_pin_name(name, sizeof(name), i);
		silo_pin_path(s, path, sizeof(path), name);
		if (unlink(path) && errno == ENOENT)
			break;
	}
}

/*
 * Caches of nodes 1..nr_nodes-1, like node 0's (tmpl, made by libbpf with
 * the object's BTF, so bpftool can print these too). An array of maps needs
 * identical flags: a node this machine lacks (a faked topology) still gets
 * BPF_F_NUMA_NODE, with its memory on node 0.
 */
int silo_maps_create_node_caches(struct silo_maps *m,
				 const struct bpf_map *tmpl, int btf_fd,
				 __u32 nr_nodes)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .btf_fd = btf_fd,
		    .map_flags = bpf_map__map_flags(tmpl));
	char name[BPF_OBJ_NAME_LEN];
	__u32 node;
	int fd;

	opts.btf_key_type_id = bpf_map__btf_key_type_id(tmpl);
	opts.btf_value_type_id = bpf_map__btf_value_type_id(tmpl);
	for (node = 1; node < nr_nodes; node++) {
		opts.numa_node = numa_node_online(node) ? node : 0;
		snprintf(name, sizeof(name), "%s%u", SILO_PIN_ROUTE_CACHE_NODE,
			 node);
		fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, name,
				    bpf_map__key_size(tmpl),
				    bpf_map__value_size(tmpl),
				    bpf_map__max_entries(tmpl), &opts);
		if (fd < 0)
			goto err;
		m->node_fd[node] = fd;
		if (bpf_map_update_elem(m->fd[SILO_MAP_ROUTE_CACHE], &node, &fd,
					BPF_ANY))
			goto err;
	}
	m->nr_nodes = nr_nodes;
	return 0;
err:
	fd = -errno;
	pr_err("cannot create the route cache of node %u: %s\n", node,
	       strerror(-fd));
	return fd;
}

struct addr_set {
	struct silo_addr *keys;
	struct silo_local_addr *vals;
	size_t n, cap;
};

static int collect_addr(const struct silo_nl_addr *a, void *ctx)
{
	struct addr_set *set = ctx;
	struct silo_addr *k;
	size_t i;

	for (i = 0; i < set->n; i++) {
		if (set->keys[i].family == a->family &&
		    !memcmp(set->keys[i].addr, a->addr, 16))
			return 0;
	}
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 64;
		void *kp = realloc(set->keys, cap * sizeof(*set->keys));

		if (!kp)
			return -ENOMEM;
		set->keys = kp;
		kp = realloc(set->vals, cap * sizeof(*set->vals));
		if (!kp)
			return -ENOMEM;
		set->vals = kp;
		set->cap = cap;
	}
	k = &set->keys[set->n];
	memset(k, 0, sizeof(*k));
	k->family = a->family;
	memcpy(k->addr, a->addr, 16);
	memset(&set->vals[set->n], 0, sizeof(set->vals[0]));
	set->vals[set->n].ifindex = a->ifindex;
	set->vals[set->n].prefixlen = a->prefixlen;
	set->vals[set->n].scope = a->scope;
	set->n++;
	return 0;
}

/* Makes local_addrs hold exactly the kernel's addresses. */
int silo_fill_local_addrs(int map_fd)
{
	struct addr_set set = {};
	struct silo_addr key, next;
	bool has_key = false;
	size_t i;
	int err;

	err = silo_nl_dump_addrs(collect_addr, &set);
	if (err) {
		pr_err("cannot read this namespace's addresses: %s\n",
		       strerror(-err));
		goto out;
	}
	if (set.n > SILO_MAX_LOCAL_ADDRS) {
		pr_err("this namespace has %zu addresses; silo keeps at most %d\n",
		       set.n, SILO_MAX_LOCAL_ADDRS);
		err = -E2BIG;
		goto out;
	}
	/* Delete what is gone first, so the map never overflows. */
	while (!bpf_map_get_next_key(map_fd, has_key ? &key : NULL, &next)) {
		bool keep = false;

		for (i = 0; i < set.n && !keep; i++)
			keep = !memcmp(&set.keys[i], &next, sizeof(next));
		if (!keep && !bpf_map_delete_elem(map_fd, &next))
			continue; /* restart from the same key */
		key = next;
		has_key = true;
	}
	for (i = 0; i < set.n; i++) {
		if (bpf_map_update_elem(map_fd, &set.keys[i], &set.vals[i],
					BPF_ANY)) {
			err = -errno;
			pr_err("cannot update local_addrs: %s\n",
			       strerror(-err));
			goto out;
		}
	}
	err = 0;
out:
	free(set.keys);
	free(set.vals);
	return err;
}

int silo_fill_cpu_node(int map_fd, __u32 *nr_nodes)
{
	int nr_cpus = libbpf_num_possible_cpus();
	__u32 *node_of, cpu;
	int err;

	if (nr_cpus < 0)
		return nr_cpus;
	if (nr_cpus > SILO_MAX_CPUS) {
		pr_err("%d CPUs: silo supports at most %d\n", nr_cpus,
		       SILO_MAX_CPUS);
		return -E2BIG;
	}
	node_of = calloc(nr_cpus, sizeof(*node_of));
	if (!node_of)
		return -ENOMEM;
	err = read_cpu_nodes(node_of, nr_cpus, nr_nodes);
	if (err) {
		pr_err("cannot read the CPU topology from sysfs: %s\n",
		       strerror(-err));
		goto out;
	}
	for (cpu = 0; cpu < (__u32)nr_cpus; cpu++) {
		if (bpf_map_update_elem(map_fd, &cpu, &node_of[cpu], BPF_ANY)) {
			err = -errno;
			goto out;
		}
	}
out:
	free(node_of);
	return err;
}

int silo_fill_device(int map_fd, __u32 ifindex)
{
	struct silo_device dev = {};
	char ifname[IF_NAMESIZE], path[128];
	int all = 0, one = 0, err;

	err = silo_nl_link_mac(ifindex, dev.mac);
	if (err) {
		pr_err("cannot read the MAC address of ifindex %u: %s\n",
		       ifindex, strerror(-err));
		return err;
	}
	/* The kernel uses the larger of conf/all and conf/DEV. */
	if (if_indextoname(ifindex, ifname)) {
		read_sysctl_int("/proc/sys/net/ipv4/conf/all/rp_filter", &all);
		snprintf(path, sizeof(path),
			 "/proc/sys/net/ipv4/conf/%s/rp_filter", ifname);
		read_sysctl_int(path, &one);
	}
	dev.rp_filter = all > one ? all : one;
	if (bpf_map_update_elem(map_fd, &ifindex, &dev, BPF_ANY))
		return -errno;
	return 0;
}
