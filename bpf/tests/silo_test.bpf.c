// SPDX-License-Identifier: GPL-2.0
/* Programs for tests and benchmarks only: never loaded onto a device by silo. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "silo/abi.h"
#include "silo/abi/internal.h"
#include "lib/cpu_node.h"
#include "ref_fwd.h" /* the reference forwarder: what it is, what it does */

/*
 * Does nothing: the floor of BPF_PROG_TEST_RUN's benchmarks (what a run
 * costs with no work), and what keeps a veth peer able to receive
 * redirected frames.
 */
SEC("xdp")
int xdp_pass(struct xdp_md *ctx __attribute__((unused)))
{
	return XDP_PASS;
}

/*
 * A traffic sink: counts the frames the benchmark's source sent that a
 * router forwarded (IPv6, UDP, hop limit count_hlim) in count_pkts[0] and
 * anything else in count_pkts[1], and drops them all (where the source's
 * ring does not take them back: AF_PACKET's frames, bench_jumbo's).
 */
__u32 count_hlim = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} count_pkts SEC(".maps");

static __always_inline int count_frame(struct xdp_md *ctx)
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

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	return count_frame(ctx);
}

/*
 * The least a forwarder can do (bench_live's floor): hop limit - 1 and out
 * of bounce_ifindex, no lookup, no MAC rewrite. What remains of a rate
 * through a router is the source's, the veths' and the sink's cost.
 */
__u32 bounce_ifindex = 0;

static __always_inline int bounce_frame(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);

	if ((void *)(ip6 + 1) > data_end)
		return XDP_PASS;
	ip6->hop_limit--;
	return bpf_redirect(bounce_ifindex, 0);
}

SEC("xdp")
int xdp_bounce(struct xdp_md *ctx)
{
	return bounce_frame(ctx);
}

SEC("xdp")
int xdp_ref_fwd(struct xdp_md *ctx)
{
	return ref_fwd(ctx, ctx->data_end - ctx->data);
}

/*
 * The same programs for frames of several buffers (bench_jumbo, MTU 9000):
 * a driver runs a program without multi-buffer support only while a frame
 * fits one page. The reference takes the whole frame's length, as
 * xdp-forward (which declares frags) does.
 */
SEC("xdp.frags")
int xdp_pass_frags(struct xdp_md *ctx __attribute__((unused)))
{
	return XDP_PASS;
}

SEC("xdp.frags")
int xdp_count_frags(struct xdp_md *ctx)
{
	return count_frame(ctx);
}

SEC("xdp.frags")
int xdp_bounce_frags(struct xdp_md *ctx)
{
	return bounce_frame(ctx);
}

SEC("xdp.frags")
int xdp_ref_fwd_frags(struct xdp_md *ctx)
{
	return ref_fwd(ctx, bpf_xdp_get_buff_len(ctx));
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
