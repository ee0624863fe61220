// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/differential.sh (vlan-hidden): on a veth's egress, puts a VLAN
 * tag beside the frame's bytes (skb->vlan_tci, as tx-vlan-offload would),
 * which the peer's XDP program does not see in the frame, as it would not
 * see a tag a NIC took off (rx-vlan-offload). IPv4 frames get VLAN 100,
 * which the router has no device for (the kernel drops them), the others
 * VLAN 0, a priority tag the kernel takes for untagged.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define TC_ACT_OK 0
#define ETH_P_IP 0x0800
#define ETH_P_8021Q 0x8100

SEC("tc")
int vlan_hide(struct __sk_buff *skb)
{
	__be16 proto;

	if (bpf_skb_load_bytes(skb, 12, &proto, sizeof(proto)))
		return TC_ACT_OK;
	bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q),
			  proto == bpf_htons(ETH_P_IP) ? 100 : 0);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
