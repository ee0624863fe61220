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
 * Where the sum is, what is left, the sum so far, its pseudo header
 * (addresses, length, protocol), the last bytes: in per-CPU scratch (the
 * caller's), not on a stack the steering path has little of.
 */
struct l4_csum {
	__u32 off;
	__u32 left;
	__u32 sum;
	__u32 pseudo[10];
	__u8 tail[4];
	__u8 buf[CSUM_CHUNK]; /* a chunk past the first buffer, copied */
};

#define CSUM_CHUNKS 36 /* 9,216 bytes: a jumbo frame */
/* Offsets bounded so that offset + chunk stays below the verifier's
 * MAX_PACKET_OFF (0xFFFF), or it does not take the bounds check. */
#define CSUM_OFF_MASK 0x3FFF

/*
 * Adds sz bytes of the packet at cs->off to cs->sum when cs->left holds
 * them. The state lives in scratch, not in registers that each helper call
 * would make the program spill to a stack it has no room on. The bytes are
 * copied to cs->buf first, from the first buffer or a multi-buffer frame's
 * fragments alike: reading the packet in place takes the packet pointers
 * too, two more registers spilled on a stack that has no room left.
 */
static __always_inline int csum_step(struct xdp_md *ctx, struct l4_csum *cs,
				     __u32 sz)
{
	__s64 sum;

	if (cs->left < sz)
		return 0;
	if (bpf_xdp_load_bytes(ctx, cs->off & CSUM_OFF_MASK, cs->buf, sz))
		return -1;
	sum = bpf_csum_diff(NULL, 0, (void *)cs->buf, sz, cs->sum);
	if (sum < 0)
		return -1;
	cs->sum = sum;
	cs->off += sz;
	cs->left -= sz;
	return 0;
}

/* The last 1-3 bytes, zero-padded to a word: constant sizes for the
 * helper, which reads the first buffer and the fragments alike. */
static __always_inline int csum_tail(struct xdp_md *ctx, struct l4_csum *cs)
{
	__u32 off = cs->off & CSUM_OFF_MASK;

	*(__u32 *)cs->tail = 0;
	if (cs->left == 1)
		return bpf_xdp_load_bytes(ctx, off, cs->tail, 1);
	if (cs->left == 2)
		return bpf_xdp_load_bytes(ctx, off, cs->tail, 2);
	return bpf_xdp_load_bytes(ctx, off, cs->tail, 3);
}

/* A 32-bit one's complement sum folded to 16 bits. */
static __always_inline __u32 csum_fold16(__u32 sum)
{
	sum = (sum & 0xFFFF) + (sum >> 16);
	return (sum & 0xFFFF) + (sum >> 16);
}

/*
 * The pseudo header's sum folded to 16 bits, as the checksum field of a
 * packet whose sender left it to offload holds it: addresses of words
 * 32-bit words each at src and dst (in the packet or in struct pkt; the
 * CPU reads them unaligned), the protocol and the TCP or UDP length. No
 * helper call: where route_hot serves a frame this is all it adds.
 */
static __always_inline __u32 pseudo_fold(const void *src, const void *dst,
					 int words, __u8 proto, __u32 len)
{
	__u64 sum = bpf_htons(proto) + bpf_htons(len);
	int i;

	for (i = 0; i < words; i++)
		sum += ((const __u32 *)src)[i] + (__u64)((const __u32 *)dst)[i];
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
	const __u32 *src, *dst;
	__s64 s;
	__u32 i;

	cs->off = p->l4_off;
	cs->left = p->l3_off + p->l3_len - p->l4_off;
	if (cs->left > CSUM_CHUNK * CSUM_CHUNKS)
		return -1;
	/* struct pkt keeps the addresses 4-byte aligned: copy by words. */
	src = (const __u32 *)p->src;
	dst = (const __u32 *)p->dst;
	if (p->family == SILO_AF_INET) {
		cs->pseudo[0] = src[0];
		cs->pseudo[1] = dst[0];
		cs->pseudo[2] = bpf_htonl((__u32)p->l4_proto << 16 | cs->left);
		s = bpf_csum_diff(NULL, 0, (__be32 *)cs->pseudo, 12, 0);
	} else {
		for (i = 0; i < 4; i++) {
			cs->pseudo[i] = src[i];
			cs->pseudo[4 + i] = dst[i];
		}
		cs->pseudo[8] = bpf_htonl(cs->left);
		cs->pseudo[9] = bpf_htonl(p->l4_proto);
		s = bpf_csum_diff(NULL, 0, (__be32 *)cs->pseudo, 40, 0);
	}
	if (s < 0)
		return -1;
	cs->sum = s;
	return 0;
}

/* Adds the TCP or UDP packet's cs->left bytes at cs->off, across the
 * frame's buffers, to cs->sum: 0, or -1. */
static __always_inline int l4_sum_packet(struct xdp_md *ctx, struct l4_csum *cs)
{
	__s64 s;
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
		s = bpf_csum_diff(NULL, 0, (__be32 *)cs->tail, 4, cs->sum);
		if (s < 0)
			return -1;
		cs->sum = s;
	}
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
	if (l4_pseudo(p, cs) || l4_sum_packet(ctx, cs))
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
 * to equal P (docs/ENVELOPE.md). 1: finished (now right); 0: not left to
 * offload, untouched (right or wrong: the kernel forwards it as it is);
 * -1: it could not be summed (too long), untouched.
 */
static __always_inline int
l4_csum_finish(struct xdp_md *ctx, const struct pkt *p, struct l4_csum *cs)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 at = (p->l4_off + l4_check_off(p)) & CSUM_OFF_MASK;
	__u16 *check = data + at, field, c;

	if ((void *)(check + 1) > data_end)
		return -1;
	field = *check;
	/* UDP over IPv4 without a checksum. */
	if (p->family == SILO_AF_INET && p->l4_proto == IPPROTO_UDP && !field)
		return 0;
	if (field != pseudo_fold(p->src, p->dst,
				 p->family == SILO_AF_INET ? 1 : 4, p->l4_proto,
				 p->l3_off + p->l3_len - p->l4_off))
		return 0;
	if (l4_pseudo(p, cs) || l4_sum_packet(ctx, cs))
		return -1;
	/* The sum without the field, complemented: what the device writes
	 * (UDP's 0 sent as all ones, as udp_set_csum() does). */
	c = ~csum_fold16(cs->sum + (~field & 0xFFFF)) & 0xFFFF;
	if (!c && p->l4_proto == IPPROTO_UDP)
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
