/* SPDX-License-Identifier: GPL-2.0 */
/*
 * route_hot: this CPU's copies of the route entries it hits (struct
 * silo_hot), read before the node's route cache and written from it.
 */
#ifndef SILO_BPF_LIB_HOT_H
#define SILO_BPF_LIB_HOT_H

#include "common.h"
#include "maps.h"
#include "cache.h"

/* The slot of a key, by its admission hash h (key_hash() | 1), as
 * silo_hot_slot() has it. */
static __always_inline struct silo_hot *hot_slot(__u32 h)
{
	__u32 i = (h >> 16) & (SILO_HOT_SLOTS - 1);

	return bpf_map_lookup_elem(&route_hot, &i);
}

/*
 * 1 with out a copy of key's entry, current under gen and sweeps (both
 * read before anything was looked up); else 0. The slot is this CPU's and
 * XDP runs do not nest on a CPU, but it is read as the route cache is
 * (entry_read()): a torn copy is refused, never used.
 */
static __always_inline int hot_read(struct silo_hot *s,
				    struct silo_route_entry *out,
				    const struct silo_route_key *key, __u64 gen,
				    __u64 sweeps)
{
	if (!s || READ_ONCE(s->sweeps) != sweeps)
		return 0;
	if (entry_read(&s->e, out, key, gen))
		return 0;
	barrier();
	return READ_ONCE(s->sweeps) == sweeps;
}

/*
 * Copies a current entry of the route cache into the slot, stamped with
 * the sweeps read before the route cache lookup that found it (a sweep
 * that deletes that entry moves sweeps past the stamp), with the ingress
 * device's record.
 */
static __always_inline void hot_fill(struct silo_hot *s,
				     const struct silo_route_entry *r,
				     __u64 sweeps, __u32 ifindex)
{
	const struct silo_device *dev;

	/* Read again, after genid: a changed record bumps genid after it is
	 * written, so the copy is never older than the stamp. */
	dev = bpf_map_lookup_elem(&devices, &ifindex);
	WRITE_ONCE(s->e.genid, 0);
	if (!dev)
		return;
	barrier();
	s->sweeps = sweeps;
	s->dev = *dev;
	__builtin_memcpy((__u8 *)&s->e + sizeof(s->e.genid),
			 (const __u8 *)r + sizeof(r->genid),
			 sizeof(*r) - sizeof(r->genid));
	barrier();
	WRITE_ONCE(s->e.genid, r->genid);
}

#endif /* SILO_BPF_LIB_HOT_H */
