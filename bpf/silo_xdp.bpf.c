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
/* Steer local packets of services to their CPU: native mode only. Under
 * generic XDP the packet is an skb already, and one redirected through the
 * cpumap would meet the program again on the target CPU. Declared with
 * the other bytes: .rodata then has no tail padding, and prog_rodata()
 * (user/lib/xdp.c) compares the map's size with the skeleton's. */
const volatile __u8 steer = 0;
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

/* Services and the CPU steering of their packets: see struct silo_service. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SILO_MAX_SERVICES);
	__type(key, struct silo_service_key);
	__type(value, struct silo_service);
} services SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SILO_MAX_SERVICES * 4);
	__type(key, struct silo_service_node_key);
	__type(value, struct silo_service_node);
} service_nodes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SILO_MAX_SERVICES);
	__type(key, __u32);
	__type(value, struct silo_service_stats);
} service_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SILO_MAX_QUEUES);
	__type(key, struct silo_queue_key);
	__type(value, __u32);
} queue_cpu SEC(".maps");

/* Entries only for CPUs of some service, made by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, SILO_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} cpumap SEC(".maps");

/* Per-CPU admission state: see struct silo_admit. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct silo_admit);
} admit SEC(".maps");

/* Where a source entry is built: the stack has no room for it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct silo_route_entry);
} scratch SEC(".maps");

/* The keys inserted into the route caches, for silod's index (abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SILO_FILL_LOG_BYTES);
} fill_log SEC(".maps");

/* Entries in a hash map, summed over CPUs (Linux 6.6): counts evictions. */
extern __s64 bpf_map_sum_elem_count(const struct bpf_map *map) __ksym __weak;
#ifndef bpf_ksym_exists /* libbpf before 1.2 */
#define bpf_ksym_exists(sym) (!!(sym))
#endif

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

/* A local packet sent to its service's CPU: verdict XDP_REDIRECT. */
static __always_inline int steered(struct silo_stats *s)
{
	count(s, SILO_STAT_STEERED);
	count(s, SILO_STAT_REDIRECT);
	return XDP_REDIRECT;
}

static __always_inline int mac_equal(const __u8 *a, const __u8 *b)
{
	return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) |
		(a[4] ^ b[4]) | (a[5] ^ b[5])) == 0;
}

/*
 * Only silod invalidates the cache and keeps the envelope current, so silo
 * forwards only while silod beats: not before it has run (0), not after it
 * has exited (0 again), not when the beat is too old, and not when it lies
 * in the future (a clock that is not ours: silod in another time
 * namespace).
 */
static __always_inline int daemon_live(void)
{
	const struct silo_heartbeat *hb;
	__u32 zero = 0;
	__u64 last;
	__s64 age;

	hb = bpf_map_lookup_elem(&heartbeat, &zero);
	if (!hb)
		return 0;
	last = READ_ONCE(hb->last_ns);
	if (!last)
		return 0;
	age = (__s64)(bpf_ktime_get_coarse_ns() - last);
	return age >= 0 && age <= (__s64)READ_ONCE(hb->timeout_ns);
}

static __always_inline void *node_cache(__u32 *n)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 *node = bpf_map_lookup_elem(&cpu_node, &cpu);

	*n = node ? *node : 0;
	return bpf_map_lookup_elem(&route_cache, n);
}

static __always_inline int is_local(const struct pkt *p)
{
	struct silo_addr a = { .family = p->family };

	__builtin_memcpy(a.addr, p->dst, sizeof(a.addr));
	return bpf_map_lookup_elem(&local_addrs, &a) != NULL;
}

static __always_inline void scount(struct silo_service_stats *ss, __u32 idx)
{
	if (ss && idx < SILO_SSTAT_MAX)
		((__u64 *)ss)[idx] += 1;
}

/* A local packet the parser could not follow: passed, counted as such. */
static __always_inline int parse_pass(struct silo_stats *st,
				      const struct pkt *p, __u32 reason)
{
	__u32 idx = SILO_SSTAT_NOT_UNDERSTOOD, zero = 0;

	if (p->family && is_local(p)) {
		if (reason == SILO_STAT_PASS_FRAGMENT)
			idx = SILO_SSTAT_FRAGMENT;
		else if (reason == SILO_STAT_PASS_L4_PROTO)
			idx = SILO_SSTAT_NOT_L4;
		scount(bpf_map_lookup_elem(&service_stats, &zero), idx);
	}
	return pass(st, reason);
}

/*
 * The local branch's state, off the stack: the forward path inlined in
 * silo_xdp() leaves local_steer() few of the 512 bytes.
 */
