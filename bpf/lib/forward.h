/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Forwarding: the guards that send a packet to the stack, the route
 * cache's hit, the FIB lookup on a miss, and the rewrite and redirect.
 */
#ifndef SILO_BPF_LIB_FORWARD_H
#define SILO_BPF_LIB_FORWARD_H

#include "common.h"
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "daemon.h"
#include "cache.h"
#include "admit.h"
#include "source.h"
#include "pmtu.h"
#include "hot.h"
#include "csum.h"
#include "ct.h"

static __always_inline int mac_equal(const __u8 *a, const __u8 *b)
{
	return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) |
		(a[4] ^ b[4]) | (a[5] ^ b[5])) == 0;
}

static __always_inline void ipv4_decrease_ttl(struct iphdr *iph)
{
	__u32 check = iph->check;

	check += bpf_htons(0x0100);
	iph->check = (__u16)(check + (check >= 0xFFFF));
	iph->ttl--;
}

/*
 * The key and the answer, per CPU, off the stack: the forward path, all
 * inlined into one frame with the local branch's calls beside it, would
 * leave no room for anything else in the 512 bytes.
 */
struct fwd_bufs {
	struct silo_route_key key;
	struct silo_route_entry r;
	/* Kept from packet to packet (not zeroed): the clock, and the
	 * ingress device's record as read under genid dev_genid, which a
	 * change of the record bumps. */
	struct coarse_clock clock;
	__u64 dev_genid;
	__u32 dev_ifindex;
	struct silo_device dev;
	/* route_hot's slots' tags (internal.h): 2 KiB a storm keeps warm,
	 * where reading the slots would miss the cache. */
	__u16 hot_tags[SILO_HOT_SLOTS];
	/* A checksum a local sender left to offload, finished here. */
	struct l4_csum csum;
	struct ct_bufs ct; /* conntrack's lookup (ct.h) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fwd_bufs);
} fwd_bufs SEC(".maps");

/* What one packet's forwarding knows, from the guards to the redirect. */
struct fwd {
	const struct silo_device *dev; /* the ingress device's */
	const struct silo_genid *g;
	struct silo_route_entry *e; /* the cache's element of key, or NULL */
	struct silo_admit *adm; /* this CPU's admission state, once read */
	void *cache; /* this node's route cache, or NULL */
	struct fwd_bufs *b; /* this CPU's */
	struct silo_route_key *key; /* fwd_bufs' */
	struct silo_route_entry *r; /* the answer: the cache's copy or the
				     * FIB's (fwd_bufs') */
	__u64 gen; /* genid, read before any lookup */
	__u64 sweeps; /* genid's sweeps, read with it */
	__u32 flags; /* genid's key flags */
	__u32 node;
	__u32 h; /* key's admission hash, 0 until computed */
	/* Above the PMTU floor and the family not watched: resolved by
	 * bpf_fib_lookup, which sees exceptions; the cache is not used. */
	int big;
	/* Above the PMTU floor, the family watched, no mark for the
	 * destination (read after now): a copy may serve larger frames. */
	int pmtu_clean;
	__u64 now; /* coarse, read with the heartbeat */
	__u32 watch; /* the heartbeat's pmtu_watch */
	int hot_fill; /* f->r a hit in the route cache: copy it to route_hot
		       * if the frame goes out (fwd_redirect()) */
	int use_cache; /* the program's cache_enabled */
	int csum_finish; /* the program's: frames leave XDP as bytes */
	/* Outside for nftables alone, established connections let in:
	 * forwarded only with conntrack's verdict (ct.h). */
	int ct;
	/* The packet as routing sees it: a NATed one's destination is
	 * NAT's (ct.h), else the packet's own. */
	const struct pkt *rp;
};

/*
 * The marks' clock from this CPU's reading (daemon_live()), which may be
 * late: a mark of the epoch that has just begun would be looked for in
 * the two before it. Near an epoch's end, the clock itself.
 */
static __always_inline __u64 pmtu_now(__u64 now)
{
	if ((now + COARSE_SLACK_NS) >> SILO_PMTU_EPOCH_SHIFT !=
	    now >> SILO_PMTU_EPOCH_SHIFT)
		return bpf_ktime_get_coarse_ns();
	return now;
}

/*
 * A packet above the PMTU floor: towards a destination an exception may
 * cover, to the stack. Where silod watches every error of the family the
 * rest is served from the cache (an entry's MTU is the route's, and no
 * exception applies); elsewhere bpf_fib_lookup resolves each, except
 * IPv4 under ip_forward_use_pmtu, where the lookup takes a route's MTU
 * over the exception the kernel would apply.
 */
static __always_inline __u32 fwd_guard_pmtu(const struct pkt *p, struct fwd *f)
{
	if (!above_pmtu_floor(p, f->g))
		return 0;
	if (f->watch & (1U << pmtu_fam(p->family))) {
		if (pmtu_marked(p, pmtu_now(f->now)))
			return SILO_STAT_PASS_MTU;
		f->pmtu_clean = 1;
		return 0;
	}
	if (p->family == SILO_AF_INET &&
	    (READ_ONCE(f->g->pmtu_flags) & SILO_PMTU_F_USE_V4))
		return SILO_STAT_PASS_MTU;
	f->big = 1;
	return 0;
}

/*
 * What sends a packet to the stack before any lookup: 0 to go on, else the
 * pass reason. A family outside the envelope, and whatever the kernel
 * would not forward as is; what the ingress device says comes after
 * (fwd_guard_dev()).
 */
static __always_inline __u32 fwd_guard(struct xdp_md *ctx, const struct pkt *p,
				       struct fwd *f)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = (void *)(long)ctx->data;
	__u32 zero = 0, fam, outside;

