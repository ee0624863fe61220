// SPDX-License-Identifier: GPL-2.0
/* Programs for tests and benchmarks only: never loaded onto a device by silo. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "silo/abi.h"
#include "silo/abi/internal.h"
#include "lib/cpu_node.h"

const volatile __u32 tx_ifindex = 0;

/*
 * A traffic source: run with BPF_F_TEST_XDP_LIVE_FRAMES, every frame is sent
 * out of tx_ifindex, so it arrives on the veth peer's XDP program.
 */
SEC("xdp")
int xdp_send(struct xdp_md *ctx)
{
	return bpf_redirect(tx_ifindex, 0);
}

/*
 * Does nothing: the floor of the benchmark (what BPF_PROG_TEST_RUN costs with
 * no work), and what keeps a veth peer able to receive redirected frames.
 */
SEC("xdp")
int xdp_pass(struct xdp_md *ctx __attribute__((unused)))
{
	return XDP_PASS;
}

/*
 * A live traffic generator (tools/bench/bench_live.c), run with
 * BPF_F_TEST_XDP_LIVE_FRAMES and sent out of tx_ifindex. The kernel recycles
 * the frames' pages and a page keeps what a forwarder rewrote (MACs, hop
 * limit), so every header byte is written again from a template (Ethernet,
 * IPv6, UDP) for each frame. The source's last 32 bits are gen_src + k, k
 * counting 0 .. gen_nsrc - 1 per CPU, with the UDP checksum adjusted:
 * gen_csum is the template's sum with its own source words taken out.
 *
 * Frames come in up to GEN_CLASSES sizes, each with its own template and
 * sum: frame j (per CPU) is of class gen_pat[j % gen_npat], so a mix is
 * exact by count (7:4:1 over every 12 frames, say). The run sends the
 * largest frame and each frame loses gen_cut[c] bytes of its tail with
 * bpf_xdp_adjust_tail(): a live run restores every frame's original length
 * before the program runs, and the payload beyond the headers is the same
 * bytes for every size (the sums and lengths are the user's to match).
 */
#define GEN_WORDS 8 /* 64 bytes: headers (62) and the start of the payload */
#define GEN_CLASSES 4
#define GEN_PAT_MAX 16
#define GEN_SRC_OFF (14 + 8 + 12) /* the source's last 32 bits */
#define GEN_CSUM_OFF (14 + 40 + 6)

__u64 gen_tmpl[GEN_CLASSES][GEN_WORDS] = {};
__u32 gen_csum[GEN_CLASSES] = {};
__u32 gen_cut[GEN_CLASSES] = {}; /* bytes off the frame as sent */
__u8 gen_pat[GEN_PAT_MAX] = {};
__u32 gen_npat = 0; /* 0 as 1: class gen_pat[0] only */
__u32 gen_nsrc = 0; /* 0 as 1; may change between runs */
__u32 gen_src = 0; /* host order */

struct gen_state {
	__u32 src; /* k of the next frame */
	__u32 pat; /* its index in gen_pat */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_state);
} gen_next SEC(".maps");

/* This frame's class (and the next frame's place in the pattern). */
static __always_inline __u32 gen_class(struct gen_state *st)
{
	__u32 j = st->pat < gen_npat ? st->pat : 0, c;

	st->pat = j + 1;
	c = gen_pat[j & (GEN_PAT_MAX - 1)];
	return c < GEN_CLASSES ? c : 0;
}

