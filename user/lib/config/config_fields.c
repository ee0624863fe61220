// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* silo.conf's entries: the keys of a device, a service, a reuseport group
 * and a queue map, and each entry's own checks. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "config_yaml.h"

static int device_field(struct pctx *c, const char *key, yaml_node_t *v,
			void *obj)
{
	static const char *const modes[] = { "native", "skb", NULL };
	struct cfg_device *d = obj;
	bool cache = !d->load.no_cache;
	int mode, err;

	if (!strcmp(key, "name"))
		return y_ifname(c, v, key, d->name, sizeof(d->name));
	if (!strcmp(key, "match"))
		return y_str(c, v, key, d->match, sizeof(d->match));
	if (!strcmp(key, "forward"))
		return y_bool(c, v, key, &d->load.forward);
	if (!strcmp(key, "allow-firewall-bypass"))
		return y_bool(c, v, key, &d->load.allow_firewall_bypass);
	if (!strcmp(key, "forward-established"))
		return y_bool(c, v, key, &d->load.forward_established);
	if (!strcmp(key, "cache-size"))
		return y_u32(c, v, key, 1, SILO_ROUTE_CACHE_MAX,
			     &d->load.cache_size);
	if (!strcmp(key, "cache")) {
		err = y_bool(c, v, key, &cache);
		d->load.no_cache = !cache;
		return err;
	}
	if (!strcmp(key, "mode")) {
		err = y_choice(c, v, key, modes, &mode);
		d->load.mode = mode ? SILO_XDP_SKB : SILO_XDP_NATIVE;
		return err;
	}
	return -ENOENT;
}

static int service_field(struct pctx *c, const char *key, yaml_node_t *v,
			 void *obj)
{
	static const char *const modes[] = { "flow", "queue", "node", NULL };
	struct cfg_service *s = obj;
	const char *str;
	int i, err;
	__u32 x;

	if (!strcmp(key, "proto")) {
		err = y_proto(c, v, &i);
		s->opts.protocol = i;
		return err;
	}
	if (!strcmp(key, "port")) {
		err = y_u32(c, v, key, 1, 65535, &x);
		s->opts.port = x;
		return err;
	}
	if (!strcmp(key, "mode")) {
		err = y_choice(c, v, key, modes, &i);
		if (!err)
			i = silo_service_mode_parse(modes[i]);
		s->opts.mode = i;
		return err < 0 ? err : 0;
	}
	if (!strcmp(key, "queue-size"))
		return y_u32(c, v, key, 1, 1 << 20, &s->opts.qsize);
	if (!strcmp(key, "group")) {
		err = y_str(c, v, key, s->group, sizeof(s->group));
		if (!err && !silo_group_name_valid(s->group))
			return y_bad(c, v, "group: '%s' is not a group name",
				     s->group);
		s->opts.group = s->group;
		return err;
	}
	str = y_scalar(c, v, key);
	if (!str)
		return -EINVAL;
	if (!strcmp(key, "cpus")) {
		if (silo_cpulist_parse(str, s->opts.cpus))
			return y_bad(c, v,
				     "cpus: '%s' is not a CPU list (0-3,8)",
				     str);
		return 0;
	}
	if (!strcmp(key, "addr")) {
		memset(s->opts.addr, 0, sizeof(s->opts.addr));
		if (inet_pton(AF_INET, str, s->opts.addr) == 1) {
			s->opts.family = SILO_AF_INET;
		} else if (inet_pton(AF_INET6, str, s->opts.addr) == 1) {
			s->opts.family = SILO_AF_INET6;
		} else if (strcmp(str, "any")) {
			return y_bad(c, v, "addr: '%s' is not an address", str);
		}
		return 0;
	}
	return -ENOENT;
}

static int processes_field(struct pctx *c, const char *key, yaml_node_t *v,
			   void *obj)
{
	static const char *const bys[] = { "pidfile", "exe", "unit", "cgroup",
					   NULL };
	struct cfg_group *g = obj;
	int i;

	for (i = 0; bys[i]; i++)
		if (!strcmp(key, bys[i]))
			break;
	if (!strcmp(key, "pid"))
		return y_bad(
			c, v,
			"processes: never a pid, which a restart changes: a pidfile, exe, unit or cgroup");
	if (!bys[i])
		return -ENOENT;
	if (g->what[0])
		return y_bad(c, v,
			     "processes: one of pidfile, exe, unit, cgroup");
	g->by = i;
	return y_str(c, v, key, g->what, sizeof(g->what));
}

static int group_field(struct pctx *c, const char *key, yaml_node_t *v,
		       void *obj)
{
	static const char *const policies[] = { "cpu", "node", "queue", "hash",
						NULL };
	struct cfg_group *g = obj;
	int i, err;
	__u32 x;

	if (!strcmp(key, "name")) {
		err = y_str(c, v, key, g->name, sizeof(g->name));
		if (!err && !silo_group_name_valid(g->name))
			return y_bad(c, v, "name: '%s' is not a group name",
				     g->name);
		g->opts.name = g->name;
		return err;
	}
	if (!strcmp(key, "port")) {
		err = y_u32(c, v, key, 1, 65535, &x);
		g->opts.port = x;
		return err;
	}
	if (!strcmp(key, "proto"))
		return y_proto(c, v, &g->opts.protocol);
	if (!strcmp(key, "no-migrate"))
		return y_bool(c, v, key, &g->opts.no_migrate);
	if (!strcmp(key, "policy")) {
		err = y_choice(c, v, key, policies, &i);
		if (!err)
			i = silo_reuseport_policy_parse(policies[i]);
		g->opts.policy = i;
		return err ? err : (i < 0 ? i : 0);
	}
	if (!strcmp(key, "processes"))
		return y_each(c, v, "processes", processes_field, g);
	return -ENOENT;
}

