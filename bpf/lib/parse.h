/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Header parsing for silo's XDP program. Every read is bounds-checked against
 * data_end, loops are bounded, and anything not understood returns a
 * SILO_STAT_PASS_* reason so the caller hands the packet to the stack.
 *
 * A multi-buffer frame (a jumbo frame: the program is loaded with
 * BPF_F_XDP_HAS_FRAGS) has its headers read only in its first buffer
 * (data..data_end): a header that does not fit there is not understood.
 * Every length (the IP length against the frame, the bytes after the IP
 * packet) is taken against the whole frame, bpf_xdp_get_buff_len().
 */
#ifndef SILO_BPF_PARSE_H
#define SILO_BPF_PARSE_H

#include "common.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define IP_MF 0x2000
#define IP_OFFSET 0x1FFF
#define IPPROTO_HOPOPTS_ 0
#define IPPROTO_ROUTING_ 43
#define IPPROTO_FRAGMENT_ 44
#define IPPROTO_AH_ 51
#define IPPROTO_DSTOPTS_ 60

/* What the rest of the program needs to know about a packet. */
struct pkt {
	__u8 src[16];
	__u8 dst[16];
	__u16 l3_off; /* from data to the IP header */
	__u16 l4_off; /* from data to the TCP or UDP header */
	__u16 l3_len; /* IPv4 total length / IPv6 40 + payload length */
	/* The whole frame's, fragments included: what follows the IP packet
	 * (frame_len - l3_off - l3_len) the stack trims. */
	__u32 frame_len;
	__be32 flowinfo; /* IPv6 traffic class and flow label */
	__be16 sport;
	__be16 dport;
	__u8 family;
	__u8 tos; /* IPv4 TOS, IPv6 traffic class */
	__u8 ttl; /* TTL / hop limit */
	__u8 l4_proto;
	__u8 vlan_depth;
	__u8 ip_options; /* IPv4 header longer than 20 bytes */
	__u8 hop_by_hop; /* IPv6 hop-by-hop options present */
	__u8 martian; /* an address the stack handles specially */
};

static __always_inline int ipv4_martian(__be32 saddr, __be32 daddr)
{
	__u32 s = bpf_ntohl(saddr), d = bpf_ntohl(daddr);

	/* 0/8, 127/8, 169.254/16, 224/4 and 240/4 (limited broadcast too) */
	if ((s >> 24) == 0 || (s >> 24) == 127 || (s >> 16) == 0xA9FE ||
	    (s >> 28) >= 0xE)
		return 1;
	if ((d >> 24) == 0 || (d >> 24) == 127 || (d >> 16) == 0xA9FE ||
	    (d >> 28) >= 0xE)
		return 1;
	return 0;
}

static __always_inline int ipv6_addr_martian(const struct in6_addr *a)
{
	__u32 w0 = bpf_ntohl(a->in6_u.u6_addr32[0]);

	if ((w0 >> 24) == 0xFF || (w0 >> 22) == (0xFE80 >> 6))
		return 1; /* multicast, link-local */
	if (w0 == 0 && a->in6_u.u6_addr32[1] == 0) {
		__u32 w2 = bpf_ntohl(a->in6_u.u6_addr32[2]);
		__u32 w3 = bpf_ntohl(a->in6_u.u6_addr32[3]);

		/* ::, ::1, IPv4-mapped */
		if (w2 == 0xFFFF || (w2 == 0 && w3 <= 1))
			return 1;
	}
	return 0;
}

static __always_inline int parse_l4(struct pkt *p, void *l4, void *l3_end,
				    void *data_end)
{
	if (p->l4_proto == IPPROTO_TCP) {
		struct tcphdr *th = l4;

		if ((void *)(th + 1) > data_end || (void *)(th + 1) > l3_end ||
		    th->doff < 5)
			return SILO_STAT_PASS_L4_BAD;
		p->sport = th->source;
		p->dport = th->dest;
		return 0;
	}
	if (p->l4_proto == IPPROTO_UDP) {
		struct udphdr *uh = l4;

		if ((void *)(uh + 1) > data_end || (void *)(uh + 1) > l3_end)
			return SILO_STAT_PASS_L4_BAD;
		p->sport = uh->source;
		p->dport = uh->dest;
		return 0;
	}
	return SILO_STAT_PASS_L4_PROTO;
}

static __always_inline int parse_ipv4(struct pkt *p, void *l3, void *data_end)
{
	struct iphdr *iph = l3;
	__u32 ihl, tot;

	if ((void *)(iph + 1) > data_end)
		return SILO_STAT_PASS_TRUNCATED;
	if (iph->version != 4)
		return SILO_STAT_PASS_BAD_VERSION;
	ihl = iph->ihl * 4;
	if (ihl < sizeof(*iph))
		return SILO_STAT_PASS_BAD_IHL;
	if (l3 + ihl > data_end)
		return SILO_STAT_PASS_TRUNCATED;
	tot = bpf_ntohs(iph->tot_len);
	if (tot < ihl || p->l3_off + tot > p->frame_len)
		return SILO_STAT_PASS_BAD_LEN;
	/* Addresses first: a fragment for a local address is counted. */
	p->family = SILO_AF_INET;
	__builtin_memcpy(p->src, &iph->saddr, 4);
	__builtin_memcpy(p->dst, &iph->daddr, 4);
	/* Every fragment names its protocol: one of ICMP may be an error
	 * that teaches a PMTU exception (pmtu.h). */
	p->l4_proto = iph->protocol;
	if (iph->frag_off & bpf_htons(IP_MF | IP_OFFSET))
		return SILO_STAT_PASS_FRAGMENT;

	p->tos = iph->tos;
	p->ttl = iph->ttl;
	p->l3_len = tot;
	p->ip_options = ihl > sizeof(*iph);
	p->martian = ipv4_martian(iph->saddr, iph->daddr);
	p->l4_off = p->l3_off + ihl;
	return parse_l4(p, l3 + ihl, l3 + tot, data_end);
}

