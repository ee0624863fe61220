/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Layouts private to silo: between its XDP program and silod (the fill
 * log) and the data path's own per-CPU state (admission). NOT installed:
 * they change with silo, under SILO_LAYOUT_VERSION like every pinned
 * map, but no application may depend on them.
 */
#ifndef SILO_ABI_INTERNAL_H
#define SILO_ABI_INTERNAL_H

#include "silo/abi/route.h"

/*
 * fill_log: a BPF ringbuf of the keys the data path inserts into the route
 * caches, one record per insert, for silod's index of the caches by the
 * address a sweep selects entries by (user/silod/index.c): a sweep then
 * costs what the change touches, not what the caches hold. An insert
 * reserves its record first and does not cache when the log is full
 * (cache_no_log), so every key in a cache has been logged: the index is
 * complete by construction. The record is submitted after the map update
 * and before the fill is counted (cache_insert), which the exactness of
 * scoped invalidation relies on (user/silod/sweep.c). A refresh in place
 * logs nothing: its key is in the cache already, hence logged.
 */
#define SILO_FILL_LOG_BYTES (4U << 20) /* 65,536 records */

struct silo_fill_rec {
	__u32 node; /* whose cache: route_cache index */
	__u32 pad;
	struct silo_route_key key;
};

/*
 * admit[0], per CPU: admission to the route cache. A miss is inserted at
 * once while this CPU's insert budget lasts (SILO_ADMIT_BURST inserts, one
 * more every SILO_ADMIT_NS); past it, only a key seen before (its hash in
 * seen[]) is inserted. A flood of one-packet flows then costs a lookup and
 * a failed cache lookup each, not an insert and an eviction; a real flow is
 * cached by its second packet. Past the budget, a key this CPU has not
 * seen is not even looked up (counted as cache_unseen): it is almost never
 * cached, and a failed lookup costs as much as a hit.
 */
#define SILO_ADMIT_SLOTS 2048 /* a power of 2 */
#define SILO_ADMIT_BURST 64
#define SILO_ADMIT_NS 1000000ULL /* 1,000 inserts a second per CPU */

struct silo_admit {
	__u64 last_ns; /* budget last refilled */
	__u32 tokens;
	__u32 pad;
	__u32 seen[SILO_ADMIT_SLOTS]; /* key hashes, | 1 (0: empty) */
};

/*
 * route_hot, per CPU and per program: copies of the route entries this CPU
 * hits, direct-mapped by the key's admission hash (and an IPv4 source). A
 * hit here costs no hash lookup in the node's route cache (jhash of a
 * 48-byte key, the bucket, the compare: half of a cache hit's time), nor of
 * the ingress device, whose record the copy carries, nor the source check,
 * whose verdict it carries. A copy is made from a current entry of the route
 * cache and counts while its genid and its sweeps (genid.sweeps read before
 * the route cache lookup) are current and its key is the packet's: whatever
 * makes the route cache's entry go (a genid bump, a sweep) makes the copy
 * go too. Never written by user space.
 */
#define SILO_HOT_SLOTS 1024 /* a power of 2 */

/*
 * A cheap hash of a route key, by 64-bit words: for admission (seen[] takes
 * its low bits) and route_hot's slots (silo_hot_slot()), not a map. Three
 * products that do not wait for each other (a chain of six multiplies was
 * a sixth of the program's own time in a flood of new keys), then one to
 * mix: a product spreads a bit only upwards, so keys that differ in the
 * last byte of an address would differ in the top byte alone.
 */
static inline __u32 silo_key_hash(const struct silo_route_key *k)
{
	const __u64 *w = (const __u64 *)k;
	__u64 h;

	_Static_assert(sizeof(*k) == 6 * sizeof(__u64), "key of six words");
	h = ((w[0] ^ w[3]) * 0xFF51AFD7ED558CCDULL) ^
	    ((w[1] ^ w[4]) * 0xC4CEB9FE1A85EC53ULL) ^
	    ((w[2] ^ w[5]) * 0x9E3779B97F4A7C15ULL);
	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ULL;
	return (__u32)(h >> 32);
}

/* route_hot's slot of a key's hash h (silo_key_hash() | 1) and an IPv4
 * source (0 for IPv6): a copy is per source too, which the route key may
 * leave out. */
static inline __u32 silo_hot_index(__u32 h, __u32 src4)
{
	h ^= (__u32)((src4 * 0x9E3779B97F4A7C15ULL) >> 32);
	return (h >> 16) & (SILO_HOT_SLOTS - 1);
}

static inline __u32 silo_hot_slot(const struct silo_route_key *k, __u32 src4)
{
	return silo_hot_index(silo_key_hash(k) | 1, src4);
}

struct silo_hot {
	struct silo_route_entry e;
	__u64 sweeps;
	/* The ingress device's record (the key's ifindex), read after genid:
	 * a change of it bumps genid. */
	struct silo_device dev;
	/* IPv4: the source the copy is for, and the source check's verdict
	 * for it (0, or the SILO_STAT_PASS_* reason): a copy answers the
	 * whole packet. 0 for IPv6, which has no source check. */
	__u32 src4;
	/* The heartbeat's pmtu_watch the answers were made under: what
	 * silod keeps decides how the source check is made. */
	__u32 watch;
	__u8 verdict;
	__u8 pad[3]; /* two cache lines */
};

#endif /* SILO_ABI_INTERNAL_H */
