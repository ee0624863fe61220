// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Reading groups: their slots and counters, and every group in turn. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "reuseport.h"

int silo_group_slots(struct silo_group *g, struct silo_group_slot *slots)
{
	__u32 slot;

	for (slot = 0; slot < g->val.nr_slots; slot++) {
		struct silo_group_slot *sl = &slots[slot];

		memset(sl, 0, sizeof(*sl));
		sl->placed.fd = -1;
		if (bpf_map_lookup_elem(g->sockets_fd, &slot, &sl->cookie))
			sl->cookie = 0;
		bpf_map_lookup_elem(g->slots_fd, &slot, &sl->placed);
		if (bpf_map_lookup_elem(g->cpu_node_fd, &slot, &sl->node))
			sl->node = 0;
	}
	return 0;
}

int silo_group_stats(struct silo_group *g, struct silo_reuseport_stats *stats)
{
	if (bpf_map_lookup_elem(g->fd[SILO_RP_STATS], &g->val.id, stats))
		return -errno;
	return 0;
}

int silo_group_foreach(struct silo *s,
		       int (*fn)(struct silo_group *g, void *ctx), void *ctx)
{
	struct silo_reuseport_key key, next;
	struct silo_reuseport_group val;
	struct silo_group *g;
	char(*names)[SILO_REUSEPORT_NAME_MAX] = NULL;
	bool has_key = false;
	size_t n = 0, i;
	int fd, err = 0;

	fd = silo_rp_pin_get(s, SILO_RP_GROUPS);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	/* Names first: fn may detach groups. */
	while (!bpf_map_get_next_key(fd, has_key ? &key : NULL, &next)) {
		void *p;

		key = next;
		has_key = true;
		if (bpf_map_lookup_elem(fd, &key, &val))
			continue;
		p = realloc(names, (n + 1) * sizeof(*names));
		if (!p) {
			err = -ENOMEM;
			goto out;
		}
		names = p;
		memcpy(names[n++], val.name, sizeof(val.name));
	}
	for (i = 0; i < n && !err; i++) {
		if (silo_group_open(s, names[i], &g))
			continue;
		err = fn(g, ctx);
		silo_group_close(g);
	}
out:
	free(names);
	close(fd);
	return err;
}
