/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The front: a frame forwarded from route_hot, this CPU's copy of its
 * flow's answer, before anything is parsed.
 */
#ifndef SILO_BPF_LIB_FRONT_H
#define SILO_BPF_LIB_FRONT_H

#include "common.h"
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "daemon.h"
#include "hot.h"
#include "forward.h"

/*
 * What parse_l4() asks of the TCP or UDP header (proto: the shape's):
 * inside the frame and the IP packet (which ends at l3_end), and a TCP
 * header no shorter than 20 bytes.
 */
static __always_inline int front_l4_ok(void *l4, __u8 proto, void *l3_end,
				       void *data_end)
{
	struct tcphdr *th = l4;
	struct udphdr *uh = l4;

	if (proto == IPPROTO_TCP)
		return (void *)(th + 1) <= data_end &&
		       (void *)(th + 1) <= l3_end && th->doff >= 5;
	return (void *)(uh + 1) <= data_end && (void *)(uh + 1) <= l3_end;
}

/*
 * The frame in one buffer (fwd_redirect() would refuse one of several to
 * some egresses), the IP packet inside it (a trailer the caller trims, as
 * the stack does), TTL or hop limit above 1, the L4 header inside the
 * packet, IPv4's checksum right (the lengths, TTL and ID are out of the
 * shape): the IP header, with p->l3_len set, else NULL (p->frame_len: the
 * whole frame's length, bpf_xdp_get_buff_len()).
 */
static __always_inline void *front_frame(struct xdp_md *ctx, struct pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	void *l3 = data + sizeof(struct ethhdr), *l4;
	__u32 len = p->frame_len;
	__u8 proto;

	if (len != data_end - data)
		return NULL;
	if (p->family == SILO_AF_INET) {
		struct iphdr *iph = l3;

		if ((void *)(iph + 1) > data_end)
			return NULL;
		p->l3_len = bpf_ntohs(iph->tot_len);
		p->ttl = iph->ttl;
		proto = iph->protocol;
		l4 = iph + 1;
	} else {
		struct ipv6hdr *ip6 = l3;

		if ((void *)(ip6 + 1) > data_end)
			return NULL;
		p->l3_len = sizeof(*ip6) + bpf_ntohs(ip6->payload_len);
		p->ttl = ip6->hop_limit;
		proto = ip6->nexthdr;
		l4 = ip6 + 1;
	}
	/* TTL or hop limit 1: the stack's, to send time exceeded. */
	if (sizeof(struct ethhdr) + p->l3_len > len || p->ttl <= 1 ||
	    !front_l4_ok(l4, proto, l3 + p->l3_len, data_end))
		return NULL;
	if (p->family == SILO_AF_INET && !ipv4_hdr_csum_ok(l3, data_end))
		return NULL;
	return l3;
}

/*
 * A checksum left to offload by a sender on this host (l4_csum_finish()'s
 * test, over the shape's fixed offsets, IPv4 UDP's 0 included): 1 where
 * the TCP or UDP checksum holds the pseudo header's sum, or where it
 * cannot tell; front_csum_finish() finishes it, or the full path takes
 * it. p->l3_len as front_frame() set it.
 */
static __always_inline int front_csum_left(struct xdp_md *ctx,
					   const struct pkt *p, __u8 family)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	void *l3 = data + sizeof(struct ethhdr);
	__u32 hdr = family == SILO_AF_INET ? sizeof(struct iphdr) :
					     sizeof(struct ipv6hdr);
	__u32 alen = family == SILO_AF_INET ? 8 : 32;
	void *addrs = l3 + (family == SILO_AF_INET ? 12 : 8);
	struct iphdr *iph = l3;
	struct ipv6hdr *ip6 = l3;
	__u16 *check;
	__u8 proto;

	if ((void *)(ip6 + 1) > data_end || addrs + alen > data_end)
		return 1;
	proto = family == SILO_AF_INET ? iph->protocol : ip6->nexthdr;
	check = l3 + hdr + (proto == IPPROTO_TCP ? 16 : 6);
	if ((void *)(check + 1) > data_end)
		return 1;
	return *check == pseudo_fold(addrs, addrs + alen / 2,
				     family != SILO_AF_INET, proto,
				     p->l3_len - hdr);
}

/*
 * What the full path's parse would have put in p and the checksum's
 * finish (l4_csum_finish()) and conntrack's verdict (ct_verdict()) read:
 * the addresses, protocol, ports and offsets, from the shape's fixed
 * offsets (no options, no extension header). 0, or -1 out of bounds.
 */