SEC("xdp")
int xdp_gen(struct xdp_md *ctx)
{
	void *data, *data_end;
	__u32 zero = 0, k, c, src, sum;
	struct gen_state *st;
	__u64 *w;
	int i;

	st = bpf_map_lookup_elem(&gen_next, &zero);
	if (!st)
		return XDP_ABORTED;
	k = st->src < gen_nsrc ? st->src : 0;
	st->src = k + 1;
	c = gen_class(st);
	if (gen_cut[c] && bpf_xdp_adjust_tail(ctx, -(int)gen_cut[c]))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	w = data;
	if (data + GEN_WORDS * 8 > data_end)
		return XDP_ABORTED;
	for (i = 0; i < GEN_WORDS; i++)
		w[i] = gen_tmpl[c][i];
	src = bpf_htonl(gen_src + k);
	*(__u32 *)(data + GEN_SRC_OFF) = src;
	/* One's complement sums do not care for byte order. */
	sum = gen_csum[c] + (src & 0xFFFF) + (src >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = ~sum & 0xFFFF;
	*(__u16 *)(data + GEN_CSUM_OFF) = sum ? sum : 0xFFFF;
	return bpf_redirect(tx_ifindex, 0);
}

/*
 * A traffic sink: counts the frames the benchmark's generator sent that a
 * router forwarded (IPv6, UDP, hop limit count_hlim) in count_pkts[0] and
 * anything else in count_pkts[1], and drops them all.
 */
__u32 count_hlim = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} count_pkts SEC(".maps");

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6 = data + sizeof(*eth);
	__u32 idx = 1;
	__u64 *n;

	if ((void *)(ip6 + 1) <= data_end &&
	    eth->h_proto == bpf_htons(0x86DD) && ip6->nexthdr == 17 &&
	    ip6->hop_limit == count_hlim)
		idx = 0;
	n = bpf_map_lookup_elem(&count_pkts, &idx);
	if (n)
		*n += 1;
	return XDP_DROP;
}

/*
 * The least a forwarder can do (bench_live's floor): hop limit - 1 and out
 * of bounce_ifindex, no lookup, no MAC rewrite. What remains of a live
 * rate is the generator's, the veths' and the sink's cost.
 */
__u32 bounce_ifindex = 0;

SEC("xdp")
int xdp_bounce(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);

	if ((void *)(ip6 + 1) > data_end)
		return XDP_PASS;
	ip6->hop_limit--;
	return bpf_redirect(bounce_ifindex, 0);
}

/*
 * The reference forwarder (bench_xdp's and bench_live's baseline; never
 * silo's): what a plain XDP router does, as the kernel's samples/bpf/xdp_fwd
 * and xdp-forward's fib mode do, written for these benchmarks. Every
 * packet: parse, bpf_fib_lookup with the packet's own length (so the MTU is
 * checked), TTL or hop limit down, the next hop's MACs, out through ref_tx.
 * No cache, no counters, no admission: all it spends is what forwarding
 * itself costs, which silo's cache must beat. It shares no code with
 * silo's data path, so a change there never moves the baseline.
 *
 * What it cannot forward itself it hands to the stack (XDP_PASS): VLAN
 * tags, frames to group MACs, IPv4 options, hop-by-hop options, TTL or hop
 * limit <= 1 (the stack sends time exceeded), anything bpf_fib_lookup does
 * not resolve (no neighbour, too big, local, blackhole), an egress not in
 * ref_tx, and malformed headers (the stack drops them and counts).
 *
 * ref_tx: egress devices, keyed and valued by ifindex (the user fills it).
 */
#define REF_ETH_P_IP 0x0800
#define REF_ETH_P_IPV6 0x86DD
#define REF_AF_INET 2
#define REF_AF_INET6 10
#define REF_IP_MF 0x2000
#define REF_IP_OFFSET 0x1FFF
#define REF_NEXTHDR_HOP 0
#define REF_PROTO_TCP 6
#define REF_PROTO_UDP 17

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} ref_tx SEC(".maps");

/*
 * The ports, for policy rules that match them (ip rule sport/dport), as
 * the kernel's own lookup takes them; TCP's are where UDP's are. 0 when the
 * L4 header is cut short, as the kernel's flow dissector leaves them.
 */
static __always_inline void ref_ports(struct bpf_fib_lookup *fib, void *l4,
				      __u32 l4_len, void *data_end)
{
	struct udphdr *uh = l4;

	if (fib->l4_protocol != REF_PROTO_TCP &&
	    fib->l4_protocol != REF_PROTO_UDP)
		return;
	if (l4_len < sizeof(*uh) || (void *)(uh + 1) > data_end)
		return;
	fib->sport = uh->source;
	fib->dport = uh->dest;
}

