// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * src_checked (include/silo/abi/route.h): the IPv4 prefixes whose sources
 * take the full source check, written from a walk of the routes and the
 * addresses (silo_sync_genid).
 */
#include <string.h>
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

/* The bits past the prefix cleared: one key per prefix. */
static void key_norm(struct silo_src_key *k)
{
	if (k->prefixlen > 32)
		k->prefixlen = 32;
	silo_prefix_clear(k->addr, 32, k->prefixlen);
}

int silo_src_checked_write(int fd, struct silo_nl_routes *r, bool *whole)
{
	size_t i;
	int err;

	*whole = false;
	err = silo_nl_dump_addrs(add_addr, r);
	if (err)
		return err;
	if (r->srcs_lost)
		return 0; /* every source takes the full check */
	for (i = 0; i < r->nr_srcs; i++)
		key_norm(&r->srcs[i]);
	err = silo_map_write_set(fd, r->srcs, &r->nr_srcs, sizeof(*r->srcs));
	if (!err)
		*whole = true;
	return err;
}