static __always_inline int front_pkt_fields(struct xdp_md *ctx, struct pkt *p,
					    __u8 family)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct iphdr *iph = data + sizeof(struct ethhdr);
	struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);
	struct udphdr *uh;

	p->l3_off = sizeof(struct ethhdr);
	if (family == SILO_AF_INET) {
		if ((void *)(iph + 1) > data_end)
			return -1;
		p->l4_proto = iph->protocol;
		p->l4_off = p->l3_off + sizeof(*iph);
		__builtin_memcpy(p->src, &iph->saddr, 4);
		__builtin_memcpy(p->dst, &iph->daddr, 4);
	} else {
		if ((void *)(ip6 + 1) > data_end)
			return -1;
		p->l4_proto = ip6->nexthdr;
		p->l4_off = p->l3_off + sizeof(*ip6);
		__builtin_memcpy(p->src, &ip6->saddr, 16);
		__builtin_memcpy(p->dst, &ip6->daddr, 16);
	}
	/* TCP's ports are where UDP's are. */
	uh = data + p->l4_off;
	if ((void *)(uh + 1) > data_end)
		return -1;
	p->sport = uh->source;
	p->dport = uh->dest;
	return 0;
}

/*
 * Finishes a checksum front_csum_left() found left to offload, as the full
 * path would (l4_csum_finish(), the packet's fields it reads filled from
 * the shape's fixed offsets), counted; called once the redirect's target
 * is recorded, so that the frame leaves as bytes. 0, or -1 where it
 * cannot: the full path takes the frame, untouched.
 */
static __always_inline int front_csum_finish(struct xdp_md *ctx, struct pkt *p,
					     struct fwd_bufs *b, __u8 family)
{
	int rc;

	if (front_pkt_fields(ctx, p, family))
		return -1;
	rc = l4_csum_finish(ctx, p, &b->csum, true);
	if (rc > 0) {
		b->csum.ifindex = ctx->ingress_ifindex;
		csum_count(&b->csum.ifindex, SILO_CSUM_STAT_FINISHED);
	}
	return rc < 0 ? -1 : 0;
}

/*
 * The size, as fwd_guard() and fwd_redirect() see it: under the route MTU
 * guard and the entry's MTU; above the PMTU floor, where silod watches
 * the family's errors, only for a destination the copy found no mark for
 * (nor an error unseen) while no mark or unseen error has been written
 * since (pmtu_marked_now()). Elsewhere a larger frame takes the full
 * path: bpf_fib_lookup, or the stack.
 */
static __always_inline int front_size_ok(const struct pkt *p,
					 const struct silo_genid *g,
					 const struct silo_hot *s, __u32 watch)
{
	__u32 i = SILO_PMTU_MARKED + pmtu_fam(p->family);
	__u64 *last;

	if (above_route_mtu(p, g, watch) || p->l3_len > s->mtu)
		return 0;
	if (!above_pmtu_floor(p, g))
		return 1;
	/* Clean only if made in a watched family: the watch is the copy's. */
	if (!s->pmtu_clean)
		return 0;
	last = bpf_map_lookup_elem(&pmtu_unseen, &i);
	return last && READ_ONCE(*last) < s->pmtu_stamp;
}

/* The next hop's MACs, TTL or hop limit less one (bounds as checked). */
static __always_inline void front_rewrite(struct xdp_md *ctx,
					  const struct silo_hot *s, __u8 family)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = (void *)(long)ctx->data;
	struct ipv6hdr *ip6 = (void *)(eth + 1);
	struct iphdr *iph = (void *)(eth + 1);
	__u64 lo;
	__u32 hi;

	if ((void *)(iph + 1) > data_end)
		return;
	/* Read as words (eth is aligned in the slot: a memcpy of its tail
	 * compiled to four byte loads); stored unaligned, as hot_match()
	 * reads the frame's words: the verifier allows it where the CPU does
	 * it well (x86-64, arm64). */
	lo = *(const __u64 *)(const void *)s->eth;
	hi = *(const __u32 *)(const void *)(s->eth + sizeof(lo));
	*(__u64 *)(void *)eth = lo;
	*(__u32 *)((void *)eth + sizeof(lo)) = hi;
	if (family == SILO_AF_INET)
		ipv4_decrease_ttl(iph);
	else if ((void *)(ip6 + 1) <= data_end)
		ip6->hop_limit--;
}