/*
 * The redirect, then the rewrite: bpf_redirect_map() only picks the
 * device (the frame leaves after the program returns), so a device not in
 * ref_tx still finds the frame as it came and goes to the stack intact.
 */
static __always_inline int ref_out(struct ethhdr *eth,
				   const struct bpf_fib_lookup *fib)
{
	if (bpf_redirect_map(&ref_tx, fib->ifindex, XDP_PASS) != XDP_REDIRECT)
		return XDP_PASS;
	__builtin_memcpy(eth->h_dest, fib->dmac, sizeof(eth->h_dest));
	__builtin_memcpy(eth->h_source, fib->smac, sizeof(eth->h_source));
	return XDP_REDIRECT;
}

static __always_inline int ref_fwd4(struct xdp_md *ctx, struct ethhdr *eth,
				    void *data_end)
{
	struct iphdr *iph = (void *)(eth + 1);
	struct bpf_fib_lookup fib = {};
	__u32 tot, sum;
	int act;

	if ((void *)(iph + 1) > data_end)
		return XDP_PASS;
	/* Options (record route, timestamps) are the stack's to process. */
	if (iph->version != 4 || iph->ihl != 5)
		return XDP_PASS;
	tot = bpf_ntohs(iph->tot_len);
	if (tot < sizeof(*iph) || (void *)iph + tot > data_end)
		return XDP_PASS;
	if (iph->ttl <= 1)
		return XDP_PASS;
	fib.family = REF_AF_INET;
	fib.tos = iph->tos;
	fib.l4_protocol = iph->protocol;
	fib.tot_len = tot;
	fib.ipv4_src = iph->saddr;
	fib.ipv4_dst = iph->daddr;
	fib.ifindex = ctx->ingress_ifindex;
	/* A fragment is routed like the rest of its datagram: without its
	 * ports, as the kernel's lookup takes it. */
	if (!(iph->frag_off & bpf_htons(REF_IP_MF | REF_IP_OFFSET)))
		ref_ports(&fib, iph + 1, tot - sizeof(*iph), data_end);
	if (bpf_fib_lookup(ctx, &fib, sizeof(fib), 0) !=
	    BPF_FIB_LKUP_RET_SUCCESS)
		return XDP_PASS;
	act = ref_out(eth, &fib);
	if (act != XDP_REDIRECT)
		return act;
	/* TTL is the high byte of its 16-bit word: the word loses 0x0100,
	 * the one's complement checksum gains it (RFC 1624), end-around
	 * carry included. Byte order does not matter to the sum. */
	sum = iph->check + bpf_htons(0x0100);
	iph->check = (__u16)(sum + (sum >> 16));
	iph->ttl--;
	return act;
}

static __always_inline int ref_fwd6(struct xdp_md *ctx, struct ethhdr *eth,
				    void *data_end)
{
	struct ipv6hdr *ip6 = (void *)(eth + 1);
	struct bpf_fib_lookup fib = {};
	__u32 plen;
	int act;

	if ((void *)(ip6 + 1) > data_end || ip6->version != 6)
		return XDP_PASS;
	plen = bpf_ntohs(ip6->payload_len);
	if ((void *)(ip6 + 1) + plen > data_end)
		return XDP_PASS;
	/* Hop-by-hop options are for every router on the path to read. */
	if (ip6->hop_limit <= 1 || ip6->nexthdr == REF_NEXTHDR_HOP)
		return XDP_PASS;
	fib.family = REF_AF_INET6;
	/* Traffic class and flow label, what the kernel's flowi6 gets. */
	fib.flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0FFFFFFF);
	fib.l4_protocol = ip6->nexthdr;
	fib.tot_len = sizeof(*ip6) + plen;
	__builtin_memcpy(fib.ipv6_src, &ip6->saddr, sizeof(fib.ipv6_src));
	__builtin_memcpy(fib.ipv6_dst, &ip6->daddr, sizeof(fib.ipv6_dst));
	fib.ifindex = ctx->ingress_ifindex;
	/* Behind other extension headers the ports stay 0 (l4_protocol is
	 * the header's, as the kernel's lookup has it). */
	ref_ports(&fib, ip6 + 1, plen, data_end);
	if (bpf_fib_lookup(ctx, &fib, sizeof(fib), 0) !=
	    BPF_FIB_LKUP_RET_SUCCESS)
		return XDP_PASS;
	act = ref_out(eth, &fib);
	if (act == XDP_REDIRECT)
		ip6->hop_limit--;
	return act;
}

