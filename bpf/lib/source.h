/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The IPv4 source check (rp_filter, accept_local) and its cached verdict.
 */
#ifndef SILO_BPF_LIB_SOURCE_H
#define SILO_BPF_LIB_SOURCE_H

#include "common.h"
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "cache.h"
#include "admit.h"
#include "local.h"

/*
 * The IPv4 source check of the kernel's input route (fib_validate_source()):
 * 0 where it accepts, or a pass reason where it might drop the packet, so
 * that the stack decides. The kernel's lookup of the route back has
 * loopback (or the VRF device) as input device, not the ingress device:
 * rules such as "iif DEV" do not apply to it.
 *
 *  - rp_filter 0 without accept_local: a packet from one of our addresses
 *    is a martian (without custom rules or local routes the kernel asks
 *    its addresses, not the routes: one whose local route was deleted
 *    still counts); with custom rules or local routes (which we cannot
 *    see) the kernel also drops one whose route back is local, broadcast
 *    or of another non-unicast type, and accepts one with no route back or
 *    an error route (blackhole, unreachable, prohibit). bpf_fib_lookup
 *    says NOT_FWDED both for a local or non-unicast route and for no route
 *    at all: stand aside.
 *  - rp_filter 1 (strict): the route back leaves through the ingress
 *    device; 2 (loose): a unicast route back exists. The kernel accepts
 *    when any nexthop of the route back uses the device; the one that
 *    bpf_fib_lookup picks is one of them, so our "yes" implies its "yes".
 *    Without an IPv4 address on the device only a direct match passes.
 *
 * Its answer is cached in a source entry of its own (source_verdict()):
 * every change of routes, rules, addresses or sysctls invalidates it.
 */
static __always_inline int source_check(struct xdp_md *ctx, const struct pkt *p,
					const struct silo_device *dev)
{
	/* One stack slot for both lookups' keys: the forward path is
	 * inlined into one frame of at most 512 bytes. */
	union {
		struct bpf_fib_lookup fib;
		struct silo_addr local;
	} u;
	struct bpf_fib_lookup *fib = &u.fib;
	int rc;

	if (p->family != SILO_AF_INET)
		return 0;
	if (!dev->rp_filter && (dev->flags & SILO_DEV_F_ACCEPT_LOCAL))
		return 0;
	if (!dev->rp_filter && local_source(p, &u.local))
		return SILO_STAT_PASS_LOCAL_SRC;
	__builtin_memset(fib, 0, sizeof(*fib));
	fib->family = p->family;
	fib->ifindex = dev->rp_ifindex ? dev->rp_ifindex : 1;
	fib->tos = p->tos;
	__builtin_memcpy(&fib->ipv4_src, p->dst, 4);
	__builtin_memcpy(&fib->ipv4_dst, p->src, 4);
	rc = bpf_fib_lookup(ctx, fib, sizeof(*fib), BPF_FIB_LOOKUP_SKIP_NEIGH);
	if (rc == BPF_FIB_LKUP_RET_SUCCESS || rc == BPF_FIB_LKUP_RET_NO_NEIGH) {
		if (!dev->rp_filter || fib->ifindex == ctx->ingress_ifindex)
			return 0;
		if (dev->rp_filter == 2 &&
		    !(dev->flags & SILO_DEV_F_NO_V4_ADDR))
			return 0;
		return SILO_STAT_PASS_RP_FILTER;
	}
	if (dev->rp_filter)
		return SILO_STAT_PASS_RP_FILTER;
	if (rc == BPF_FIB_LKUP_RET_BLACKHOLE ||
	    rc == BPF_FIB_LKUP_RET_UNREACHABLE ||
	    rc == BPF_FIB_LKUP_RET_PROHIBIT)
		return 0;
	return SILO_STAT_PASS_LOCAL_SRC;
}

/* Does the source check run for this packet on this device? */
static __always_inline int source_checked(const struct pkt *p,
					  const struct silo_device *dev)
{
	return p->family == SILO_AF_INET &&
	       (dev->rp_filter || !(dev->flags & SILO_DEV_F_ACCEPT_LOCAL));
}

