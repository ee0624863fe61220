/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Established connections under a stateful firewall (docs/ENVELOPE.md).
 * User space has proven that every chain a forwarded packet of an
 * established connection traverses accepts it before any rule can act on
 * it (genid.ct_fams, with the operator's opt-in): what the kernel does for
 * such a packet is then conntrack's work alone. This asks conntrack per
 * packet (bpf_xdp_ct_lookup(): it stays the authority, and a deleted or
 * expired entry is seen at the next packet), forwards what the kernel
 * would pass through, rewritten as its NAT hooks would rewrite it,
 * refreshes the timeout as the kernel would, and leaves the rest to the
 * stack: a new connection, a state change (SYN, FIN, RST), a helper, a
 * packet conntrack would call invalid.
 */
#ifndef SILO_BPF_LIB_CT_H
#define SILO_BPF_LIB_CT_H

#include "common.h"
#include <bpf/bpf_core_read.h>
#include "parse.h"
#include "csum.h"
#include "maps.h"
#include "admit.h"

extern struct nf_conn *bpf_xdp_ct_lookup(struct xdp_md *ctx,
					 struct bpf_sock_tuple *tuple,
					 __u32 tuple__sz,
					 struct bpf_ct_opts *opts,
					 __u32 opts__sz) __ksym __weak;
extern void bpf_ct_release(struct nf_conn *ct) __ksym __weak;
extern int bpf_ct_change_timeout(struct nf_conn *nfct,
				 __u32 timeout) __ksym __weak;
/* 0 where the kernel's configuration cannot be read: then every packet
 * writes the timeout, as the kernel's own refresh does. */
extern int CONFIG_HZ __kconfig __weak;

#define CT_TCP_FLAG_BE_LIBERAL 0x08 /* IP_CT_TCP_FLAG_BE_LIBERAL */
#define CT_F_NO_FORWARD                                            \
	(IPS_DYING | IPS_SEQ_ADJUST | IPS_NAT_CLASH | IPS_HELPER | \
	 IPS_OFFLOAD | IPS_HW_OFFLOAD | IPS_TEMPLATE)
#define TCP_FLAG_FIN 0x01
#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_RST 0x04
#define TCP_FLAG_ACK 0x10

/* The lookup's arguments, in the caller's per-CPU scratch (the forward
 * path has no stack left for them). */
struct ct_bufs {
	struct bpf_sock_tuple t;
	struct bpf_ct_opts o;
	__u8 quiet; /* a local packet asked about: counts nothing, asks nothing */
	/*
	 * A NATed connection's packet (nat 1) as its NAT hooks leave it: the
	 * other direction's tuple inverted (src, dst, ports); the device
	 * masquerade bound it to (an original direction's, else 0); routing's
	 * view of it (rp: the destination after prerouting's NAT, the source
	 * before postrouting's, nf_nat_inet_fn()); the old and new bytes that
	 * the checksums' updates sum.
	 */
	__u8 nat;
	__u32 masq_index;
	__u8 src[16], dst[16];
	__be16 sport, dport;
	struct pkt rp;
	__u8 old[36], new[36];
	/* ct_verdict()'s values that it passes by address: here, off its
	 * stack, which the front's call (front.h) needs. */
	__u16 field; /* the TCP or UDP checksum as it came */
	__u32 hash; /* the tuple's, for the admission (ct_admit()) */
	__u32 ifindex; /* the ingress, for its record */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct silo_ct_stats);
} ct_stats SEC(".maps");

/* TCP connections whose window tracking silod is to make liberal. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} ct_ask SEC(".maps");

static __always_inline void ct_count_always(__u32 idx)
{
	__u32 zero = 0;
	__u64 *c = bpf_map_lookup_elem(&ct_stats, &zero);

	if (c && idx < SILO_CT_STAT_MAX)
		c[idx] += 1;
}

#define ct_count(b, idx)                      \
	do {                                  \
		if (!(b)->quiet)              \
			ct_count_always(idx); \
	} while (0)

/* Whether this packet of family is asked about at all: outside for
 * nftables alone, and the family's established connections let in. */
