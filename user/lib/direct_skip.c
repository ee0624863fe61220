// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * direct_skip (include/silo/abi/route.h): the prefixes whose packets take
 * the rules' walk, written from a walk of the routes and the rules
 * (silo_sync_genid).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "maps.h"
#include "nl.h"
#include "util.h"

/* The bits past the prefix cleared: one key per prefix. */
static void key_norm(struct silo_direct_key *k)
{
	unsigned int i;

	for (i = 0; i < 128; i++)
		if (8 + i >= k->prefixlen)
			k->addr[i / 8] &= ~(0x80 >> (i % 8));
}

int silo_direct_skip_write(int fd, struct silo_nl_routes *r)
{
	size_t i;

	for (i = 0; i < r->nr_direct; i++)
		key_norm(&r->direct[i]);
	return silo_map_write_set(fd, r->direct, &r->nr_direct,
				  sizeof(*r->direct));
}