struct steer_scratch {
	struct silo_service_key svc;
	struct silo_service_node_key node;
	struct silo_queue_key queue;
	__u32 cpu;
	__u32 id;
	__u32 slot;
	/* The L4 checksum: where it is, what is left, the sum so far, its
	 * pseudo header (addresses, length, protocol), the last bytes. */
	__u32 off;
	__u32 left;
	__u32 sum;
	__u32 pseudo[10];
	__u8 tail[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct steer_scratch);
} steer_scratch SEC(".maps");

#define CSUM_CHUNK 256
#define CSUM_CHUNKS 36 /* 9,216 bytes: a jumbo frame */
/* Offsets bounded so that offset + chunk stays below the verifier's
 * MAX_PACKET_OFF (0xFFFF), or it does not take the bounds check. */
#define CSUM_OFF_MASK 0x3FFF

/*
 * Adds sz bytes of the packet at sc->off to sc->sum when sc->left holds
 * them. The state lives in scratch, not in registers that each helper call
 * would make the program spill to a stack it has no room on.
 */
static __always_inline int csum_step(struct xdp_md *ctx,
				     struct steer_scratch *sc, __u32 sz)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	void *at = data + (sc->off & CSUM_OFF_MASK);
	__s64 sum;

	if (sc->left < sz)
		return 0;
	if (at + sz > data_end)
		return -1;
	sum = bpf_csum_diff(NULL, 0, at, sz, sc->sum);
	if (sum < 0)
		return -1;
	sc->sum = sum;
	sc->off += sz;
	sc->left -= sz;
	return 0;
}

/*
 * Is the TCP or UDP checksum complete and right? A cpumap carries no
 * checksum state: the stack on the target CPU checks the sum in software.
 * A packet whose sum the sender left to offload (CHECKSUM_PARTIAL, from a
 * veth peer in this host) is right for the stack here but wrong there, so
 * it is passed, as is one with a bad sum (the stack drops it here).
 */
static __always_inline int l4_csum_ok(struct xdp_md *ctx, const struct pkt *p,
				      struct steer_scratch *sc)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	void *l4 = data + (p->l4_off & CSUM_OFF_MASK);
	const __u32 *src, *dst;
	__u32 i, sum;
	__s64 s;

	if (l4 + 8 > data_end)
		return 0;
	sc->off = p->l4_off;
	sc->left = p->l3_off + p->l3_len - p->l4_off;
	if (sc->left > CSUM_CHUNK * CSUM_CHUNKS)
		return 0;
	/* struct pkt keeps the addresses 4-byte aligned: copy by words. */
	src = (const __u32 *)p->src;
	dst = (const __u32 *)p->dst;
	if (p->family == SILO_AF_INET) {
		/* UDP over IPv4 without a checksum: nothing to check. */
		if (p->l4_proto == IPPROTO_UDP && !*(__u16 *)(l4 + 6))
			return 1;
		sc->pseudo[0] = src[0];
		sc->pseudo[1] = dst[0];
		sc->pseudo[2] = bpf_htonl((__u32)p->l4_proto << 16 | sc->left);
		s = bpf_csum_diff(NULL, 0, (__be32 *)sc->pseudo, 12, 0);
	} else {
		for (i = 0; i < 4; i++) {
			sc->pseudo[i] = src[i];
			sc->pseudo[4 + i] = dst[i];
		}
		sc->pseudo[8] = bpf_htonl(sc->left);
		sc->pseudo[9] = bpf_htonl(p->l4_proto);
		s = bpf_csum_diff(NULL, 0, (__be32 *)sc->pseudo, 40, 0);
	}
	if (s < 0)
		return 0;
	sc->sum = s;
	for (i = 0; i < CSUM_CHUNKS && sc->left >= CSUM_CHUNK; i++)
		if (csum_step(ctx, sc, CSUM_CHUNK))
			return 0;
	if (csum_step(ctx, sc, 128) || csum_step(ctx, sc, 64) ||
	    csum_step(ctx, sc, 32) || csum_step(ctx, sc, 16) ||
	    csum_step(ctx, sc, 8) || csum_step(ctx, sc, 4))
		return 0;
	if (sc->left) {
		__u8 *b;

		data = (void *)(long)ctx->data;
		data_end = (void *)(long)ctx->data_end;
		b = data + (sc->off & CSUM_OFF_MASK);
		*(__u32 *)sc->tail = 0;
		if ((void *)(b + 1) > data_end)
			return 0;
		sc->tail[0] = b[0];
		if (sc->left > 1) {
			if ((void *)(b + 2) > data_end)
				return 0;
			sc->tail[1] = b[1];
		}
		if (sc->left > 2) {
			if ((void *)(b + 3) > data_end)
				return 0;
			sc->tail[2] = b[2];
		}
		s = bpf_csum_diff(NULL, 0, (__be32 *)sc->tail, 4, sc->sum);
		if (s < 0)
			return 0;
		sc->sum = s;
	}
	/* Folded, the sum over a right checksum is all ones. */
	sum = sc->sum;
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	return sum == 0xFFFF;
}