static __always_inline int ct_may(const struct silo_genid *g, __u32 fam,
				  __u32 outside)
{
	return outside == SILO_ENV(NFTABLES) &&
	       (READ_ONCE(g->ct_fams) & (1U << fam));
}

/*
 * What conntrack's TCP and UDP error checks would call invalid, so that a
 * `ct state invalid drop` drops it (nf_conntrack_proto_tcp.c tcp_error(),
 * nf_conntrack_proto_udp.c udp_error()), the checksum aside
 * (ct_csum_ok()): SILO_CT_STAT_PASS_* or 0, and the checksum field into
 * *field. Only a packet with ACK and none of SYN, FIN, RST is taken: those
 * change the connection's state, which is the stack's to do.
 */
static __always_inline __u32 ct_packet_ok(struct xdp_md *ctx,
					  const struct pkt *p, __u16 *field)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	void *l4 = data + (p->l4_off & CSUM_OFF_MASK);
	__u32 l4_len = p->l3_off + p->l3_len - p->l4_off;

	if (p->l4_proto == IPPROTO_TCP) {
		struct tcphdr *th = l4;
		__u8 flags;

		if ((void *)(th + 1) > data_end)
			return SILO_CT_STAT_PASS_FLAGS;
		flags = ((__u8 *)th)[13];
		if ((flags & (TCP_FLAG_FIN | TCP_FLAG_SYN | TCP_FLAG_RST)) ||
		    !(flags & TCP_FLAG_ACK) || th->doff * 4 > l4_len)
			return SILO_CT_STAT_PASS_FLAGS;
		*field = th->check;
	} else {
		struct udphdr *uh = l4;

		if ((void *)(uh + 1) > data_end ||
		    bpf_ntohs(uh->len) > l4_len || bpf_ntohs(uh->len) < 8)
			return SILO_CT_STAT_PASS_CSUM;
		*field = uh->check;
		/* IPv6 has no UDP datagram without a checksum. */
		if (!*field && p->family == SILO_AF_INET6)
			return SILO_CT_STAT_PASS_CSUM;
	}
	return 0;
}

/*
 * The checksum, where conntrack checks it (nf_conntrack_checksum=1): 0 when
 * right, else SILO_CT_STAT_PASS_CSUM. After the lookup, and only for a
 * packet XDP could take: a new connection's packet goes to the stack
 * without a sum over its bytes (a flood of them costs the lookup alone).
 */
static __always_inline __u32 ct_csum_ok(struct xdp_md *ctx, const struct pkt *p,
					struct l4_csum *cs, __u16 field,
					__u8 ct_flags, __u32 dev_flags)
{
	__u32 l4_len = p->l3_off + p->l3_len - p->l4_off;

	if (!(ct_flags & SILO_CT_F_CHECKSUM))
		return 0;
	/* Left to offload by a sender on this host: the skb says
	 * CHECKSUM_PARTIAL and conntrack trusts it (nf_ip_checksum()); the
	 * frame is finished before it leaves (fwd_csum()). */
	if ((dev_flags & SILO_DEV_F_LOCAL_TX) &&
	    field == pseudo_fold(p->src, p->dst, p->family != SILO_AF_INET,
				 p->l4_proto, l4_len))
		return 0;
	return l4_csum_ok(ctx, p, cs) ? 0 : SILO_CT_STAT_PASS_CSUM;
}

/*
 * This CPU's conntrack admission (struct silo_admit, SILO_ADMIT_CT), its
 * budget refilled only when spent (the clock is read then alone), and the
 * looked-up tuple's hash into *h (never 0: an empty slot's).
 */
static __always_inline struct silo_admit *ct_admit(const struct ct_bufs *b,
						   bool v6, __u32 *h)
{
	const __u32 *w = (const __u32 *)&b->t;
	__u32 idx = SILO_ADMIT_CT;
	struct silo_admit *a;

	a = bpf_map_lookup_elem(&admit, &idx);
	if (!a)
		return NULL;
	if (!a->tokens)
		admit_refill(a, bpf_ktime_get_coarse_ns(), SILO_CT_ADMIT_BURST,
			     SILO_CT_ADMIT_NS);
	/* struct bpf_sock_tuple: IPv4's 3 words, IPv6's 9. */
	if (v6)
		*h = silo_hot_hash(
			     w[0] | (__u64)w[1] << 32, w[2] | (__u64)w[3] << 32,
			     w[4] | (__u64)w[5] << 32, w[6] | (__u64)w[7] << 32,
			     w[8], b->o.l4proto) |
		     1;
	else
		*h = silo_hot_hash(w[0] | (__u64)w[1] << 32, w[2], 0, 0, 0,
				   b->o.l4proto) |
		     1;
	return a;
}

