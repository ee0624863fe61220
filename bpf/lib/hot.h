/* SPDX-License-Identifier: GPL-2.0 */
/*
 * route_hot: this CPU's answers for the flows it forwards (struct
 * silo_hot), found by the frame's shape before anything is parsed
 * (hot_match()) and copied from the route cache's entries (hot_fill()).
 */
#ifndef SILO_BPF_LIB_HOT_H
#define SILO_BPF_LIB_HOT_H

#include "common.h"
#include "maps.h"
#include "parse.h"

/*
 * The frame's shape (internal.h) in m, masked, and its hash in *h: 0, or
 * -1 where the frame is too short for one or neither IPv4 nor IPv6
 * (*family: which, as the Ethernet type says). Whether the rest of the
 * frame is laid out as a shape's must be is the caller's to know: a fill
 * knows it from the parse, a match from the slot's bytes, which are those
 * of a frame that was.
 */
static __always_inline int hot_shape(struct xdp_md *ctx, __u64 *m, __u8 *family,
				     __u32 *h)
{
	void *data_end = (void *)(long)ctx->data_end;
	const __u64 *w = (void *)(long)ctx->data;

	_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "LE");
	if ((void *)(w + SILO_SHAPE_WORDS_V4) > data_end)
		return -1;
	m[0] = w[0];
	m[1] = w[1];
	/* The Ethernet type: bytes 12 and 13. */
	if ((__u16)(w[1] >> 32) == bpf_htons(ETH_P_IP)) {
		m[2] = w[2] & SILO_SHAPE_V4_M2;
		m[3] = w[3] & SILO_SHAPE_V4_M3;
		m[4] = w[4] & SILO_SHAPE_V4_M4;
		m[5] = m[6] = m[7] = 0;
		*family = SILO_AF_INET;
		*h = silo_hot_hash(m[3], m[4], 0, 0, 0, 0);
		return 0;
	}
	if ((__u16)(w[1] >> 32) != bpf_htons(ETH_P_IPV6) ||
	    (void *)(w + SILO_SHAPE_WORDS) > data_end)
		return -1;
	m[2] = w[2] & SILO_SHAPE_V6_M2;
	m[3] = w[3];
	m[4] = w[4];
	m[5] = w[5];
	m[6] = w[6];
	m[7] = w[7] & SILO_SHAPE_V6_M7;
	*family = SILO_AF_INET6;
	*h = silo_hot_hash(m[2], m[3], m[4], m[5], m[6], m[7]);
	return 0;
}

/* The slot of hash h, if its tag is h's (tags: this CPU's, fwd_bufs'). */
static __always_inline struct silo_hot *hot_tagged(const __u16 *tags, __u32 h)
{
	__u32 i = silo_hot_index(h);

	if (tags[i] != silo_hot_tag(h))
		return NULL;
	return bpf_map_lookup_elem(&route_hot, &i);
}

/*
 * The family the frame's shape would be of: SILO_AF_INET for an IPv4
 * Ethernet type, SILO_AF_INET6 for any other (no IPv6 slot matches a
 * frame of another type: its word 1 holds the type), 0 where the frame is
 * too short for a shape. The caller inlines hot_match() for each, with the
 * family a constant.
 */
static __always_inline __u8 hot_family(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	const __u64 *w = (void *)(long)ctx->data;

	if ((void *)(w + SILO_SHAPE_WORDS_V4) > data_end)
		return 0;
	if ((__u16)(w[1] >> 32) == bpf_htons(ETH_P_IP))
		return SILO_AF_INET;
	return SILO_AF_INET6;
}

/*
 * The slot whose shape is the frame's, from the same ingress device, else
 * NULL; current or not is the caller's to see. family: hot_family()'s. The
 * frame's words as hot_shape() takes them, compared where they are (no
 * copy), the tag first. Two shapes of one family differ in a masked word;
 * of two families, in the Ethernet type.
 */
