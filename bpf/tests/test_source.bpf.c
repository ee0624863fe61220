// SPDX-License-Identifier: GPL-2.0
/*
 * The traffic source of the tests, the benchmarks and the lab
 * (tools/lib/source.h says how to use it): frames seeded once through an
 * AF_PACKET socket, then kept going round between XDP programs on veths, so
 * that they reach the device under test as XDP frames, with no skb and no
 * copy, and with no BPF_PROG_RUN (whose live frames a kernel may refuse).
 * Two shapes:
 *
 *   ring  src_ring runs on the veth that the device under test forwards
 *         to: it counts each frame that comes back (IPv6, UDP, hop limit
 *         src_back_hlim), writes its headers anew and redirects it into
 *         src_entry_ifindex, whose peer is the device's ingress; the frames
 *         go round and round, each a packet forwarded per lap
 *   pump  a loop of two veths beside the device: src_pump, on one end,
 *         sends each frame that comes round both on round the loop and,
 *         copied, out of the entry (a devmap broadcast), while src_credit
 *         allows; src_bounce, on the other end, sends it back (XDP_TX)
 *
 * Each frame sent gets its first SOURCE_HDR bytes from its class's
 * template, the source address's last 32 bits src_base + k (k counting 0
 * .. src_nsrc - 1), a sequence number (src_sent, 32 bits) at src_seq_off
 * where that is not 0, and the UDP checksum to match: src_csum[c] is the
 * template's sum with its source word left out (and the payload's bytes at
 * src_seq_off zero), and one's complement sums care neither for byte order
 * nor for where an even-aligned word is. A ring takes a frame's class from
 * its length (a frame keeps its length round the ring, so the mix of sizes
 * is the seeds'); a pump takes the classes of src_pat in turn.
 *
 * The programs of one shape each run on one veth queue, in one NAPI poll at
 * a time, so their state and counters are plain globals, which user space
 * reads and sets through the skeleton.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "source_abi.h"

#define SRC_ETH_P_IPV6 0x86DD
#define SRC_PROTO_UDP 17

__u64 src_tmpl[SOURCE_CLASSES][SOURCE_HDR_WORDS] = {};
__u32 src_csum[SOURCE_CLASSES] = {};
/* The class's checksum left to offload: src_csum[c] is then the pseudo
 * header's sum, the source word left out, and the field holds it folded. */
__u8 src_partial[SOURCE_CLASSES] = {};
__u32 src_len[SOURCE_CLASSES] = {}; /* ring: a class's frame length */
__u8 src_pat[SOURCE_PAT_MAX] = {};
__u32 src_npat = 0; /* 0 as 1 */
__u32 src_nsrc = 0; /* 0 as 1 */
__u32 src_base = 0; /* host order */
__u32 src_seq_off = 0; /* even, 0: no sequence number */
__u32 src_entry_ifindex = 0;
__u32 src_back_hlim = 0;
__u32 src_stop = 0; /* every frame that comes round is retired */
__u64 src_credit = 0; /* pump: the copies it may send, in all */

/* Where the source stands (user space reads, and may reset between runs). */
__u64 src_sent = 0; /* frames sent into the entry */
__u64 src_back = 0; /* ring: frames that came back forwarded */
__u64 src_other = 0; /* frames not the source's, dropped */
__u64 src_retired = 0; /* frames taken out of the round */
__u32 src_k = 0; /* the next source */
__u32 src_j = 0; /* the pump's next place in src_pat */

/* The entry and the loop: where a pump's frame goes (both). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} src_out SEC(".maps");

static __always_inline __u32 src_fold(__u32 sum)
{
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = ~sum & 0xFFFF;
	return sum ? sum : 0xFFFF;
}

/* The frame's headers from class c's template, its source, its sequence
 * number and its checksum: 0, or -1 for a frame too short. */
static __always_inline int src_write(struct xdp_md *ctx, __u32 c)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 k, src, seq, sum, pseudo, off = src_seq_off;
	__u64 *w = data;
	int i;

	if (c >= SOURCE_CLASSES || data + SOURCE_HDR > data_end)
		return -1;
	for (i = 0; i < SOURCE_HDR_WORDS; i++)
		w[i] = src_tmpl[c][i];
	k = src_k < src_nsrc ? src_k : 0;
	src_k = k + 1;
	src = bpf_htonl(src_base + k);
	*(__u32 *)(data + SOURCE_ADDR_OFF) = src;
	sum = src_csum[c] + (src & 0xFFFF) + (src >> 16);
	pseudo = sum;
	if (off) {
		if (off > SOURCE_SEQ_MAX || (off & 1) ||
		    data + off + sizeof(seq) > data_end)
			return -1;
		seq = bpf_htonl((__u32)src_sent);
		*(__u32 *)(data + off) = seq;
		sum += (seq & 0xFFFF) + (seq >> 16);
	}
	if (src_partial[c]) {
		/* The pseudo header's sum: the sequence number is payload. */
		sum = pseudo;
		sum = (sum & 0xFFFF) + (sum >> 16);
		sum = (sum & 0xFFFF) + (sum >> 16);
		*(__u16 *)(data + SOURCE_CSUM_OFF) = sum;
		return 0;
	}
	*(__u16 *)(data + SOURCE_CSUM_OFF) = src_fold(sum);
	return 0;
}

/* A frame of the ring, come back forwarded: its class, or -1. */
static __always_inline int src_came_back(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6 = data + sizeof(*eth);
	__u32 len = data_end - data;
	int c;

	if ((void *)(ip6 + 1) > data_end ||
	    eth->h_proto != bpf_htons(SRC_ETH_P_IPV6) ||
	    ip6->nexthdr != SRC_PROTO_UDP || ip6->hop_limit != src_back_hlim)
		return -1;
	for (c = 0; c < SOURCE_CLASSES; c++)
		if (src_len[c] == len)
			return c;
	return -1;
}

SEC("xdp")
int src_ring(struct xdp_md *ctx)
{
	int c = src_came_back(ctx);

	if (c < 0) {
		__sync_fetch_and_add(&src_other, 1);
		return XDP_DROP;
	}
	src_back++;
	if (*(volatile __u32 *)&src_stop || src_write(ctx, c)) {
		src_retired++;
		return XDP_DROP;
	}
	src_sent++;
	return bpf_redirect(src_entry_ifindex, 0);
}

/* A frame of the pump's loop: its first 16 bytes (MACs, Ethernet type,
 * IPv6's first word) are those of every template's. */
static __always_inline bool src_in_loop(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 *w = data;

	return data + 16 <= data_end && w[0] == src_tmpl[0][0] &&
	       w[1] == src_tmpl[0][1];
}

SEC("xdp")
int src_pump(struct xdp_md *ctx)
{
	__u32 j;

	if (!src_in_loop(ctx)) {
		__sync_fetch_and_add(&src_other, 1);
		return XDP_DROP;
	}
	j = src_j < src_npat ? src_j : 0;
	src_j = j + 1;
	if (*(volatile __u32 *)&src_stop ||
	    src_sent >= *(volatile __u64 *)&src_credit ||
	    src_write(ctx, src_pat[j & (SOURCE_PAT_MAX - 1)])) {
		src_retired++;
		return XDP_DROP;
	}
	src_sent++;
	return bpf_redirect_map(&src_out, 0, BPF_F_BROADCAST);
}

SEC("xdp")
int src_bounce(struct xdp_md *ctx)
{
	if (src_in_loop(ctx))
		return XDP_TX;
	__sync_fetch_and_add(&src_other, 1); /* another NAPI than the pump's */
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
