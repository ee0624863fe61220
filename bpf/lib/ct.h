/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Established connections under a stateful firewall (docs/ENVELOPE.md).
 * User space has proven that every chain a forwarded packet of an
 * established connection traverses accepts it before any rule can act on
 * it (genid.ct_fams, with the operator's opt-in): what the kernel does for
 * such a packet is then conntrack's work alone. This asks conntrack per
 * packet (bpf_xdp_ct_lookup(): it stays the authority, and a deleted or
 * expired entry is seen at the next packet), forwards what the kernel
 * would pass through unchanged, refreshes the timeout as the kernel would,
 * and leaves the rest to the stack: a new connection, a state change
 * (SYN, FIN, RST), NAT, a helper, a packet conntrack would call invalid.
 */
#ifndef SILO_BPF_LIB_CT_H
#define SILO_BPF_LIB_CT_H

#include "common.h"
#include "parse.h"
#include "csum.h"
#include "maps.h"

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
	__u32 dev_flags; /* the ingress device's record's, the caller's */
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

static __always_inline void ct_count(__u32 idx)
{
	__u32 zero = 0;
	__u64 *c = bpf_map_lookup_elem(&ct_stats, &zero);

	if (c && idx < SILO_CT_STAT_MAX)
		c[idx] += 1;
}

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
 * nf_conntrack_proto_udp.c udp_error()): SILO_CT_STAT_PASS_* or 0. Only a
 * packet with ACK and none of SYN, FIN, RST is taken: those change the
 * connection's state, which is the stack's to do.
 */
static __always_inline __u32 ct_packet_ok(struct xdp_md *ctx,
					  const struct pkt *p,
					  struct l4_csum *cs, __u8 ct_flags,
					  __u32 dev_flags)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	void *l4 = data + (p->l4_off & CSUM_OFF_MASK);
	__u32 l4_len = p->l3_off + p->l3_len - p->l4_off;
	__u16 field;

	if (p->l4_proto == IPPROTO_TCP) {
		struct tcphdr *th = l4;
		__u8 flags;

		if ((void *)(th + 1) > data_end)
			return SILO_CT_STAT_PASS_FLAGS;
		flags = ((__u8 *)th)[13];
		if ((flags & (TCP_FLAG_FIN | TCP_FLAG_SYN | TCP_FLAG_RST)) ||
		    !(flags & TCP_FLAG_ACK) || th->doff * 4 > l4_len)
			return SILO_CT_STAT_PASS_FLAGS;
		field = th->check;
	} else {
		struct udphdr *uh = l4;

		if ((void *)(uh + 1) > data_end ||
		    bpf_ntohs(uh->len) > l4_len || bpf_ntohs(uh->len) < 8)
			return SILO_CT_STAT_PASS_CSUM;
		field = uh->check;
		/* IPv6 has no UDP datagram without a checksum. */
		if (!field && p->family == SILO_AF_INET6)
			return SILO_CT_STAT_PASS_CSUM;
	}
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
	if (status & IPS_NAT_MASK)
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

/*
 * The timeout the kernel's refresh would set (nf_ct_refresh_acct(): now
 * plus the state's), written only when it moved by more than a second, as
 * flow_offload_refresh() does: a write per packet would bounce the entry's
 * cache line between CPUs. Not where the timeout is fixed.
 */
static __always_inline void ct_refresh(struct nf_conn *ct, __u32 secs,
				       unsigned long status)
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
		ct_count(SILO_CT_STAT_REFRESHED);
}

/*
 * Conntrack's verdict on a forwarded TCP or UDP packet of a family whose
 * firewall accepts established connections first: 0 to forward, else the
 * packet goes to the stack (counted in ct_stats; SILO_CT_STAT_FORWARDED is
 * 0, so every reason is not). A subprogram: the lookup's reference is
 * taken and released within it.
 */
static __noinline int ct_verdict(struct xdp_md *ctx, const struct pkt *p,
				 struct ct_bufs *b, struct l4_csum *cs,
				 const struct silo_genid *g)
{
	__u32 why, tsz;
	struct nf_conn *ct;
	unsigned long status;
	__u8 ct_flags;

	if (!b || !cs || !g)
		return -1;
	if (!bpf_ksym_exists(bpf_xdp_ct_lookup)) {
		ct_count(SILO_CT_STAT_PASS_NO_KFUNC);
		return -1;
	}
	ct_flags = READ_ONCE(g->ct_flags);
	why = ct_packet_ok(ctx, p, cs, ct_flags, b->dev_flags);
	if (why) {
		ct_count(why);
		return -1;
	}
	__builtin_memset(&b->o, 0, sizeof(b->o));
	b->o.netns_id = BPF_F_CURRENT_NETNS;
	b->o.l4proto = p->l4_proto;
	if (p->family == SILO_AF_INET) {
		__builtin_memcpy(&b->t.ipv4.saddr, p->src, 4);
		__builtin_memcpy(&b->t.ipv4.daddr, p->dst, 4);
		b->t.ipv4.sport = p->sport;
		b->t.ipv4.dport = p->dport;
		tsz = sizeof(b->t.ipv4);
	} else {
		__builtin_memcpy(b->t.ipv6.saddr, p->src, 16);
		__builtin_memcpy(b->t.ipv6.daddr, p->dst, 16);
		b->t.ipv6.sport = p->sport;
		b->t.ipv6.dport = p->dport;
		tsz = sizeof(b->t.ipv6);
	}
	ct = bpf_xdp_ct_lookup(ctx, &b->t, tsz, &b->o, sizeof(b->o));
	if (!ct) {
		ct_count(SILO_CT_STAT_PASS_NONE);
		return -1;
	}
	status = ct->status;
	why = ct_conn_ok(p, ct);
	if (!why)
		ct_refresh(
			ct,
			READ_ONCE(
				g->ct_timeout[p->l4_proto == IPPROTO_TCP ? 0 :
									   1]),
			status);
	bpf_ct_release(ct);
	if (why == SILO_CT_STAT_PASS_LIBERAL)
		ct_ask_liberal(p);
	if (why) {
		ct_count(why);
		return -1;
	}
	return 0;
}

#endif /* SILO_BPF_LIB_CT_H */
