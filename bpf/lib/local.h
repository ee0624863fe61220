/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Local traffic: is a packet for one of this host's addresses (silod
 * keeps local_addrs from RTM_NEWADDR), and the count of the local ones
 * the parser could not follow.
 */
#ifndef SILO_BPF_LIB_LOCAL_H
#define SILO_BPF_LIB_LOCAL_H

#include "common.h"
#include "maps.h"
#include "parse.h"
#include "stats.h"

/*
 * May dst be local? local_bits says no for almost every other address,
 * with no hash lookup; it is trusted unless a silod that does not keep it
 * (an earlier release's) beats. Without silod the loader keeps both maps.
 */
static __always_inline int maybe_local(const struct pkt *p)
{
	const struct silo_heartbeat *hb;
	const struct silo_local_bits *lb;
	__u32 zero = 0, bit;

	lb = bpf_map_lookup_elem(&local_bits, &zero);
	hb = bpf_map_lookup_elem(&heartbeat, &zero);
	if (!lb || !hb ||
	    (READ_ONCE(hb->last_ns) &&
	     !(READ_ONCE(hb->pmtu_watch) & SILO_HB_LOCAL_BITS)))
		return 1;
	bit = silo_local_bit(p->family, p->dst);
	return (lb->w[(bit / 64) % (SILO_LOCAL_BITS / 64)] >> (bit % 64)) & 1;
}

/* Is addr (16 bytes, as struct pkt holds it) in local_addrs? a: room for
 * the key. */
static __always_inline int local_lookup(struct silo_addr *a, __u8 family,
					const __u8 *addr)
{
	__builtin_memset(a, 0, sizeof(*a));
	a->family = family;
	__builtin_memcpy(a->addr, addr, sizeof(a->addr));
	return bpf_map_lookup_elem(&local_addrs, a) != NULL;
}

static __always_inline int is_local(const struct pkt *p)
{
	struct silo_addr a;

	return maybe_local(p) && local_lookup(&a, p->family, p->dst);
}

/* Is the packet's source one of this host's addresses? a: room for the
 * key, the caller's (source_check() shares it with its lookup's). */
static __always_inline int local_source(const struct pkt *p,
					struct silo_addr *a)
{
	return local_lookup(a, p->family, p->src);
}

/* A local packet the parser could not follow: passed, counted as such. */
static __always_inline int parse_pass(struct silo_stats *st,
				      const struct pkt *p, __u32 reason)
{
	__u32 idx = SILO_SSTAT_NOT_UNDERSTOOD, zero = 0;

	if (p->family && is_local(p)) {
		if (reason == SILO_STAT_PASS_FRAGMENT)
			idx = SILO_SSTAT_FRAGMENT;
		else if (reason == SILO_STAT_PASS_L4_PROTO)
			idx = SILO_SSTAT_NOT_L4;
		scount(bpf_map_lookup_elem(&service_stats, &zero), idx);
	}
	return pass(st, reason);
}

#endif /* SILO_BPF_LIB_LOCAL_H */
