/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Reuseport groups and RSS tables (bpf/silo_reuseport.bpf.c). Public.
 */
#ifndef SILO_ABI_REUSEPORT_H
#define SILO_ABI_REUSEPORT_H

#include "silo/abi/common.h"
#include "silo/abi/pins.h"

/*
 * Reuseport groups (bpf/silo_reuseport.bpf.c). A group is one kernel
 * SO_REUSEPORT group: the sockets of one protocol and family bound to one
 * address, port and device. One sk_reuseport program serves every group: it
 * finds the group of the socket the kernel's lookup found (ctx->sk) in
 * reuseport_groups by that socket's key, and the group's REUSEPORT_SOCKARRAY
 * (slot = CPU) in reuseport_sockets[id]. Pins: the shared objects as
 * <pin_dir>/reuseport_*, each group's maps in <pin_dir>/reuseport/<name>/.
 */
#define SILO_REUSEPORT_MAX_GROUPS 256 /* ids 1..255; 0: sockets of no group */
#define SILO_REUSEPORT_NAME_MAX 32 /* with the NUL */
#define SILO_REUSEPORT_NODE_SLOTS 256 /* sockets listed per node */
#define SILO_REUSEPORT_NODE_PROBES 4 /* node sockets tried per selection */
#define SILO_REUSEPORT_NODE_LISTS 4096 /* (group, node) lists in all */

enum silo_reuseport_policy {
	SILO_REUSEPORT_CPU, /* this CPU's slot, then its node, then hash */
	SILO_REUSEPORT_NODE, /* a socket on this CPU's node, then hash */
	SILO_REUSEPORT_HASH, /* the kernel's hash: no selection */
	SILO_REUSEPORT_QUEUE, /* its RX queue's CPU's slot, then as node */
	SILO_REUSEPORT_POLICY_MAX,
};

#define SILO_REUSEPORT_F_MIGRATE (1U << 0) /* TCP: SELECT_OR_MIGRATE program */
#define SILO_REUSEPORT_F_ATTACHED (1U << 1) /* the program is on the sockets */

/* reuseport_groups key: what the kernel's group is, as struct bpf_sock has it. */
struct silo_reuseport_key {
	__u8 family; /* SILO_AF_INET, SILO_AF_INET6 */
	__u8 protocol; /* IPPROTO_UDP, IPPROTO_TCP */
	__u16 port; /* host order */
	__u32 bound_dev_if; /* SO_BINDTODEVICE, 0: any */
	__u8 addr[16]; /* bound address, network order; zero: any */
};

struct silo_reuseport_group {
	__u32 id; /* reuseport_sockets and reuseport_stats index */
	enum silo_reuseport_policy policy;
	__u32 flags; /* SILO_REUSEPORT_F_* */
	__u32 nr_slots; /* slots of its sockets map: possible CPUs */
	char name[SILO_REUSEPORT_NAME_MAX];
};

/* reuseport_nodes: the occupied slots of a group on a node, for policy node
 * and the cpu policy's fallback. Written by user space when slots change. */
struct silo_reuseport_node_key {
	__u32 group; /* id */
	__u32 node;
};

struct silo_reuseport_node {
	__u32 nr;
	__u32 slots[SILO_REUSEPORT_NODE_SLOTS];
};

/*
 * reuseport_queues[group id]: for policy queue, what the NIC did with the
 * packet, so that the program can redo it (it cannot read the skb's queue,
 * and ctx->hash is the socket hash, not the NIC's). The RSS hash is the
 * Toeplitz hash of (source address, destination address[, source port,
 * destination port]) in network order with the device's key; the queue is
 * indir[hash % indir_size]; the slot is the CPU that serves that queue.
 * toeplitz[i * 256 + b] is what byte value b at input position i adds
 * (XOR) to the hash, computed from key by user space: a few loads per
 * packet instead of a 288-bit loop. Written whole (a hash map update is
 * atomic); absent: the policy falls back as cpu does.
 */
#define SILO_RSS_KEY_MIN 40 /* 36 input bytes + the 4 the window spans */
#define SILO_RSS_KEY_MAX 52
#define SILO_RSS_INPUT_MAX 36 /* two IPv6 addresses and two ports */
#define SILO_RSS_INDIR_MAX 512
#define SILO_RSS_QUEUES_MAX 256
#define SILO_RSS_NO_CPU 0xffffffffU /* queue_cpu: the queue has no CPU */

/* hash_ports: the flow types whose hash takes the ports (many NICs hash UDP
 * on the addresses alone: ethtool rx-flow-hash udp4 sd). */