/*
 * Where a packet for a local address runs: XDP_REDIRECT when it goes to
 * its service's CPU (through the cpumap), else XDP_PASS, here. Never a
 * drop: whatever cannot be steered is passed where it is. Not inlined, and
 * with few values live, so the forward path keeps its stack and its cost.
 */
static __noinline int local_steer(struct xdp_md *ctx, const struct pkt *p)
{
	const struct silo_service_node *sn;
	const struct silo_service *svc;
	struct silo_service_stats *ss;
	struct steer_scratch *sc;
	const __u16 *slots;
	__u32 zero = 0, target, *v;

	sc = bpf_map_lookup_elem(&steer_scratch, &zero);
	if (!sc)
		return XDP_PASS;
	sc->queue.ifindex = ctx->ingress_ifindex;
	sc->queue.queue = ctx->rx_queue_index;
	sc->slot = silo_flow_hash(p->src, p->dst, p->sport, p->dport,
				  p->l4_proto) &
		   (SILO_SERVICE_SLOTS - 1);
	/* The exact address first, then any. */
	sc->svc.family = p->family;
	sc->svc.protocol = p->l4_proto;
	sc->svc.port = p->dport;
	__builtin_memcpy(sc->svc.addr, p->dst, sizeof(sc->svc.addr));
	svc = bpf_map_lookup_elem(&services, &sc->svc);
	if (!svc) {
		__builtin_memset(sc->svc.addr, 0, sizeof(sc->svc.addr));
		svc = bpf_map_lookup_elem(&services, &sc->svc);
		if (!svc)
			return XDP_PASS;
	}
	sc->id = svc->id;
	ss = bpf_map_lookup_elem(&service_stats, &sc->id);
	scount(ss, SILO_SSTAT_RX);
	if (!steer) {
		scount(ss, SILO_SSTAT_PASS_SKB_MODE);
		return XDP_PASS;
	}
	sc->cpu = bpf_get_smp_processor_id();
	if (svc->mode == SILO_SERVICE_QUEUE) {
		v = bpf_map_lookup_elem(&queue_cpu, &sc->queue);
		if (!v) {
			scount(ss, SILO_SSTAT_PASS_NO_QUEUE);
			return XDP_PASS;
		}
		target = *v;
	} else {
		slots = svc->slots;
		if (svc->mode == SILO_SERVICE_NODE) {
			v = bpf_map_lookup_elem(&cpu_node, &sc->cpu);
			sc->node.id = sc->id;
			sc->node.node = v ? *v : 0;
			sn = bpf_map_lookup_elem(&service_nodes, &sc->node);
			if (sn && sn->nr_cpus)
				slots = sn->slots;
			else
				scount(ss, SILO_SSTAT_NODE_REMOTE);
		}
		target = slots[sc->slot & (SILO_SERVICE_SLOTS - 1)];
		if (target == SILO_SERVICE_NO_CPU) {
			scount(ss, SILO_SSTAT_PASS_NO_CPU);
			return XDP_PASS;
		}
	}
	if (target == sc->cpu) {
		scount(ss, SILO_SSTAT_LOCAL);
		return XDP_PASS;
	}
	if (!l4_csum_ok(ctx, p, sc)) {
		scount(ss, SILO_SSTAT_PASS_CSUM);
		return XDP_PASS;
	}
	/* Only records the target; a missing entry returns XDP_PASS. */
	if (bpf_redirect_map(&cpumap, target, XDP_PASS) != XDP_REDIRECT) {
		scount(ss, SILO_SSTAT_PASS_NO_CPUMAP);
		return XDP_PASS;
	}
	scount(ss, SILO_SSTAT_STEERED);
	return XDP_REDIRECT;
}

/*
 * The IPv4 source check of the kernel's input route (fib_validate_source()):
 * 0 where it accepts, or a pass reason where it might drop the packet, so
 * that the stack decides. The kernel's lookup of the route back has
 * loopback (or the VRF device) as input device, not the ingress device:
 * rules such as "iif DEV" do not apply to it.
 *
 *  - rp_filter 0 without accept_local: a packet from one of our addresses
 *    is a martian; with custom rules or local routes (which we cannot see)
 *    the kernel also drops one whose route back is local, broadcast or of
 *    another non-unicast type, and accepts one with no route back or an
 *    error route (blackhole, unreachable, prohibit). bpf_fib_lookup says
 *    NOT_FWDED both for a local or non-unicast route and for no route at
 *    all: stand aside.
 *  - rp_filter 1 (strict): the route back leaves through the ingress
 *    device; 2 (loose): a unicast route back exists. The kernel accepts
 *    when any nexthop of the route back uses the device; the one that
 *    bpf_fib_lookup picks is one of them, so our "yes" implies its "yes".
 *    Without an IPv4 address on the device only a direct match passes.
 *
 * Its answer is cached in a source entry of its own (source_verdict()):
 * every change of routes, rules, addresses or sysctls invalidates it.
 */