SEC("xdp")
int xdp_ref_fwd(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	/* Broadcast and multicast frames are not routed. */
	if (eth->h_dest[0] & 1)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(REF_ETH_P_IP))
		return ref_fwd4(ctx, eth, data_end);
	if (eth->h_proto == bpf_htons(REF_ETH_P_IPV6))
		return ref_fwd6(ctx, eth, data_end);
	return XDP_PASS; /* VLAN tags, ARP, the rest */
}

/*
 * In-lookup hooks: a race made deterministic. BPF_PROG_TEST_RUN cannot
 * interleave user space with one run of the XDP program, but the kernel's
 * FIB lookup fires a tracepoint from inside bpf_fib_lookup, in the same
 * context. These programs, on that tracepoint, act as if silod (or another
 * CPU) changed something during the lookup: they bump genid, or hand a
 * cache entry's element to another key, exactly then. They act only for
 * the process that armed them (in_tgid), so other lookups on the machine
 * are left alone. Not loaded unless a test asks ('?'); they share the live
 * maps by reused fds. The tracepoints need no kprobes or trampolines.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct silo_genid);
} genid SEC(".maps");

/* Shapes only: the test reuses the live maps' fds, so no cache is made. */
struct route_cache_node {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NUMA_NODE);
	__type(key, struct silo_route_key);
	__type(value, struct silo_route_entry);
};

/* Gives the inner type its BTF; one entry, never used. */
struct route_cache_node route_cache_shape SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SILO_MAX_NODES);
	__type(key, __u32);
	__array(values, struct route_cache_node);
} route_cache SEC(".maps");

__u32 in_tgid = 0; /* 0: disarmed */
__u32 in_bump = 0; /* bump genid, at every lookup */
__u32 in_take = 0; /* once: in_key's element goes to in_key2 */
struct silo_route_key in_key = {};
struct silo_route_key in_key2 = {};
struct silo_route_entry in_val = {}; /* in_key2's entry */
__u64 in_fired = 0; /* lookups acted on */
__u64 in_taken = 0; /* in_key2 now holds in_key's very element */

/*
 * Deletes in_key and inserts in_key2 (this CPU's node cache), as an
 * eviction or a sweep and another flow's insert would. A preallocated LRU
 * map hands the element a delete freed to the next insert on the same CPU,
 * so in_key2 usually gets in_key's element; in_taken says whether it did.
 */
static __always_inline void take_entry(void)
{
	struct silo_route_entry *e1, *e2;
	__u32 cpu, n, *node;
	void *cache;

	in_take = 0;
	cpu = bpf_get_smp_processor_id();
	node = bpf_map_lookup_elem(&cpu_node, &cpu);
	n = node ? *node : 0;
	cache = bpf_map_lookup_elem(&route_cache, &n);
	if (!cache)
		return;
	e1 = bpf_map_lookup_elem(cache, &in_key);
	if (!e1 || bpf_map_delete_elem(cache, &in_key) ||
	    bpf_map_update_elem(cache, &in_key2, &in_val, BPF_ANY))
		return;
	e2 = bpf_map_lookup_elem(cache, &in_key2);
	if (e2 && (unsigned long)e2 == (unsigned long)e1)
		in_taken++;
}

static __always_inline void in_lookup(void)
{
	struct silo_genid *g;
	__u32 zero = 0;

	if (!in_tgid || bpf_get_current_pid_tgid() >> 32 != in_tgid)
		return;
	__sync_fetch_and_add(&in_fired, 1);
	if (in_bump) {
		g = bpf_map_lookup_elem(&genid, &zero);
		if (g)
			__sync_fetch_and_add(&g->genid, 1);
	}
	if (in_take)
		take_entry();
}