	if ((void *)(eth + 1) > data_end)
		return SILO_STAT_PASS_TRUNCATED;
	if (p->vlan_depth)
		return SILO_STAT_PASS_VLAN;
	f->g = bpf_map_lookup_elem(&genid, &zero);
	if (!f->g)
		return SILO_STAT_PASS_FIB;
	/* Something in the stack XDP cannot reproduce sees this family;
	 * a stateful firewall, its established connections excepted. */
	fam = p->family == SILO_AF_INET ? SILO_FAM_V4 : SILO_FAM_V6;
	outside = READ_ONCE(f->g->outside[fam]);
	if (outside && !ct_may(f->g, fam, outside))
		return SILO_STAT_PASS_ENVELOPE;
	f->ct = outside != 0;
	if (p->ip_options)
		return SILO_STAT_PASS_IP_OPTIONS;
	if (p->family == SILO_AF_INET && !ipv4_csum_ok(ctx))
		return SILO_STAT_PASS_BAD_CSUM;
	if (p->martian)
		return SILO_STAT_PASS_MARTIAN;
	if (p->hop_by_hop)
		return SILO_STAT_PASS_HOP_BY_HOP;
	if (p->ttl <= 1)
		return SILO_STAT_PASS_TTL;
	if (!daemon_live(&f->b->clock, &f->now, &f->watch))
		return SILO_STAT_PASS_NO_DAEMON;
	if (above_route_mtu(p, f->g, f->watch))
		return SILO_STAT_PASS_ROUTE_MTU;
	/* Conntrack's verdict last: the lookup is the dearest guard. */
	f->rp = p;
	if (f->ct) {
		if (ct_verdict(ctx, p, &f->b->ct, &f->b->csum, f->g))
			return SILO_STAT_PASS_ENVELOPE;
		if (f->b->ct.nat)
			f->rp = ct_route_pkt(p, &f->b->ct);
	}
	return fwd_guard_pmtu(f->rp, f);
}

/*
 * The route key, under genid and the flags it carries. Read before any
 * lookup: an entry is never newer than its stamp. Flags after genid: user
 * space stores them before it bumps genid.
 */
static __always_inline void fwd_key(struct xdp_md *ctx, const struct pkt *p,
				    struct fwd *f)
{
	f->gen = READ_ONCE(f->g->genid);
	barrier();
	f->flags = READ_ONCE(f->g->flags);
	f->sweeps = READ_ONCE(f->g->sweeps);
	fill_key(f->key, ctx, p, f->flags);
}