static __always_inline int source_check(struct xdp_md *ctx, const struct pkt *p,
					const struct silo_device *dev)
{
	struct bpf_fib_lookup fib = {};
	int rc;

	if (p->family != SILO_AF_INET)
		return 0;
	if (!dev->rp_filter && (dev->flags & SILO_DEV_F_ACCEPT_LOCAL))
		return 0;
	fib.family = p->family;
	fib.ifindex = dev->rp_ifindex ? dev->rp_ifindex : 1;
	fib.tos = p->tos;
	__builtin_memcpy(&fib.ipv4_src, p->dst, 4);
	__builtin_memcpy(&fib.ipv4_dst, p->src, 4);
	rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), BPF_FIB_LOOKUP_SKIP_NEIGH);
	if (rc == BPF_FIB_LKUP_RET_SUCCESS || rc == BPF_FIB_LKUP_RET_NO_NEIGH) {
		if (!dev->rp_filter || fib.ifindex == ctx->ingress_ifindex)
			return 0;
		if (dev->rp_filter == 2 &&
		    !(dev->flags & SILO_DEV_F_NO_V4_ADDR))
			return 0;
		return SILO_STAT_PASS_RP_FILTER;
	}
	if (dev->rp_filter)
		return SILO_STAT_PASS_RP_FILTER;
	if (rc == BPF_FIB_LKUP_RET_BLACKHOLE ||
	    rc == BPF_FIB_LKUP_RET_UNREACHABLE ||
	    rc == BPF_FIB_LKUP_RET_PROHIBIT)
		return 0;
	return SILO_STAT_PASS_LOCAL_SRC;
}

/* Does the source check run for this packet on this device? */
static __always_inline int source_checked(const struct pkt *p,
					  const struct silo_device *dev)
{
	return p->family == SILO_AF_INET &&
	       (dev->rp_filter || !(dev->flags & SILO_DEV_F_ACCEPT_LOCAL));
}

/*
 * A route key holds what the forward lookup's answer depends on under
 * genid's flags, and nothing more: a field left out is zero. The flags
 * themselves are part of the key, so a key made under other flags never
 * matches one made under these.
 */
static __always_inline void fill_key(struct silo_route_key *key,
				     struct xdp_md *ctx, const struct pkt *p,
				     __u32 flags)
{
	__u32 src_bit = p->family == SILO_AF_INET ? SILO_GENID_KEY_SRC_V4 :
						    SILO_GENID_KEY_SRC_V6;

	key->ifindex = ctx->ingress_ifindex;
	key->family = p->family;
	key->tos = p->tos;
	key->format = flags & SILO_GENID_KEY_MASK;
	if (flags & SILO_GENID_KEY_L4) {
		key->l4_proto = p->l4_proto;
		key->sport = p->sport;
		key->dport = p->dport;
	}
	if (p->family == SILO_AF_INET6 && (flags & SILO_GENID_KEY_FLOWLABEL)) {
		/* The IPv6 L3 hash takes the next header with the label. */
		key->l4_proto = p->l4_proto;
		key->flowlabel = p->flowinfo & bpf_htonl(0x000FFFFF);
	}
	if (flags & src_bit)
		__builtin_memcpy(key->src, p->src, sizeof(key->src));
	__builtin_memcpy(key->dst, p->dst, sizeof(key->dst));
}

/*
 * A source entry's key: what source_check() looks up with. The route back
 * is looked up from the destination: it depends on that only when a rule
 * selects on source addresses. Which of several multipath routes back the
 * lookup picks does not matter: any that uses the ingress device is a
 * "yes" for the kernel too, and a "no" sends the packet to the stack.
 */
static __always_inline void fill_src_key(struct silo_route_key *key,
					 struct xdp_md *ctx,
					 const struct pkt *p, __u32 flags)
{
	key->ifindex = ctx->ingress_ifindex;
	key->family = p->family;
	key->tos = p->tos;
	key->format = (flags & SILO_GENID_KEY_MASK) | SILO_KEY_SOURCE;
	__builtin_memcpy(key->src, p->src, sizeof(key->src));
	if (flags & SILO_GENID_RULES_SRC_V4)
		__builtin_memcpy(key->dst, p->dst, sizeof(key->dst));
}