SEC("?raw_tp/fib_table_lookup")
int in_fib4_lookup(void *ctx __attribute__((unused)))
{
	in_lookup();
	return 0;
}

SEC("?raw_tp/fib6_table_lookup")
int in_fib6_lookup(void *ctx __attribute__((unused)))
{
	in_lookup();
	return 0;
}

/*
 * Stores for tests of silod's index (tests/silod.c, tests/xdp_unit.c), with
 * the live maps' fds reused. test_store stores the struct silo_test_store
 * its frame carries as the data path stores an insert (cache_fill()): the
 * key logged in fill_log, the map updated, the fill counted; so a test can
 * store an entry resolved before a change at the very moment that matters.
 * log_fill logs one record of no cache per run and says XDP_DROP once the
 * log is full.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SILO_FILL_LOG_BYTES);
} fill_log SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct silo_stats);
} stats SEC(".maps");

struct silo_test_store {
	__u32 node;
	__u32 pad;
	struct silo_route_entry e; /* its key in e.key */
};

SEC("?xdp")
int test_store(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct silo_test_store in;
	struct silo_fill_rec *rec;
	struct silo_stats *st;
	__u32 zero = 0;
	void *cache;

	if (data + sizeof(in) > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(&in, data, sizeof(in));
	cache = bpf_map_lookup_elem(&route_cache, &in.node);
	if (!cache)
		return XDP_ABORTED;
	rec = bpf_ringbuf_reserve(&fill_log, sizeof(*rec), 0);
	if (!rec)
		return XDP_DROP;
	rec->node = in.node;
	rec->pad = 0;
	__builtin_memcpy(&rec->key, &in.e.key, sizeof(rec->key));
	if (bpf_map_update_elem(cache, &in.e.key, &in.e, BPF_ANY)) {
		bpf_ringbuf_discard(rec, 0);
		return XDP_ABORTED;
	}
	bpf_ringbuf_submit(rec, 0);
	st = bpf_map_lookup_elem(&stats, &zero);
	if (st)
		st->cache_insert++;
	return XDP_PASS;
}

SEC("?xdp")
int log_fill(struct xdp_md *ctx __attribute__((unused)))
{
	struct silo_fill_rec *rec;

	rec = bpf_ringbuf_reserve(&fill_log, sizeof(*rec), 0);
	if (!rec)
		return XDP_DROP;
	__builtin_memset(rec, 0, sizeof(*rec));
	rec->node = SILO_MAX_NODES; /* of no cache */
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
	return XDP_PASS;
}

/*
 * A grace period held open, for tests of silod's second sweeps (tests/
 * silod.c): run once with BPF_PROG_TEST_RUN, which runs an XDP program
 * inside rcu_read_lock(), hold_rcu spins until the test sets hold_release
 * or the clock (bpf_ktime_get_ns(), CLOCK_MONOTONIC) passes hold_until. A
 * grace period that starts meanwhile, as silod's regrace thread waits for
 * one, ends only after it. It keeps its CPU busy all along. hold_running
 * is 1 while it spins; it returns XDP_PASS when released, XDP_DROP when
 * the time ran out.
 */
__u32 hold_release = 0;
__u32 hold_running = 0;
__u64 hold_until = 0;

static long hold_spin(__u64 i __attribute__((unused)),
		      void *ctx __attribute__((unused)))
{
	return 0;
}

static long hold_check(__u64 i __attribute__((unused)),
		       void *ctx __attribute__((unused)))
{
	bpf_loop(1024, hold_spin, NULL, 0);
	if (*(volatile __u32 *)&hold_release ||
	    bpf_ktime_get_ns() > *(volatile __u64 *)&hold_until)
		return 1;
	return 0;
}

SEC("?xdp")
int hold_rcu(struct xdp_md *ctx __attribute__((unused)))
{
	*(volatile __u32 *)&hold_running = 1;
	bpf_loop(1 << 23, hold_check, NULL, 0);
	*(volatile __u32 *)&hold_running = 0;
	return *(volatile __u32 *)&hold_release ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