/* The ingress device's record: this CPU's copy while genid is the one it
 * was read under, else from the map (after gen was read) and kept. */
static __always_inline const struct silo_device *
fwd_dev(struct fwd_bufs *b, __u32 ifindex, __u64 gen)
{
	const struct silo_device *dev;

	if (b->dev_genid == gen && b->dev_ifindex == ifindex)
		return &b->dev;
	dev = bpf_map_lookup_elem(&devices, &ifindex);
	if (!dev)
		return NULL;
	b->dev = *dev;
	b->dev_ifindex = ifindex;
	b->dev_genid = gen;
	return &b->dev;
}

/*
 * Frames for another host, broadcast or multicast are not ours; a bridge
 * or bond takes its ports' frames before IP sees them.
 */
static __always_inline __u32 fwd_guard_dev(struct xdp_md *ctx, struct fwd *f)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = (void *)(long)ctx->data;
	__u32 ifindex = ctx->ingress_ifindex;

	if ((void *)(eth + 1) > data_end)
		return SILO_STAT_PASS_TRUNCATED;
	f->dev = fwd_dev(f->b, ifindex, f->gen);
	if (!f->dev || !mac_equal(f->dev->mac, eth->h_dest))
		return SILO_STAT_PASS_NOT_HOST;
	if (f->dev->flags & SILO_DEV_F_PORT)
		return SILO_STAT_PASS_PORT;
	return 0;
}

/*
 * The node's route cache: 1 with f->r a current copy of this packet's
 * entry, 0 when it must be resolved (too big for it, a miss, a stale or
 * raced entry; f->e then is the stale element, if any). In a storm a key
 * this CPU has not seen is not looked up (admit.h). A hit is copied to
 * route_hot if the frame goes out (fwd_redirect()).
 */
static __always_inline int fwd_cache_hit(struct xdp_md *ctx, struct fwd *f,
					 struct silo_stats *st)
{
	int rc;

	if (f->big) {
		count(st, SILO_STAT_CACHE_BIG);
		return 0;
	}
	f->adm = admit_state(f->now);
	/* Unseen in a storm: not even the node's cache is needed yet. */
	if (!worth_lookup(f->adm, f->key, &f->h)) {
		count(st, SILO_STAT_CACHE_UNSEEN);
		count(st, SILO_STAT_CACHE_MISS);
		return 0;
	}
	f->cache = node_cache(&f->node);
	if (f->cache)
		f->e = bpf_map_lookup_elem(f->cache, f->key);
	if (!f->e) {
		count(st, SILO_STAT_CACHE_MISS);
		return 0;
	}
	rc = entry_read(f->e, f->r, f->key, f->gen);
	if (rc == 0) {
		count(st, SILO_STAT_CACHE_HIT);
		f->hot_fill = 1;
		return 1;
	}
	count(st, rc == -1 ? SILO_STAT_CACHE_STALE : SILO_STAT_CACHE_RACE);
	return 0;
}

/*
 * The lookup's flags: BPF_FIB_LOOKUP_DIRECT (the main table alone) where
 * silod has shown that no rule before main's can match a packet whose
 * source and destination direct_skip does not hold, nor the local table
 * hold its destination (route.h, direct_skip); else 0, the rules' walk.
 */
static __always_inline __u32 fib_flags(const struct pkt *p, const struct fwd *f)
{
	bool v4 = p->family == SILO_AF_INET;
	struct silo_direct_key k = {
		.prefixlen = 8 + (v4 ? 32 : 128),
		.kind = v4 ? SILO_DIRECT_DST_V4 : SILO_DIRECT_DST_V6,
	};

	/* A VRF port's (its record's rp_ifindex the VRF device): a lookup
	 * of main alone would take the VRF's table, even with no l3mdev
	 * rule to send the kernel's there. */
	if (!(f->flags & (v4 ? SILO_GENID_DIRECT_V4 : SILO_GENID_DIRECT_V6)) ||
	    !(f->watch & SILO_HB_DIRECT_TABLES) || !f->dev ||
	    f->dev->rp_ifindex > 1)
		return 0;
	__builtin_memcpy(k.addr, p->dst, sizeof(k.addr));
	if (bpf_map_lookup_elem(&direct_skip, &k))
		return 0;
	if (!(f->flags &
	      (v4 ? SILO_GENID_DIRECT_SRC_V4 : SILO_GENID_DIRECT_SRC_V6)))
		return BPF_FIB_LOOKUP_DIRECT;
	k.kind = v4 ? SILO_DIRECT_SRC_V4 : SILO_DIRECT_SRC_V6;
	__builtin_memcpy(k.addr, p->src, sizeof(k.addr));
	if (bpf_map_lookup_elem(&direct_skip, &k))
		return 0;
	return BPF_FIB_LOOKUP_DIRECT;
}

