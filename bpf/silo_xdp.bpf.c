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
#include "parse.h"
#include "cpu_node.h"

/* Knobs, set by the loader before load (one program instance per device). */
const volatile __u8 forward = 0; /* --forward */
const volatile __u8 cache_enabled = 1; /* 0: bpf_fib_lookup every packet */
const volatile __u32 cache_size = SILO_ROUTE_CACHE_DEFAULT; /* per node */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct silo_meta);
} meta SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SILO_MAX_LOCAL_ADDRS);
	__type(key, struct silo_addr);
	__type(value, struct silo_local_addr);
} local_addrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct silo_genid);
} genid SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct silo_heartbeat);
} heartbeat SEC(".maps");

/* silod's own state: declared here so every map is made (with BTF) at once. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct silo_daemon);
} daemon SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SILO_MAX_DEVICES);
	__type(key, __u32);
	__type(value, struct silo_device);
} devices SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, SILO_MAX_DEVICES);
	__type(key, __u32);
	__type(value, __u32);
} tx_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct silo_stats);
} stats SEC(".maps");

/*
 * One LRU cache per NUMA node, allocated on its node. Node 0's is made here
 * (and gives the others their BTF); user space makes the rest with the same
 * flags, as an array of maps requires.
 */
struct route_cache_node {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SILO_ROUTE_CACHE_DEFAULT);
	__uint(map_flags, BPF_F_NUMA_NODE);
	__uint(numa_node, 0);
	__type(key, struct silo_route_key);
	__type(value, struct silo_route_entry);
};

struct route_cache_node route_cache_n0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SILO_MAX_NODES);
	__type(key, __u32);
	__array(values, struct route_cache_node);
} route_cache SEC(".maps") = {
	.values = { [0] = &route_cache_n0 },
};

/* Per-CPU: no other CPU writes these cache lines. */
static __always_inline void count(struct silo_stats *st, __u32 idx)
{
	if (idx < SILO_STAT_MAX)
		((__u64 *)st)[idx] += 1;
}

static __always_inline int pass(struct silo_stats *st, __u32 reason)
{
	count(st, reason);
	count(st, SILO_STAT_PASS);
	return XDP_PASS;
}

static __always_inline int mac_equal(const __u8 *a, const __u8 *b)
{
	return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) |
		(a[4] ^ b[4]) | (a[5] ^ b[5])) == 0;
}

static __always_inline int is_local(const struct pkt *p)
{
	struct silo_addr a = { .family = p->family };

	__builtin_memcpy(a.addr, p->dst, sizeof(a.addr));
	return bpf_map_lookup_elem(&local_addrs, &a) != NULL;
}

/* Trusted unless silod has run here and has gone silent. */
static __always_inline int cache_trusted(void)
{
	const struct silo_heartbeat *hb;
	__u32 zero = 0;
	__u64 last;

	hb = bpf_map_lookup_elem(&heartbeat, &zero);
	if (!hb)
		return 0;
	last = READ_ONCE(hb->last_ns);
	if (!last)
		return 1;
	return (__s64)(bpf_ktime_get_coarse_ns() - last) <=
	       (__s64)READ_ONCE(hb->timeout_ns);
}

static __always_inline void *node_cache(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 *node = bpf_map_lookup_elem(&cpu_node, &cpu);
	__u32 n = node ? *node : 0;

	return bpf_map_lookup_elem(&route_cache, &n);
}

/*
 * IPv4 reverse path check as fib_validate_source() does it for rp_filter 1
 * (strict: the route back to the source leaves through the ingress device)
 * and 2 (loose: some unicast route back exists): an input lookup, like the
 * kernel's, with no output device to bias it. Only on a cache miss: the
 * answer is cached with the route, and any route change bumps genid.
 */
static __always_inline int rp_ok(struct xdp_md *ctx, const struct pkt *p,
				 const struct silo_device *dev)
{
	struct bpf_fib_lookup fib = {};
	int rc;

	if (p->family != SILO_AF_INET || !dev->rp_filter)
		return 1;
	fib.family = p->family;
	fib.ifindex = ctx->ingress_ifindex;
	fib.tos = p->tos;
	__builtin_memcpy(&fib.ipv4_src, p->dst, 4);
	__builtin_memcpy(&fib.ipv4_dst, p->src, 4);
	rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), BPF_FIB_LOOKUP_SKIP_NEIGH);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH)
		return 0;
	return dev->rp_filter == 2 || fib.ifindex == ctx->ingress_ifindex;
}

