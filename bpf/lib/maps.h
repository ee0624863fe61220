/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every map of silo's XDP object, pinned by libsilo under the names of
 * include/silo/abi/pins.h and readable with bpftool. silod's own state is
 * declared here too, so that every map is made (with BTF) at once.
 */
#ifndef SILO_BPF_LIB_MAPS_H
#define SILO_BPF_LIB_MAPS_H

#include "common.h"
#include "cpu_node.h"

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
	__type(value, struct silo_local_bits);
} local_bits SEC(".maps");

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

/* Checksums left to offload, per ingress device (abi/stats.h): entries
 * made by the loader, only looked up here. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, SILO_MAX_DEVICES);
	__type(key, __u32);
	__type(value, struct silo_csum_stats);
} csum_stats SEC(".maps");

/* Counts one by the ingress device's ifindex (in a map value, scratch's:
 * the forward path has no stack left for a key). */
static __always_inline void csum_count(const __u32 *ifindex, __u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&csum_stats, ifindex);

	if (c && idx < SILO_CSUM_STAT_MAX)
		c[idx] += 1;
}

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

/* Per-CPU admission state: see struct silo_admit (SILO_ADMIT_ROUTE, the
 * route cache's inserts; SILO_ADMIT_CT, conntrack's lookups). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
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

/* Per-CPU copies of the flows' answers, found by the frame (internal.h,
 * lib/hot.h, lib/front.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SILO_HOT_SLOTS);
	__type(key, __u32);
	__type(value, struct silo_hot);
} route_hot SEC(".maps");

/* Destinations an ICMP error for this host may have taught a PMTU
 * exception, and the errors the program could not read (route.h). A plain
 * hash: a mark must never be evicted while it counts. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SILO_PMTU_MARKS_MAX);
	__type(key, struct silo_pmtu_key);
	__type(value, struct silo_pmtu_mark);
} pmtu_marks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SILO_PMTU_UNSEEN_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} pmtu_unseen SEC(".maps");

/* Unlocked route MTUs by prefix (route.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, SILO_ROUTE_MTUS_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct silo_route_mtu_key);
	__type(value, __u32);
} route_mtus SEC(".maps");

/* IPv4 sources that take the full source check (route.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, SILO_SRC_CHECKED_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct silo_src_key);
	__type(value, __u32);
} src_checked SEC(".maps");

/* Prefixes whose packets take the rules' walk (route.h, direct_skip). */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, SILO_DIRECT_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct silo_direct_key);
	__type(value, __u32);
} direct_skip SEC(".maps");

/* The keys inserted into the route caches, for silod's index (abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SILO_FILL_LOG_BYTES);
} fill_log SEC(".maps");

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

#endif /* SILO_BPF_LIB_MAPS_H */
