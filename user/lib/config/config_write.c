// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * silo_config_write(): what runs, as a silo.conf that apply takes back.
 * Names are quoted (YAML's double-quoted style) so that any device name
 * reads back as itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "config.h"

struct out {
	FILE *f;
	const char *ind; /* "" or "    " under netns: NAME: */
	int any; /* entries of the kind written: its header once */
};

/* s as a YAML double-quoted scalar. */
static void quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void write_devices(struct silo *s, struct out *o)
{
	struct silo_xdp_dev *devs;
	struct cfg_maps_view v = {};
	size_t n, i;

	if (silo_xdp_list(s, &devs, &n))
		return;
	/* The caches' size and the bypass are every device's: the size
	 * written where not the default, so that the file makes the caches
	 * it was read from; the bypass on each forwarding device. */
	if (n && !cfg_maps_view(s, &v) &&
	    v.cache_size == SILO_ROUTE_CACHE_DEFAULT)
		v.cache_size = 0;
	for (i = 0; i < n; i++) {
		if (!devs[i].attached)
			continue;
		if (!o->any++)
			fprintf(o->f, "%sdevices:\n", o->ind);
		fprintf(o->f, "%s  - name: ", o->ind);
		quoted(o->f, devs[i].ifname);
		fprintf(o->f, "\n%s    mode: %s\n", o->ind,
			devs[i].mode == SILO_XDP_SKB ? "skb" : "native");
		if (devs[i].forward)
			fprintf(o->f, "%s    forward: true\n", o->ind);
		if (devs[i].forward && v.bypass)
			fprintf(o->f, "%s    allow-firewall-bypass: true\n",
				o->ind);
		if (devs[i].forward && v.established)
			fprintf(o->f, "%s    forward-established: true\n",
				o->ind);
		if (!devs[i].cache)
			fprintf(o->f, "%s    cache: false\n", o->ind);
		if (v.cache_size)
			fprintf(o->f, "%s    cache-size: %u\n", o->ind,
				v.cache_size);
	}
	o->any = 0;
	free(devs);
}

struct svc_ctx {
	struct out *o;
	/* An IPv4 key with no address: "any" when its IPv6 twin (the same
	 * id) comes next, else "0.0.0.0". */
	struct silo_service_key pend_key;
	struct silo_service pend;
	bool pending;
};

static void print_service(struct out *o, const struct silo_service_key *k,
			  const struct silo_service *svc, bool any)
{
	char addr[INET6_ADDRSTRLEN], cpus[256];

	if (!o->any++)
		fprintf(o->f, "%sservices:\n", o->ind);
	fprintf(o->f, "%s  - proto: %s\n%s    port: %u\n", o->ind,
		k->protocol == IPPROTO_TCP ? "tcp" : "udp", o->ind,
		ntohs(k->port));
	if (!any) {
		inet_ntop(k->family == SILO_AF_INET ? AF_INET : AF_INET6,
			  k->addr, addr, sizeof(addr));
		fprintf(o->f, "%s    addr: \"%s\"\n", o->ind, addr);
	}
	if (svc->flags & SILO_SERVICE_F_GROUP) {
		fprintf(o->f, "%s    group: ", o->ind);
		quoted(o->f, svc->group);
		fputc('\n', o->f);
	} else {
		cfg_cpus_str(cpus, sizeof(cpus), svc->cpus);
		fprintf(o->f, "%s    cpus: \"%s\"\n", o->ind, cpus);
	}
	fprintf(o->f, "%s    mode: %s\n", o->ind,
		silo_service_mode_name(svc->mode));
	if (svc->qsize != SILO_CPUMAP_QSIZE_DEFAULT)
		fprintf(o->f, "%s    queue-size: %u\n", o->ind, svc->qsize);
}

static int write_service(const struct silo_service_key *k,
			 const struct silo_service *svc, void *ctx)
{
	static const __u8 zero[16];
	struct svc_ctx *x = ctx;
	bool twin;

	if (x->pending) {
		twin = k && k->family == SILO_AF_INET6 &&
		       svc->id == x->pend.id && !memcmp(k->addr, zero, 16);
		print_service(x->o, &x->pend_key, &x->pend, twin);
		x->pending = false;
		if (twin)
			return 0;
	}
	if (!k)
		return 0;
	if (k->family == SILO_AF_INET && !memcmp(k->addr, zero, 16)) {
		x->pend_key = *k;
		x->pend = *svc;
		x->pending = true;
		return 0;
	}
	print_service(x->o, k, svc, false);
	return 0;
}

static void write_services(struct silo *s, struct out *o)
{
	struct svc_ctx x = { .o = o };

	if (cfg_loaded(s) && !silo_service_foreach(s, write_service, &x))
		write_service(NULL, NULL, &x);
	o->any = 0;
}

struct group_ctx {
	struct out *o;
};

/* The executable of the first process that holds one of g's sockets. */
static bool group_exe(struct silo_group *g, __u32 nr_slots, char *exe,
		      size_t len)
{
	struct silo_group_slot *slots = calloc(nr_slots, sizeof(*slots));
	char path[64];
	ssize_t l = -1;
	__u32 i;

	if (slots && !silo_group_slots(g, slots)) {
		for (i = 0; i < nr_slots && l <= 0; i++) {
			if (!slots[i].cookie || !slots[i].placed.pid)
				continue;
			snprintf(path, sizeof(path), "/proc/%u/exe",
				 slots[i].placed.pid);
			l = readlink(path, exe, len - 1);
		}
	}
	free(slots);
	if (l <= 0)
		return false;
	exe[l] = '\0';
	return true;
}

static int write_group(struct silo_group *g, void *ctx)
{
	struct group_ctx *x = ctx;
	struct silo_group_info info;
	struct out *o = x->o;
	char exe[PATH_MAX];

	if (silo_group_info(g, &info))
		return 0;
	if (!o->any++)
		fprintf(o->f, "%sreuseport:\n", o->ind);
	fprintf(o->f, "%s  - name: ", o->ind);
	quoted(o->f, info.group.name);
	fprintf(o->f, "\n%s    port: %u\n%s    proto: %s\n%s    policy: %s\n",
		o->ind, info.key.port, o->ind,
		info.key.protocol == IPPROTO_TCP ? "tcp" : "udp", o->ind,
		silo_reuseport_policy_name(info.group.policy));
	if (info.key.protocol == IPPROTO_TCP &&
	    !(info.group.flags & SILO_REUSEPORT_F_MIGRATE))
		fprintf(o->f, "%s    no-migrate: true\n", o->ind);
	if (group_exe(g, info.group.nr_slots, exe, sizeof(exe))) {
		fprintf(o->f, "%s    processes:\n%s      exe: ", o->ind,
			o->ind);
		quoted(o->f, exe);
		fputc('\n', o->f);
	} else {
		fprintf(o->f,
			"%s    # processes: no socket's owner is running; say which pidfile, exe, unit or cgroup\n",
			o->ind);
	}
	return 0;
}

static void write_queues(struct silo *s, struct out *o)
{
	struct silo_xdp_dev *devs;
	__u32 *cpus, q;
	size_t n, i;
	bool head;

	cpus = calloc(SILO_MAX_QUEUES, sizeof(*cpus));
	if (!cpus || !cfg_loaded(s) || silo_xdp_list(s, &devs, &n)) {
		free(cpus);
		return;
	}
	for (i = 0; i < n; i++) {
		if (!devs[i].attached ||
		    silo_queue_map_get(s, devs[i].ifindex, cpus,
				       SILO_MAX_QUEUES))
			continue;
		for (q = 0, head = false; q < SILO_MAX_QUEUES; q++) {
			if (cpus[q] == SILO_SERVICE_NO_CPU)
				continue;
			if (!o->any++)
				fprintf(o->f, "%squeue-maps:\n", o->ind);
			if (!head) {
				fprintf(o->f, "%s  - device: ", o->ind);
				quoted(o->f, devs[i].ifname);
				fprintf(o->f, "\n%s    queues:\n", o->ind);
				head = true;
			}
			fprintf(o->f, "%s      %u: %u\n", o->ind, q, cpus[q]);
		}
	}
	o->any = 0;
	free(devs);
	free(cpus);
}

int silo_config_write(struct silo *s, const char *netns, FILE *f)
{
	struct out o = { .f = f, .ind = netns ? "    " : "" };
	struct group_ctx g = { .o = &o };

	fprintf(f,
		"# silo.conf(5): what runs%s%s, as 'silo show --config' wrote it\n",
		netns ? " in network namespace " : "", netns ? netns : "");
	if (netns) {
		fprintf(f, "netns:\n  ");
		quoted(f, netns);
		fprintf(f, ":\n");
	}
	write_devices(s, &o);
	write_services(s, &o);
	silo_group_foreach(s, write_group, &g);
	o.any = 0;
	write_queues(s, &o);
	return ferror(f) ? -EIO : 0;
}