static __always_inline void fill_key(struct silo_route_key *key,
				     struct xdp_md *ctx, const struct pkt *p,
				     __u32 flags)
{
	key->ifindex = ctx->ingress_ifindex;
	key->family = p->family;
	key->tos = p->tos;
	if (flags & SILO_GENID_KEY_L4) {
		key->l4_proto = p->l4_proto;
		key->sport = p->sport;
		key->dport = p->dport;
	}
	__builtin_memcpy(key->src, p->src, sizeof(key->src));
	__builtin_memcpy(key->dst, p->dst, sizeof(key->dst));
}

/*
 * Entries are read and rewritten without a lock (a lock would be a write
 * shared by every CPU of the node on every packet). The writer zeroes genid,
 * writes the fields, then stores genid; a reader copies the fields between
 * two reads of genid and trusts the copy only if both equal the current
 * genid. Ordering relies on the JIT's plain loads and stores keeping program
 * order, which holds on x86 (TSO); compiler barriers keep clang from moving
 * them.
 */
static __always_inline int entry_read(struct silo_route_entry *e,
				      struct silo_route_entry *out, __u64 gen)
{
	if (READ_ONCE(e->genid) != gen)
		return -1;
	barrier();
	__builtin_memcpy(out, e, sizeof(*out));
	barrier();
	return READ_ONCE(e->genid) == gen ? 0 : -2;
}

/*
 * A preallocated LRU map may hand an element to another key (eviction or a
 * delete, then an insert) while we hold a pointer to it. So the writer
 * publishes the new genid only if the key still maps to this element; if
 * not, it leaves genid 0 so the element's new owner re-resolves rather than
 * using our fields. Returns 0, or -1 when the element was taken over.
 */
static __always_inline int entry_write(void *cache,
				       const struct silo_route_key *key,
				       struct silo_route_entry *e,
				       const struct silo_route_entry *n)
{
	WRITE_ONCE(e->genid, 0);
	barrier();
	e->ifindex = n->ifindex;
	e->mtu = n->mtu;
	e->family = n->family;
	__builtin_memcpy(e->smac, n->smac, sizeof(e->smac));
	__builtin_memcpy(e->dmac, n->dmac, sizeof(e->dmac));
	__builtin_memcpy(e->nexthop, n->nexthop, sizeof(e->nexthop));
	barrier();
	if (bpf_map_lookup_elem(cache, key) != e) {
		WRITE_ONCE(e->genid, 0);
		return -1;
	}
	WRITE_ONCE(e->genid, n->genid);
	return 0;
}

static __always_inline void ipv4_decrease_ttl(struct iphdr *iph)
{
	__u32 check = iph->check;

	check += bpf_htons(0x0100);
	iph->check = (__u16)(check + (check >= 0xFFFF));
	iph->ttl--;
}

