/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TCP/UDP checksum of a packet, checked in XDP before steering (the
 * cpumap carries no checksum state), over the whole frame: a jumbo UDP
 * datagram in a multi-buffer frame is summed across its fragments.
 */
#ifndef SILO_BPF_LIB_CSUM_H
#define SILO_BPF_LIB_CSUM_H

#include "common.h"
#include "parse.h"

#define CSUM_CHUNK 256

/*
 * Where the sum is, what is left, the sum so far, the last bytes: in
 * per-CPU scratch (the caller's), not on a stack the steering path has
 * little of.
 */
struct l4_csum {
	__u32 off;
	__u32 left;
	__u32 sum;
	__u32 ifindex; /* the ingress's: csum_stats' key (maps.h) */
	__u8 tail[4];
	__u8 buf[CSUM_CHUNK]; /* a chunk past the first buffer, copied */
};

#define CSUM_CHUNKS 36 /* 9,216 bytes: a jumbo frame */
/* Offsets bounded so that offset + chunk stays below the verifier's
 * MAX_PACKET_OFF (0xFFFF), or it does not take the bounds check. */
#define CSUM_OFF_MASK 0x3FFF

/*
 * Adds sz bytes of the packet at cs->off to cs->sum when cs->left holds
 * them: in place where they are in the first buffer, else copied to
 * cs->buf first from a multi-buffer frame's fragments. The state lives in
 * scratch, not in registers that each helper call would make the program
 * spill to a stack it has no room on.
 */
static __always_inline int csum_step(struct xdp_md *ctx, struct l4_csum *cs,
				     __u32 sz)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 off = cs->off & CSUM_OFF_MASK;
	__s64 sum;

	if (cs->left < sz)
		return 0;
	if (data + off + sz <= data_end) {
		sum = bpf_csum_diff(NULL, 0, data + off, sz, cs->sum);
	} else {
		if (bpf_xdp_load_bytes(ctx, off, cs->buf, sz))
			return -1;
		sum = bpf_csum_diff(NULL, 0, (void *)cs->buf, sz, cs->sum);
	}
	if (sum < 0)
		return -1;
	cs->sum = sum;
	cs->off += sz;
	cs->left -= sz;
	return 0;
}

/* The last 1-3 bytes, zero-padded to a word: read in place in the first
 * buffer, else copied (constant sizes for the helper). */
static __always_inline int csum_tail(struct xdp_md *ctx, struct l4_csum *cs)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 off = cs->off & CSUM_OFF_MASK;
	__u8 *b = data + off;

	*(__u32 *)cs->tail = 0;
	if (cs->left == 1 && b + 1 <= (__u8 *)data_end) {
		cs->tail[0] = b[0];
		return 0;
	}
	if (cs->left == 2 && b + 2 <= (__u8 *)data_end) {
		cs->tail[0] = b[0];
		cs->tail[1] = b[1];
		return 0;
	}
	if (cs->left == 3 && b + 3 <= (__u8 *)data_end) {
		cs->tail[0] = b[0];
		cs->tail[1] = b[1];
		cs->tail[2] = b[2];
		return 0;
	}
	if (cs->left == 1)
		return bpf_xdp_load_bytes(ctx, off, cs->tail, 1);
	if (cs->left == 2)
		return bpf_xdp_load_bytes(ctx, off, cs->tail, 2);
	return bpf_xdp_load_bytes(ctx, off, cs->tail, 3);
}

/* a + b in 32-bit one's complement: the carry added back, twice (the
 * first may carry again). */
static __always_inline __u32 csum_add32(__u32 a, __u32 b)
{
	__u64 s = (__u64)a + b;

	s = (s & 0xFFFFFFFF) + (s >> 32);
	return (s & 0xFFFFFFFF) + (s >> 32);
}

/* A 32-bit one's complement sum folded to 16 bits. */
static __always_inline __u32 csum_fold16(__u32 sum)
{
	sum = (sum & 0xFFFF) + (sum >> 16);
	return (sum & 0xFFFF) + (sum >> 16);
}

/*
 * The pseudo header's sum folded to 16 bits, as the checksum field of a
 * packet whose sender left it to offload holds it: the addresses at src
 * and dst (one 32-bit word each, four for IPv6; in the packet or in struct
 * pkt: the CPU reads them unaligned), the protocol and the TCP or UDP
 * length; never 0, the protocol being in the sum. No helper call and no
 * loop: every TCP or UDP packet of a local sender's device pays it.
 */
static __always_inline __u32 pseudo_fold(const void *src, const void *dst,
					 bool v6, __u8 proto, __u32 len)
{
	const __u32 *s = src, *d = dst;
	__u64 sum = bpf_htons(proto) + bpf_htons(len) + (__u64)s[0] + d[0];

	if (v6)
		sum += (__u64)s[1] + s[2] + s[3] + d[1] + d[2] + d[3];
	sum = (sum & 0xFFFFFFFF) + (sum >> 32);
	sum = (sum & 0xFFFFFFFF) + (sum >> 32);
	return csum_fold16(sum);
}

/*
 * The pseudo header's sum (addresses, length, protocol) into cs->sum, and
 * where the TCP or UDP packet is (cs->off) and how long (cs->left): 0, or
 * -1 for a packet too long to sum.
 */