#define SILO_RSS_PORTS_UDP4 (1U << 0)
#define SILO_RSS_PORTS_UDP6 (1U << 1)
#define SILO_RSS_PORTS_TCP4 (1U << 2)
#define SILO_RSS_PORTS_TCP6 (1U << 3)
#define SILO_RSS_PORTS_ALL 0xfU

struct silo_reuseport_queues {
	__u32 ifindex; /* read from this device, kept current by silod; 0: by hand */
	__u32 key_size; /* SILO_RSS_KEY_MIN .. SILO_RSS_KEY_MAX */
	__u32 indir_size; /* 1 .. SILO_RSS_INDIR_MAX */
	__u32 nr_queues; /* 1 .. SILO_RSS_QUEUES_MAX */
	__u32 hash_ports; /* SILO_RSS_PORTS_* */
	__u8 key[SILO_RSS_KEY_MAX]; /* kept for show */
	__u32 indir[SILO_RSS_INDIR_MAX]; /* hash % indir_size -> queue */
	__u32 queue_cpu[SILO_RSS_QUEUES_MAX]; /* queue -> CPU (= slot) */
	__u32 toeplitz[SILO_RSS_INPUT_MAX * 256];
};

/* reuseport/<name>/slots: who put which socket in a slot (for show). */
struct silo_reuseport_slot {
	__u64 cookie; /* SO_COOKIE; 0: nothing placed */
	__u32 pid; /* the process that owns the socket */
	__u32 tid; /* the thread that reads it, when known; else 0 */
	__s32 fd; /* its number in that process */
	__u32 pad;
};

/*
 * reuseport_stats[id]: per-CPU counters of a group; [0] counts runs for
 * sockets of no group. Every run counts runs and exactly one outcome:
 * sel_queue, sel_cpu, sel_node, hash_policy, hash_fallback, no_group or
 * no_map. Every failed bpf_sk_select_reuseport counts one err_* code. Policy
 * queue counts at most one queue_* miss on the way to a fallback.
 */
#define SILO_REUSEPORT_STATS(X)                                                \
	X(RUNS, runs, "selections run (datagrams, SYNs, migrations)")          \
	X(MIGRATE, migrate, "runs for a request leaving a closed listener")    \
	X(SEL_QUEUE, sel_queue, "selected: the slot of its RX queue's CPU")    \
	X(SEL_CPU, sel_cpu, "selected: the socket in this CPU's slot")         \
	X(SEL_NODE, sel_node, "selected: a socket on this CPU's node")         \
	X(HASH_POLICY, hash_policy, "kernel hash: policy hash")                \
	X(HASH_FALLBACK, hash_fallback, "kernel hash: no CPU or node socket")  \
	X(NO_GROUP, no_group, "kernel hash: socket of no silo group")          \
	X(NO_MAP, no_map, "kernel hash: group without its socket map")         \
	X(CPU_MISS, cpu_miss, "this CPU's slot failed")                        \
	X(NODE_EMPTY, node_empty, "no socket listed on this CPU's node")       \
	X(NODE_MISS, node_miss, "a node socket tried failed")                  \
	X(QUEUE_NO_TABLE, queue_no_table, "queue: no RSS table, or a bad one") \
	X(QUEUE_NOT_IP, queue_not_ip, "queue: headers not IPv4/IPv6 or short") \
	X(QUEUE_NO_CPU, queue_no_cpu, "queue: its RX queue has no CPU")        \
	X(QUEUE_MISS, queue_miss, "queue: the slot of the queue's CPU failed") \
	X(ERR_ENOENT, err_enoent, "ENOENT: slot empty, or its socket closed")  \
	X(ERR_EBADFD, err_ebadfd, "EBADFD: socket of another address or port") \
	X(ERR_EPROTOTYPE, err_eprototype, "EPROTOTYPE: other protocol")        \
	X(ERR_EAFNOSUPPORT, err_eafnosupport, "EAFNOSUPPORT: other family")    \
	X(ERR_OTHER, err_other, "any other bpf_sk_select_reuseport error")

#define SILO_RSTAT_ENUMERATOR(name, field, desc) SILO_RSTAT_##name,
SILO_COUNTERS(silo_reuseport_stat, silo_reuseport_stats, SILO_REUSEPORT_STATS,
	      SILO_RSTAT_ENUMERATOR, SILO_RSTAT_MAX);

#endif /* SILO_ABI_REUSEPORT_H */
