// SPDX-License-Identifier: GPL-2.0
/*
 * silo's sk_reuseport program: picks the socket of a SO_REUSEPORT group that
 * belongs to the CPU the packet is processed on (policy cpu), or one on that
 * CPU's NUMA node (policy node), or the one of the CPU that serves the RX
 * queue the NIC put the packet on (policy queue: the program redoes the
 * NIC's RSS hash and indirection from a table user space gives it), or
 * leaves the choice to the kernel's hash (policy hash). One program serves
 * every group; it never drops: when its choice fails it falls down a ladder
 * (the queue's CPU's slot or this CPU's, a socket on this node, the
 * kernel's hash) and counts each step and each error code.
 *
 * Two entry points, the same selection: silo_select (BPF_SK_REUSEPORT_SELECT)
 * and silo_select_or_migrate (BPF_SK_REUSEPORT_SELECT_OR_MIGRATE), which the
 * kernel also runs for each request queued on a TCP listener that closes, so
 * that it moves to a live listener instead of being reset.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "silo/abi.h"
#include "lib/cpu_node.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SILO_REUSEPORT_MAX_GROUPS);
	__type(key, struct silo_reuseport_key);
	__type(value, struct silo_reuseport_group);
} reuseport_groups SEC(".maps");

/*
 * A group's sockets, slot = CPU; the value is the socket's fd on update and
 * its cookie on lookup. The kernel takes an inner map whose type, sizes and
 * flags match this template; its size may differ.
 */
struct group_sockets_map {
	__uint(type, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY);
	__uint(max_entries, SILO_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u64);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SILO_REUSEPORT_MAX_GROUPS);
	__type(key, __u32);
	__array(values, struct group_sockets_map);
} reuseport_sockets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SILO_REUSEPORT_NODE_LISTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct silo_reuseport_node_key);
	__type(value, struct silo_reuseport_node);
} reuseport_nodes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SILO_REUSEPORT_MAX_GROUPS);
	__type(key, __u32);
	__type(value, struct silo_reuseport_stats);
} reuseport_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SILO_REUSEPORT_MAX_GROUPS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct silo_reuseport_queues);
} reuseport_queues SEC(".maps");

/*
 * Not used by the programs: each load makes a fresh pair, with BTF, which
 * user space pins as a new group's maps (reuseport/<name>/).
 */
struct group_sockets_map group_sockets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SILO_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct silo_reuseport_slot);
} group_slots SEC(".maps");

/* Per-CPU: no other CPU writes these cache lines. */
static __always_inline void count(struct silo_reuseport_stats *st, __u32 idx)
{
	if (idx < SILO_RSTAT_MAX)
		((__u64 *)st)[idx] += 1;
}

static __always_inline void count_error(struct silo_reuseport_stats *st,
					long err)
{
	switch (err) {
	case -2: /* ENOENT */
		count(st, SILO_RSTAT_ERR_ENOENT);
		break;
	case -77: /* EBADFD */
		count(st, SILO_RSTAT_ERR_EBADFD);
		break;
	case -91: /* EPROTOTYPE */
		count(st, SILO_RSTAT_ERR_EPROTOTYPE);
		break;
	case -97: /* EAFNOSUPPORT */
		count(st, SILO_RSTAT_ERR_EAFNOSUPPORT);
		break;
	default:
		count(st, SILO_RSTAT_ERR_OTHER);
	}
}

static __always_inline int try_slot(struct sk_reuseport_md *ctx, void *socks,
				    __u32 slot, struct silo_reuseport_stats *st)
{
	long err = bpf_sk_select_reuseport(ctx, socks, &slot, 0);

	if (err)
		count_error(st, err);
	return err == 0;
}

/* A socket listed on this CPU's node, spread by the packet's hash. */
static __always_inline int try_node(struct sk_reuseport_md *ctx, void *socks,
				    __u32 id, __u32 cpu,
				    struct silo_reuseport_stats *st)
{
	struct silo_reuseport_node_key nk = { .group = id };
	const struct silo_reuseport_node *list;
	__u32 *node, nr, first, i, j;

