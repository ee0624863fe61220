// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * src_checked (include/silo/abi/route.h): the IPv4 prefixes whose sources
 * take the full source check, written from a walk of the routes and the
 * addresses (silo_sync_genid).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <sys/socket.h>
#include "maps.h"
#include "nl.h"
#include "util.h"

static int add_addr(const struct silo_nl_addr *a, void *ctx)
{
	struct silo_src_key k = { .prefixlen = 32 };

	if (a->family != AF_INET)
		return 0;
	memcpy(k.addr, a->addr, sizeof(k.addr));
	silo_nl_srcs_add(ctx, &k);
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct silo_src_key));
}

/* The bits past the prefix cleared: one key per prefix. */
static void key_norm(struct silo_src_key *k)
{
	unsigned int i;

	if (k->prefixlen > 32)
		k->prefixlen = 32;
	for (i = 0; i < 32; i++)
		if (i >= k->prefixlen)
			k->addr[i / 8] &= ~(0x80 >> (i % 8));
}

/* Is key among r's prefixes (sorted, unique)? */
static bool kept(const void *key, void *ctx)
{
	const struct silo_nl_routes *r = ctx;

	return r->nr_srcs &&
	       bsearch(key, r->srcs, r->nr_srcs, sizeof(*r->srcs), key_cmp);
}

int silo_src_checked_write(int fd, struct silo_nl_routes *r, bool *whole)
{
	size_t i, n = 0;
	__u32 one = 1;
	int err;

	*whole = false;
	err = silo_nl_dump_addrs(add_addr, r);
	if (err)
		return err;
	if (r->srcs_lost)
		return 0; /* every source takes the full check */
	for (i = 0; i < r->nr_srcs; i++)
		key_norm(&r->srcs[i]);
	if (r->nr_srcs)
		qsort(r->srcs, r->nr_srcs, sizeof(*r->srcs), key_cmp);
	for (i = 0; i < r->nr_srcs; i++)
		if (!n || key_cmp(&r->srcs[n - 1], &r->srcs[i]))
			r->srcs[n++] = r->srcs[i];
	r->nr_srcs = n;
	/* The prefixes that went first, so that the map never overflows: no
	 * prefix that stays is ever missing. */
	err = silo_map_prune(fd, sizeof(struct silo_src_key), kept, r, NULL);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, &r->srcs[i], &one, BPF_ANY))
			return -errno;
	*whole = true;
	return 0;
}
