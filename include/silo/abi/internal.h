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

#endif /* SILO_ABI_INTERNAL_H */
