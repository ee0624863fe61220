/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PMTU exceptions (include/silo/abi/route.h): an ICMP error for this host
 * that can teach the kernel one marks the destination it quotes, before
 * the stack learns from it; a larger packet towards a marked destination,
 * or of a family silod does not watch, is not served from the cache.
 */
#ifndef SILO_BPF_LIB_PMTU_H
#define SILO_BPF_LIB_PMTU_H

#include "common.h"
#include "maps.h"
#include "parse.h"
#include "local.h"

#define ICMP_DEST_UNREACH_ 3
#define ICMP_FRAG_NEEDED_ 4
#define ICMPV6_PKT_TOOBIG_ 2
#define IPPROTO_ICMPV6_ 58
/* Offsets bounded for the verifier; an ICMP header lies well within. */
#define PMTU_OFF_MASK 0x3FFF

static __always_inline __u32 pmtu_fam(__u8 family)
{
	return family == SILO_AF_INET ? SILO_FAM_V4 : SILO_FAM_V6;
}

static __always_inline __u32 pmtu_slot(__u64 ns)
{
	return (ns >> SILO_PMTU_EPOCH_SHIFT) % SILO_PMTU_SLOTS;
}

/*
 * The program's last mark's time, from the clock read after the mark or
 * the error is written: a route_hot copy whose PMTU verdict was made
 * under an earlier reading sees this one at or past it (front.h).
 */
static __always_inline void pmtu_marked_now(__u8 family)
{
	__u32 i = SILO_PMTU_MARKED + pmtu_fam(family);
	__u64 *last = bpf_map_lookup_elem(&pmtu_unseen, &i);

	if (last)
		WRITE_ONCE(*last, bpf_ktime_get_coarse_ns());
}

/* An error not read: every larger packet of the family to the stack until
 * silod has covered it. */
static __always_inline void pmtu_unseen_now(__u8 family)
{
	__u32 i = pmtu_fam(family);
	__u64 *seen = bpf_map_lookup_elem(&pmtu_unseen, &i);

	if (seen)
		WRITE_ONCE(*seen, bpf_ktime_get_coarse_ns());
	barrier();
	pmtu_marked_now(family);
}

/* The mark, then its time: a reader that sees the time sees the mark. */
static __always_inline void pmtu_mark(struct silo_pmtu_key *k, __u8 family)
{
	struct silo_pmtu_mark m = { .seen_ns = bpf_ktime_get_coarse_ns() };

	k->family = family;
	k->slot = pmtu_slot(m.seen_ns);
	if (bpf_map_update_elem(&pmtu_marks, k, &m, BPF_ANY)) {
		pmtu_unseen_now(family); /* full: stand aside instead */
		return;
	}
	barrier();
	pmtu_marked_now(family);
}

/*
 * The errors that teach an exception: IPv4 "fragmentation needed" (the
 * kernel's icmp_unreach), IPv6 "packet too big" (icmpv6_rcv). Each quotes
 * the packet it answers, whose destination (IPv4 header +16, IPv6 +24) is
 * the exception's: the kernel reads it at the same place.
 */
static __always_inline void pmtu_quote(struct xdp_md *ctx, const struct pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *icmp = data + (p->l4_off & PMTU_OFF_MASK);
	struct silo_pmtu_key k = {};

	if (p->family == SILO_AF_INET) {
		if ((void *)(icmp + 8 + 20) > data_end ||
		    icmp[0] != ICMP_DEST_UNREACH_ ||
		    icmp[1] != ICMP_FRAG_NEEDED_)
			return;
		__builtin_memcpy(k.addr, icmp + 8 + 16, 4);
	} else {
		if ((void *)(icmp + 8 + 40) > data_end ||
		    icmp[0] != ICMPV6_PKT_TOOBIG_)
			return;
		__builtin_memcpy(k.addr, icmp + 8 + 24, 16);
	}
	pmtu_mark(&k, p->family);
}

/*
 * Does the kernel take p for this host? An address of ours (local_addrs),
 * or else what its routing says: a local route (AnyIP), an address silod
 * has not written yet, or no route at all all count as ours (a mark too
 * many only sends packets to the stack). Only errors pay the lookup.
 */
static __always_inline int pmtu_for_host(struct xdp_md *ctx,
					 const struct pkt *p)
{
	struct bpf_fib_lookup fib = {};

	if (is_local(p))
		return 1;
	fib.family = p->family;
	fib.ifindex = ctx->ingress_ifindex;
	if (p->family == SILO_AF_INET)
		fib.tos = p->tos;
	__builtin_memcpy(fib.ipv6_src, p->src, sizeof(fib.ipv6_src));
	__builtin_memcpy(fib.ipv6_dst, p->dst, sizeof(fib.ipv6_dst));
	return bpf_fib_lookup(ctx, &fib, sizeof(fib),
			      BPF_FIB_LOOKUP_SKIP_NEIGH) !=
	       BPF_FIB_LKUP_RET_SUCCESS;
}

/*
 * A packet the parser stopped at (reason): an ICMP error for this host is
 * read; a fragment that may be one (IPv4: of ICMP; IPv6: any, its header
 * is not read) or IPv6 headers not followed make the family unseen. The
 * rest cannot teach the kernel an exception.
 */