static int queues_field(struct pctx *c, const char *key, yaml_node_t *v,
			void *obj)
{
	struct cfg_queue_map *q = obj;
	unsigned long queue;
	const char *str;
	char *end;
	__u32 cpu;
	int err;

	errno = 0;
	queue = strtoul(key, &end, 10);
	if (!key[0] || *end || errno || key[0] == '-' ||
	    queue >= SILO_MAX_QUEUES)
		return y_bad(c, v, "queues: '%s' is not an RX queue (0 to %u)",
			     key, SILO_MAX_QUEUES - 1);
	str = y_scalar(c, v, key);
	if (!str)
		return -EINVAL;
	if (!strcmp(str, "none")) {
		cpu = SILO_SERVICE_NO_CPU;
	} else {
		err = y_u32(c, v, "queues", 0, silo_nr_cpus() - 1, &cpu);
		if (err)
			return err;
	}
	if (q->set[queue])
		return y_bad(c, v, "queues: queue %lu twice", queue);
	q->set[queue] = true;
	q->cpu[queue] = cpu;
	if (queue >= q->nr)
		q->nr = queue + 1;
	return 0;
}

static int qmap_field(struct pctx *c, const char *key, yaml_node_t *v,
		      void *obj)
{
	struct cfg_queue_map *q = obj;

	if (!strcmp(key, "device"))
		return y_ifname(c, v, key, q->dev, sizeof(q->dev));
	if (!strcmp(key, "queues"))
		return y_each(c, v, "queues", queues_field, q);
	return -ENOENT;
}

/* Each entry's own checks, once its fields are read. */
static int device_check(struct pctx *c, yaml_node_t *n, void *obj)
{
	struct cfg_device *d = obj;

	if (!d->name[0] == !d->match[0])
		return y_bad(c, n,
			     "a device needs a name or a match, one of them");
	if (d->load.allow_firewall_bypass && !d->load.forward)
		return y_bad(c, n, "allow-firewall-bypass needs forward: true");
	if (d->load.forward_established && !d->load.forward)
		return y_bad(c, n, "forward-established needs forward: true");
	if (d->match[0] && strpbrk(d->match, "/: \t\n\v\f\r"))
		return y_bad(
			c, n,
			"match: a device name pattern has no '/', ':' or space");
	return 0;
}

static int service_check(struct pctx *c, yaml_node_t *n, void *obj)
{
	struct cfg_service *s = obj;
	bool cpus = false;
	size_t i;

	for (i = 0; i < SILO_CPU_WORDS; i++)
		cpus |= s->opts.cpus[i] != 0;
	if (!s->opts.protocol || !s->opts.port)
		return y_bad(c, n, "a service needs proto and port");
	if (!s->opts.group == !cpus)
		return y_bad(c, n,
			     "a service needs cpus or group, one of them");
	return 0;
}

static int group_check(struct pctx *c, yaml_node_t *n, void *obj)
{
	struct cfg_group *g = obj;

	if (!g->opts.port)
		return y_bad(c, n, "a reuseport group needs a port");
	if (!g->what[0])
		return y_bad(
			c, n,
			"a reuseport group needs processes: pidfile, exe, unit or cgroup (never a pid: it does not outlive a restart)");
	if (g->by == CFG_BY_EXE && g->what[0] != '/')
		return y_bad(c, n, "processes: exe is an absolute path");
	return 0;
}

static int qmap_check(struct pctx *c, yaml_node_t *n, void *obj)
{
	struct cfg_queue_map *q = obj;

	if (!q->dev[0] || !q->nr)
		return y_bad(c, n, "a queue map needs a device and its queues");
	return 0;
}

static void qmap_init(void *obj)
{
	struct cfg_queue_map *q = obj;
	__u32 i;

	for (i = 0; i < SILO_MAX_QUEUES; i++)
		q->cpu[i] = SILO_SERVICE_NO_CPU;
}

const struct kind cfg_kind_devices = {
	"a device",
	sizeof(struct cfg_device),
	offsetof(struct cfg_device, line),
	device_field,
	device_check,
	NULL,
};
const struct kind cfg_kind_services = {
	"a service",
	sizeof(struct cfg_service),
	offsetof(struct cfg_service, line),
	service_field,
	service_check,
	NULL,
};
const struct kind cfg_kind_groups = {
	"a reuseport group",
	sizeof(struct cfg_group),
	offsetof(struct cfg_group, line),
	group_field,
	group_check,
	NULL,
};
const struct kind cfg_kind_qmaps = {
	"a queue map",
	sizeof(struct cfg_queue_map),
	offsetof(struct cfg_queue_map, line),
	qmap_field,
	qmap_check,
	qmap_init,
};

/* A list of k's entries into *arr (calloc'ed), *nr of them. */