static __always_inline int l4_pseudo(const struct pkt *p, struct l4_csum *cs)
{
	cs->off = p->l4_off;
	cs->left = p->l3_off + p->l3_len - p->l4_off;
	if (cs->left > CSUM_CHUNK * CSUM_CHUNKS)
		return -1;
	/* struct pkt keeps the addresses 4-byte aligned. */
	cs->sum = pseudo_fold(p->src, p->dst, p->family != SILO_AF_INET,
			      p->l4_proto, cs->left);
	return 0;
}

/* Adds the TCP or UDP packet's cs->left bytes at cs->off, across the
 * frame's buffers, to cs->sum: 0, or -1. */
static __always_inline int l4_sum_packet(struct xdp_md *ctx, struct l4_csum *cs)
{
	__u32 i;

	for (i = 0; i < CSUM_CHUNKS && cs->left >= CSUM_CHUNK; i++)
		if (csum_step(ctx, cs, CSUM_CHUNK))
			return -1;
	if (csum_step(ctx, cs, 128) || csum_step(ctx, cs, 64) ||
	    csum_step(ctx, cs, 32) || csum_step(ctx, cs, 16) ||
	    csum_step(ctx, cs, 8) || csum_step(ctx, cs, 4))
		return -1;
	if (cs->left) {
		if (csum_tail(ctx, cs))
			return -1;
		/* One word more: no helper call. */
		cs->sum = csum_add32(cs->sum, *(__u32 *)cs->tail);
	}
	return 0;
}

/*
 * The pseudo header and the whole TCP or UDP packet summed into cs->sum: 0,
 * or -1. A subprogram, not inlined: its callers (forwarding, route_hot's
 * two families, steering's check and finish) share one copy (inlined at
 * each, the program grew by half).
 */
static __noinline int l4_sum(struct xdp_md *ctx, const struct pkt *p,
			     struct l4_csum *cs)
{
	if (l4_pseudo(p, cs) || l4_sum_packet(ctx, cs))
		return -1;
	return 0;
}

/* Where the TCP or UDP checksum is in its header. */
static __always_inline __u32 l4_check_off(const struct pkt *p)
{
	return p->l4_proto == IPPROTO_TCP ? 16 : 6;
}

/*
 * Is the TCP or UDP checksum complete and right? A cpumap carries no
 * checksum state: the stack on the target CPU checks the sum in software.
 * A packet whose sum the sender left to offload (CHECKSUM_PARTIAL, from a
 * veth peer in this host) is right for the stack here but wrong there, so
 * it is passed (unless l4_csum_finish() finished it first), as is one with
 * a bad sum (the stack drops it here).
 */
static __always_inline int l4_csum_ok(struct xdp_md *ctx, const struct pkt *p,
				      struct l4_csum *cs)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	void *l4 = data + (p->l4_off & CSUM_OFF_MASK);

	if (l4 + 8 > data_end)
		return 0;
	/* UDP over IPv4 without a checksum: nothing to check. */
	if (p->family == SILO_AF_INET && p->l4_proto == IPPROTO_UDP &&
	    !*(__u16 *)(l4 + 6))
		return 1;
	if (l4_sum(ctx, p, cs))
		return 0;
	/* Folded, the sum over a right checksum is all ones. */
	return csum_fold16(cs->sum) == 0xFFFF;
}

/*
 * A checksum a sender on this host left to offload, finished as the device
 * that sends the packet on would finish it (and the stack that takes it
 * would trust it). Such a checksum holds the pseudo header's folded sum
 * (the kernel's ~csum_tcpudp_magic(..., 0)), which no complete checksum
 * of the packet does but by a coincidence in which finishing changes
 * nothing: a right checksum C equal to the pseudo sum P makes the sum of
 * the rest ~P, and ~(~P) is C again. The one frame finishing changes that
 * the kernel would have forwarded as it is: a wrong checksum that happens
 * to equal P (docs/ENVELOPE.md).
 *
 * Only where the frame leaves XDP as bytes (finish): a frame that stays an
 * skb (generic XDP; a tap that runs XDP on an skb) keeps its offload state
 * through a redirect, and the device that sends it would sum the finished
 * field again. There such a frame is left to the stack.
 *
 * 1: finished (now right); 0: not left to offload, untouched (right or
 * wrong: the kernel forwards it as it is); -1: left to offload and not
 * finished (not here, or too long to sum), untouched.
 */
static __always_inline int l4_csum_finish(struct xdp_md *ctx,
					  const struct pkt *p,
					  struct l4_csum *cs, bool finish)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 at = (p->l4_off + l4_check_off(p)) & CSUM_OFF_MASK;
	__u16 *check = data + at, field, c;

	if ((void *)(check + 1) > data_end)
		return -1;
	field = *check;
	/* IPv4 UDP's 0 (no checksum) never equals it: the protocol is in
	 * the sum, so it folds to 1..0xFFFF. */
	if (field != pseudo_fold(p->src, p->dst, p->family != SILO_AF_INET,
				 p->l4_proto,
				 p->l3_off + p->l3_len - p->l4_off))
		return 0;
	if (!finish || l4_sum(ctx, p, cs))
		return -1;
	/* The sum without the field, complemented: what the device writes,
	 * 0 as all ones (skb_checksum_help()'s CSUM_MANGLED_0, UDP's 0). */
	c = ~csum_fold16(csum_add32(cs->sum, ~field & 0xFFFF)) & 0xFFFF;
	if (!c)
		c = 0xFFFF;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	check = data + at;
	if ((void *)(check + 1) > data_end)
		return -1;
	*check = c;
	return 1;
}

#endif /* SILO_BPF_LIB_CSUM_H */