/*
 * Under rp_filter 0 (without accept_local) the kernel refuses a source
 * only where its route back is local, broadcast or another type that is
 * neither unicast nor an error, or (without custom rules or local routes)
 * where it is one of this host's addresses: src_checked holds all of those
 * prefixes, kept by silod (route.h). A source outside them is accepted
 * whatever the rules select, with no lookup back. Only while genid says
 * the map is whole and the silod that beats keeps it.
 */
static __always_inline int source_unchecked(const struct pkt *p,
					    const struct silo_device *dev,
					    __u32 flags, __u32 watch)
{
	struct silo_src_key k = { .prefixlen = 32 };

	if (dev->rp_filter || !(flags & SILO_GENID_SRCS_WHOLE) ||
	    !(watch & SILO_HB_SRCS))
		return 0;
	__builtin_memcpy(k.addr, p->src, sizeof(k.addr));
	return !bpf_map_lookup_elem(&src_checked, &k);
}

/* Does this packet's source take the check (cached or not)? */
static __always_inline int source_needed(const struct pkt *p,
					 const struct silo_device *dev,
					 __u32 flags, __u32 watch)
{
	return source_checked(p, dev) &&
	       !source_unchecked(p, dev, flags, watch);
}

/*
 * A source entry's key: what source_check() looks up with. The route back
 * is looked up from the destination: it depends on that only when a rule
 * selects on source addresses. Which of several multipath routes back the
 * lookup picks does not matter: any that uses the ingress device is a
 * "yes" for the kernel too, and a "no" sends the packet to the stack.
 */
static __always_inline void fill_src_key(struct silo_route_key *key,
					 struct xdp_md *ctx,
					 const struct pkt *p, __u32 flags)
{
	key->ifindex = ctx->ingress_ifindex;
	key->family = p->family;
	key->tos = p->tos;
	key->format = (flags & SILO_GENID_KEY_MASK) | SILO_KEY_SOURCE;
	__builtin_memcpy(key->src, p->src, sizeof(key->src));
	if (flags & SILO_GENID_RULES_SRC_V4)
		__builtin_memcpy(key->dst, p->dst, sizeof(key->dst));
}

/*
 * The source check's verdict (0, or the pass reason) for a source that
 * needs it (source_needed()), from a source entry when the cache holds a
 * current one, else from source_check(), cached.
 * key is the caller's, no longer needed: the stack has no room for
 * another, and a new entry is built in per-CPU scratch space. a: this
 * CPU's admission state, or NULL when not read yet (now: the coarse
 * clock it is refilled by).
 */
static __always_inline int
source_verdict(struct xdp_md *ctx, const struct pkt *p,
	       const struct silo_device *dev, void *cache, __u32 node,
	       __u64 gen, __u32 flags, __u64 now, struct silo_route_key *key,
	       struct silo_admit *a, struct silo_stats *st)
{
	struct silo_route_entry *e = NULL, *n;
	__u32 zero = 0, h = 0;
	int rc, ok;

	if (!cache)
		return source_check(ctx, p, dev);
	if (!a)
		a = admit_state(now);
	__builtin_memset(key, 0, sizeof(*key));
	fill_src_key(key, ctx, p, flags);
	if (worth_lookup(a, key, &h))
		e = bpf_map_lookup_elem(cache, key);
	else
		count(st, SILO_STAT_CACHE_UNSEEN);
	/* entry_read() without the copy: the verdict is one byte. */
	if (e && READ_ONCE(e->genid) == gen) {
		barrier();
		rc = READ_ONCE(e->verdict);
		ok = key_equal(&e->key, key);
		barrier();
		if (ok && READ_ONCE(e->genid) == gen) {
			count(st, SILO_STAT_SRC_HIT);
			return rc;
		}
	}
	count(st, SILO_STAT_SRC_MISS);
	rc = source_check(ctx, p, dev);
	/* Refused before any work for the entry is done. */
	if (!e && !admit_key(a, key, h)) {
		count(st, SILO_STAT_CACHE_REFUSED);
		return rc;
	}
	n = bpf_map_lookup_elem(&scratch, &zero);
	if (!n)
		return rc;
	__builtin_memset(n, 0, sizeof(*n));
	n->genid = gen;
	n->verdict = rc;
	__builtin_memcpy(&n->key, key, sizeof(n->key));
	cache_fill(cache, node, key, e, n, st);
	return rc;
}

#endif /* SILO_BPF_LIB_SOURCE_H */