/*
 * A frame whose shape is a slot's has every byte the verdict reads equal
 * to those of a frame the full path forwarded from a current entry of the
 * route cache (hot_fill()), but the lengths, TTL and IPv4's ID and
 * checksum: the MACs and Ethernet type, the IP header (no options, no
 * extension header, not a fragment, the addresses, TOS or traffic class
 * and flow label), the protocol and the ports. Its route key would be the
 * same, so would its parse, the device checks and the source check's
 * verdict, and so would the answer while the slot's genid, sweeps and
 * watch are current: what those depend on is changed only by what moves
 * genid or sweeps (routes, rules, neighbours, the key's flags, a device's
 * record, the local addresses, src_checked) or the watch. What may still
 * differ is checked here, as the full path would: genid.outside (written
 * with no bump), silod alive, the frame (front_frame()) and its size
 * (front_size_ok()); a trailer is trimmed. A family outside for a stateful
 * firewall alone, established connections let in (ct_may()), takes
 * conntrack's verdict for every frame, as the full path does last in its
 * guards (fwd_guard()): every guard before it is the slot's or checked
 * here, so a refusal is the full path's too, PASS_ENVELOPE, counted in
 * ct_stats by why; a NATed connection's frame (never copied to a slot,
 * fwd_redirect()) goes to the full path, which rewrites it. frame_len:
 * the whole frame's, bpf_xdp_get_buff_len(). On anything else, or any
 * doubt, -1: the full path takes the frame and counts why.
 */
static __always_inline int front_serve(struct xdp_md *ctx,
				       struct silo_stats *st, __u32 frame_len,
				       struct fwd_bufs *b, __u8 family,
				       bool csum_finish)
{
	__u32 zero = 0, watch = 0, trailer, out, fam = pmtu_fam(family);
	const struct silo_genid *g;
	struct silo_hot *s;
	struct pkt p;
	int left;
	__u64 now;

	s = hot_match(ctx, b->hot_tags, family);
	if (!s)
		return -1;
	g = bpf_map_lookup_elem(&genid, &zero);
	if (!g || s->genid != READ_ONCE(g->genid) ||
	    s->sweeps != READ_ONCE(g->sweeps))
		return -1;
	out = READ_ONCE(g->outside[fam]);
	if (out && !ct_may(g, fam, out))
		return -1;
	if (!daemon_live(&b->clock, &now, &watch) || watch != s->watch)
		return -1;
	p.family = family;
	p.frame_len = frame_len;
	if (!front_frame(ctx, &p) || !front_size_ok(&p, g, s, watch))
		return -1;
	/* Left to offload: finished below where frames leave as bytes. */
	left = s->local_tx && front_csum_left(ctx, &p, family);
	if (left && !csum_finish)
		return -1;
	if (out) {
		if (front_pkt_fields(ctx, &p, family))
			return -1;
		if (ct_verdict(ctx, &p, &b->ct, &b->csum, g))
			return pass(st, SILO_STAT_PASS_ENVELOPE);
		if (b->ct.nat)
			return -1;
	}
	/* What follows the IP packet (Ethernet's padding of a small IPv4
	 * frame), trimmed as the stack and fwd_redirect() trim it; taken from
	 * the whole frame's length, so that only the check above keeps a
	 * frame of several buffers out. */
	trailer = p.frame_len - sizeof(struct ethhdr) - p.l3_len;
	if (trailer) {
		if (bpf_xdp_adjust_tail(ctx, -(int)trailer))
			return -1;
		count(st, SILO_STAT_TRIMMED);
	}
	/* Only records the target: the frame goes to the full path if the
	 * device is not there (trimmed, as fwd_redirect() would leave it). */
	if (bpf_redirect_map(&tx_ports, s->ifindex, XDP_PASS) != XDP_REDIRECT)
		return -1;
	if (left && front_csum_finish(ctx, &p, b, family))
		return -1;
	front_rewrite(ctx, s, family);
	if (out)
		ct_count(&b->ct, SILO_CT_STAT_FORWARDED);
	count(st, SILO_STAT_CACHE_HIT);
	count(st, SILO_STAT_REDIRECT);
	return XDP_REDIRECT;
}

/* One front_serve() for each family, the family a constant in each: no
 * branch on it past the match. */
static __always_inline int front_forward(struct xdp_md *ctx,
					 struct silo_stats *st, __u32 frame_len,
					 bool csum_finish)
{
	struct fwd_bufs *b;
	__u32 zero = 0;
	__u8 family;

	b = bpf_map_lookup_elem(&fwd_bufs, &zero);
	if (!b)
		return -1;
	family = hot_family(ctx);
	if (family == SILO_AF_INET)
		return front_serve(ctx, st, frame_len, b, SILO_AF_INET,
				   csum_finish);
	if (family == SILO_AF_INET6)
		return front_serve(ctx, st, frame_len, b, SILO_AF_INET6,
				   csum_finish);
	return -1;
}

#endif /* SILO_BPF_LIB_FRONT_H */
