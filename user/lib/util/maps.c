// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Map helpers that know no silo map. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

void silo_prefix_clear(__u8 *addr, unsigned int bits, unsigned int len)
{
	unsigned int i;

	for (i = len; i < bits; i++)
		addr[i / 8] &= ~(0x80 >> (i % 8));
}

static int set_cmp(const void *a, const void *b, void *size)
{
	return memcmp(a, b, *(size_t *)size);
}

/* The keys of one set, sorted: is key among them? */
struct key_set {
	const __u8 *keys;
	size_t n, size;
};

static bool in_set(const void *key, void *ctx)
{
	const struct key_set *ks = ctx;
	size_t lo = 0, hi = ks->n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = memcmp(key, ks->keys + mid * ks->size, ks->size);
		if (!c)
			return true;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

int silo_map_write_set(int fd, void *keys, size_t *n, size_t key_size)
{
	struct key_set ks = { .keys = keys, .size = key_size };
	__u8 *k = keys;
	size_t i, m = 0;
	__u32 one = 1;
	int err;

	if (*n)
		qsort_r(keys, *n, key_size, set_cmp, &key_size);
	for (i = 0; i < *n; i++)
		if (!m ||
		    memcmp(k + (m - 1) * key_size, k + i * key_size, key_size))
			memmove(k + m++ * key_size, k + i * key_size, key_size);
	*n = ks.n = m;
	/* Those that went first, so that the map never overflows: no key
	 * that stays is ever missing. */
	err = silo_map_prune(fd, key_size, in_set, &ks, NULL);
	if (err)
		return err;
	for (i = 0; i < m; i++)
		if (bpf_map_update_elem(fd, k + i * key_size, &one, BPF_ANY))
			return -errno;
	return 0;
}