/*
 * A miss: bpf_fib_lookup with every input the kernel's lookup (and its
 * multipath hash) takes, the answer stamped with the genid read before it
 * and stored in the cache. 0, or -1 when the kernel must decide.
 */
static __always_inline int fwd_resolve(struct xdp_md *ctx, const struct pkt *p,
				       struct fwd *f, struct silo_stats *st)
{
	struct bpf_fib_lookup fib = {};
	int rc;

	fib.family = p->family;
	fib.ifindex = ctx->ingress_ifindex;
	fib.tot_len = p->l3_len;
	fib.l4_protocol = p->l4_proto;
	fib.sport = p->sport;
	fib.dport = p->dport;
	if (p->family == SILO_AF_INET)
		fib.tos = p->tos;
	else
		fib.flowinfo = p->flowinfo;
	__builtin_memcpy(fib.ipv6_src, p->src, sizeof(fib.ipv6_src));
	__builtin_memcpy(fib.ipv6_dst, p->dst, sizeof(fib.ipv6_dst));
	rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), fib_flags(p, f));
	if (rc < 0 || rc >= SILO_STAT_FIB_CODES)
		count(st, SILO_STAT_FIB_ERROR);
	else
		count(st, SILO_STAT_FIB_FIRST + rc);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return -1;

	/* What an entry stored whole leaves unset is zero. */
	__builtin_memset(f->r, 0, sizeof(*f->r));
	f->r->genid = f->gen;
	f->r->ifindex = fib.ifindex;
	f->r->mtu = route_mtu_cap(p, f->g, fib.mtu_result);
	/* An IPv4 route may have an IPv6 gateway: the lookup says so. */
	f->r->family =
		fib.family == SILO_AF_INET6 ? SILO_AF_INET6 : SILO_AF_INET;
	__builtin_memcpy(f->r->smac, fib.smac, sizeof(f->r->smac));
	__builtin_memcpy(f->r->dmac, fib.dmac, sizeof(f->r->dmac));
	/* Big packets leave the route cache alone: its entries stay. */
	if (!f->use_cache || f->big)
		return 0;
	if (!f->e && !admit_key(f->adm, f->key, f->h)) {
		count(st, SILO_STAT_CACHE_REFUSED);
		return 0;
	}
	if (!f->cache)
		f->cache = node_cache(&f->node);
	if (!f->cache)
		return 0;
	/* What only a stored entry needs. */
	__builtin_memcpy(f->r->nexthop, fib.ipv6_dst, sizeof(f->r->nexthop));
	__builtin_memcpy(&f->r->key, f->key, sizeof(f->r->key));
	cache_fill(f->cache, f->node, f->key, f->e, f->r, st);
	return 0;
}

/*
 * Does the frame have a shape (internal.h) the front can match: the IP
 * packet right after the Ethernet header, TCP or UDP right after IP's
 * fixed header? (Its lengths the front checks for every frame.) And is
 * the destination still not local, now that genid has been read: an
 * address added since the parse bumps genid after it is written, so a
 * copy made under the old genid goes with it.
 */
static __always_inline int hot_shaped(const struct pkt *p)
{
	__u32 ip_len = p->family == SILO_AF_INET ? sizeof(struct iphdr) :
						   sizeof(struct ipv6hdr);

	return p->l3_off == sizeof(struct ethhdr) &&
	       p->l4_off == p->l3_off + ip_len && !is_local(p);
}

