// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Services: which local packets the XDP program steers to which CPU. The
 * services map, each service's slot tables (all CPUs, and per node), the
 * queue_cpu map and the cpumap entries of the CPUs some service uses.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../pins.h"
#include "svc.h"

/* Group changes from several processes take turns, as reuseport's do. */
static int svc_lock(const struct silo *s, int tries_max)
{
	int fd, tries;

	fd = open(s->pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (tries = 0; flock(fd, LOCK_EX | LOCK_NB); tries++) {
		if (errno == EWOULDBLOCK && !tries_max) {
			close(fd);
			return -EAGAIN;
		}
		if (errno != EWOULDBLOCK || tries >= tries_max) {
			pr_err("%s stayed locked for 5 s: another silo process is changing services or groups; try again\n",
			       s->pin_dir);
			close(fd);
			return -EBUSY;
		}
		usleep(10000);
	}
	return fd;
}

/* The CPUs of a reuseport group's occupied slots. */
static int group_cpus(struct silo *s, const char *name, __u64 *cpus)
{
	struct silo_group_slot *slots = NULL;
	struct silo_group_info info;
	struct silo_group *g;
	__u32 i;
	int err;

	memset(cpus, 0, SILO_CPU_WORDS * sizeof(*cpus));
	err = silo_group_open(s, name, &g);
	if (err)
		return err;
	err = silo_group_info(g, &info);
	if (err)
		goto out;
	slots = calloc(info.group.nr_slots ? info.group.nr_slots : 1,
		       sizeof(*slots));
	if (!slots) {
		err = -ENOMEM;
		goto out;
	}
	err = silo_group_slots(g, slots);
	for (i = 0; !err && i < info.group.nr_slots && i < SILO_MAX_CPUS; i++)
		if (slots[i].cookie)
			cpus[i / 64] |= 1ULL << (i % 64);
out:
	free(slots);
	silo_group_close(g);
	return err;
}

/*
 * Rebuilds the per-node tables of svc from the old ones, by cpu_node as it
 * is now (silod may fake a topology): a node without a CPU of the service
 * has no table.
 */
static int write_node_tables(const struct silo_maps *m,
			     const struct silo_service *svc)
{
	__u32 nr_cpus = silo_nr_cpus(), cpu, node, *node_of;
	struct silo_service_node_key k = { .id = svc->id };
	struct silo_service_node sn;
	__u64 *on_node;
	int err = 0, n;

	on_node = calloc(SILO_CPU_WORDS, sizeof(*on_node));
	node_of = calloc(nr_cpus, sizeof(*node_of));
	if (!on_node || !node_of) {
		err = -ENOMEM;
		goto out;
	}
	for (cpu = 0; cpu < nr_cpus; cpu++)
		bpf_map_lookup_elem(m->fd[SILO_MAP_CPU_NODE], &cpu,
				    &node_of[cpu]);
	for (node = 0; node < SILO_MAX_NODES && !err; node++) {
		memset(on_node, 0, SILO_CPU_WORDS * sizeof(*on_node));
		for (cpu = 0; cpu < nr_cpus && cpu < SILO_MAX_CPUS; cpu++)
			if (silo_svc_cpu_isset(svc->cpus, cpu) &&
			    node_of[cpu] == node)
				on_node[cpu / 64] |= 1ULL << (cpu % 64);
		k.node = node;
		if (bpf_map_lookup_elem(m->fd[SILO_MAP_SERVICE_NODES], &k, &sn))
			memset(&sn, 0xFF, sizeof(sn));
		n = silo_service_slots_build(sn.slots, on_node);
		if (n < 0) {
			err = n;
			break;
		}
		if (!n) {
			bpf_map_delete_elem(m->fd[SILO_MAP_SERVICE_NODES], &k);
			continue;
		}
		sn.nr_cpus = n;
		sn.pad = 0;
		if (bpf_map_update_elem(m->fd[SILO_MAP_SERVICE_NODES], &k, &sn,
					BPF_ANY))
			err = -errno;
	}
out:
	free(node_of);
	free(on_node);
	return err;
}

/*
 * cpumap entries for exactly the CPUs of some service, each with the
 * largest queue size those services ask for. An entry is rewritten only
 * when its size changes: a rewrite replaces the CPU's kthread and queue.
 */
static int sync_cpumap(const struct silo_maps *m)
{
	struct silo_service_key k, next, *prev = NULL;
	struct silo_service svc;
	struct bpf_cpumap_val val, cur;
	__u32 nr_cpus = silo_nr_cpus(), cpu, *qsize;
	int err = 0;

	qsize = calloc(nr_cpus, sizeof(*qsize));
	if (!qsize)
		return -ENOMEM;
	while (!bpf_map_get_next_key(m->fd[SILO_MAP_SERVICES], prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(m->fd[SILO_MAP_SERVICES], &k, &svc))
			continue;
		for (cpu = 0; cpu < nr_cpus; cpu++)
			if (silo_svc_cpu_isset(svc.cpus, cpu) &&
			    svc.qsize > qsize[cpu])
				qsize[cpu] = svc.qsize;
	}
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		bool has = !bpf_map_lookup_elem(m->fd[SILO_MAP_CPUMAP], &cpu,
						&cur);

		if (!qsize[cpu]) {
			if (has)
				bpf_map_delete_elem(m->fd[SILO_MAP_CPUMAP],
						    &cpu);
			continue;
		}
		if (has && cur.qsize == qsize[cpu])
			continue;
		memset(&val, 0, sizeof(val));
		val.qsize = qsize[cpu];
		if (bpf_map_update_elem(m->fd[SILO_MAP_CPUMAP], &cpu, &val,
					BPF_ANY)) {
			err = -errno;
			pr_err("cannot add CPU %u to the cpumap (queue size %u): %s\n",
			       cpu, val.qsize, strerror(-err));
		}
	}
	free(qsize);
	return err;
}

