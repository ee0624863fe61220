// SPDX-License-Identifier: GPL-2.0
/*
 * Walking the route caches: every entry of every node's cache, read in
 * batches as the map holds them, and the data path's count of fills.
 * Below the index (built from a walk) and the sweeps.
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "silod.h"

#define BATCH 1024

int cache_for_each(struct silod *d, cache_entry_fn fn, void *ctx)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct silo_route_entry *vals;
	struct silo_route_key *keys;
	__u32 node, in, out, n, i;
	bool first, done;
	int fd, err = 0;

	/* Per call: the event loop and the regrace thread both scan. */
	keys = malloc(BATCH * sizeof(*keys));
	vals = malloc(BATCH * sizeof(*vals));
	if (!keys || !vals)
		err = -ENOMEM;
	for (node = 0; node < d->maps.nr_nodes && !err; node++) {
		fd = d->maps.node_fd[node];
		first = true;
		done = false;
		in = out = 0;
		while (!done && !err) {
			n = BATCH;
			err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out,
						   keys, vals, &n, &opts);
			if (err && errno != ENOENT) {
				err = -errno;
				break;
			}
			done = err != 0;
			err = 0;
			first = false;
			in = out;
			for (i = 0; i < n && !err; i++)
				err = fn(fd, &keys[i], &vals[i], ctx);
		}
	}
	free(keys);
	free(vals);
	return err;
}

int cache_walk_slice(struct silod *d, struct cache_cursor *c, __u32 max,
		     cache_entry_fn fn, void *ctx)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct silo_route_entry *vals;
	struct silo_route_key *keys;
	__u32 n, i, seen = 0;
	int err = 0, fd;

	keys = malloc(BATCH * sizeof(*keys));
	vals = malloc(BATCH * sizeof(*vals));
	if (!keys || !vals)
		err = -ENOMEM;
	while (!err && seen < max && c->node < d->maps.nr_nodes) {
		fd = d->maps.node_fd[c->node];
		n = BATCH;
		err = bpf_map_lookup_batch(fd, c->started ? &c->in : NULL,
					   &c->out, keys, vals, &n, &opts);
		if (err && errno != ENOENT) {
			err = -errno;
			break;
		}
		c->started = !err;
		c->in = c->out;
		if (err) /* this node done */
			c->node++;
		err = 0;
		for (i = 0; i < n && !err; i++)
			err = fn(fd, &keys[i], &vals[i], ctx);
		seen += n;
	}
	free(keys);
	free(vals);
	if (err)
		return err;
	return c->node >= d->maps.nr_nodes;
}

__u64 cache_fills(struct silod *d)
{
	int ncpus = silo_nr_cpus(), cpu;
	struct silo_stats *st;
	__u32 zero = 0;
	__u64 n = 0;

	st = calloc(ncpus, sizeof(*st));
	if (!st)
		return ~0ULL; /* unknown: the caller sweeps again */
	if (bpf_map_lookup_elem(d->maps.fd[SILO_MAP_STATS], &zero, st)) {
		free(st);
		return ~0ULL;
	}
	for (cpu = 0; cpu < ncpus; cpu++)
		n += st[cpu].cache_insert + st[cpu].cache_refresh;
	free(st);
	return n;
}