static __always_inline int key_equal(const struct silo_route_key *a,
				     const struct silo_route_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;
	__u64 diff = 0;
	int i;

	for (i = 0; i < (int)(sizeof(*a) / sizeof(__u64)); i++)
		diff |= x[i] ^ y[i];
	return diff == 0;
}

/*
 * Entries are read and rewritten without a lock (a lock would be a write
 * shared by every CPU of the node on every packet). The writer zeroes genid,
 * writes the fields, then stores genid; a reader copies the fields between
 * two reads of genid and trusts the copy only if both equal the current
 * genid and the copy names our key: an element evicted and reused by
 * another key between our lookup and our copy holds that key, and is
 * refused. Ordering relies on the JIT's plain loads and stores keeping
 * program order, which holds on x86 (TSO); compiler barriers keep clang
 * from moving them.
 */
static __always_inline int entry_read(struct silo_route_entry *e,
				      struct silo_route_entry *out,
				      const struct silo_route_key *key,
				      __u64 gen)
{
	if (READ_ONCE(e->genid) != gen)
		return -1;
	barrier();
	__builtin_memcpy(out, e, sizeof(*out));
	barrier();
	if (READ_ONCE(e->genid) != gen || !key_equal(&out->key, key))
		return -2;
	return 0;
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
	e->verdict = n->verdict;
	__builtin_memcpy(e->smac, n->smac, sizeof(e->smac));
	__builtin_memcpy(e->dmac, n->dmac, sizeof(e->dmac));
	__builtin_memcpy(e->nexthop, n->nexthop, sizeof(e->nexthop));
	__builtin_memcpy(&e->key, key, sizeof(e->key));
	barrier();
	if (bpf_map_lookup_elem(cache, key) != e) {
		WRITE_ONCE(e->genid, 0);
		return -1;
	}
	WRITE_ONCE(e->genid, n->genid);
	return 0;
}

/* A cheap hash of a key, by 64-bit words: for admission, not a map. */
static __always_inline __u32 key_hash(const struct silo_route_key *k)
{
	const __u64 *w = (const __u64 *)k;
	__u64 h = 0x9747B28C9E3779B1ULL;
	int i;

	for (i = 0; i < (int)(sizeof(*k) / sizeof(__u64)); i++) {
		h ^= w[i];
		h *= 0xFF51AFD7ED558CCDULL;
	}
	return (__u32)(h >> 32) ^ (__u32)h;
}

/* This CPU's admission state, its budget refilled for the time gone by. */
static __always_inline struct silo_admit *admit_state(void)
{
	struct silo_admit *a;
	__u64 now, elapsed, n;
	__u32 zero = 0;

	a = bpf_map_lookup_elem(&admit, &zero);
	if (!a)
		return NULL;
	now = bpf_ktime_get_coarse_ns();
	elapsed = now - a->last_ns;
	/* A stamp ahead of the clock (set by hand) refills nothing. */
	if ((__s64)elapsed < 0)
		elapsed = 0;
	if (elapsed >= SILO_ADMIT_BURST * SILO_ADMIT_NS) {
		a->tokens = SILO_ADMIT_BURST;
		a->last_ns = now;
	} else if (elapsed >= SILO_ADMIT_NS) {
		n = elapsed / SILO_ADMIT_NS;
		a->tokens = a->tokens + n > SILO_ADMIT_BURST ?
				    SILO_ADMIT_BURST :
				    a->tokens + n;
		a->last_ns += n * SILO_ADMIT_NS;
	}
	return a;
}

static __always_inline __u32 *seen_slot(struct silo_admit *a, __u32 h)
{
	return &a->seen[(h >> 1) & (SILO_ADMIT_SLOTS - 1)];
}

/*
 * Is a cache lookup of this key worth its cost? Always while the budget
 * lasts. Past it, in a storm of new keys, only for a key this CPU has seen
 * (*h: its hash, for admit_key): another one was refused, or never came,
 * and its failed lookup would cost as much as a hit. A cached flow whose
 * slot a storm took over loses one hit, and has it back from its next
 * packet on.
 */
static __always_inline int
worth_lookup(struct silo_admit *a, const struct silo_route_key *k, __u32 *h)
{
	if (!a || a->tokens)
		return 1;
	*h = key_hash(k) | 1;
	return *seen_slot(a, *h) == *h;
}

/*
 * Admission (struct silo_admit): 1 to insert this key, 0 to leave it out.
 * Within the budget every miss is inserted; past it, a key on its second
 * sighting. Either way the key is marked seen. Per CPU: nothing here is
 * written by another CPU. h: the key's hash, or 0 when not computed yet.
 */