static __always_inline struct silo_hot *
hot_match(struct xdp_md *ctx, const __u16 *tags, __u8 family)
{
	void *data_end = (void *)(long)ctx->data_end;
	const __u64 *w = (void *)(long)ctx->data;
	struct silo_hot *s;
	__u64 d;

	if ((void *)(w + SILO_SHAPE_WORDS_V4) > data_end)
		return NULL;
	if (family == SILO_AF_INET) {
		s = hot_tagged(tags, silo_hot_hash(w[3] & SILO_SHAPE_V4_M3,
						   w[4] & SILO_SHAPE_V4_M4, 0,
						   0, 0, 0));
		if (!s)
			return NULL;
		d = ((w[2] & SILO_SHAPE_V4_M2) ^ s->shape[2]) |
		    ((w[3] & SILO_SHAPE_V4_M3) ^ s->shape[3]) |
		    ((w[4] & SILO_SHAPE_V4_M4) ^ s->shape[4]);
	} else {
		if ((void *)(w + SILO_SHAPE_WORDS) > data_end)
			return NULL;
		s = hot_tagged(tags, silo_hot_hash(w[2] & SILO_SHAPE_V6_M2,
						   w[3], w[4], w[5], w[6],
						   w[7] & SILO_SHAPE_V6_M7));
		if (!s)
			return NULL;
		d = ((w[2] & SILO_SHAPE_V6_M2) ^ s->shape[2]) |
		    (w[3] ^ s->shape[3]) | (w[4] ^ s->shape[4]) |
		    (w[5] ^ s->shape[5]) | (w[6] ^ s->shape[6]) |
		    ((w[7] & SILO_SHAPE_V6_M7) ^ s->shape[7]);
	}
	/* Words 0 and 1: the MACs and the Ethernet type. */
	if (d | (w[0] ^ s->shape[0]) | (w[1] ^ s->shape[1]) ||
	    s->in_ifindex != ctx->ingress_ifindex)
		return NULL;
	return s;
}

/*
 * The frame's slot, to copy its flow's answer into, on the flow's second
 * sighting: the first only sets the slot's tag (a flood of one-frame flows
 * writes two bytes a frame, not a slot). The tag is only a filter: a slot
 * whose tag matches may hold another flow's bytes, which hot_match() sees.
 * *m: the frame's shape.
 */
static __always_inline struct silo_hot *hot_slot_to_fill(struct xdp_md *ctx,
							 __u16 *tags, __u64 *m)
{
	__u8 family;
	__u32 h, i;

	if (hot_shape(ctx, m, &family, &h))
		return NULL;
	i = silo_hot_index(h);
	if (tags[i] != silo_hot_tag(h)) {
		tags[i] = silo_hot_tag(h);
		return NULL;
	}
	return bpf_map_lookup_elem(&route_hot, &i);
}

/*
 * Copies a current entry r of the route cache (its genid the one read
 * before anything was looked up) into slot s, the frame's (shape m), with
 * the sweeps read before the lookup that found it (a sweep that deletes
 * that entry moves sweeps past the stamp), the heartbeat's watch and the
 * PMTU marks' verdict for larger frames (pmtu_clean, made at pmtu_stamp).
 * The caller has seen the frame has a shape and is on its way out through
 * r. No reader sees the slot half written: it is this CPU's, and XDP runs
 * do not nest on a CPU (as fwd_bufs, which holds the packet's key,
 * assumes too).
 */
static __always_inline void
hot_fill(struct xdp_md *ctx, struct silo_hot *s, const __u64 *m,
	 const struct silo_route_entry *r, __u64 sweeps, __u32 watch,
	 __u64 pmtu_stamp, int pmtu_clean, int local_tx)
{
	__builtin_memcpy(s->shape, m, sizeof(s->shape));
	s->genid = r->genid;
	s->sweeps = sweeps;
	s->in_ifindex = ctx->ingress_ifindex;
	s->ifindex = r->ifindex;
	s->watch = watch;
	s->mtu = r->mtu;
	__builtin_memcpy(s->eth, r->dmac, sizeof(r->dmac));
	__builtin_memcpy(s->eth + sizeof(r->dmac), r->smac, sizeof(r->smac));
	s->pmtu_stamp = pmtu_stamp;
	s->pmtu_clean = pmtu_clean;
	s->local_tx = !!local_tx;
}

#endif /* SILO_BPF_LIB_HOT_H */