/* Writes svc under the key(s) of opts' family: both for "any" without
 * one. */
static int keys_of(const struct silo_service_opts *o,
		   struct silo_service_key keys[2])
{
	static const __u8 zero[16];
	int n = 0;

	memset(keys, 0, 2 * sizeof(*keys));
	if (o->family != SILO_AF_INET6) {
		if (!o->family && memcmp(o->addr, zero, 16))
			return -EINVAL;
		keys[n].family = SILO_AF_INET;
		n++;
	}
	if (o->family != SILO_AF_INET) {
		keys[n].family = SILO_AF_INET6;
		n++;
	}
	for (int i = 0; i < n; i++) {
		keys[i].protocol = o->protocol;
		keys[i].port = htons(o->port);
		memcpy(keys[i].addr, o->addr, 16);
	}
	return n;
}

static int free_id(const struct silo_maps *m, __u32 *id)
{
	unsigned char used[SILO_MAX_SERVICES] = { 1 };
	struct silo_service_key k, next, *prev = NULL;
	struct silo_service svc;
	__u32 i;

	while (!bpf_map_get_next_key(m->fd[SILO_MAP_SERVICES], prev, &next)) {
		k = next;
		prev = &k;
		if (!bpf_map_lookup_elem(m->fd[SILO_MAP_SERVICES], &k, &svc) &&
		    svc.id < SILO_MAX_SERVICES)
			used[svc.id] = 1;
	}
	for (i = 1; i < SILO_MAX_SERVICES; i++)
		if (!used[i]) {
			*id = i;
			return 0;
		}
	pr_err("%d services exist already: delete one first\n",
	       SILO_MAX_SERVICES - 1);
	return -ENOSPC;
}

static void zero_stats(const struct silo_maps *m, __u32 id)
{
	int ncpus = silo_nr_cpus();
	struct silo_service_stats *z = calloc(ncpus, sizeof(*z));

	if (z)
		bpf_map_update_elem(m->fd[SILO_MAP_SERVICE_STATS], &id, z,
				    BPF_ANY);
	free(z);
}

/* Writes a service's new CPU set: slots rebuilt from the old table. */
static int service_write(const struct silo_maps *m,
			 const struct silo_service_key *keys, int nkeys,
			 struct silo_service *svc, const __u64 *cpus)
{
	int n, i;

	memcpy(svc->cpus, cpus, sizeof(svc->cpus));
	n = silo_service_slots_build(svc->slots, svc->cpus);
	if (n < 0)
		return n;
	svc->nr_cpus = n;
	n = write_node_tables(m, svc);
	if (n)
		return n;
	for (i = 0; i < nkeys; i++)
		if (bpf_map_update_elem(m->fd[SILO_MAP_SERVICES], &keys[i], svc,
					BPF_ANY))
			return -errno;
	return 0;
}

static int check_cpus(const __u64 *cpus)
{
	__u32 cpu, nr = silo_nr_cpus();

	for (cpu = nr; cpu < SILO_MAX_CPUS; cpu++)
		if (silo_svc_cpu_isset(cpus, cpu)) {
			pr_err("CPU %u does not exist here (CPUs 0-%u)\n", cpu,
			       nr - 1);
			return -EINVAL;
		}
	return 0;
}