/* The lookup's tuple and options for p, into b: the tuple's size. */
static __always_inline __u32 ct_tuple(const struct pkt *p, struct ct_bufs *b)
{
	__builtin_memset(&b->o, 0, sizeof(b->o));
	b->o.netns_id = BPF_F_CURRENT_NETNS;
	b->o.l4proto = p->l4_proto;
	if (p->family == SILO_AF_INET) {
		__builtin_memcpy(&b->t.ipv4.saddr, p->src, 4);
		__builtin_memcpy(&b->t.ipv4.daddr, p->dst, 4);
		b->t.ipv4.sport = p->sport;
		b->t.ipv4.dport = p->dport;
		return sizeof(b->t.ipv4);
	}
	__builtin_memcpy(b->t.ipv6.saddr, p->src, 16);
	__builtin_memcpy(b->t.ipv6.daddr, p->dst, 16);
	b->t.ipv6.sport = p->sport;
	b->t.ipv6.dport = p->dport;
	return sizeof(b->t.ipv6);
}

/* Asks silod to make the connection's window tracking liberal. */
static __always_inline void ct_ask_liberal(const struct pkt *p)
{
	struct silo_ct_ask *a;

	a = bpf_ringbuf_reserve(&ct_ask, sizeof(*a), 0);
	if (!a)
		return; /* full: the next packet asks again */
	__builtin_memcpy(a->src, p->src, sizeof(a->src));
	__builtin_memcpy(a->dst, p->dst, sizeof(a->dst));
	a->sport = p->sport;
	a->dport = p->dport;
	a->family = p->family;
	a->l4_proto = p->l4_proto;
	a->pad[0] = a->pad[1] = 0;
	bpf_ringbuf_submit(a, 0);
}

/*
 * The connection's own state, as the kernel's conntrack keeps it: 0 when
 * the stack would pass the packet through unchanged, else why not.
 */
static __always_inline __u32 ct_conn_ok(const struct pkt *p,
					const struct nf_conn *ct)
{
	unsigned long status = ct->status;

	if (!(status & IPS_CONFIRMED) || !(status & IPS_ASSURED))
		return SILO_CT_STAT_PASS_NEW;
	/* A NAT binding not made in both hooks yet: the stack's. */
	if ((status & IPS_SRC_NAT) && !(status & IPS_SRC_NAT_DONE))
		return SILO_CT_STAT_PASS_NAT;
	if ((status & IPS_DST_NAT) && !(status & IPS_DST_NAT_DONE))
		return SILO_CT_STAT_PASS_NAT;
	/* An expected connection has a master; a helper, SEQ_ADJUST or a
	 * flowtable's offload make the kernel do more than forward. */
	if ((status & CT_F_NO_FORWARD) || ct->master)
		return SILO_CT_STAT_PASS_STATE;
	if (p->l4_proto == IPPROTO_TCP) {
		if (ct->proto.tcp.state != TCP_CONNTRACK_ESTABLISHED)
			return SILO_CT_STAT_PASS_STATE;
		/* Not liberal: the stack would check the window, which XDP's
		 * packets would leave behind (nft_flow_offload_eval() sets it
		 * before it offloads, for the same reason). */
		if (!(ct->proto.tcp.seen[0].flags &
		      ct->proto.tcp.seen[1].flags & CT_TCP_FLAG_BE_LIBERAL))
			return SILO_CT_STAT_PASS_LIBERAL;
		return 0;
	}
	/* UDP: the stream timeout applies from stream_ts on (udp_packet());
	 * before, the kernel's shorter one. */
	if ((long)(bpf_jiffies64() - ct->proto.udp.stream_ts) <= 0)
		return SILO_CT_STAT_PASS_STATE;
	return 0;
}