	node = bpf_map_lookup_elem(&cpu_node, &cpu);
	nk.node = node ? *node : 0;
	list = bpf_map_lookup_elem(&reuseport_nodes, &nk);
	nr = list ? list->nr : 0;
	if (nr == 0 || nr > SILO_REUSEPORT_NODE_SLOTS) {
		count(st, SILO_RSTAT_NODE_EMPTY);
		return 0;
	}
	first = ((__u64)ctx->hash * nr) >> 32;
	for (i = 0; i < SILO_REUSEPORT_NODE_PROBES && i < nr; i++) {
		j = first + i;
		if (j >= nr)
			j -= nr;
		if (j >= SILO_REUSEPORT_NODE_SLOTS)
			break;
		if (try_slot(ctx, socks, list->slots[j], st))
			return 1;
		count(st, SILO_RSTAT_NODE_MISS);
	}
	return 0;
}

#define PROTO_TCP 6

/*
 * The RSS input as the NIC hashed it: source and destination address, then
 * (when it hashes this flow type's ports) source and destination port, in
 * network order. The addresses come from the network header; ctx->data is
 * the transport header for UDP and TCP. Returns its length, 0 when the
 * packet is not IPv4 or IPv6 or too short.
 */
static __always_inline __u32 rss_input(struct sk_reuseport_md *ctx,
				       const struct silo_reuseport_queues *q,
				       __u8 *in)
{
	int tcp = ctx->ip_protocol == PROTO_TCP;

	if (ctx->eth_protocol == bpf_htons(0x0800)) {
		if (bpf_skb_load_bytes_relative(ctx, 12, in, 8,
						BPF_HDR_START_NET))
			return 0;
		if (!(q->hash_ports &
		      (tcp ? SILO_RSS_PORTS_TCP4 : SILO_RSS_PORTS_UDP4)))
			return 8;
		return bpf_skb_load_bytes(ctx, 0, in + 8, 4) ? 0 : 12;
	}
	if (ctx->eth_protocol == bpf_htons(0x86dd)) {
		if (bpf_skb_load_bytes_relative(ctx, 8, in, 32,
						BPF_HDR_START_NET))
			return 0;
		if (!(q->hash_ports &
		      (tcp ? SILO_RSS_PORTS_TCP6 : SILO_RSS_PORTS_UDP6)))
			return 32;
		return bpf_skb_load_bytes(ctx, 0, in + 32, 4) ? 0 : 36;
	}
	return 0;
}

/*
 * Policy queue: the slot of the CPU that serves the packet's RX queue. The
 * Toeplitz hash is the XOR of one precomputed word per input byte.
 */
static __always_inline int try_queue(struct sk_reuseport_md *ctx, void *socks,
				     __u32 id, struct silo_reuseport_stats *st)
{
	const struct silo_reuseport_queues *q;
	__u8 in[SILO_RSS_INPUT_MAX] = {};
	__u32 len, hash = 0, i, idx, queue, cpu;

	q = bpf_map_lookup_elem(&reuseport_queues, &id);
	if (!q || q->indir_size == 0 || q->indir_size > SILO_RSS_INDIR_MAX ||
	    q->nr_queues > SILO_RSS_QUEUES_MAX) {
		count(st, SILO_RSTAT_QUEUE_NO_TABLE);
		return 0;
	}
	len = rss_input(ctx, q, in);
	if (!len) {
		count(st, SILO_RSTAT_QUEUE_NOT_IP);
		return 0;
	}
#pragma unroll
	for (i = 0; i < SILO_RSS_INPUT_MAX; i++)
		if (i < len)
			hash ^= q->toeplitz[i * 256 + in[i]];
	idx = hash % q->indir_size;
	if (idx >= SILO_RSS_INDIR_MAX) { /* cannot be: for the verifier */
		count(st, SILO_RSTAT_QUEUE_NO_TABLE);
		return 0;
	}
	queue = q->indir[idx];
	if (queue >= q->nr_queues || queue >= SILO_RSS_QUEUES_MAX ||
	    q->queue_cpu[queue] == SILO_RSS_NO_CPU) {
		count(st, SILO_RSTAT_QUEUE_NO_CPU);
		return 0;
	}
	cpu = q->queue_cpu[queue];
	if (try_slot(ctx, socks, cpu, st))
		return 1;
	count(st, SILO_RSTAT_QUEUE_MISS);
	return 0;
}