/* What opts asks for, checked (said why not): its keys (the count is
 * returned) and the CPUs it spreads over, the group's or its own. */
static int service_opts_check(struct silo *s,
			      const struct silo_service_opts *opts,
			      struct silo_service_key *keys, __u64 *cpus)
{
	int nkeys, err;

	if (opts->protocol != IPPROTO_UDP && opts->protocol != IPPROTO_TCP) {
		pr_err("a service is UDP or TCP\n");
		return -EINVAL;
	}
	if (!opts->port || (unsigned int)opts->mode >= SILO_SERVICE_MODE_MAX) {
		pr_err("a service needs a port and a mode (flow, queue, node)\n");
		return -EINVAL;
	}
	if (opts->group && (!opts->group[0] ||
			    strlen(opts->group) >= SILO_REUSEPORT_NAME_MAX)) {
		pr_err("bad group name '%s'\n", opts->group);
		return -EINVAL;
	}
	nkeys = keys_of(opts, keys);
	if (nkeys < 0) {
		pr_err("an address needs its family\n");
		return nkeys;
	}
	if (opts->group) {
		err = group_cpus(s, opts->group, cpus);
		if (err) /* silo_group_open said why */
			return err;
	} else {
		memcpy(cpus, opts->cpus, SILO_CPU_WORDS * sizeof(*cpus));
		err = check_cpus(cpus);
		if (err)
			return err;
	}
	return nkeys;
}

int silo_service_add(struct silo *s, const struct silo_service_opts *opts)
{
	struct silo_service_key keys[2];
	struct silo_service svc = {}, old;
	struct silo_maps m;
	__u64 cpus[SILO_CPU_WORDS];
	bool exists = false;
	int nkeys, i, err, lock;

	nkeys = service_opts_check(s, opts, keys, cpus);
	if (nkeys < 0)
		return nkeys;
	err = silo_svc_maps_open(s, &m);
	if (err)
		return err;
	lock = svc_lock(s, 500);
	if (lock < 0) {
		err = lock;
		goto out_maps;
	}
	for (i = 0; i < nkeys; i++)
		if (!bpf_map_lookup_elem(m.fd[SILO_MAP_SERVICES], &keys[i],
					 &old)) {
			exists = true;
			svc = old;
		}
	if (exists && !opts->replace) {
		pr_err("a service on that protocol, address and port exists: add --replace to change it, or delete it first\n");
		err = -EEXIST;
		goto out_unlock;
	}
	if (!exists) {
		err = free_id(&m, &svc.id);
		if (err)
			goto out_unlock;
		for (i = 0; i < SILO_SERVICE_SLOTS; i++)
			svc.slots[i] = SILO_SERVICE_NO_CPU;
		zero_stats(&m, svc.id);
	}
	svc.mode = opts->mode;
	svc.qsize = opts->qsize ? opts->qsize : SILO_CPUMAP_QSIZE_DEFAULT;
	svc.flags = opts->group ? SILO_SERVICE_F_GROUP : 0;
	memset(svc.group, 0, sizeof(svc.group));
	if (opts->group)
		snprintf(svc.group, sizeof(svc.group), "%s", opts->group);
	err = service_write(&m, keys, nkeys, &svc, cpus);
	/* A target without a cpumap entry is passed until it has one. */
	if (!err)
		err = sync_cpumap(&m);
	if (err) {
		pr_err("cannot write the service: %s\n", strerror(-err));
		if (!exists)
			for (i = 0; i < nkeys; i++)
				bpf_map_delete_elem(m.fd[SILO_MAP_SERVICES],
						    &keys[i]);
		sync_cpumap(&m);
	}
out_unlock:
	close(lock);
out_maps:
	silo_maps_close(&m);
	/* After the lock: queue_map_defaults takes the maps of its own. */
	if (!err && opts->mode == SILO_SERVICE_QUEUE)
		silo_svc_queue_map_defaults(s);
	return err;
}