static __always_inline void pmtu_watch(struct xdp_md *ctx, const struct pkt *p,
				       __u32 reason)
{
	bool v4 = p->family == SILO_AF_INET;

	if (!p->family)
		return;
	if (reason == SILO_STAT_PASS_L4_PROTO) {
		if (p->l4_proto != (v4 ? IPPROTO_ICMP : IPPROTO_ICMPV6_))
			return;
	} else if (reason == SILO_STAT_PASS_FRAGMENT) {
		if (v4 && p->l4_proto != IPPROTO_ICMP)
			return;
	} else if (v4 || reason != SILO_STAT_PASS_EXTHDR) {
		return;
	}
	if (!pmtu_for_host(ctx, p))
		return;
	if (reason == SILO_STAT_PASS_L4_PROTO)
		pmtu_quote(ctx, p);
	else
		pmtu_unseen_now(p->family);
}

/* Is p's destination marked in the epoch of now or the last one? (The
 * key made only here: most packets never need it.) */
static __always_inline int pmtu_mark_found(const struct pkt *p, __u64 now)
{
	struct silo_pmtu_key k = { .family = p->family };

	__builtin_memcpy(k.addr, p->dst, sizeof(k.addr));
	k.slot = pmtu_slot(now);
	if (bpf_map_lookup_elem(&pmtu_marks, &k))
		return 1;
	k.slot = (k.slot + SILO_PMTU_SLOTS - 1) % SILO_PMTU_SLOTS;
	return bpf_map_lookup_elem(&pmtu_marks, &k) != NULL;
}

/*
 * May a PMTU exception apply to a larger packet towards p's destination?
 * Yes while an error of the family is unseen, or the destination is marked
 * in this epoch's slot or the last one's (now: coarse, the marks' clock).
 */
static __always_inline int pmtu_marked(const struct pkt *p, __u64 now)
{
	__u32 i = pmtu_fam(p->family), c = SILO_PMTU_COVERED + i;
	__u32 mx = SILO_PMTU_MARKED + i, ms = SILO_PMTU_MARKED_SILOD + i;
	__u64 *seen, *covered, *by_xdp, *by_silod, last;

	seen = bpf_map_lookup_elem(&pmtu_unseen, &i);
	covered = bpf_map_lookup_elem(&pmtu_unseen, &c);
	if (!seen || !covered || READ_ONCE(*seen) > READ_ONCE(*covered))
		return 1;
	/* No mark of this epoch or the last: none to look up. */
	by_xdp = bpf_map_lookup_elem(&pmtu_unseen, &mx);
	by_silod = bpf_map_lookup_elem(&pmtu_unseen, &ms);
	if (!by_xdp || !by_silod)
		return 1;
	last = READ_ONCE(*by_xdp);
	if (READ_ONCE(*by_silod) > last)
		last = READ_ONCE(*by_silod);
	/* 0: none written since boot (or since the map was made), which an
	 * epoch count alone cannot tell in the first two epochs. */
	if (!last ||
	    (last >> SILO_PMTU_EPOCH_SHIFT) + 1 < now >> SILO_PMTU_EPOCH_SHIFT)
		return 0;
	barrier();
	return pmtu_mark_found(p, now);
}

/* The MTU guards of forwarding (forward.h). */

/*
 * Larger packets may meet a path MTU exception, which the kernel learns
 * without telling anyone (pmtu.h): smaller ones never do (IPv4 clamps an
 * exception to min_pmtu, IPv6 to 1280).
 */
static __always_inline int above_pmtu_floor(const struct pkt *p,
					    const struct silo_genid *g)
{
	__u32 floor;

	if (p->family == SILO_AF_INET6)
		return p->l3_len > 1280;
	floor = READ_ONCE(g->pmtu_floor_v4);
	return p->l3_len > (floor ? floor : 552);
}

/* A route's MTU that bpf_fib_lookup may not apply (not locked). */
static __always_inline int
above_route_mtu(const struct pkt *p, const struct silo_genid *g, __u32 watch)
{
	__u16 mtu = READ_ONCE(
		g->route_mtu[p->family == SILO_AF_INET ? SILO_FAM_V4 :
							 SILO_FAM_V6]);

	/* route_mtus has them all, and silod keeps it: the entry's MTU is
	 * capped by prefix. */
	if ((READ_ONCE(g->pmtu_flags) & SILO_PMTU_F_ROUTE_MTUS) &&
	    (watch & SILO_HB_ROUTE_MTUS))
		return 0;
	return mtu && p->l3_len > mtu;
}

/*
 * The MTU an entry may forward up to: bpf_fib_lookup's, which leaves an
 * unlocked route MTU out, capped by the least unlocked route MTU of any
 * prefix that holds the destination (route_mtus): the kernel applies the
 * matched route's.
 */
static __always_inline __u16 route_mtu_cap(const struct pkt *p,
					   const struct silo_genid *g,
					   __u16 mtu)
{
	struct silo_route_mtu_key k = {
		.prefixlen = 8 + (p->family == SILO_AF_INET ? 32 : 128),
		.family = p->family,
	};
	int fam = p->family == SILO_AF_INET ? SILO_FAM_V4 : SILO_FAM_V6;
	__u32 *cap;

	/* No unlocked route MTU in the family, no prefix in route_mtus:
	 * both are written before the genid this entry is stamped with. */
	if (!READ_ONCE(g->route_mtu[fam]))
		return mtu;
	__builtin_memcpy(k.addr, p->dst, sizeof(k.addr));
	cap = bpf_map_lookup_elem(&route_mtus, &k);
	return cap && *cap < mtu ? *cap : mtu;
}

#endif /* SILO_BPF_LIB_PMTU_H */
