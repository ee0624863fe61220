// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The shared maps: make them, fill them from the kernel, keep genid. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/rtnetlink.h>
#include "maps.h"
#include "nl.h"
#include "pins.h"
#include "util.h"
#include "silo_xdp.skel.h"

/*
 * Caches of nodes m->nr_nodes..nr_nodes-1, made like node 0's (which libbpf
 * made with the object's BTF, so bpftool prints these too). An array of maps
 * needs identical flags: a node this machine lacks (a faked topology) still
 * gets BPF_F_NUMA_NODE, with its memory on node 0.
 */
static int create_node_caches(struct silo_maps *m, __u32 nr_nodes)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	struct bpf_map_info info = {};
	char name[BPF_OBJ_NAME_LEN];
	__u32 len = sizeof(info), node = m->nr_nodes;
	int fd, btf_fd = -1, err = 0;

	if (nr_nodes > SILO_MAX_NODES)
		return -E2BIG;
	if (node >= nr_nodes)
		return 0;
	if (!m->nr_nodes || bpf_obj_get_info_by_fd(m->node_fd[0], &info, &len))
		return -ENOENT;
	if (info.btf_id) {
		btf_fd = bpf_btf_get_fd_by_id(info.btf_id);
		opts.btf_fd = btf_fd < 0 ? 0 : btf_fd;
		opts.btf_key_type_id = btf_fd < 0 ? 0 : info.btf_key_type_id;
		opts.btf_value_type_id =
			btf_fd < 0 ? 0 : info.btf_value_type_id;
	}
	opts.map_flags = info.map_flags;
	for (; node < nr_nodes; node++) {
		opts.numa_node = silo_numa_node_online(node) ? node : 0;
		snprintf(name, sizeof(name), "%s%u", SILO_PIN_ROUTE_CACHE_NODE,
			 node);
		fd = bpf_map_create(info.type, name, info.key_size,
				    info.value_size, info.max_entries, &opts);
		if (fd < 0 || bpf_map_update_elem(m->fd[SILO_MAP_ROUTE_CACHE],
						  &node, &fd, BPF_ANY)) {
			err = -errno;
			if (fd >= 0)
				close(fd);
			pr_err("cannot create the route cache of node %u: %s\n",
			       node, strerror(-err));
			break;
		}
		m->node_fd[node] = fd;
		m->nr_nodes = node + 1;
	}
	if (btf_fd >= 0)
		close(btf_fd);
	return err;
}

