/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Small helpers of libsilo (util/files.c, util/cpus.c, util/maps.c; the
 * netns cookie: core.c): files, CPU lists, NUMA, maps. */
#ifndef SILO_LIB_UTIL_H
#define SILO_LIB_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <linux/types.h>

/* Whether s is one of the n strings of list. */
static inline bool silo_str_in(const char *s, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

/* Reads a small file; returns bytes read or -errno. */
int silo_read_file(const char *path, char *buf, size_t len);
int silo_read_sysctl_int(const char *path, int *val);
int silo_mkdir_p(const char *path, mode_t mode);
/* The current network namespace's cookie (SO_NETNS_COOKIE). */
int silo_netns_cookie(__u64 *cookie);
/* Parses "0-3,8,10-11" into a bitmap of len bits; -EINVAL on bad input,
 * -ERANGE for a CPU of len or more. A newline ends it. */
int silo_parse_cpulist(const char *s, unsigned char *bits, size_t len);
bool silo_numa_node_online(__u32 node);

/* Keys of up to this many bytes: silo_map_prune()'s buffers. */
#define SILO_MAP_PRUNE_KEY_MAX 64
/*
 * Deletes every key of fd (key_size bytes) that keep() refuses, *deleted
 * (unless NULL) set when one went; 0 or -errno. A walk restarts after a
 * delete, so that no key that stays is skipped: the map never holds more
 * than it did, and a writer adds the new keys after.
 */
int silo_map_prune(int fd, size_t key_size,
		   bool (*keep)(const void *key, void *ctx), void *ctx,
		   bool *deleted);
/* fd (an LPM trie or hash of __u32 values) holds exactly keys (*n of
 * key_size bytes; sorted, *n their number once duplicates went), each
 * with the value 1; 0 or -errno. */
int silo_map_write_set(int fd, void *keys, size_t *n, size_t key_size);
/* Clears the bits of addr (bits long) past its first len: one key per
 * prefix. */
void silo_prefix_clear(__u8 *addr, unsigned int bits, unsigned int len);

#endif /* SILO_LIB_UTIL_H */
