// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The services and RX queue maps of a plan. A service declared with any
 * address is two keys (IPv4 and IPv6), made and compared together; an
 * update replaces it in place (slots move only as far as its CPUs do).
 * A queue map is owned queue by queue ("eth0 3"): a queue the file no
 * longer names is set to none, one it never named is left alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include "config.h"

struct running {
	struct silo_service_key *keys;
	struct silo_service *svcs;
	size_t n;
};

static int collect(const struct silo_service_key *key,
		   const struct silo_service *svc, void *ctx)
{
	struct running *r = ctx;
	struct silo_service_key *k;
	struct silo_service *s;

	k = realloc(r->keys, (r->n + 1) * sizeof(*k));
	if (k)
		r->keys = k;
	s = realloc(r->svcs, (r->n + 1) * sizeof(*s));
	if (s)
		r->svcs = s;
	if (!k || !s)
		return -ENOMEM;
	r->keys[r->n] = *key;
	r->svcs[r->n++] = *svc;
	return 0;
}

/* The running service of o's key and family f; NULL: none. */
static const struct silo_service *
find(const struct running *r, const struct silo_service_opts *o, __u8 f)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->keys[i].family == f &&
		    r->keys[i].protocol == o->protocol &&
		    ntohs(r->keys[i].port) == o->port &&
		    !memcmp(r->keys[i].addr, o->addr, 16))
			return &r->svcs[i];
	return NULL;
}

static bool same(const struct silo_service *svc,
		 const struct silo_service_opts *o)
{
	__u32 qsize = o->qsize ?: SILO_CPUMAP_QSIZE_DEFAULT;

	if (svc->mode != o->mode || svc->qsize != qsize)
		return false;
	if (o->group)
		return (svc->flags & SILO_SERVICE_F_GROUP) &&
		       !strcmp(svc->group, o->group);
	return !(svc->flags & SILO_SERVICE_F_GROUP) &&
	       !memcmp(svc->cpus, o->cpus, sizeof(svc->cpus));
}

static void svc_str(char *buf, size_t len, const struct silo_service_opts *o)
{
	char cpus[128];

	cfg_cpus_str(cpus, sizeof(cpus), o->cpus);
	snprintf(buf, len, "%s %s, mode %s", o->group ? "group" : "cpus",
		 o->group ? o->group : cpus, silo_service_mode_name(o->mode));
}

static void one_service(struct plan *p, const struct cfg_service *cs,
			const struct running *r)
{
	struct silo_service_opts o = cs->opts;
	const struct silo_service *a, *b = NULL;
	enum silo_change_op op = SILO_CHANGE_ADD;
	struct silo_change *c;
	char name[CFG_NAME_MAX];

	cfg_service_name(name, sizeof(name), &o);
	a = find(r, &o, o.family ?: SILO_AF_INET);
	if (!o.family)
		b = find(r, &o, SILO_AF_INET6);
	if (a && (o.family || b) && same(a, &o) && (!b || same(b, &o))) {
		if (!cfg_owned_has(&p->old, CFG_SERVICE, name)) {
			c = plan_add(p, SILO_CHANGE_ADOPT, "service", cs->line,
				     "%s", name);
			svc_str(c->detail, sizeof(c->detail), &o);
		}
		cfg_owned_add(&p->now, CFG_SERVICE, name);
		return;
	}
	/* Its group not made yet (no process of it runs): the service waits,
	 * still the file's if it was; the apply that makes the group adds it
	 * (silod's group poll included: silo_apply()). */
	if (o.group && !plan_group_made(p, o.group)) {
		c = plan_add(p, SILO_CHANGE_WAIT, "service", cs->line, "%s",
			     name);
		snprintf(c->detail, sizeof(c->detail),
			 "no reuseport group %s yet", o.group);
		if (cfg_owned_has(&p->old, CFG_SERVICE, name))
			cfg_owned_add(&p->now, CFG_SERVICE, name);
		return;
	}
	if (a || b) {
		op = SILO_CHANGE_UPDATE;
		o.replace = true;
	}
	c = plan_add(p, op, "service", cs->line, "%s", name);
	svc_str(c->detail, sizeof(c->detail), &o);
	if (!p->opts->dry_run)
		plan_done(p, c, silo_service_add(p->s, &o));
	/* A failed replace leaves the service as it was: still the file's if
	 * it was. */
	if (!c->err || ((a || b) && cfg_owned_has(&p->old, CFG_SERVICE, name)))
		cfg_owned_add(&p->now, CFG_SERVICE, name);
}

/* "udp 5300 any" back into a key; -EINVAL for a name not apply's. */
static int parse_name(const char *name, struct silo_service_opts *o)
{
	char proto[8], addr[INET6_ADDRSTRLEN];
	unsigned int port;

	memset(o, 0, sizeof(*o));
	if (sscanf(name, "%7s %u %45s", proto, &port, addr) != 3 || !port ||
	    port > 65535)
		return -EINVAL;
	o->protocol = !strcmp(proto, "tcp") ? IPPROTO_TCP : IPPROTO_UDP;
	o->port = port;
	if (inet_pton(AF_INET, addr, o->addr) == 1)
		o->family = SILO_AF_INET;
	else if (inet_pton(AF_INET6, addr, o->addr) == 1)
		o->family = SILO_AF_INET6;
	else if (strcmp(addr, "any"))
		return -EINVAL;
	return 0;
}

/* An earlier apply's service the file no longer declares, when it runs. */
static int remove_service(struct plan *p, const char *name, bool undo,
			  void *ctx)
{
	const struct running *r = ctx;
	struct silo_service_opts o;

	if (parse_name(name, &o))
		return 0;
	if (undo)
		return silo_service_del(p->s, &o);
	return find(r, &o, o.family ?: SILO_AF_INET) ||
	       (!o.family && find(r, &o, SILO_AF_INET6));
}

int plan_services(struct plan *p, bool remove)
{
	struct running r = { 0 };
	size_t i;
	int err;

	err = cfg_loaded(p->s) ? silo_service_foreach(p->s, collect, &r) : 0;
	if (err)
		goto out;
	if (remove)
		plan_remove_unclaimed(p, CFG_SERVICE, "service",
				      "stop steering", remove_service, &r);
	else
		for (i = 0; i < p->ns->nr_svcs; i++)
			one_service(p, &p->ns->svcs[i], &r);
out:
	free(r.keys);
	free(r.svcs);
	return err;
}
