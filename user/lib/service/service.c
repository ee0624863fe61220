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
#include "../service.h"

static bool cpu_isset(const __u64 *cpus, __u32 cpu)
{
	return cpu < SILO_MAX_CPUS && (cpus[cpu / 64] >> (cpu % 64)) & 1;
}

struct share {
	__u32 cpu;
	__u32 count; /* slots it holds */
	__u32 quota;
	__u32 order;
};

static int by_count_desc(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_cpu(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/*
 * Rebuilds slots[] (the old table in, SILO_SERVICE_NO_CPU for none) over
 * the CPUs in cpus[], each holding SILO_SERVICE_SLOTS / N slots or one
 * more, and moving as few slots as that allows: a CPU that leaves gives
 * up only its slots, one that joins takes only its share, from the CPUs
 * that hold most. Returns the number of CPUs, or -errno.
 */
int silo_service_slots_build(__u16 *slots, const __u64 *cpus)
{
	struct share *sh;
	int *idx_of;
	__u32 n = 0, i, j, cpu, base, extra;

	idx_of = malloc(SILO_MAX_CPUS * sizeof(*idx_of));
	sh = calloc(SILO_MAX_CPUS, sizeof(*sh));
	if (!idx_of || !sh) {
		free(idx_of);
		free(sh);
		return -ENOMEM;
	}
	for (cpu = 0; cpu < SILO_MAX_CPUS; cpu++) {
		idx_of[cpu] = -1;
		if (cpu_isset(cpus, cpu) && cpu < SILO_SERVICE_NO_CPU) {
			idx_of[cpu] = n;
			sh[n].cpu = cpu;
			sh[n].order = n;
			n++;
		}
	}
	if (!n) {
		for (i = 0; i < SILO_SERVICE_SLOTS; i++)
			slots[i] = SILO_SERVICE_NO_CPU;
		goto out;
	}
	/* Slots of CPUs that left are free; count the others' shares. */
	for (i = 0; i < SILO_SERVICE_SLOTS; i++) {
		if (slots[i] >= SILO_MAX_CPUS || idx_of[slots[i]] < 0)
			slots[i] = SILO_SERVICE_NO_CPU;
		else
			sh[idx_of[slots[i]]].count++;
	}
	/* The one-more shares go to those that hold most already. */
	base = SILO_SERVICE_SLOTS / n;
	extra = SILO_SERVICE_SLOTS % n;
	qsort(sh, n, sizeof(*sh), by_count_desc);
	for (i = 0; i < n; i++)
		sh[i].quota = base + (i < extra);
	qsort(sh, n, sizeof(*sh), by_cpu);
	/* Over quota: give up the excess. */
	for (i = 0; i < SILO_SERVICE_SLOTS; i++) {
		struct share *o;

		if (slots[i] == SILO_SERVICE_NO_CPU)
			continue;
		o = &sh[idx_of[slots[i]]];
		if (o->count > o->quota) {
			o->count--;
			slots[i] = SILO_SERVICE_NO_CPU;
		}
	}
	/* Free slots to those under quota. */
	for (i = 0, j = 0; i < SILO_SERVICE_SLOTS; i++) {
		if (slots[i] != SILO_SERVICE_NO_CPU)
			continue;
		while (j < n && sh[j].count >= sh[j].quota)
			j++;
		if (j == n)
			break; /* cannot happen: the quotas sum to the slots */
		slots[i] = sh[j].cpu;
		sh[j].count++;
	}
out:
	free(idx_of);
	free(sh);
	return n;
}

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

static int open_svc_maps(struct silo *s, struct silo_maps *m)
{
	int err = silo_maps_open(s, m);

	if (err == -ENOENT || err == -ESTALE)
		pr_err("silo is not loaded in this network namespace (no usable pins in %s): load it first with 'silo xdp load DEV'\n",
		       s->pin_dir);
	else if (err)
		pr_err("cannot open the maps in %s: %s\n", s->pin_dir,
		       strerror(-err));
	return err;
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
			if (cpu_isset(svc->cpus, cpu) && node_of[cpu] == node)
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
			if (cpu_isset(svc.cpus, cpu) && svc.qsize > qsize[cpu])
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
		if (cpu_isset(cpus, cpu)) {
			pr_err("CPU %u does not exist here (CPUs 0-%u)\n", cpu,
			       nr - 1);
			return -EINVAL;
		}
	return 0;
}

/*
 * Queue mode reads queue_cpu: a device silo runs on whose queues have no
 * CPU yet gets the default, its IRQs' affinity, so that a queue-mode
 * service steers from the start on a NIC. A device with no MSI IRQs (veth)
 * keeps none: its queues are passed until 'silo service queue-map' sets
 * them.
 */
static void queue_map_defaults(struct silo *s)
{
	struct silo_xdp_dev *devs = NULL;
	__u32 *cpus = calloc(SILO_MAX_QUEUES, sizeof(*cpus));
	size_t n = 0, i;
	__u32 q;
	int set;

	if (!cpus || silo_xdp_list(s, &devs, &n))
		goto out;
	for (i = 0; i < n; i++) {
		if (!devs[i].attached || !devs[i].ifname[0] ||
		    silo_queue_map_get(s, devs[i].ifindex, cpus,
				       SILO_MAX_QUEUES))
			continue;
		for (q = 0; q < SILO_MAX_QUEUES; q++)
			if (cpus[q] != SILO_SERVICE_NO_CPU)
				break;
		if (q < SILO_MAX_QUEUES) /* set already: kept */
			continue;
		set = 0;
		if (silo_irq_queue_cpus(devs[i].ifname, "", cpus,
					SILO_MAX_QUEUES) <= 0)
			continue; /* no MSI IRQs: a veth, say */
		for (q = 0; q < SILO_MAX_QUEUES; q++)
			if (cpus[q] != SILO_SERVICE_NO_CPU &&
			    !silo_queue_map_set(s, devs[i].ifindex, q, cpus[q]))
				set++;
		if (set > 0)
			pr_info("queue map of %s from its IRQs' affinity: %d queue%s\n",
				devs[i].ifname, set, set == 1 ? "" : "s");
	}
out:
	free(devs);
	free(cpus);
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
	err = open_svc_maps(s, &m);
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
		queue_map_defaults(s);
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
	err = open_svc_maps(s, &m);
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

	err = open_svc_maps(s, &m);
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

	err = open_svc_maps(s, &m);
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

int silo_queue_map_set(struct silo *s, __u32 ifindex, __u32 queue, __u32 cpu)
{
	struct silo_queue_key k = { .ifindex = ifindex, .queue = queue };
	struct silo_maps m;
	int err;

	if (cpu != SILO_SERVICE_NO_CPU && cpu >= (__u32)silo_nr_cpus()) {
		pr_err("CPU %u does not exist here (CPUs 0-%d)\n", cpu,
		       silo_nr_cpus() - 1);
		return -EINVAL;
	}
	err = open_svc_maps(s, &m);
	if (err)
		return err;
	if (cpu == SILO_SERVICE_NO_CPU) {
		if (bpf_map_delete_elem(m.fd[SILO_MAP_QUEUE_CPU], &k) &&
		    errno != ENOENT)
			err = -errno;
	} else if (bpf_map_update_elem(m.fd[SILO_MAP_QUEUE_CPU], &k, &cpu,
				       BPF_ANY)) {
		err = -errno;
		pr_err("cannot set queue %u: %s\n", queue, strerror(-err));
	}
	silo_maps_close(&m);
	return err;
}

int silo_queue_map_get(struct silo *s, __u32 ifindex, __u32 *cpus, __u32 n)
{
	struct silo_queue_key k = { .ifindex = ifindex };
	struct silo_maps m;
	int err;

	err = open_svc_maps(s, &m);
	if (err)
		return err;
	for (k.queue = 0; k.queue < n; k.queue++)
		if (bpf_map_lookup_elem(m.fd[SILO_MAP_QUEUE_CPU], &k,
					&cpus[k.queue]))
			cpus[k.queue] = SILO_SERVICE_NO_CPU;
	silo_maps_close(&m);
	return 0;
}

int silo_queue_map_default(struct silo *s, const char *ifname, const char *root)
{
	__u32 ifindex, q, *cpus;
	int set = 0, err = 0, found;

	ifindex = if_nametoindex(ifname);
	if (!ifindex) {
		pr_err("no device '%s' in this network namespace\n", ifname);
		return -ENODEV;
	}
	cpus = calloc(SILO_MAX_QUEUES, sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	found = silo_irq_queue_cpus(ifname, root, cpus, SILO_MAX_QUEUES);
	if (found == -ENOENT) {
		pr_err("%s has no MSI IRQs (a virtual device?): set its queues with 'silo service queue-map %s QUEUE=CPU ...'\n",
		       ifname, ifname);
		err = -ENOENT;
	} else if (found <= 0) {
		pr_err("no RX queue IRQ of %s found in /proc/interrupts: set its queues with 'silo service queue-map %s QUEUE=CPU ...'\n",
		       ifname, ifname);
		err = -ENOENT;
	}
	for (q = 0; !err && q < SILO_MAX_QUEUES; q++) {
		if (cpus[q] == SILO_SERVICE_NO_CPU)
			continue;
		err = silo_queue_map_set(s, ifindex, q, cpus[q]);
		if (!err)
			set++;
	}
	free(cpus);
	return err ? err : set;
}
