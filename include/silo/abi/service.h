/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Services: early demux and CPU steering. Public.
 */
#ifndef SILO_ABI_SERVICE_H
#define SILO_ABI_SERVICE_H

#include "silo/abi/common.h"
#include "silo/abi/pins.h"
#include "silo/abi/reuseport.h"

/*
 * Services: early demux and CPU steering (bpf/silo_xdp.bpf.c). A packet for
 * a local address whose (family, protocol, address or any, port) is a
 * service is processed on the CPU the service picks for it: the XDP program
 * redirects it through the cpumap to that CPU (the stack runs there), or
 * passes it when the target is this CPU. Steering never changes what the
 * stack delivers, only where it runs; anything the program cannot steer it
 * passes, as without a service.
 */
#define SILO_MAX_SERVICES 256 /* ids 1..255; 0: local packets of no service */
#define SILO_SERVICE_SLOTS 256 /* flow slots: a power of 2 */
#define SILO_SERVICE_NO_CPU 0xFFFF /* an empty slot */
#define SILO_MAX_QUEUES 4096 /* queue_cpu entries (device, RX queue) */
#define SILO_CPUMAP_QSIZE_DEFAULT 2048 /* frames queued per target CPU */
#define SILO_CPU_WORDS (SILO_MAX_CPUS / 64)

enum silo_service_mode {
	SILO_SERVICE_FLOW, /* hash of the 5-tuple -> slot -> CPU */
	SILO_SERVICE_QUEUE, /* queue_cpu[device, RX queue] */
	SILO_SERVICE_NODE, /* flow, over the service's CPUs on this node */
	SILO_SERVICE_MODE_MAX,
};

/* services key; addr all zero: any local address (looked up second). */
struct silo_service_key {
	__u8 family; /* SILO_AF_INET, SILO_AF_INET6 */
	__u8 protocol; /* IPPROTO_UDP, IPPROTO_TCP */
	__be16 port; /* network order, as in the packet */
	__u8 addr[16];
};

#define SILO_SERVICE_F_GROUP (1U << 0) /* CPUs follow reuseport group */

/*
 * A service. slots[] maps a flow's hash to a CPU: every CPU of the set
 * holds an equal share (256 / N, give or take one), and user space rebuilds
 * it from the old table so that a CPU joining or leaving moves only the
 * slots it gains or loses; every other flow stays where it was.
 */
struct silo_service {
	__u32 id; /* service_stats index */
	__u32 mode; /* enum silo_service_mode */
	__u32 flags; /* SILO_SERVICE_F_* */
	__u32 nr_cpus; /* CPUs in cpus[] */
	__u32 qsize; /* cpumap queue size its CPUs get */
	__u32 pad;
	char group[SILO_REUSEPORT_NAME_MAX]; /* with SILO_SERVICE_F_GROUP */
	__u64 cpus[SILO_CPU_WORDS]; /* the CPU set */
	__u16 slots[SILO_SERVICE_SLOTS]; /* slot -> CPU (flow, node) */
};

/* service_nodes: the slots of a service over its CPUs on one node (node
 * mode); no entry: none of its CPUs is on that node. */
struct silo_service_node_key {
	__u32 id;
	__u32 node;
};

struct silo_service_node {
	__u32 nr_cpus;
	__u32 pad;
	__u16 slots[SILO_SERVICE_SLOTS];
};

/* queue_cpu: the CPU that packets of an RX queue are steered to (queue
 * mode); no entry: passed where they arrive. */
struct silo_queue_key {
	__u32 ifindex;
	__u32 queue; /* rx_queue_index */
};

/*
 * service_stats[id]: per-CPU counters of a service. Every packet for a
 * service counts rx and exactly one outcome: steered, local, or one pass_*
 * reason. [0] counts the local packets the parser could not tell a service
 * for (fragments, ICMP, ...): passed, never steered.
 */
#define SILO_SERVICE_STATS(X)                                                  \
	X(RX, rx, "packets for the service")                                   \
	X(STEERED, steered, "redirected to the target CPU (cpumap)")           \
	X(LOCAL, local, "target is this CPU: passed here")                     \
	X(PASS_NO_CPUMAP, pass_no_cpumap,                                      \
	  "no cpumap entry for the target, or redirect refused")               \
	X(PASS_NO_CPU, pass_no_cpu, "no CPU for the flow (empty set or slot)") \
	X(PASS_NO_QUEUE, pass_no_queue, "queue mode: RX queue not mapped")     \
	X(PASS_SKB_MODE, pass_skb_mode, "generic XDP: steering is off")        \
	X(PASS_CSUM, pass_csum,                                                \
	  "L4 checksum not complete (offloaded by a local sender) or bad")     \
	X(NODE_REMOTE, node_remote,                                            \
	  "node mode: no CPU of the service on this node, flow over all")      \
	X(FRAGMENT, fragment, "IP fragment for a local address: passed")       \
	X(NOT_L4, not_l4, "not TCP or UDP (ICMP, ...) for a local address")    \
	X(NOT_UNDERSTOOD, not_understood,                                      \
	  "for a local address, not fully parsed: passed")

/*
 * The flow hash that picks a service's slot, part of the contract so that
 * user space can tell where a flow goes: over the addresses (16 bytes each,
 * as in struct silo_addr), the ports in network order as the packet has
 * them, and the protocol. A TCP SYN and the segments after it hash alike.
 */
#ifdef __VMLINUX_H__ /* BPF: struct pkt keeps its addresses 4-aligned */
#define SILO_ALIGNED4(p) __builtin_assume_aligned(p, 4)
#else
#define SILO_ALIGNED4(p) (p)
#endif
static inline __u32 silo_flow_hash(const __u8 *src, const __u8 *dst,
				   __u16 sport, __u16 dport, __u8 proto)
{
	const __u8 *s = SILO_ALIGNED4(src), *d = SILO_ALIGNED4(dst);
	__u32 h = 0x9E3779B9U ^ proto, w;
	int i;

	for (i = 0; i < 8; i++) {
		__builtin_memcpy(&w, (i < 4 ? s : d) + 4 * (i & 3), 4);
		h = (h ^ w) * 0x85EBCA6BU;
		h ^= h >> 13;
	}
	h = (h ^ ((__u32)sport << 16 | dport)) * 0xC2B2AE35U;
	h ^= h >> 16;
	return h;
}

#define SILO_SSTAT_ENUMERATOR(name, field, desc) SILO_SSTAT_##name,
SILO_COUNTERS(silo_service_stat, silo_service_stats, SILO_SERVICE_STATS,
	      SILO_SSTAT_ENUMERATOR, SILO_SSTAT_MAX);

#endif /* SILO_ABI_SERVICE_H */
