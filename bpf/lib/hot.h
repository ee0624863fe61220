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

/* The slot of a key's admission hash h (key_hash() | 1) and an IPv4
 * source (0 for IPv6), as silo_hot_slot() has it. */
static __always_inline struct silo_hot *hot_slot(__u32 h, __u32 src4)
{
	__u32 i = silo_hot_index(h, src4);

	return bpf_map_lookup_elem(&route_hot, &i);
}

/*
 * The slot's entry, when it is key's and current under gen and sweeps
 * (both read before anything was looked up), made under the heartbeat's
 * watch and for src4, with *verdict the source check's for it; else NULL.
 * Used in place, not copied: the slot is this CPU's, and XDP runs do not
 * nest on a CPU (as fwd_bufs, which holds the packet's key, assumes too).
 */
static __always_inline struct silo_route_entry *
hot_read(struct silo_hot *s, const struct silo_route_key *key, __u64 gen,
	 __u64 sweeps, __u32 src4, __u32 watch, __u8 *verdict)
{
	if (!s || s->sweeps != sweeps || s->e.genid != gen || s->src4 != src4 ||
	    s->watch != watch || !key_equal(&s->e.key, key))
		return NULL;
	*verdict = s->verdict;
	return &s->e;
}

/*
 * Copies a current entry of the route cache into the slot, stamped with
 * the sweeps read before the route cache lookup that found it (a sweep
 * that deletes that entry moves sweeps past the stamp), with the ingress
 * device's record dev and the source check's verdict for src4 under the
 * heartbeat's watch, both read after genid (a changed record bumps genid
 * after it is written: never older than the stamp).
 */
static __always_inline void
hot_fill(struct silo_hot *s, const struct silo_route_entry *r, __u64 sweeps,
	 const struct silo_device *dev, __u32 src4, __u32 watch, __u8 verdict)
{
	WRITE_ONCE(s->e.genid, 0);
	barrier();
	s->sweeps = sweeps;
	s->dev = *dev;
	s->src4 = src4;
	s->watch = watch;
	s->verdict = verdict;
	__builtin_memcpy((__u8 *)&s->e + sizeof(s->e.genid),
			 (const __u8 *)r + sizeof(r->genid),
			 sizeof(*r) - sizeof(r->genid));
	barrier();
	WRITE_ONCE(s->e.genid, r->genid);
}

#endif /* SILO_BPF_LIB_HOT_H */