/* The group of the socket the kernel's lookup found: its bound key. */
static __always_inline const struct silo_reuseport_group *
find_group(const struct bpf_sock *sk)
{
	struct silo_reuseport_key key = {};
	__u32 ip4, ip6[4];

	key.family = sk->family;
	key.protocol = sk->protocol;
	key.port = sk->src_port;
	key.bound_dev_if = sk->bound_dev_if;
	/* Each field at its own constant offset: the verifier allows no
	 * arithmetic on a socket pointer, which clang makes of a choice
	 * between two fields. */
	ip4 = sk->src_ip4;
	ip6[0] = sk->src_ip6[0];
	ip6[1] = sk->src_ip6[1];
	ip6[2] = sk->src_ip6[2];
	ip6[3] = sk->src_ip6[3];
	asm volatile("" ::: "memory");
	if (key.family == SILO_AF_INET)
		__builtin_memcpy(key.addr, &ip4, sizeof(ip4));
	else
		__builtin_memcpy(key.addr, ip6, sizeof(ip6));
	return bpf_map_lookup_elem(&reuseport_groups, &key);
}

/* SK_PASS with no socket selected: the kernel's hash picks one. */
static __always_inline int select_socket(struct sk_reuseport_md *ctx,
					 int migrating)
{
	const struct silo_reuseport_group *g;
	struct silo_reuseport_stats *st;
	__u32 id = 0, cpu;
	void *socks;

	g = find_group(ctx->sk);
	if (g)
		id = g->id;
	st = bpf_map_lookup_elem(&reuseport_stats, &id);
	if (!st)
		return SK_PASS;
	count(st, SILO_RSTAT_RUNS);
	if (migrating)
		count(st, SILO_RSTAT_MIGRATE);
	if (!g || id == 0) {
		count(st, SILO_RSTAT_NO_GROUP);
		return SK_PASS;
	}
	if (g->policy == SILO_REUSEPORT_HASH) {
		count(st, SILO_RSTAT_HASH_POLICY);
		return SK_PASS;
	}
	socks = bpf_map_lookup_elem(&reuseport_sockets, &id);
	if (!socks) {
		count(st, SILO_RSTAT_NO_MAP);
		return SK_PASS;
	}
	cpu = bpf_get_smp_processor_id();
	if (g->policy == SILO_REUSEPORT_QUEUE) {
		if (try_queue(ctx, socks, id, st)) {
			count(st, SILO_RSTAT_SEL_QUEUE);
			return SK_PASS;
		}
	} else if (g->policy == SILO_REUSEPORT_CPU) {
		if (try_slot(ctx, socks, cpu, st)) {
			count(st, SILO_RSTAT_SEL_CPU);
			return SK_PASS;
		}
		count(st, SILO_RSTAT_CPU_MISS);
	}
	if (try_node(ctx, socks, id, cpu, st)) {
		count(st, SILO_RSTAT_SEL_NODE);
		return SK_PASS;
	}
	count(st, SILO_RSTAT_HASH_FALLBACK);
	return SK_PASS;
}

SEC("sk_reuseport")
int silo_select(struct sk_reuseport_md *ctx)
{
	return select_socket(ctx, 0);
}

SEC("sk_reuseport/migrate")
int silo_select_or_migrate(struct sk_reuseport_md *ctx)
{
	return select_socket(ctx, ctx->migrating_sk != NULL);
}

char LICENSE[] SEC("license") = "GPL";