/* The NAT tuple from the other direction's, inverted. */
#define CT_NAT_FROM(b, ct, i)                                                \
	do {                                                                 \
		__builtin_memcpy((b)->src, &(ct)->tuplehash[i].tuple.dst.u3, \
				 16);                                        \
		__builtin_memcpy((b)->dst, &(ct)->tuplehash[i].tuple.src.u3, \
				 16);                                        \
		(b)->sport = (ct)->tuplehash[i].tuple.dst.u.all;             \
		(b)->dport = (ct)->tuplehash[i].tuple.src.u.all;             \
	} while (0)

/*
 * A NATed connection's packet: what its NAT hooks would make of it (into
 * b), and masquerade's device, whose change makes the kernel drop the
 * packet (nf_nat_oif_changed(): an original direction's, at postrouting).
 * 0, or why the stack must do it.
 */
static __always_inline __u32 ct_nat_read(const struct nf_conn *ct,
					 struct ct_bufs *b,
					 unsigned long status)
{
	__u64 ext = 0;
	__u8 off = 0;
	int masq = 0;

	b->nat = 1;
	b->masq_index = 0;
	if (b->o.dir == IP_CT_DIR_ORIGINAL)
		CT_NAT_FROM(b, ct, IP_CT_DIR_REPLY);
	else
		CT_NAT_FROM(b, ct, IP_CT_DIR_ORIGINAL);
	if (!(status & IPS_SRC_NAT) || b->o.dir != IP_CT_DIR_ORIGINAL)
		return 0;
	/* The NAT extension's masq_index (nf_conn_nat), by the offset the
	 * extension area keeps for it. */
	if (bpf_probe_read_kernel(&ext, sizeof(ext), &ct->ext) || !ext)
		return SILO_CT_STAT_PASS_NAT;
	if (bpf_probe_read_kernel(
		    &off, sizeof(off),
		    (void *)(ext +
			     bpf_core_field_offset(struct nf_ct_ext, offset) +
			     NF_CT_EXT_NAT)))
		return SILO_CT_STAT_PASS_NAT;
	if (off && bpf_probe_read_kernel(
			   &masq, sizeof(masq),
			   (void *)(ext + off +
				    bpf_core_field_offset(struct nf_conn_nat,
							  masq_index))))
		return SILO_CT_STAT_PASS_NAT;
	b->masq_index = masq > 0 ? masq : 0;
	return 0;
}

/* Routing's view of a NATed packet: prerouting's NAT has changed the
 * destination (and its port), postrouting's will change the source. */
static __always_inline const struct pkt *ct_route_pkt(const struct pkt *p,
						      struct ct_bufs *b)
{
	b->rp = *p;
	__builtin_memcpy(b->rp.dst, b->dst, sizeof(b->rp.dst));
	b->rp.dport = b->dport;
	return &b->rp;
}

/* A checksum field after data summing to `from` became data summing to
 * `to` (diff: bpf_csum_diff(from, to)), RFC 1624: ~(~C + ~m + m'). */
static __always_inline __u16 csum_replace(__u16 check, __s64 diff)
{
	return ~csum_fold16(csum_add32(~check & 0xFFFF, (__u32)diff)) & 0xFFFF;
}

/*
 * The packet rewritten as its NAT hooks would: addresses and ports, the
 * IPv4 header's checksum, the TCP or UDP checksum (pseudo header and
 * ports; an IPv4 UDP datagram without one keeps 0, one that sums to 0 is
 * sent as all ones). After the checksum a local sender left to offload is
 * finished (fwd_csum()): it is complete here. The old bytes (source,
 * destination, ports) and the new are laid side by side in b's scratch
 * for the sums' change. 0, or -1, untouched.
 */
