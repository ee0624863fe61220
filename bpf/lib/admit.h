/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Admission to the route cache (struct silo_admit): what a storm of new
 * keys may cost a CPU.
 */
#ifndef SILO_BPF_LIB_ADMIT_H
#define SILO_BPF_LIB_ADMIT_H

#include "common.h"
#include "maps.h"
#include "parse.h"

/* The key's hash (internal.h): admission's. */
static __always_inline __u32 key_hash(const struct silo_route_key *k)
{
	return silo_key_hash(k);
}

/* a's budget refilled for the time gone by since its last refill: one
 * token every ns, burst at most. */
static __always_inline void admit_refill(struct silo_admit *a, __u64 now,
					 __u32 burst, __u64 ns)
{
	__u64 elapsed = now - a->last_ns, n;

	/* A stamp ahead of the clock (set by hand) refills nothing. */
	if ((__s64)elapsed < 0)
		elapsed = 0;
	if (elapsed >= burst * ns) {
		a->tokens = burst;
		a->last_ns = now;
	} else if (elapsed >= ns) {
		n = elapsed / ns;
		a->tokens = a->tokens + n > burst ? burst : a->tokens + n;
		a->last_ns += n * ns;
	}
}

/* This CPU's admission state of the route cache, its budget refilled for
 * the time gone by; now: the coarse clock, read with the heartbeat. */
static __always_inline struct silo_admit *admit_state(__u64 now)
{
	__u32 idx = SILO_ADMIT_ROUTE;
	struct silo_admit *a;

	a = bpf_map_lookup_elem(&admit, &idx);
	if (a)
		admit_refill(a, now, SILO_ADMIT_BURST, SILO_ADMIT_NS);
	return a;
}

static __always_inline __u32 *seen_slot(struct silo_admit *a, __u32 h)
{
	return &a->seen[(h >> 1) & (SILO_ADMIT_SLOTS - 1)];
}

/*
 * Is a cache lookup of this key worth its cost? Always while the budget
 * lasts. Past it, in a storm of new keys, only for a key this CPU has seen
 * (*h: its hash, for admit_key): another one was refused, or never came,
 * and its failed lookup would cost as much as a hit. A cached flow whose
 * slot a storm took over loses one hit, and has it back from its next
 * packet on. *h: the key's hash, or 0 to compute it here.
 */
static __always_inline int
worth_lookup(struct silo_admit *a, const struct silo_route_key *k, __u32 *h)
{
	if (!a || a->tokens)
		return 1;
	if (!*h)
		*h = key_hash(k) | 1;
	return *seen_slot(a, *h) == *h;
}

/*
 * Admission (struct silo_admit): 1 to insert this key, 0 to leave it out.
 * Within the budget every miss is inserted; past it, a key on its second
 * sighting. Either way the key is marked seen. Per CPU: nothing here is
 * written by another CPU. h: the key's hash, or 0 when not computed yet.
 */
static __always_inline int admit_key(struct silo_admit *a,
				     const struct silo_route_key *k, __u32 h)
{
	__u32 *slot;

	if (!a)
		return 1;
	if (!h)
		h = key_hash(k) | 1;
	slot = seen_slot(a, h);
	if (a->tokens) {
		a->tokens--;
		*slot = h;
		return 1;
	}
	if (*slot == h)
		return 1;
	*slot = h;
	return 0;
}

#endif /* SILO_BPF_LIB_ADMIT_H */
