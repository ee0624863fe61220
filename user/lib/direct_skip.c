// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * direct_skip (include/silo/abi/route.h): the prefixes whose packets take
 * the rules' walk, written from a walk of the routes and the rules
 * (silo_sync_genid).
 */
#include "maps.h"
#include "nl.h"
#include "util.h"

int silo_direct_skip_write(int fd, struct silo_nl_routes *r)
{
	size_t i;

	/* The bits past the prefix cleared (prefixlen counts the kind's
	 * 8): one key per prefix. */
	for (i = 0; i < r->nr_direct; i++)
		silo_prefix_clear(r->direct[i].addr, 128,
				  r->direct[i].prefixlen - 8);
	return silo_map_write_set(fd, r->direct, &r->nr_direct,
				  sizeof(*r->direct));
}