/*
 * The copy, on the flow's second sighting. A larger frame here, in a
 * family silod watches, has passed the PMTU marks (fwd_guard_pmtu()): the
 * copy serves larger frames (f->pmtu_clean) while no mark or unseen error
 * is written after that check, which read the marks after this CPU's clock
 * reading f->now, never later than the clock: a later write leaves the
 * program's last mark's time at or past it (pmtu_marked_now()), which the
 * front compares. A smaller frame's copy is not clean: a larger frame of
 * the flow then takes this path and makes the copy again.
 */
static __always_inline void fwd_hot_fill(struct xdp_md *ctx, struct fwd *f)
{
	__u64 m[SILO_SHAPE_WORDS];
	struct silo_hot *s;

	s = hot_slot_to_fill(ctx, f->b->hot_tags, m);
	if (s)
		hot_fill(ctx, s, m, f->r, f->sweeps, f->watch, f->now,
			 f->pmtu_clean, f->dev->flags & SILO_DEV_F_LOCAL_TX);
}

/*
 * Whether the egress device sends a multi-buffer frame: the kernel drops
 * one redirected to a device without ndo-xmit-sg (its XDP features, kept
 * in the device's record by user space), where the stack would send it.
 */
static __always_inline int egress_takes_frags(__u32 ifindex)
{
	const struct silo_device *out;

	out = bpf_map_lookup_elem(&devices, &ifindex);
	return out && (out->flags & SILO_DEV_F_XMIT_SG);
}

/*
 * From a sender on this host (after the redirect's target is recorded: a
 * frame changed here leaves as bytes): a checksum it left to offload
 * leaves finished, as the egress device would send it, counted. -1 for
 * one not finished here (lib/csum.h): to the stack, which keeps it so. */
static __always_inline int fwd_csum(struct xdp_md *ctx, const struct pkt *p,
				    struct fwd *f)
{
	int rc;

	if (!(f->dev->flags & SILO_DEV_F_LOCAL_TX))
		return 0;
	rc = l4_csum_finish(ctx, p, &f->b->csum, f->csum_finish);
	if (!rc)
		return 0;
	f->b->csum.ifindex = ctx->ingress_ifindex;
	csum_count(&f->b->csum.ifindex,
		   rc > 0 ? SILO_CSUM_STAT_FINISHED : SILO_CSUM_STAT_PASSED);
	return rc < 0 ? -1 : 0;
}

/*
 * With the route known: the source check, what the kernel would not send
 * as is (MTU, hairpin), then the trailer trimmed, the MACs rewritten, TTL
 * or hop limit decreased and the redirect to the egress device.
 */
static __always_inline int fwd_redirect(struct xdp_md *ctx, const struct pkt *p,
					const struct pkt *rp, struct fwd *f,
					struct silo_stats *st)
{
	struct ethhdr *eth;
	void *data_end;
	__u32 trailer;
	int rc;

	/* The source check, cached on its own: by source, not by route.
	 * Source entries live in the node's cache too, which a storm of
	 * sources that need no check does not read. */
	rc = 0;
	if (source_needed(rp, f->dev, f->flags, f->watch)) {
		if (f->use_cache && !f->cache)
			f->cache = node_cache(&f->node);
		rc = source_verdict(ctx, rp, f->dev, f->cache, f->node, f->gen,
				    f->flags, f->now, f->key, f->adm, st);
	}
	/* Constants: the verifier keeps no bounds on a byte from a map. */
	if (rc == SILO_STAT_PASS_RP_FILTER)
		return pass(st, SILO_STAT_PASS_RP_FILTER);
	if (rc)
		return pass(st, SILO_STAT_PASS_LOCAL_SRC);

