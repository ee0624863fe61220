/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * What every contract of include/silo/abi/ shares: the types, the layout
 * version of the pinned maps, the limits, address families, and the
 * counter tables' generator. Public: installed with libsilo.
 */
#ifndef SILO_ABI_COMMON_H
#define SILO_ABI_COMMON_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_fib_lookup */
#endif

#define SILO_LAYOUT_VERSION 4 /* 4: reuseport_queues, fill_log, services */

/* Limits. */
#define SILO_MAX_NODES 64 /* route_cache outer array: one slot per node */
#define SILO_MAX_CPUS 4096 /* cpu_node entries */
#define SILO_MAX_LOCAL_ADDRS 4096
#define SILO_MAX_DEVICES 1024
#define SILO_ROUTE_CACHE_DEFAULT 65536 /* entries per node */
#define SILO_ROUTE_CACHE_MAX 4194304 /* per node: about 0.5 GiB each */
#define SILO_MAX_VLAN_TAGS 2 /* 802.1ad outer + 802.1Q inner */
#define SILO_MAX_IPV6_EXTHDRS 8

/*
 * Addresses are 16 bytes in network order; an IPv4 address takes the first
 * four and the rest are zero. family is AF_INET (2) or AF_INET6 (10).
 */
#define SILO_AF_INET 2
#define SILO_AF_INET6 10

/* meta[0]: what the pins in this directory are, checked before reuse. */
struct silo_meta {
	__u32 layout_version;
	__u32 nr_nodes; /* route_cache slots that hold a map */
	__u64 netns_cookie; /* the network namespace the pins serve */
};

/* local_addrs: every address of this host, filled from RTM_NEWADDR. */
struct silo_addr {
	__u8 family;
	__u8 pad[3];
	__u8 addr[16];
};

struct silo_local_addr {
	__u32 ifindex;
	__u8 prefixlen;
	__u8 scope;
	__u8 pad[2];
};

/*
 * local_bits[0]: a filter in front of local_addrs, so that a packet for
 * another host (every forwarded one) costs no hash lookup: bit
 * silo_local_bit() of every address in local_addrs is set, and a
 * destination whose bit is clear is not local. Written whole, after
 * local_addrs, by whoever fills it (the loader, silod); trusted unless a
 * silod beats that does not keep it (heartbeat SILO_HB_LOCAL_BITS).
 */
#define SILO_LOCAL_BITS 4096

struct silo_local_bits {
	__u64 w[SILO_LOCAL_BITS / 64];
};

/* The bit of an address as struct silo_addr holds it (IPv4 in the first
 * 4 of its 16 bytes): the same in the program and in user space. */
static inline __u32 silo_local_bit(__u8 family, const __u8 *addr)
{
	__u32 w0, w3;

	__builtin_memcpy(&w0, addr, sizeof(w0));
	__builtin_memcpy(&w3, addr + 12, sizeof(w3));
	return ((w0 ^ w3 ^ family) * 0x9E3779B1U) >> 20;
}

/*
 * Counters: per-CPU structs of __u64, one field per entry of an X-list
 * X(NAME, field, "description"), so that bpftool prints each by name. The
 * list makes the enum the programs count by (ENUMERATOR(NAME, ...) gives
 * PREFIX_NAME), the struct's fields and the names and descriptions user
 * space prints: one definition.
 */
#define SILO_COUNTER_FIELD(name, field, desc) __u64 field;
#define SILO_COUNTER_FIELDS(LIST) LIST(SILO_COUNTER_FIELD)
#define SILO_COUNTER_ENUM(etag, LIST, ENUMERATOR, max) \
	enum etag { LIST(ENUMERATOR) max }
#define SILO_COUNTERS(etag, stag, LIST, ENUMERATOR, max) \
	SILO_COUNTER_ENUM(etag, LIST, ENUMERATOR, max);  \
	struct stag {                                    \
		SILO_COUNTER_FIELDS(LIST)                \
	}

#endif /* SILO_ABI_COMMON_H */