static __always_inline int parse_ipv6(struct pkt *p, void *l3, void *data_end)
{
	struct ipv6hdr *ip6 = l3;
	void *cur = ip6 + 1, *l3_end;
	__u8 nexthdr;
	int i;

	if ((void *)(ip6 + 1) > data_end)
		return SILO_STAT_PASS_TRUNCATED;
	if (ip6->version != 6)
		return SILO_STAT_PASS_BAD_VERSION;
	p->l3_len = sizeof(*ip6) + bpf_ntohs(ip6->payload_len);
	if (p->l3_off + p->l3_len > p->frame_len)
		return SILO_STAT_PASS_BAD_LEN;
	l3_end = cur + bpf_ntohs(ip6->payload_len);

	p->family = SILO_AF_INET6;
	p->tos = (ip6->priority << 4) | (ip6->flow_lbl[0] >> 4);
	/* What the kernel's flowi6 gets: ip6_flowinfo() */
	p->flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0FFFFFFF);
	p->ttl = ip6->hop_limit;
	p->martian = ipv6_addr_martian(&ip6->saddr) ||
		     ipv6_addr_martian(&ip6->daddr);
	__builtin_memcpy(p->src, &ip6->saddr, 16);
	__builtin_memcpy(p->dst, &ip6->daddr, 16);

	nexthdr = ip6->nexthdr;
	for (i = 0; i < SILO_MAX_IPV6_EXTHDRS; i++) {
		struct ipv6_opt_hdr *oh = cur;

		switch (nexthdr) {
		case IPPROTO_HOPOPTS_:
			/* only valid right after the fixed header */
			if (i != 0)
				return SILO_STAT_PASS_EXTHDR;
			p->hop_by_hop = 1;
			/* fall through */
		case IPPROTO_ROUTING_:
		case IPPROTO_DSTOPTS_:
			if ((void *)(oh + 1) > data_end)
				return SILO_STAT_PASS_TRUNCATED;
			nexthdr = oh->nexthdr;
			cur += (oh->hdrlen + 1) * 8;
			break;
		case IPPROTO_AH_:
			if ((void *)(oh + 1) > data_end)
				return SILO_STAT_PASS_TRUNCATED;
			nexthdr = oh->nexthdr;
			cur += (oh->hdrlen + 2) * 4;
			break;
		case IPPROTO_FRAGMENT_:
			return SILO_STAT_PASS_FRAGMENT;
		default:
			goto l4;
		}
		if (cur > l3_end)
			return SILO_STAT_PASS_EXTHDR;
	}
	return SILO_STAT_PASS_EXTHDR;
l4:
	p->l4_proto = nexthdr;
	p->l4_off = p->l3_off + (cur - l3);
	return parse_l4(p, cur, l3_end, data_end);
}

/*
 * Returns 0 for a TCP/UDP packet over IPv4/IPv6, else a pass reason.
 * frame_len: bpf_xdp_get_buff_len(), which the caller has read once (a
 * helper call) for every length here and for the front.
 */
static __always_inline int parse_packet(struct xdp_md *ctx, struct pkt *p,
					__u32 frame_len)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	void *cur = eth + 1;
	__be16 proto;
	int i;

	p->frame_len = frame_len;
	if (cur > data_end)
		return SILO_STAT_PASS_TRUNCATED;
	proto = eth->h_proto;
	for (i = 0; i < SILO_MAX_VLAN_TAGS; i++) {
		struct vlan_hdr *vh = cur;

		if (proto != bpf_htons(ETH_P_8021Q) &&
		    proto != bpf_htons(ETH_P_8021AD))
			break;
		if ((void *)(vh + 1) > data_end)
			return SILO_STAT_PASS_TRUNCATED;
		proto = vh->h_vlan_encapsulated_proto;
		cur = vh + 1;
		p->vlan_depth++;
	}
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD))
		return SILO_STAT_PASS_VLAN_DEPTH;
	p->l3_off = cur - data;
	if (proto == bpf_htons(ETH_P_IP))
		return parse_ipv4(p, cur, data_end);
	if (proto == bpf_htons(ETH_P_IPV6))
		return parse_ipv6(p, cur, data_end);
	return SILO_STAT_PASS_NOT_IP;
}

/* RFC 1071 over a 20-byte header at l3 (options are passed before this). */
static __always_inline int ipv4_hdr_csum_ok(void *l3, void *data_end)
{
	__u16 *w = l3;
	__u32 sum = 0;
	int i;

	if ((void *)(w + 10) > data_end)
		return 0;
	for (i = 0; i < 10; i++)
		sum += w[i];
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	return sum == 0xFFFF;
}

static __always_inline int ipv4_csum_ok(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;

	return ipv4_hdr_csum_ok(data + sizeof(struct ethhdr),
				(void *)(long)ctx->data_end);
}

#endif /* SILO_BPF_PARSE_H */