static __always_inline int admit_key(struct silo_admit *a,
				     const struct silo_route_key *k, __u32 h)
{
	__u32 *slot;

	if (!a)
		return 1;
	if (!h)
		h = key_hash(k) | 1;
	slot = seen_slot(a, h);
	if (a->tokens) {
		a->tokens--;
		*slot = h;
		return 1;
	}
	if (*slot == h)
		return 1;
	*slot = h;
	return 0;
}

/*
 * Stores a new answer: in place over e, an element of this key found stale
 * (an update on a full LRU map takes a new element and may evict another
 * live entry), or as a new element (the caller has admitted it). Counts
 * what it did; an insert that shrinks the map below its size plus one
 * evicted the rest.
 *
 * An insert is logged in fill_log for silod's index: the record reserved
 * first (no room: not cached), submitted after the update and before the
 * fill is counted, as the second sweep's proof needs (user/silod/sweep.c).
 * silod drains the log at least every heartbeat: it is woken only when
 * the log is a quarter full.
 */
static __always_inline void cache_fill(void *cache, __u32 node,
				       const struct silo_route_key *key,
				       struct silo_route_entry *e,
				       const struct silo_route_entry *n,
				       struct silo_stats *st)
{
	struct silo_fill_rec *rec;
	__s64 before = 0, after;
	__u64 wake;

	if (e) {
		if (entry_write(cache, key, e, n))
			count(st, SILO_STAT_CACHE_RACE);
		else
			count(st, SILO_STAT_CACHE_REFRESH);
		return;
	}
	rec = bpf_ringbuf_reserve(&fill_log, sizeof(*rec), 0);
	if (!rec) {
		count(st, SILO_STAT_CACHE_NO_LOG);
		return;
	}
	rec->node = node;
	rec->pad = 0;
	__builtin_memcpy(&rec->key, key, sizeof(rec->key));
	if (bpf_ksym_exists(bpf_map_sum_elem_count))
		before = bpf_map_sum_elem_count(cache);
	/* NOEXIST: another CPU's insert of this key meanwhile stays. */
	if (bpf_map_update_elem(cache, key, n, BPF_NOEXIST)) {
		bpf_ringbuf_discard(rec, BPF_RB_NO_WAKEUP);
		count(st, SILO_STAT_CACHE_INSERT_FAIL);
		return;
	}
	wake = bpf_ringbuf_query(&fill_log, BPF_RB_AVAIL_DATA) >
			       SILO_FILL_LOG_BYTES / 4 ?
		       BPF_RB_FORCE_WAKEUP :
		       BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(rec, wake);
	count(st, SILO_STAT_CACHE_INSERT);
	if (!bpf_ksym_exists(bpf_map_sum_elem_count))
		return;
	after = bpf_map_sum_elem_count(cache);
	if (after <= before)
		st->cache_evict += before + 1 - after;
}

/*
 * The source check's verdict (0, or the pass reason), from a source entry
 * when the cache holds a current one, else from source_check(), cached.
 * key is the caller's, no longer needed: the stack has no room for
 * another, and a new entry is built in per-CPU scratch space.
 */
static __always_inline int
source_verdict(struct xdp_md *ctx, const struct pkt *p,
	       const struct silo_device *dev, void *cache, __u32 node,
	       __u64 gen, __u32 flags, struct silo_route_key *key,
	       struct silo_admit *a, struct silo_stats *st)
{
	struct silo_route_entry *e = NULL, *n;
	__u32 zero = 0, h = 0;
	int rc, ok;

	if (!source_checked(p, dev))
		return 0;
	if (!cache)
		return source_check(ctx, p, dev);
	__builtin_memset(key, 0, sizeof(*key));
	fill_src_key(key, ctx, p, flags);
	if (worth_lookup(a, key, &h))
		e = bpf_map_lookup_elem(cache, key);
	else
		count(st, SILO_STAT_CACHE_UNSEEN);
	/* entry_read() without the copy: the verdict is one byte. */
	if (e && READ_ONCE(e->genid) == gen) {
		barrier();
		rc = READ_ONCE(e->verdict);
		ok = key_equal(&e->key, key);
		barrier();
		if (ok && READ_ONCE(e->genid) == gen) {
			count(st, SILO_STAT_SRC_HIT);
			return rc;
		}
	}
	count(st, SILO_STAT_SRC_MISS);
	rc = source_check(ctx, p, dev);
	/* Refused before any work for the entry is done. */
	if (!e && !admit_key(a, key, h)) {
		count(st, SILO_STAT_CACHE_REFUSED);
		return rc;
	}
	n = bpf_map_lookup_elem(&scratch, &zero);
	if (!n)
		return rc;
	__builtin_memset(n, 0, sizeof(*n));
	n->genid = gen;
	n->verdict = rc;
	__builtin_memcpy(&n->key, key, sizeof(n->key));
	cache_fill(cache, node, key, e, n, st);
	return rc;
}

