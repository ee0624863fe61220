/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SILO_BPF_TESTS_REF_FWD_H
#define SILO_BPF_TESTS_REF_FWD_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/*
 * The reference forwarder (bench_xdp's and bench_live's baseline; never
 * silo's): what a plain XDP router does, as the kernel's samples/bpf/xdp_fwd
 * and xdp-forward's fib mode do, written for these benchmarks. Every
 * packet: parse, bpf_fib_lookup with the packet's own length (so the MTU is
 * checked), TTL or hop limit down, the next hop's MACs, out through ref_tx.
 * No cache, no counters, no admission: all it spends is what forwarding
 * itself costs, which silo's cache must beat. It shares no code with
 * silo's data path, so a change there never moves the baseline.
 *
 * What it cannot forward itself it hands to the stack (XDP_PASS): VLAN
 * tags, frames to group MACs, IPv4 options, hop-by-hop options, TTL or hop
 * limit <= 1 (the stack sends time exceeded), anything bpf_fib_lookup does
 * not resolve (no neighbour, too big, local, blackhole), an egress not in
 * ref_tx, and malformed headers (the stack drops them and counts).
 *
 * ref_tx: egress devices, keyed and valued by ifindex (the user fills it).
 */
#define REF_ETH_P_IP 0x0800
#define REF_ETH_P_IPV6 0x86DD
#define REF_AF_INET 2
#define REF_AF_INET6 10
#define REF_IP_MF 0x2000
#define REF_IP_OFFSET 0x1FFF
#define REF_NEXTHDR_HOP 0
#define REF_PROTO_TCP 6
#define REF_PROTO_UDP 17

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} ref_tx SEC(".maps");

/*
 * The ports, for policy rules that match them (ip rule sport/dport), as
 * the kernel's own lookup takes them; TCP's are where UDP's are. 0 when the
 * L4 header is cut short, as the kernel's flow dissector leaves them.
 */
static __always_inline void ref_ports(struct bpf_fib_lookup *fib, void *l4,
				      __u32 l4_len, void *data_end)
{
	struct udphdr *uh = l4;

	if (fib->l4_protocol != REF_PROTO_TCP &&
	    fib->l4_protocol != REF_PROTO_UDP)
		return;
	if (l4_len < sizeof(*uh) || (void *)(uh + 1) > data_end)
		return;
	fib->sport = uh->source;
	fib->dport = uh->dest;
}

/*
 * The redirect, then the rewrite: bpf_redirect_map() only picks the
 * device (the frame leaves after the program returns), so a device not in
 * ref_tx still finds the frame as it came and goes to the stack intact.
 */
static __always_inline int ref_out(struct ethhdr *eth,
				   const struct bpf_fib_lookup *fib)
{
	if (bpf_redirect_map(&ref_tx, fib->ifindex, XDP_PASS) != XDP_REDIRECT)
		return XDP_PASS;
	__builtin_memcpy(eth->h_dest, fib->dmac, sizeof(eth->h_dest));
	__builtin_memcpy(eth->h_source, fib->smac, sizeof(eth->h_source));
	return XDP_REDIRECT;
}

static __always_inline int ref_fwd4(struct xdp_md *ctx, struct ethhdr *eth,
				    void *data_end, __u32 frame_len)
{
	struct iphdr *iph = (void *)(eth + 1);
	struct bpf_fib_lookup fib = {};
	__u32 tot, sum;
	int act;

	if ((void *)(iph + 1) > data_end)
		return XDP_PASS;
	/* Options (record route, timestamps) are the stack's to process. */
	if (iph->version != 4 || iph->ihl != 5)
		return XDP_PASS;
	tot = bpf_ntohs(iph->tot_len);
	if (tot < sizeof(*iph) || sizeof(*eth) + tot > frame_len)
		return XDP_PASS;
	if (iph->ttl <= 1)
		return XDP_PASS;
	fib.family = REF_AF_INET;
	fib.tos = iph->tos;
	fib.l4_protocol = iph->protocol;
	fib.tot_len = tot;
	fib.ipv4_src = iph->saddr;
	fib.ipv4_dst = iph->daddr;
	fib.ifindex = ctx->ingress_ifindex;
	/* A fragment is routed like the rest of its datagram: without its
	 * ports, as the kernel's lookup takes it. */
	if (!(iph->frag_off & bpf_htons(REF_IP_MF | REF_IP_OFFSET)))
		ref_ports(&fib, iph + 1, tot - sizeof(*iph), data_end);
	if (bpf_fib_lookup(ctx, &fib, sizeof(fib), 0) !=
	    BPF_FIB_LKUP_RET_SUCCESS)
		return XDP_PASS;
	act = ref_out(eth, &fib);
	if (act != XDP_REDIRECT)
		return act;
	/* TTL is the high byte of its 16-bit word: the word loses 0x0100,
	 * the one's complement checksum gains it (RFC 1624), end-around
	 * carry included. Byte order does not matter to the sum. */
	sum = iph->check + bpf_htons(0x0100);
	iph->check = (__u16)(sum + (sum >> 16));
	iph->ttl--;
	return act;
}

static __always_inline int ref_fwd6(struct xdp_md *ctx, struct ethhdr *eth,
				    void *data_end, __u32 frame_len)
{
	struct ipv6hdr *ip6 = (void *)(eth + 1);
	struct bpf_fib_lookup fib = {};
	__u32 plen;
	int act;

	if ((void *)(ip6 + 1) > data_end || ip6->version != 6)
		return XDP_PASS;
	plen = bpf_ntohs(ip6->payload_len);
	if (sizeof(*eth) + sizeof(*ip6) + plen > frame_len)
		return XDP_PASS;
	/* Hop-by-hop options are for every router on the path to read. */
	if (ip6->hop_limit <= 1 || ip6->nexthdr == REF_NEXTHDR_HOP)
		return XDP_PASS;
	fib.family = REF_AF_INET6;
	/* Traffic class and flow label, what the kernel's flowi6 gets. */
	fib.flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0FFFFFFF);
	fib.l4_protocol = ip6->nexthdr;
	fib.tot_len = sizeof(*ip6) + plen;
	__builtin_memcpy(fib.ipv6_src, &ip6->saddr, sizeof(fib.ipv6_src));
	__builtin_memcpy(fib.ipv6_dst, &ip6->daddr, sizeof(fib.ipv6_dst));
	fib.ifindex = ctx->ingress_ifindex;
	/* Behind other extension headers the ports stay 0 (l4_protocol is
	 * the header's, as the kernel's lookup has it). */
	ref_ports(&fib, ip6 + 1, plen, data_end);
	if (bpf_fib_lookup(ctx, &fib, sizeof(fib), 0) !=
	    BPF_FIB_LKUP_RET_SUCCESS)
		return XDP_PASS;
	act = ref_out(eth, &fib);
	if (act == XDP_REDIRECT)
		ip6->hop_limit--;
	return act;
}

/* frame_len: the whole frame's, a multi-buffer one's fragments included;
 * headers are read in the first buffer only. */
static __always_inline int ref_fwd(struct xdp_md *ctx, __u32 frame_len)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	/* Broadcast and multicast frames are not routed. */
	if (eth->h_dest[0] & 1)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(REF_ETH_P_IP))
		return ref_fwd4(ctx, eth, data_end, frame_len);
	if (eth->h_proto == bpf_htons(REF_ETH_P_IPV6))
		return ref_fwd6(ctx, eth, data_end, frame_len);
	return XDP_PASS; /* VLAN tags, ARP, the rest */
}

#endif /* SILO_BPF_TESTS_REF_FWD_H */