int silo_service_del(struct silo *s, const struct silo_service_opts *opts)
{
	struct silo_service_key keys[2];
	struct silo_service svc;
	struct silo_service_node_key nk;
	struct silo_maps m;
	int nkeys, i, err, lock, found = 0;

	nkeys = keys_of(opts, keys);
	if (nkeys < 0) {
		pr_err("an address needs its family\n");
		return nkeys;
	}
	err = silo_svc_maps_open(s, &m);
	if (err)
		return err;
	lock = svc_lock(s, 500);
	if (lock < 0) {
		err = lock;
		goto out_maps;
	}
	for (i = 0; i < nkeys; i++) {
		if (bpf_map_lookup_elem(m.fd[SILO_MAP_SERVICES], &keys[i],
					&svc))
			continue;
		bpf_map_delete_elem(m.fd[SILO_MAP_SERVICES], &keys[i]);
		found++;
		nk.id = svc.id;
		for (nk.node = 0; nk.node < SILO_MAX_NODES; nk.node++)
			bpf_map_delete_elem(m.fd[SILO_MAP_SERVICE_NODES], &nk);
	}
	if (!found) {
		pr_err("no such service: see 'silo service show'\n");
		err = -ENOENT;
	} else {
		err = sync_cpumap(&m);
	}
	close(lock);
out_maps:
	silo_maps_close(&m);
	return err;
}

struct svc_entry {
	struct silo_service_key key;
	struct silo_service svc;
};

static int by_id(const void *a, const void *b)
{
	const struct svc_entry *x = a, *y = b;

	if (x->svc.id != y->svc.id)
		return x->svc.id < y->svc.id ? -1 : 1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

static int read_services(const struct silo_maps *m, struct svc_entry **out,
			 size_t *n)
{
	struct silo_service_key k, next, *prev = NULL;
	struct svc_entry *list = NULL, *p;
	size_t cnt = 0;

	while (!bpf_map_get_next_key(m->fd[SILO_MAP_SERVICES], prev, &next)) {
		k = next;
		prev = &k;
		p = realloc(list, (cnt + 1) * sizeof(*list));
		if (!p) {
			free(list);
			return -ENOMEM;
		}
		list = p;
		list[cnt].key = k;
		if (bpf_map_lookup_elem(m->fd[SILO_MAP_SERVICES], &k,
					&list[cnt].svc))
			continue; /* deleted meanwhile */
		cnt++;
	}
	if (cnt)
		qsort(list, cnt, sizeof(*list), by_id);
	*out = list;
	*n = cnt;
	return 0;
}

int silo_service_foreach(struct silo *s, silo_service_fn fn, void *ctx)
{
	struct svc_entry *list;
	struct silo_maps m;
	size_t n, i;
	int err;

	err = silo_svc_maps_open(s, &m);
	if (err)
		return err;
	err = read_services(&m, &list, &n);
	silo_maps_close(&m);
	for (i = 0; !err && i < n; i++)
		err = fn(&list[i].key, &list[i].svc, ctx);
	free(list);
	return err;
}

int silo_service_stats(struct silo *s, __u32 id,
		       struct silo_service_stats *stats)
{
	struct silo_maps m;
	int err;

	err = silo_svc_maps_open(s, &m);
	if (err)
		return err;
	if (bpf_map_lookup_elem(m.fd[SILO_MAP_SERVICE_STATS], &id, stats))
		err = -errno;
	silo_maps_close(&m);
	return err;
}

static int group_name_cb(struct silo_group *g, void *ctx)
{
	const char *want = ctx;

	return !strcmp(silo_group_name(g), want);
}

/* Whether group name exists, without a message when it does not. */
static bool group_exists(struct silo *s, const char *name)
{
	return silo_group_foreach(s, group_name_cb, (void *)name) == 1;
}

static int service_sync(struct silo *s, int lock_tries)
{
	struct svc_entry *list = NULL;
	__u64 cpus[SILO_CPU_WORDS];
	struct silo_maps m;
	size_t n, i;
	int err, lock, changed = 0;

	err = silo_maps_open(s, &m);
	if (err)
		return err == -ENOENT ? 0 : err;
	lock = svc_lock(s, lock_tries);
	if (lock < 0) {
		err = lock;
		goto out_maps;
	}
	err = read_services(&m, &list, &n);
	for (i = 0; !err && i < n; i++) {
		struct silo_service *svc = &list[i].svc;

		if (!(svc->flags & SILO_SERVICE_F_GROUP))
			continue;
		/* A group that is gone leaves the service no CPU: passed. */
		if (!group_exists(s, svc->group) ||
		    group_cpus(s, svc->group, cpus))
			memset(cpus, 0, sizeof(cpus));
		if (!memcmp(cpus, svc->cpus, sizeof(cpus)))
			continue;
		err = service_write(&m, &list[i].key, 1, svc, cpus);
		changed++;
	}
	if (!err)
		err = sync_cpumap(&m);
	close(lock);
out_maps:
	free(list);
	silo_maps_close(&m);
	return err ? err : changed;
}

int silo_service_sync(struct silo *s)
{
	return service_sync(s, 500);
}

int silo_service_sync_try(struct silo *s)
{
	return service_sync(s, 0);
}