int silo_maps_set_nodes(struct silo *s, struct silo_maps *m, __u32 nr_nodes)
{
	struct silo_meta meta;
	__u32 zero = 0, node, old = m->nr_nodes;
	int err;

	err = create_node_caches(m, nr_nodes);
	for (node = old; node < m->nr_nodes && !err; node++)
		err = silo_pin_node_cache(s, node, m->node_fd[node]);
	if (err)
		return err;
	if (bpf_map_lookup_elem(m->fd[SILO_MAP_META], &zero, &meta))
		return -errno;
	if (meta.nr_nodes != m->nr_nodes) {
		meta.nr_nodes = m->nr_nodes;
		if (bpf_map_update_elem(m->fd[SILO_MAP_META], &zero, &meta,
					BPF_ANY))
			return -errno;
	}
	return 0;
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

/* The filter of local_addrs (abi/common.h), after it: every address's
 * bit, and no other. */
static int write_local_bits(int bits_fd, const struct addr_set *set)
{
	struct silo_local_bits bits = {};
	__u32 zero = 0, bit;
	size_t i;

	for (i = 0; i < set->n; i++) {
		bit = silo_local_bit(set->keys[i].family, set->keys[i].addr);
		bits.w[bit / 64] |= 1ULL << (bit % 64);
	}
	if (bpf_map_update_elem(bits_fd, &zero, &bits, BPF_ANY)) {
		pr_err("cannot update local_bits: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

/* Makes local_addrs hold exactly the kernel's addresses. */
int silo_fill_local_addrs(int map_fd, int bits_fd)
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
	err = bits_fd >= 0 ? write_local_bits(bits_fd, &set) : 0;
out:
	free(set.keys);
	free(set.vals);
	return err;
}

int silo_write_cpu_node(int map_fd, const __u32 *node_of, int nr_cpus)
{
	__u32 cpu;

	for (cpu = 0; cpu < (__u32)nr_cpus; cpu++)
		if (bpf_map_update_elem(map_fd, &cpu, &node_of[cpu], BPF_ANY))
			return -errno;
	return 0;
}

int silo_fill_cpu_node(int map_fd, __u32 *nr_nodes)
{
	int nr_cpus = libbpf_num_possible_cpus();
	__u32 *node_of;
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
	err = silo_read_cpu_nodes(node_of, nr_cpus, nr_nodes);
	if (err)
		pr_err("cannot read the CPU topology from sysfs: %s\n",
		       strerror(-err));
	else
		err = silo_write_cpu_node(map_fd, node_of, nr_cpus);
	free(node_of);
	return err;
}

int silo_maps_cache_size(const struct silo_maps *m, __u32 *size)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (m->nr_nodes == 0 ||
	    bpf_obj_get_info_by_fd(m->node_fd[0], &info, &len))
		return -ENOENT;
	*size = info.max_entries;
	return 0;
}

/* The kind of the caches m holds (SILO_CACHE_*), or a negative errno. */
static int maps_cache_kind(const struct silo_maps *m)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (m->nr_nodes == 0 ||
	    bpf_obj_get_info_by_fd(m->node_fd[0], &info, &len))
		return -ENOENT;
	if (info.type == BPF_MAP_TYPE_HASH)
		return SILO_CACHE_HASH;
	return info.map_flags & BPF_F_NO_COMMON_LRU ? SILO_CACHE_LRU_PERCPU :
						      SILO_CACHE_LRU;
}

static const char *const cache_kind_names[] = {
	[SILO_CACHE_LRU] = "LRU hashes",
	[SILO_CACHE_LRU_PERCPU] = "LRU hashes with per-CPU lists",
	[SILO_CACHE_HASH] = "plain hashes",
};

int silo_maps_reuse(const struct silo_maps *m, struct bpf_object *obj)
{
	struct bpf_map *map;
	unsigned int i;
	int err;

	bpf_object__for_each_map(map, obj)
	{
		const char *name = bpf_map__name(map);
		int fd = -1;

		for (i = 0; i < SILO_MAP_COUNT && fd < 0; i++)
			if (!strcmp(name, silo_map_names[i]))
				fd = m->fd[i];
		if (fd < 0 && m->nr_nodes &&
		    !strcmp(name, SILO_PIN_ROUTE_CACHE_NODE "0"))
			fd = m->node_fd[0];
		if (fd < 0)
			continue;
		err = bpf_map__reuse_fd(map, fd);
		if (err) {
			pr_err("cannot reuse map %s: %s\n", name,
			       strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * The kernel takes a cache into route_cache only if it matches the outer
 * map's template in size and flags. libbpf makes the template from the
 * declaration (default size), so another size needs a template of our own.
 */
static int size_inner_template(struct silo_xdp *skel, __u32 size,
			       enum silo_cache_kind kind, int *fd)
{
	struct bpf_map *n0 = skel->maps.route_cache_n0;
	LIBBPF_OPTS(bpf_map_create_opts, opts, .numa_node = 0);
	int err;

	if (kind == SILO_CACHE_HASH)
		bpf_map__set_type(n0, BPF_MAP_TYPE_HASH);
	else if (kind == SILO_CACHE_LRU_PERCPU)
		/* The kernel refuses a node for per-CPU lists: each CPU's
		 * part is its own already. */
		bpf_map__set_map_flags(
			n0, (bpf_map__map_flags(n0) & ~BPF_F_NUMA_NODE) |
				    BPF_F_NO_COMMON_LRU);
	opts.map_flags = bpf_map__map_flags(n0);
	bpf_map__set_max_entries(n0, size);
	if (size == SILO_ROUTE_CACHE_DEFAULT && kind <= SILO_CACHE_LRU)
		return 0;
	*fd = bpf_map_create(bpf_map__type(n0), "route_cache_t",
			     bpf_map__key_size(n0), bpf_map__value_size(n0),
			     size, &opts);
	if (*fd < 0) {
		err = -errno;
		pr_err("cannot create a route cache of %u entries: %s\n", size,
		       strerror(-err));
		return err;
	}
	return bpf_map__set_inner_map_fd(skel->maps.route_cache, *fd);
}

/* Fills maps libbpf just made, and keeps fds of them in m. */
static int init_fresh_maps(struct silo *s, struct silo_xdp *skel,
			   struct silo_maps *m)
{
	struct silo_meta meta = {
		.layout_version = SILO_LAYOUT_VERSION,
		.netns_cookie = s->netns_cookie,
	};
	struct silo_genid g = { .genid = 1 };
	__u32 zero = 0, nr_nodes;
	unsigned int i;
	int err;

	for (i = 0; i < SILO_MAP_COUNT; i++) {
		m->fd[i] = dup(bpf_map__fd(bpf_object__find_map_by_name(
			skel->obj, silo_map_names[i])));
		if (m->fd[i] < 0)
			return -errno;
	}
	m->node_fd[0] = dup(bpf_map__fd(skel->maps.route_cache_n0));
	if (m->node_fd[0] < 0)
		return -errno;
	m->nr_nodes = 1;
	err = silo_fill_cpu_node(m->fd[SILO_MAP_CPU_NODE], &nr_nodes);
	if (err)
		return err;
	err = create_node_caches(m, nr_nodes);
	if (err)
		return err;
	meta.nr_nodes = nr_nodes;
	if (bpf_map_update_elem(m->fd[SILO_MAP_META], &zero, &meta, BPF_ANY) ||
	    bpf_map_update_elem(m->fd[SILO_MAP_GENID], &zero, &g, BPF_ANY))
		return -errno;
	err = silo_fill_local_addrs(m->fd[SILO_MAP_LOCAL_ADDRS],
				    m->fd[SILO_MAP_LOCAL_BITS]);
	if (err)
		return err;
	return silo_sync_genid(m->fd[SILO_MAP_GENID],
			       m->fd[SILO_MAP_ROUTE_MTUS],
			       m->fd[SILO_MAP_SRC_CHECKED],
			       m->fd[SILO_MAP_DIRECT_SKIP], SILO_SYNC_ALL);
}

/* Pins map i of the loaded skel. */
static int pin_added(struct silo *s, struct silo_xdp *skel, unsigned int i,
		     int *fd)
{
	char path[PATH_MAX];

	*fd = dup(bpf_map__fd(
		bpf_object__find_map_by_name(skel->obj, silo_map_names[i])));
	if (*fd < 0)
		return -errno;
	silo_pin_path(s, path, sizeof(path), silo_map_names[i]);
	return bpf_obj_pin(*fd, path) ? -errno : 0;
}

/*
 * Pins of an earlier release of this layout lack the maps added since
 * (silo_map_added()): one load of this object, every other map reused,
 * makes them with BTF, and they are pinned. That release's programs do
 * not use them.
 */
static int maps_complete(struct silo *s, struct silo_maps *m)
{
	struct silo_xdp *skel = NULL;
	int tmpl_fd = -1, kind, err = 0;
	unsigned int i;
	__u32 size;

	for (i = 0; i < SILO_MAP_COUNT && m->fd[i] >= 0; i++)
		;
	if (i == SILO_MAP_COUNT)
		return 0;
	pr_info("the pins in %s are of an earlier release: adding the maps this one needs\n",
		s->pin_dir);
	skel = silo_xdp__open();
	kind = maps_cache_kind(m);
	if (!skel || kind < 0 || silo_maps_cache_size(m, &size)) {
		err = skel ? -ENOENT : -errno;
		goto out;
	}
	/* As they were made: a reused map must match its declaration. */
	bpf_map__set_max_entries(skel->maps.cpu_node,
				 libbpf_num_possible_cpus());
	bpf_map__set_max_entries(skel->maps.cpumap, libbpf_num_possible_cpus());
	err = size_inner_template(skel, size, kind, &tmpl_fd);
	if (!err)
		err = silo_maps_reuse(m, skel->obj);
	if (!err)
		err = silo_xdp__load(skel);
	for (i = 0; !err && i < SILO_MAP_COUNT; i++)
		if (m->fd[i] < 0)
			err = pin_added(s, skel, i, &m->fd[i]);
out:
	if (err)
		pr_err("cannot add this release's maps to the pins in %s: %s\n",
		       s->pin_dir, strerror(-err));
	if (tmpl_fd >= 0)
		close(tmpl_fd);
	silo_xdp__destroy(skel);
	return err;
}

/* Existing maps: refused (closed) when not the size or kind asked for. */
static int maps_as_asked(struct silo_maps *m, __u32 cache_size,
			 enum silo_cache_kind kind)
{
	__u32 existing;

	if (cache_size && !silo_maps_cache_size(m, &existing) &&
	    existing != cache_size) {
		pr_err("the route caches hold %u entries per node; unload silo from every device to change that\n",
		       existing);
		silo_maps_close(m);
		return -EINVAL;
	}
	existing = maps_cache_kind(m);
	if (kind != SILO_CACHE_DEFAULT && existing != (__u32)kind &&
	    existing < ARRAY_SIZE(cache_kind_names)) {
		pr_err("the route caches are %s; unload silo from every device to change that\n",
		       cache_kind_names[existing]);
		silo_maps_close(m);
		return -EINVAL;
	}
	return 0;
}

int silo_maps_ensure(struct silo *s, struct silo_maps *m, __u32 cache_size,
		     enum silo_cache_kind kind, bool *created)
{
	struct silo_xdp *skel = NULL;
	int err, tmpl_fd = -1;
	bool stale = false;

	*created = false;
	err = silo_maps_open(s, m);
	if (!err) {
		err = silo_maps_frags(s, m);
		if (!err)
			err = maps_complete(s, m);
		if (err) {
			silo_maps_close(m);
			return err;
		}
		return maps_as_asked(m, cache_size, kind);
	}
	if (err == -ESTALE) {
		pr_warn("the pins in %s are of another silo version or a namespace that is gone: replacing them\n",
			s->pin_dir);
		stale = true;
	} else if (err != -ENOENT) {
		pr_err("cannot open the maps pinned in %s: %s\n", s->pin_dir,
		       strerror(-err));
		return err;
	}

	/* Loading the object makes every map, with BTF for bpftool. */
	skel = silo_xdp__open();
	if (!skel) {
		err = -errno;
		pr_err("cannot open silo's XDP object: %s\n", strerror(-err));
		return err;
	}
	/* One entry per possible CPU, so bpftool shows no padding. */
	bpf_map__set_max_entries(skel->maps.cpu_node,
				 libbpf_num_possible_cpus());
	/* The kernel takes no more than NR_CPUS, which may be below ours. */
	bpf_map__set_max_entries(skel->maps.cpumap, libbpf_num_possible_cpus());
	err = size_inner_template(
		skel, cache_size ? cache_size : SILO_ROUTE_CACHE_DEFAULT, kind,
		&tmpl_fd);
	if (err)
		goto out;
	err = silo_xdp__load(skel);
	if (err) {
		pr_err("the kernel refused silo's maps or program (%s): 'silo -d' shows libbpf's log and the verifier's\n",
		       strerror(-err));
		goto out;
	}
	err = init_fresh_maps(s, skel, m);
	if (err)
		goto out;
	if (stale)
		silo_maps_unpin(s);
	err = silo_maps_pin(s, m);
	if (err)
		goto out;
	*created = true;
out:
	if (err)
		silo_maps_close(m);
	if (tmpl_fd >= 0)
		close(tmpl_fd);
	silo_xdp__destroy(skel);
	return err;
}