static __always_inline void ipv4_decrease_ttl(struct iphdr *iph)
{
	__u32 check = iph->check;

	check += bpf_htons(0x0100);
	iph->check = (__u16)(check + (check >= 0xFFFF));
	iph->ttl--;
}

/*
 * Larger packets may meet a path MTU exception, which the kernel learns
 * without telling anyone: bpf_fib_lookup sees it, a cached MTU would not.
 */
static __always_inline int above_pmtu_floor(const struct pkt *p,
					    const struct silo_genid *g)
{
	__u32 floor;

	if (p->family == SILO_AF_INET6)
		return p->l3_len > 1280;
	floor = READ_ONCE(g->pmtu_floor_v4);
	return p->l3_len > (floor ? floor : 552);
}

/* A route's MTU that bpf_fib_lookup may not apply (not locked). */
static __always_inline int above_route_mtu(const struct pkt *p,
					   const struct silo_genid *g)
{
	__u16 mtu = READ_ONCE(
		g->route_mtu[p->family == SILO_AF_INET ? SILO_FAM_V4 :
							 SILO_FAM_V6]);

	return mtu && p->l3_len > mtu;
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
	__u32 zero = 0, ifindex, flags, node = 0;
	struct silo_admit *adm = NULL;
	void *cache = NULL;
	int rc, big = 0;
	__u32 h = 0;
	__u64 gen;

	if ((void *)(eth + 1) > data_end)
		return pass(st, SILO_STAT_PASS_TRUNCATED);
	if (p->vlan_depth)
		return pass(st, SILO_STAT_PASS_VLAN);
	/* Frames for another host, broadcast or multicast: not ours. */
	ifindex = ctx->ingress_ifindex;
	dev = bpf_map_lookup_elem(&devices, &ifindex);
	if (!dev || !mac_equal(dev->mac, eth->h_dest))
		return pass(st, SILO_STAT_PASS_NOT_HOST);
	/* A bridge or bond takes its ports' frames before IP sees them. */
	if (dev->flags & SILO_DEV_F_PORT)
		return pass(st, SILO_STAT_PASS_PORT);
	g = bpf_map_lookup_elem(&genid, &zero);
	if (!g)
		return pass(st, SILO_STAT_PASS_FIB);
	/* Something in the stack XDP cannot reproduce sees this family. */
	if (READ_ONCE(g->outside[p->family == SILO_AF_INET ? SILO_FAM_V4 :
							     SILO_FAM_V6]))
		return pass(st, SILO_STAT_PASS_ENVELOPE);
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
	if (!daemon_live())
		return pass(st, SILO_STAT_PASS_NO_DAEMON);
	if (above_route_mtu(p, g))
		return pass(st, SILO_STAT_PASS_ROUTE_MTU);

	/* Read before the lookup: an entry is never newer than its stamp.
	 * Flags after genid: user space stores them before it bumps genid. */
	gen = READ_ONCE(g->genid);
	barrier();
	flags = READ_ONCE(g->flags);
	fill_key(&key, ctx, p, flags);

	if (!cache_enabled)
		goto resolve;
	cache = node_cache(&node);
	if (above_pmtu_floor(p, g)) {
		count(st, SILO_STAT_CACHE_BIG);
		big = 1;
		goto resolve;
	}
	if (cache) {
		adm = admit_state();
		if (worth_lookup(adm, &key, &h))
			e = bpf_map_lookup_elem(cache, &key);
		else
			count(st, SILO_STAT_CACHE_UNSEEN);
	}
	if (!e) {
		count(st, SILO_STAT_CACHE_MISS);
	} else {
		rc = entry_read(e, &r, &key, gen);
		if (rc == 0) {
			count(st, SILO_STAT_CACHE_HIT);
			goto source;
		}
		count(st,
		      rc == -1 ? SILO_STAT_CACHE_STALE : SILO_STAT_CACHE_RACE);
	}

resolve:
	/* Every input the kernel's lookup (and multipath hash) takes. */
	fib.family = p->family;
	fib.ifindex = ctx->ingress_ifindex;
	fib.tot_len = p->l3_len;
	fib.l4_protocol = p->l4_proto;
	fib.sport = p->sport;
	fib.dport = p->dport;
	if (p->family == SILO_AF_INET)
		fib.tos = p->tos;
	else
		fib.flowinfo = p->flowinfo;
	__builtin_memcpy(fib.ipv6_src, p->src, sizeof(fib.ipv6_src));
	__builtin_memcpy(fib.ipv6_dst, p->dst, sizeof(fib.ipv6_dst));
	rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);
	if (rc < 0 || rc >= SILO_STAT_FIB_CODES)
		count(st, SILO_STAT_FIB_ERROR);
	else
		count(st, SILO_STAT_FIB_FIRST + rc);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return pass(st, SILO_STAT_PASS_FIB);

	r.genid = gen;
	r.ifindex = fib.ifindex;
	r.mtu = fib.mtu_result;
	/* An IPv4 route may have an IPv6 gateway: the lookup says so. */
	r.family = fib.family == SILO_AF_INET6 ? SILO_AF_INET6 : SILO_AF_INET;
	__builtin_memcpy(r.smac, fib.smac, sizeof(r.smac));
	__builtin_memcpy(r.dmac, fib.dmac, sizeof(r.dmac));
	__builtin_memcpy(r.nexthop, fib.ipv6_dst, sizeof(r.nexthop));
	__builtin_memcpy(&r.key, &key, sizeof(r.key));
	/* Big packets leave the route cache alone: its entries stay. */
	if (cache && !big) {
		if (e || admit_key(adm, &key, h))
			cache_fill(cache, node, &key, e, &r, st);
		else
			count(st, SILO_STAT_CACHE_REFUSED);
	}

