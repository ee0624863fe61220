// SPDX-License-Identifier: GPL-2.0
/* Programs for tests and benchmarks only: never loaded onto a device by silo. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "silo/abi.h"
#include "cpu_node.h"

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

char LICENSE[] SEC("license") = "GPL";