	if (p->l3_len > f->r->mtu)
		return pass(st, SILO_STAT_PASS_MTU);
	if (f->r->ifindex == ctx->ingress_ifindex)
		return pass(st, SILO_STAT_PASS_HAIRPIN);
	/* Multi-buffer (bytes past the first buffer), to an egress that
	 * cannot send it. */
	if (p->frame_len > ctx->data_end - ctx->data &&
	    !egress_takes_frags(f->r->ifindex))
		return pass(st, SILO_STAT_PASS_NO_TX_PORT);
	/* The stack trims what follows the IP packet before forwarding. */
	trailer = p->frame_len - p->l3_off - p->l3_len;
	if (trailer) {
		if (bpf_xdp_adjust_tail(ctx, -(int)trailer))
			return pass(st, SILO_STAT_PASS_TRUNCATED);
		count(st, SILO_STAT_TRIMMED);
	}
	/* Only records the target: the packet is untouched until we return. */
	if (bpf_redirect_map(&tx_ports, f->r->ifindex, XDP_PASS) !=
	    XDP_REDIRECT)
		return pass(st, SILO_STAT_PASS_NO_TX_PORT);
	if (fwd_csum(ctx, p, f))
		return pass(st, SILO_STAT_PASS_L4_BAD);
	/* NAT after the checksum is finished: it updates a complete one. */
	if (f->ct && ct_nat_apply(ctx, p, &f->b->ct, f->r->ifindex))
		return pass(st, SILO_STAT_PASS_ENVELOPE);
	/* A hit, on its way out as it came: its flow's next frames go from
	 * route_hot (front.h), while silod moves sweeps; not NATed ones. */
	if (f->hot_fill && !(f->ct && f->b->ct.nat) &&
	    (f->watch & SILO_HB_SWEEPS) && hot_shaped(p))
		fwd_hot_fill(ctx, f);
	if (f->ct)
		ct_count(&f->b->ct, SILO_CT_STAT_FORWARDED);

	eth = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if ((void *)(eth + 1) > data_end)
		return pass(st, SILO_STAT_PASS_TRUNCATED);
	__builtin_memcpy(eth->h_dest, f->r->dmac, sizeof(eth->h_dest));
	__builtin_memcpy(eth->h_source, f->r->smac, sizeof(eth->h_source));
	if (p->family == SILO_AF_INET) {
		struct iphdr *iph = (void *)(eth + 1);

		if ((void *)(iph + 1) > data_end)
			return pass(st, SILO_STAT_PASS_TRUNCATED);
		ipv4_decrease_ttl(iph);
	} else {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end)
			return pass(st, SILO_STAT_PASS_TRUNCATED);
		ip6->hop_limit--;
	}
	count(st, SILO_STAT_REDIRECT);
	return XDP_REDIRECT;
}

/* Forward from the cache, or resolve with bpf_fib_lookup and cache it. */
static __always_inline int forward_packet(struct xdp_md *ctx, struct pkt *p,
					  struct silo_stats *st, bool use_cache,
					  bool csum_finish)
{
	struct fwd f = {};
	struct fwd_bufs *b;
	__u32 reason, zero = 0;

	b = bpf_map_lookup_elem(&fwd_bufs, &zero);
	if (!b)
		return pass(st, SILO_STAT_PASS_FIB);
	f.b = b;
	f.use_cache = use_cache;
	f.csum_finish = csum_finish;
	f.key = &b->key;
	f.r = &b->r;
	reason = fwd_guard(ctx, p, &f);
	if (!reason) {
		fwd_key(ctx, f.rp, &f);
		reason = fwd_guard_dev(ctx, &f);
	}
	if (reason)
		return pass(st, reason);
	if (!(use_cache && fwd_cache_hit(ctx, &f, st)) &&
	    fwd_resolve(ctx, f.rp, &f, st))
		return pass(st, SILO_STAT_PASS_FIB);
	return fwd_redirect(ctx, p, f.rp, &f, st);
}

/* A NATed connection's packet for a local address (ct_local_nat()). */
static __always_inline int fwd_local_nat(struct xdp_md *ctx,
					 const struct pkt *p)
{
	__u32 zero = 0;
	struct fwd_bufs *b = bpf_map_lookup_elem(&fwd_bufs, &zero);

	return b && ct_local_nat(ctx, p, &b->ct, &b->csum);
}

#endif /* SILO_BPF_LIB_FORWARD_H */