static __noinline int ct_nat_rewrite(struct xdp_md *ctx, const struct pkt *p,
				     struct ct_bufs *b)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip6 = NULL;
	struct iphdr *iph = NULL;
	__s64 d_addr = 0, d_all;
	__u16 *check, c;
	__u8 *l4h;

	if (!b)
		return -1;
	l4h = data + (p->l4_off & 0x1FF);
	if (l4h + 8 > (__u8 *)data_end)
		return -1;
	check = (__u16 *)(l4h + (p->l4_proto == IPPROTO_TCP ? 16 : 6));
	if ((void *)(check + 1) > data_end)
		return -1;
	__builtin_memset(b->old, 0, sizeof(b->old));
	__builtin_memset(b->new, 0, sizeof(b->new));
	if (p->family == SILO_AF_INET) {
		iph = data + (p->l3_off & 0xFF);
		if ((void *)(iph + 1) > data_end)
			return -1;
		__builtin_memcpy(b->old, &iph->saddr, 8);
		__builtin_memcpy(b->new, b->src, 4);
		__builtin_memcpy(b->new + 4, b->dst, 4);
		__builtin_memcpy(b->old + 8, l4h, 4);
		__builtin_memcpy(b->new + 8, &b->sport, 2);
		__builtin_memcpy(b->new + 10, &b->dport, 2);
		d_addr = bpf_csum_diff((void *)b->old, 8, (void *)b->new, 8, 0);
		d_all = bpf_csum_diff((void *)b->old, 12, (void *)b->new, 12,
				      0);
	} else {
		ip6 = data + (p->l3_off & 0xFF);
		if ((void *)(ip6 + 1) > data_end)
			return -1;
		__builtin_memcpy(b->old, &ip6->saddr, 32);
		__builtin_memcpy(b->new, b->src, 16);
		__builtin_memcpy(b->new + 16, b->dst, 16);
		__builtin_memcpy(b->old + 32, l4h, 4);
		__builtin_memcpy(b->new + 32, &b->sport, 2);
		__builtin_memcpy(b->new + 34, &b->dport, 2);
		d_all = bpf_csum_diff((void *)b->old, 36, (void *)b->new, 36,
				      0);
	}
	if (d_addr < 0 || d_all < 0)
		return -1;
	/* Written only now: every check above left the packet as it was. */
	if (p->l4_proto == IPPROTO_TCP || *check) {
		c = csum_replace(*check, d_all);
		*check = (!c && p->l4_proto == IPPROTO_UDP) ? 0xFFFF : c;
	}
	if (iph) {
		iph->check = csum_replace(iph->check, d_addr);
		__builtin_memcpy(&iph->saddr, b->new, 8);
	} else if (ip6) {
		__builtin_memcpy(&ip6->saddr, b->new, 32);
	}
	__builtin_memcpy(l4h, &b->sport, 2);
	__builtin_memcpy(l4h + 2, &b->dport, 2);
	return 0;
}

/*
 * The timeout the kernel's refresh would set (nf_ct_refresh_acct(): now
 * plus the state's), written only when it moved by more than a second, as
 * flow_offload_refresh() does: a write per packet would bounce the entry's
 * cache line between CPUs. Not where the timeout is fixed.
 */
static __always_inline void ct_refresh(struct nf_conn *ct, __u32 secs,
				       unsigned long status, struct ct_bufs *b)
{
	__u32 hz = CONFIG_HZ, want;

	if (!secs || (status & IPS_FIXED_TIMEOUT))
		return;
	if (hz) {
		want = (__u32)bpf_jiffies64() + secs * hz;
		if ((__s32)(want - ct->timeout) <= (__s32)hz)
			return;
	}
	if (!bpf_ct_change_timeout(ct, secs * 1000))
		ct_count(b, SILO_CT_STAT_REFRESHED);
}

/*
 * Conntrack's verdict on a forwarded TCP or UDP packet of a family whose
 * firewall accepts established connections first: 0 to forward, else the
 * packet goes to the stack (counted in ct_stats; SILO_CT_STAT_FORWARDED is
 * 0, so every reason is not). A global function: the verifier walks it
 * once, not at each of its two callers (a load took twice as long), and
 * the lookup's reference is taken and released within it.
 */