source:
	/* The source check, cached on its own: by source, not by route. */
	if (cache && !adm)
		adm = admit_state();
	rc = source_verdict(ctx, p, dev, cache, node, gen, flags, &key, adm,
			    st);
	/* Constants: the verifier keeps no bounds on a byte from a map. */
	if (rc == SILO_STAT_PASS_RP_FILTER)
		return pass(st, SILO_STAT_PASS_RP_FILTER);
	if (rc)
		return pass(st, SILO_STAT_PASS_LOCAL_SRC);

	if (p->l3_len > r.mtu)
		return pass(st, SILO_STAT_PASS_MTU);
	if (r.ifindex == ctx->ingress_ifindex)
		return pass(st, SILO_STAT_PASS_HAIRPIN);
	/* The stack trims what follows the IP packet before forwarding. */
	if (p->trailer) {
		if (bpf_xdp_adjust_tail(ctx, -(int)p->trailer))
			return pass(st, SILO_STAT_PASS_TRUNCATED);
		count(st, SILO_STAT_TRIMMED);
	}
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

extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx,
					__be16 *vlan_proto,
					__u16 *vlan_tci) __ksym __weak;

/*
 * A NIC with rx-vlan-offload takes the outer tag off the frame and gives it
 * to the stack beside the bytes; veth does the same with a tag its peer put
 * beside them. XDP sees an untagged frame, the stack sees VLAN N (or drops
 * the frame as PACKET_OTHERHOST when no device has that VLAN): a verdict of
 * ours made on the bytes alone, forward or steer, would not be the kernel's.
 * Only the driver knows, through this kfunc, and only a program bound to
 * the device may call it (the verifier refuses it anywhere else, even in
 * dead code: hence two programs below). A driver that cannot tell answers
 * -EOPNOTSUPP; what silo does on such devices is the loader's and doctor's
 * business.
 */
static __noinline bool hidden_tag(struct xdp_md *ctx)
{
	__be16 proto;
	__u16 tci;

	if (!bpf_ksym_exists(bpf_xdp_metadata_rx_vlan_tag))
		return false;
	return bpf_xdp_metadata_rx_vlan_tag(ctx, &proto, &tci) == 0;
}

static __always_inline int silo_main(struct xdp_md *ctx, bool bound)
{
	struct silo_stats *st;
	struct pkt p = {};
	__u32 zero = 0;
	int reason;

	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return XDP_PASS;
	count(st, SILO_STAT_RX);
	if (bound && hidden_tag(ctx))
		return pass(st, SILO_STAT_PASS_VLAN);
	reason = parse_packet(ctx, &p);
	if (reason)
		return parse_pass(st, &p, reason);
	if (is_local(&p)) {
		if (local_steer(ctx, &p) != XDP_REDIRECT)
			return pass(st, SILO_STAT_PASS_LOCAL);
		return steered(st);
	}
	if (!forward)
		return pass(st, SILO_STAT_PASS_NO_FORWARD);
	return forward_packet(ctx, &p, st);
}

/* Generic XDP, and drivers that do not report the tag (before 6.8: none). */
SEC("xdp")
int silo_xdp(struct xdp_md *ctx)
{
	return silo_main(ctx, false);
}

/* Native mode on a driver that reports the tag: bound to its device by the
 * loader (user/lib/xdp.c). */
SEC("?xdp")
int silo_xdp_dev(struct xdp_md *ctx)
{
	return silo_main(ctx, true);
}

char LICENSE[] SEC("license") = "GPL";
