// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Map helpers that know no silo map. */
#include <errno.h>
#include <bpf/bpf.h>
#include "../util.h"

int silo_map_prune(int fd, size_t key_size,
		   bool (*keep)(const void *key, void *ctx), void *ctx,
		   bool *deleted)
{
	__u8 k[SILO_MAP_PRUNE_KEY_MAX], next[SILO_MAP_PRUNE_KEY_MAX];
	bool more;

	if (key_size > sizeof(k))
		return -EINVAL;
	more = !bpf_map_get_next_key(fd, NULL, k);
	while (more) {
		more = !bpf_map_get_next_key(fd, k, next);
		if (!keep(k, ctx)) {
			if (bpf_map_delete_elem(fd, k) && errno != ENOENT)
				return -errno;
			if (deleted)
				*deleted = true;
			/* The walk's position went with it: start again. */
			more = !bpf_map_get_next_key(fd, NULL, next);
		}
		__builtin_memcpy(k, next, key_size);
	}
	return 0;
}