__noinline int ct_verdict(struct xdp_md *ctx, const struct pkt *p,
			  struct ct_bufs *b, struct l4_csum *cs,
			  const struct silo_genid *g)
{
	const struct silo_device *dev;
	__u32 why, bad, tsz, h;
	struct silo_admit *adm;
	struct nf_conn *ct;
	unsigned long status;
	__u8 ct_flags;

	/* A global function, verified once: its pointers may be NULL. */
	if (!p || !b || !cs || !g)
		return -1;
	b->nat = 0;
	b->field = 0;
	b->hash = 0;
	b->ifindex = ctx->ingress_ifindex;
	if (!bpf_ksym_exists(bpf_xdp_ct_lookup)) {
		ct_count(b, SILO_CT_STAT_PASS_NO_KFUNC);
		return -1;
	}
	why = ct_packet_ok(ctx, p, &b->field);
	if (why) {
		ct_count(b, why);
		return -1;
	}
	tsz = ct_tuple(p, b);
	/* Past the budget of misses, only a flow held before is looked up:
	 * a storm of new connections costs the kernel's work alone. */
	adm = ct_admit(b, p->family != SILO_AF_INET, &b->hash);
	h = b->hash;
	if (adm && !adm->tokens && *seen_slot(adm, h) != h) {
		ct_count(b, SILO_CT_STAT_PASS_STORM);
		return -1;
	}
	ct = bpf_xdp_ct_lookup(ctx, &b->t, tsz, &b->o, sizeof(b->o));
	if (!ct) {
		if (adm && adm->tokens)
			adm->tokens--;
		ct_count(b, SILO_CT_STAT_PASS_NONE);
		return -1;
	}
	if (adm)
		*seen_slot(adm, h) = h;
	status = ct->status;
	why = ct_conn_ok(p, ct);
	/* A packet conntrack would call invalid asks nothing either. */
	if (!why || why == SILO_CT_STAT_PASS_LIBERAL) {
		dev = bpf_map_lookup_elem(&devices, &b->ifindex);
		ct_flags = READ_ONCE(g->ct_flags);
		bad = ct_csum_ok(ctx, p, cs, b->field, ct_flags,
				 dev ? dev->flags : 0);
		if (bad)
			why = bad;
	}
	if (!why && (status & IPS_NAT_MASK))
		why = ct_nat_read(ct, b, status);
	if (!why)
		ct_refresh(
			ct,
			READ_ONCE(
				g->ct_timeout[p->l4_proto == IPPROTO_TCP ? 0 :
									   1]),
			status, b);
	bpf_ct_release(ct);
	/* A local packet asks only for a NATed connection, which the
	 * kernel forwards: a local connection keeps its window checks. */
	if (why == SILO_CT_STAT_PASS_LIBERAL &&
	    (!b->quiet || (status & IPS_NAT_MASK)))
		ct_ask_liberal(p);
	if (why) {
		ct_count(b, why);
		return -1;
	}
	return 0;
}

/*
 * After the route and the checksum: a NATed packet rewritten as its NAT
 * hooks would, or 0 untouched for one without NAT. -1 (counted): the
 * kernel's to do, masquerade's device changed (it drops the packet) or
 * the rewrite failed.
 */
static __always_inline int ct_nat_apply(struct xdp_md *ctx, const struct pkt *p,
					struct ct_bufs *b, __u32 egress)
{
	if (!b->nat)
		return 0;
	if ((b->masq_index && b->masq_index != egress) ||
	    ct_nat_rewrite(ctx, p, b)) {
		ct_count(b, SILO_CT_STAT_PASS_NAT);
		return -1;
	}
	return 0;
}

/*
 * A packet for a local address may be a NATed connection's, which the
 * kernel forwards once prerouting's NAT has changed its destination (a
 * reply to a masqueraded connection, a DNATed port): 1 when conntrack
 * says so, asked quietly (local traffic counts nothing, asks nothing).
 * Only where established connections are let in.
 */
static __always_inline int ct_local_nat(struct xdp_md *ctx, const struct pkt *p,
					struct ct_bufs *b, struct l4_csum *cs)
{
	const struct silo_genid *g;
	__u32 zero = 0, fam, out;
	int rc;

	g = bpf_map_lookup_elem(&genid, &zero);
	if (!g)
		return 0;
	fam = p->family == SILO_AF_INET ? SILO_FAM_V4 : SILO_FAM_V6;
	out = READ_ONCE(g->outside[fam]);
	if (!out || !ct_may(g, fam, out))
		return 0;
	b->quiet = 1;
	rc = ct_verdict(ctx, p, b, cs, g);
	b->quiet = 0;
	return !rc && b->nat;
}

#endif /* SILO_BPF_LIB_CT_H */
