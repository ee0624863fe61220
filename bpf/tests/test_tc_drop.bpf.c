// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/differential.sh (tc-ingress, tc-egress): a tc filter that drops
 * what goes to server2's prefixes (10.30.0.0/16, fd30::/64), as a tc
 * firewall would. The kernel's router drops those frames at tc; silo must
 * not forward them past it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define TC_ACT_OK 0
#define TC_ACT_SHOT 2
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD

SEC("tc")
int drop_server2(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6;
	struct iphdr *ip;

	if ((void *)(eth + 1) > end)
		return TC_ACT_OK;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > end)
			return TC_ACT_OK;
		if ((ip->daddr & bpf_htonl(0xFFFF0000)) ==
		    bpf_htonl(0x0A1E0000))
			return TC_ACT_SHOT;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > end)
			return TC_ACT_OK;
		if (ip6->daddr.in6_u.u6_addr32[0] == bpf_htonl(0xFD300000) &&
		    !ip6->daddr.in6_u.u6_addr32[1])
			return TC_ACT_SHOT;
	}
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
