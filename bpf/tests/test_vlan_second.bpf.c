// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/differential.sh (vlan-hidden-second): test_vlan.bpf.c's hidden
 * tag, on the corpus's second pass only. The first pass goes untagged, so
 * the router's front serves its flows when the second comes: a tagged frame
 * of a flow the front serves must still go to the stack. A frame is of the
 * second pass when its marker (tests/lib/frames.h: FRAME_MAGIC, the pass,
 * the index) at the start of a plain UDP, TCP or echo payload says so.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define TC_ACT_OK 0
#define ETH_P_IP 0x0800
#define ETH_P_8021Q 0x8100

/* Ethernet + IPv4 or IPv6 + a UDP or echo header (8) or a TCP one (20). */
static const __u32 offsets[] = { 42, 54, 62, 74 };

SEC("tc")
int vlan_hide_second(struct __sk_buff *skb)
{
	__u8 m[4];
	__be16 proto;
	__u32 i;

	if (bpf_skb_load_bytes(skb, 12, &proto, sizeof(proto)))
		return TC_ACT_OK;
	for (i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		if (bpf_skb_load_bytes(skb, offsets[i], m, sizeof(m)))
			continue;
		if (m[0] != 0x53 || m[1] != 0x4c || m[2] != 0xa5)
			continue;
		if (m[3] == 1)
			bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q),
					  proto == bpf_htons(ETH_P_IP) ? 100 :
									 0);
		break;
	}
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