/* Forward from the cache, or resolve with bpf_fib_lookup and cache it. */
static __always_inline int forward_packet(struct xdp_md *ctx, struct pkt *p,
					  struct silo_stats *st)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = (void *)(long)ctx->data;
	struct silo_route_entry *e = NULL, r = {};
	const struct silo_genid *g;
	const struct silo_device *dev;
	struct silo_route_key key = {};
	struct bpf_fib_lookup fib = {};
	__u32 zero = 0, ifindex;
	void *cache = NULL;
	__u64 gen;
	int rc;

	if ((void *)(eth + 1) > data_end)
		return pass(st, SILO_STAT_PASS_TRUNCATED);
	if (p->vlan_depth)
		return pass(st, SILO_STAT_PASS_VLAN);
	/* Frames for another host, broadcast or multicast: not ours. */
	ifindex = ctx->ingress_ifindex;
	dev = bpf_map_lookup_elem(&devices, &ifindex);
	if (!dev || !mac_equal(dev->mac, eth->h_dest))
		return pass(st, SILO_STAT_PASS_NOT_HOST);
	if (p->ip_options)
		return pass(st, SILO_STAT_PASS_IP_OPTIONS);
	if (p->family == SILO_AF_INET && !ipv4_csum_ok(ctx))
		return pass(st, SILO_STAT_PASS_BAD_CSUM);
	if (p->martian)
		return pass(st, SILO_STAT_PASS_MARTIAN);
	if (p->hop_by_hop)
		return pass(st, SILO_STAT_PASS_HOP_BY_HOP);
	if (p->ttl <= 1)
		return pass(st, SILO_STAT_PASS_TTL);

	g = bpf_map_lookup_elem(&genid, &zero);
	if (!g)
		return pass(st, SILO_STAT_PASS_FIB);
	/* Read before the lookup: an entry is never newer than its stamp. */
	gen = READ_ONCE(g->genid);
	fill_key(&key, ctx, p, g->flags);

	if (cache_enabled && !cache_trusted()) {
		/* Nobody invalidates it now: neither read nor fill it. */
		count(st, SILO_STAT_CACHE_UNTRUSTED);
	} else if (cache_enabled) {
		cache = node_cache();
		if (cache)
			e = bpf_map_lookup_elem(cache, &key);
		if (!e) {
			count(st, SILO_STAT_CACHE_MISS);
		} else {
			rc = entry_read(e, &r, gen);
			if (rc == 0) {
				count(st, SILO_STAT_CACHE_HIT);
				goto xmit;
			}
			count(st, rc == -1 ? SILO_STAT_CACHE_STALE :
					     SILO_STAT_CACHE_RACE);
		}
	}

	fib.family = p->family;
	fib.ifindex = ctx->ingress_ifindex;
	fib.tot_len = p->l3_len;
	fib.l4_protocol = key.l4_proto;
	fib.sport = key.sport;
	fib.dport = key.dport;
	if (p->family == SILO_AF_INET)
		fib.tos = p->tos;
	else
		fib.flowinfo = bpf_htonl((__u32)p->tos << 20);
	__builtin_memcpy(fib.ipv6_src, p->src, sizeof(fib.ipv6_src));
	__builtin_memcpy(fib.ipv6_dst, p->dst, sizeof(fib.ipv6_dst));
	rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);
	if (rc < 0 || rc >= SILO_STAT_FIB_CODES)
		count(st, SILO_STAT_FIB_ERROR);
	else
		count(st, SILO_STAT_FIB_FIRST + rc);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return pass(st, SILO_STAT_PASS_FIB);
	if (!rp_ok(ctx, p, dev))
		return pass(st, SILO_STAT_PASS_RP_FILTER);

	r.genid = gen;
	r.ifindex = fib.ifindex;
	r.mtu = fib.mtu_result;
	r.family = p->family;
	__builtin_memcpy(r.smac, fib.smac, sizeof(r.smac));
	__builtin_memcpy(r.dmac, fib.dmac, sizeof(r.dmac));
	__builtin_memcpy(r.nexthop, fib.ipv6_dst, sizeof(r.nexthop));
	if (cache) {
		if (e) {
			/*
			 * In place: an update on a full LRU map takes a new
			 * node and may evict another live entry.
			 */
			if (entry_write(cache, &key, e, &r))
				count(st, SILO_STAT_CACHE_RACE);
			else
				count(st, SILO_STAT_CACHE_REFRESH);
		} else if (bpf_map_update_elem(cache, &key, &r, BPF_ANY)) {
			count(st, SILO_STAT_CACHE_INSERT_FAIL);
		} else {
			count(st, SILO_STAT_CACHE_INSERT);
		}
	}

xmit:
	if (p->l3_len > r.mtu)
		return pass(st, SILO_STAT_PASS_MTU);
	if (r.ifindex == ctx->ingress_ifindex)
		return pass(st, SILO_STAT_PASS_HAIRPIN);
	/* Only records the target: the packet is untouched until we return. */
	if (bpf_redirect_map(&tx_ports, r.ifindex, XDP_PASS) != XDP_REDIRECT)
		return pass(st, SILO_STAT_PASS_NO_TX_PORT);

	eth = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if ((void *)(eth + 1) > data_end)
		return pass(st, SILO_STAT_PASS_TRUNCATED);
	__builtin_memcpy(eth->h_dest, r.dmac, sizeof(eth->h_dest));
	__builtin_memcpy(eth->h_source, r.smac, sizeof(eth->h_source));
	if (p->family == SILO_AF_INET) {
		struct iphdr *iph = (void *)(eth + 1);

		if ((void *)(iph + 1) > data_end)
			return pass(st, SILO_STAT_PASS_TRUNCATED);
		ipv4_decrease_ttl(iph);
	} else {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end)
			return pass(st, SILO_STAT_PASS_TRUNCATED);
		ip6->hop_limit--;
	}
	count(st, SILO_STAT_REDIRECT);
	return XDP_REDIRECT;
}

SEC("xdp")
int silo_xdp(struct xdp_md *ctx)
{
	struct silo_stats *st;
	struct pkt p = {};
	__u32 zero = 0;
	int reason;

	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return XDP_PASS;
	count(st, SILO_STAT_RX);
	reason = parse_packet(ctx, &p);
	if (reason)
		return pass(st, reason);
	if (is_local(&p))
		return pass(st, SILO_STAT_PASS_LOCAL);
	if (!forward)
		return pass(st, SILO_STAT_PASS_NO_FORWARD);
	return forward_packet(ctx, &p, st);
}

char LICENSE[] SEC("license") = "GPL";
