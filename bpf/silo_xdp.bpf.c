// SPDX-License-Identifier: GPL-2.0
/*
 * silo's XDP program: parse, classify local vs forward, forward from a
 * per-node route cache validated by a generation id, and hand everything it
 * is unsure of to the stack. silo's verdicts are the kernel's verdicts, only
 * sooner: it never drops, and never forwards what the stack would not.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "silo/abi.h"
#include "silo/abi/internal.h"
#include "lib/parse.h"
#include "lib/maps.h"
#include "lib/stats.h"
#include "lib/local.h"
#include "lib/steer.h"
#include "lib/forward.h"
#include "lib/front.h"
#include "lib/vlan.h"
#include "lib/pmtu.h"

/* Knobs, set by the loader before load (one program instance per device). */
const volatile __u8 forward = 0; /* --forward */
const volatile __u8 cache_enabled = 1; /* 0: bpf_fib_lookup every packet */
/* Steer local packets of services to their CPU: native mode only. Under
 * generic XDP the packet is an skb already, and one redirected through the
 * cpumap would meet the program again on the target CPU. Declared with
 * the other bytes: .rodata then has no tail padding, and prog_rodata()
 * (user/lib/xdp/xdp.c) compares the map's size with the skeleton's. */
const volatile __u8 steer = 0;
/* Finish a TCP or UDP checksum a sender on this host left to offload
 * (lib/csum.h): set where every frame the program redirects leaves it as
 * bytes, without the skb's offload state (native mode on a veth). */
const volatile __u8 csum_finish = 0;
const volatile __u32 cache_size = SILO_ROUTE_CACHE_DEFAULT; /* per node */

/* Parse, local or forwarded: every frame the front did not take. */
static __always_inline int silo_full(struct xdp_md *ctx, struct silo_stats *st,
				     bool hidden, __u32 frame_len)
{
	struct pkt p = {};
	int reason;

	reason = parse_packet(ctx, &p, frame_len);
	if (hidden || reason) {
		pmtu_watch(ctx, &p, reason);
		if (hidden)
			return pass(st, SILO_STAT_PASS_VLAN);
		return parse_pass(st, &p, reason);
	}
	/* A local one may be a NATed connection's, which the kernel
	 * forwards. One call of forward_packet(): each is inlined, and the
	 * verifier walks each copy. */
	if (is_local(&p) && !(forward && fwd_local_nat(ctx, &p))) {
		if (local_steer(ctx, &p, steer, csum_finish) != XDP_REDIRECT)
			return pass(st, SILO_STAT_PASS_LOCAL);
		return steered(st);
	}
	if (!forward)
		return pass(st, SILO_STAT_PASS_NO_FORWARD);
	return forward_packet(ctx, &p, st, cache_enabled, csum_finish);
}

static __always_inline int silo_main(struct xdp_md *ctx, bool bound)
{
	struct silo_stats *st;
	__u32 zero = 0, frame_len;
	bool hidden;
	int verdict;

	/* The two calls first: nothing else is yet held that a call would
	 * make the program save and reload. A tag beside the frame: the VLAN
	 * device's, not ours to forward; the PMTU errors it carries are
	 * still the host's. The frame's whole length is read once for both
	 * paths. */
	hidden = bound && hidden_tag(ctx);
	frame_len = bpf_xdp_get_buff_len(ctx);
	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return XDP_PASS;
	count(st, SILO_STAT_RX);
	/* A frame of a flow this CPU forwards from route_hot: no parsing. */
	if (forward && cache_enabled && !hidden) {
		verdict = front_forward(ctx, st, frame_len, csum_finish);
		if (verdict >= 0)
			return verdict;
	}
	return silo_full(ctx, st, hidden, frame_len);
}

/*
 * Both entries take multi-buffer frames (BPF_F_XDP_HAS_FRAGS): a driver
 * runs a program without it only while a frame fits one page, so a device
 * with a jumbo MTU would refuse silo. What such a frame gets: lib/parse.h.
 */

/* Generic XDP, and drivers that do not report the tag (before 6.8: none). */
SEC("xdp.frags")
int silo_xdp(struct xdp_md *ctx)
{
	return silo_main(ctx, false);
}

/* Native mode on a driver that reports the tag: bound to its device by the
 * loader (user/lib/xdp/xdp.c). */
SEC("?xdp.frags")
int silo_xdp_dev(struct xdp_md *ctx)
{
	return silo_main(ctx, true);
}

char LICENSE[] SEC("license") = "GPL";
