// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * route_mtus (include/silo/abi/route.h): every prefix with an unlocked
 * route MTU, holding the least MTU of it and of every prefix covering it,
 * written from a walk of the routes (silo_sync_genid).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <linux/rtnetlink.h>
#include "maps.h"
#include "nl.h"
#include "util.h"

/* Does prefix q (of its length) hold p's address? */
static bool covers(const struct silo_nl_route_mtu *q,
		   const struct silo_nl_route_mtu *p)
{
	unsigned int bits = q->len, i;

	if (q->family != p->family || q->len > p->len)
		return false;
	for (i = 0; i < bits / 8; i++)
		if (q->addr[i] != p->addr[i])
			return false;
	if (bits % 8 == 0)
		return true;
	return !((q->addr[i] ^ p->addr[i]) & (0xFF << (8 - bits % 8)));
}

static void key_of(const struct silo_nl_route_mtu *m,
		   struct silo_route_mtu_key *k)
{
	memset(k, 0, sizeof(*k));
	k->prefixlen = 8 + m->len;
	k->family = m->family;
	memcpy(k->addr, m->addr, sizeof(k->addr));
}

/* Is key (a struct silo_route_mtu_key) one of r's prefixes? */
static bool in_set(const void *key, void *ctx)
{
	const struct silo_nl_routes *r = ctx;
	struct silo_route_mtu_key mk;
	size_t i;

	for (i = 0; i < r->nr_mtus; i++) {
		key_of(&r->mtus[i], &mk);
		if (!memcmp(&mk, key, sizeof(mk)))
			return true;
	}
	return false;
}

/* Writes r's prefixes into fd, removes the others; *changed when any
 * prefix or value is not what the map held. */
int silo_route_mtus_write(int fd, const struct silo_nl_routes *r, bool *changed)
{
	struct silo_route_mtu_key k;
	__u32 least, old;
	size_t i, j;

	*changed = false;
	for (i = 0; i < r->nr_mtus; i++) {
		least = r->mtus[i].mtu;
		for (j = 0; j < r->nr_mtus; j++)
			if (r->mtus[j].mtu < least &&
			    covers(&r->mtus[j], &r->mtus[i]))
				least = r->mtus[j].mtu;
		key_of(&r->mtus[i], &k);
		if (bpf_map_lookup_elem(fd, &k, &old) || old != least)
			*changed = true;
		if (bpf_map_update_elem(fd, &k, &least, BPF_ANY))
			return -errno;
	}
	return silo_map_prune(fd, sizeof(k), in_set, (void *)r, changed);
}
