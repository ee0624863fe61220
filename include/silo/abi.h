/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The contract between silo's BPF programs and user space: every map key and
 * value, counter index, enum and limit, defined once. Included by the BPF
 * side (after vmlinux.h) and by user space (after <linux/types.h>).
 *
 * Changing any struct here changes the pinned maps' layout: bump
 * SILO_LAYOUT_VERSION so that an old pin is reported and replaced, never
 * silently reused with the wrong layout.
 */
#ifndef SILO_ABI_H
#define SILO_ABI_H

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

/* Names of the pinned maps, relative to the namespace's pin directory. */
#define SILO_PIN_META "meta"
#define SILO_PIN_ROUTE_CACHE_NODE "route_cache_n" /* + node number */
#define SILO_PIN_XDP_LINK "xdp_link_" /* + ifindex */
#define SILO_PIN_REUSEPORT_DIR "reuseport" /* one entry per group */

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
 * genid[0], alone in its cache line. Written only by user space; a route
 * cache entry is valid while its genid equals this one. Never 0: 0 marks an
 * entry that is being rewritten.
 *
 * flags say what the cache key holds beyond the fixed fields (ingress
 * device, family, TOS, destination), decided from the rules, routes and
 * sysctls: only the inputs the FIB's answer depends on in the current
 * configuration, so that a flood of sources towards few destinations shares
 * few entries. The low byte (SILO_GENID_KEY_MASK) is copied into every key
 * (silo_route_key.format): a key made under other flags never matches. A
 * writer that changes them stores the flags first and bumps genid after, so
 * a reader that sees the new genid sees the new flags.
 */
/* protocol and ports: a rule selects on them, or an L4 multipath hash
 * takes them where a multipath route exists */
#define SILO_GENID_KEY_L4 (1U << 0)
/* IPv6 flow label and next header: the IPv6 multipath hash takes them and
 * an IPv6 multipath route exists */
#define SILO_GENID_KEY_FLOWLABEL (1U << 1)
/* The source address, per family: a rule selects on it, a multipath route
 * hashes it, or (IPv6) a route is source-specific ("from") */
#define SILO_GENID_KEY_SRC_V4 (1U << 2)
#define SILO_GENID_KEY_SRC_V6 (1U << 3)
#define SILO_GENID_KEY_MASK 0x7FU
/* Why, for user space and the source check (bits above the key byte). */
#define SILO_GENID_RULES_L4 (1U << 8) /* a rule: ipproto, sport, dport */
#define SILO_GENID_HASH_L4 (1U << 9) /* a hash policy that takes ports */
#define SILO_GENID_RULES_SRC_V4 (1U << 10) /* an IPv4 rule "from" a prefix */
#define SILO_GENID_RULES_SRC_V6 (1U << 11)
#define SILO_GENID_MPATH_V4 (1U << 12) /* an IPv4 multipath route */
#define SILO_GENID_MPATH_V6 (1U << 13)
#define SILO_GENID_SRC_ROUTES_V6 (1U << 14) /* an IPv6 route "from" */
#define SILO_GENID_HASH_FLOWLABEL (1U << 15) /* IPv6 hash takes the label */

/*
 * The offload envelope: the configurations in which XDP forwarding is equal
 * to the kernel's. Each condition below puts a family's forwarded traffic
 * outside it: the data path then passes that traffic to the stack (counted
 * as pass_envelope) and "silo xdp status" names the condition and what to do.
 * Written by the loader and re-evaluated by silod as the configuration
 * changes. The list makes the bits, the names and the texts: one definition.
 */
#define SILO_ENVELOPE(X)                                                       \
	X(NFTABLES, nftables,                                                  \
	  "an nftables chain sees forwarded packets (hook prerouting, "        \
	  "forward or postrouting, or a netdev chain)",                        \
	  "delete the chain, or load with --allow-firewall-bypass if XDP "     \
	  "may skip it")                                                       \
	X(IPTABLES_LEGACY, iptables_legacy,                                    \
	  "iptables-legacy tables are loaded (/proc/net/ip*_tables_names)",    \
	  "flush and unload them (or use nftables), or load with "             \
	  "--allow-firewall-bypass if XDP may skip them")                      \
	X(XFRM, xfrm, "IPsec (xfrm) policies for forwarded or output traffic", \
	  "forwarded traffic must go through xfrm: silo stands aside")         \
	X(FORWARDING_OFF, forwarding_off,                                      \
	  "IPv6 forwarding is off (net.ipv6.conf.all.forwarding 0)",           \
	  "the kernel does not forward IPv6: neither does silo")               \
	X(MPATH_HASH, mpath_hash,                                              \
	  "a multipath hash policy bpf_fib_lookup cannot reproduce",           \
	  "use fib_multipath_hash_policy 0, 1 or 2")                           \
	X(UNKNOWN, unknown, "the configuration could not be read",             \
	  "see silod's log; silo stands aside until it can")                   \
	X(TC, tc,                                                              \
	  "tc filters or BPF programs, or a shaping qdisc, on a device "       \
	  "(forwarding in XDP skips them)",                                    \
	  "remove them, or load with --allow-firewall-bypass if XDP may "      \
	  "skip them")

enum silo_envelope_bit {
#define SILO_X(name, field, desc, todo) SILO_ENV_BIT_##name,
	SILO_ENVELOPE(SILO_X)
#undef SILO_X
		SILO_ENV_BIT_MAX
};

#define SILO_ENV(name) (1U << SILO_ENV_BIT_##name)
/* What an operator may choose to bypass (xdp load --allow-firewall-bypass). */
#define SILO_ENV_OVERRIDABLE \
	(SILO_ENV(NFTABLES) | SILO_ENV(IPTABLES_LEGACY) | SILO_ENV(TC))

/* outside[] index */
#define SILO_FAM_V4 0
#define SILO_FAM_V6 1

struct silo_genid {
	__u64 genid;
	__u32 flags; /* SILO_GENID_KEY_* */
	__u32 override; /* SILO_ENV_OVERRIDABLE bits the operator bypasses */
	/* Per family: the SILO_ENV_* conditions that hold, less override.
	 * Nonzero: that family's forwarded traffic goes to the stack. */
	__u32 outside[2];
	/*
	 * Least path MTU an IPv4 PMTU exception can set
	 * (net.ipv4.route.min_pmtu; 0: 552). A cached entry carries the
	 * route's MTU, but exceptions are learned without a notification:
	 * larger packets are resolved by bpf_fib_lookup, which sees them.
	 * IPv6's floor is its minimum MTU, 1280.
	 */
	__u32 pmtu_floor_v4;
	/*
	 * Per family (SILO_FAM_*): the least MTU of a route whose MTU is not
	 * locked (0: none). The kernel's forwarding honours a route's MTU,
	 * bpf_fib_lookup only a locked one: larger packets go to the stack.
	 */
	__u16 route_mtu[2];
	__u8 cacheline_pad[32];
};

/*
 * heartbeat[0]: silod's liveness, in its own cache line. Only silod
 * invalidates the route cache and re-evaluates the envelope as the
 * configuration changes (a firewall added after the load), so the data path
 * forwards only while silod beats: with last_ns 0 (no silod, or silod has
 * exited), a beat older than timeout_ns, or one stamped in the future
 * (another clock), every packet goes to the stack (pass_no_daemon). Times
 * are CLOCK_MONOTONIC_COARSE (bpf_ktime_get_coarse_ns).
 */
struct silo_heartbeat {
	__u64 last_ns;
	__u64 timeout_ns;
	__u8 cacheline_pad[48];
};

/* devices: per ingress device state the forward path needs. */
#define SILO_DEV_F_ACCEPT_LOCAL (1U << 0) /* conf/{all,DEV}/accept_local */
#define SILO_DEV_F_NO_V4_ADDR (1U << 1) /* no IPv4 address (rp_filter) */
#define SILO_DEV_F_PORT (1U << 2) /* a bridge or bond port: not routed */

struct silo_device {
	__u8 mac[6]; /* frames for another MAC are not ours to forward */
	__u8 rp_filter; /* max(conf/all, conf/DEV) rp_filter: 0, 1, 2 */
	__u8 flags; /* SILO_DEV_F_* */
	/* The input device of the source check's lookup: the kernel's is
	 * loopback (1), or the VRF device of a VRF port. */
	__u32 rp_ifindex;
};

/*
 * route_cache: array (by node) of LRU hashes, two kinds of entry in each.
 *
 * A route entry (format without SILO_KEY_SOURCE) holds the forward lookup's
 * answer. Its key holds every input the kernel FIB's answer depends on under
 * the current rules, routes and sysctls (genid.flags): ingress device,
 * destination, TOS (IPv6: traffic class), and only where they matter the
 * source, protocol and ports, the IPv6 flow label; the fields left out are
 * zero.
 *
 * A source entry (SILO_KEY_SOURCE) holds the IPv4 source check's answer
 * (the kernel's fib_validate_source, a lookup of the route back), cached on
 * its own: ingress device, TOS, source, and the destination only when a rule
 * selects on source addresses (the lookup back has the destination as its
 * source). A flood from many sources then costs a source entry each, not a
 * route entry each.
 */
#define SILO_KEY_SOURCE 0x80U

struct silo_route_key {
	__u32 ifindex; /* ingress */
	__u8 family;
	__u8 tos;
	__u8 l4_proto;
	__u8 format; /* genid.flags & SILO_GENID_KEY_MASK, | SILO_KEY_SOURCE */
	__be16 sport;
	__be16 dport;
	__be32 flowlabel; /* IPv6 flow label, network order, 20 bits */
	__u8 src[16];
	__u8 dst[16];
};

struct silo_route_entry {
	__u64 genid; /* genid read before the lookup that filled it */
	__u32 ifindex; /* egress; 0 in a source entry */
	__u16 mtu;
	__u8 family; /* the nexthop's: an IPv4 route may have an IPv6 gateway */
	/* A source entry: 0 when the source check accepts, else the
	 * SILO_STAT_PASS_* reason the packet goes to the stack for. */
	__u8 verdict;
	__u8 smac[6];
	__u8 dmac[6];
	__u8 nexthop[16]; /* gateway, or the destination when on-link */
	__u32 pad2; /* the key 8-byte aligned: compared as __u64 words */
	/* The key that filled it, checked on every read: an LRU element can
	 * be evicted and reused by another key while a reader holds it. */
	struct silo_route_key key;
};

/*
 * fill_log: a BPF ringbuf of the keys the data path inserts into the route
 * caches, one record per insert, for silod's index of the caches by the
 * address a sweep selects entries by (user/silod/index.c): a sweep then
 * costs what the change touches, not what the caches hold. An insert
 * reserves its record first and does not cache when the log is full
 * (cache_no_log), so every key in a cache has been logged: the index is
 * complete by construction. The record is submitted after the map update
 * and before the fill is counted (cache_insert), which the exactness of
 * scoped invalidation relies on (user/silod/sweep.c). A refresh in place
 * logs nothing: its key is in the cache already, hence logged.
 */
#define SILO_FILL_LOG_BYTES (4U << 20) /* 65,536 records */

struct silo_fill_rec {
	__u32 node; /* whose cache: route_cache index */
	__u32 pad;
	struct silo_route_key key;
};

/*
 * admit[0], per CPU: admission to the route cache. A miss is inserted at
 * once while this CPU's insert budget lasts (SILO_ADMIT_BURST inserts, one
 * more every SILO_ADMIT_NS); past it, only a key seen before (its hash in
 * seen[]) is inserted. A flood of one-packet flows then costs a lookup and
 * a failed cache lookup each, not an insert and an eviction; a real flow is
 * cached by its second packet. Past the budget, a key this CPU has not
 * seen is not even looked up (counted as cache_unseen): it is almost never
 * cached, and a failed lookup costs as much as a hit.
 */
#define SILO_ADMIT_SLOTS 2048 /* a power of 2 */
#define SILO_ADMIT_BURST 64
#define SILO_ADMIT_NS 1000000ULL /* 1,000 inserts a second per CPU */

struct silo_admit {
	__u64 last_ns; /* budget last refilled */
	__u32 tokens;
	__u32 pad;
	__u32 seen[SILO_ADMIT_SLOTS]; /* key hashes, | 1 (0: empty) */
};

/*
 * stats: one per-CPU struct silo_stats, so bpftool prints every counter by
 * name. The list below makes the enum (the index the program counts by), the
 * struct fields and the descriptions the CLI prints: one definition.
 * Every packet counts rx and exactly one verdict; a passed packet also counts
 * exactly one pass_* reason.
 */
#define SILO_XDP_STATS(X)                                                      \
	X(RX, rx, "packets seen")                                              \
	X(PASS, pass, "verdict XDP_PASS")                                      \
	X(REDIRECT, redirect, "verdict XDP_REDIRECT (forwarded, steered)")     \
	X(DROP, drop, "verdict XDP_DROP (never by default)")                   \
	X(PASS_NOT_IP, pass_not_ip, "not IPv4 or IPv6")                        \
	X(PASS_VLAN_DEPTH, pass_vlan_depth, "more than two VLAN tags")         \
	X(PASS_TRUNCATED, pass_truncated, "header runs past the frame")        \
	X(PASS_BAD_VERSION, pass_bad_version, "IP version != ethertype")       \
	X(PASS_BAD_IHL, pass_bad_ihl, "IPv4 header length below 20")           \
	X(PASS_BAD_LEN, pass_bad_len, "IP length short or past the frame")     \
	X(PASS_FRAGMENT, pass_fragment, "IP fragment")                         \
	X(PASS_EXTHDR, pass_exthdr, "IPv6 extension headers not followed")     \
	X(PASS_L4_PROTO, pass_l4_proto, "not TCP or UDP")                      \
	X(PASS_L4_BAD, pass_l4_bad, "TCP/UDP header truncated or bad")         \
	X(PASS_LOCAL, pass_local, "for a local address")                       \
	X(PASS_NO_FORWARD, pass_no_forward, "forwarding off on this device")   \
	X(PASS_VLAN, pass_vlan, "VLAN-tagged, in the frame or beside it")      \
	X(PASS_NOT_HOST, pass_not_host, "destination MAC not this device")     \
	X(PASS_IP_OPTIONS, pass_ip_options, "IPv4 options")                    \
	X(PASS_BAD_CSUM, pass_bad_csum, "IPv4 header checksum wrong")          \
	X(PASS_MARTIAN, pass_martian, "address the stack treats specially")    \
	X(PASS_HOP_BY_HOP, pass_hop_by_hop, "IPv6 hop-by-hop options")         \
	X(PASS_TTL, pass_ttl, "TTL or hop limit <= 1")                         \
	X(PASS_FIB, pass_fib, "bpf_fib_lookup did not say SUCCESS")            \
	X(PASS_RP_FILTER, pass_rp_filter, "reverse path check failed")         \
	X(PASS_MTU, pass_mtu, "larger than the egress MTU")                    \
	X(PASS_HAIRPIN, pass_hairpin, "egress is the ingress device")          \
	X(PASS_NO_TX_PORT, pass_no_tx_port, "egress device not in tx_ports")   \
	X(PASS_ENVELOPE, pass_envelope, "outside the envelope: xdp status")    \
	X(PASS_NO_DAEMON, pass_no_daemon, "no live silod: forwarding waits")   \
	X(PASS_ROUTE_MTU, pass_route_mtu, "larger than the least route MTU")   \
	X(PASS_PORT, pass_port, "ingress is a bridge or bond port")            \
	X(PASS_LOCAL_SRC, pass_local_src,                                      \
	  "source local or not unicast routed")                                \
	X(FIB_SUCCESS, fib_success, "BPF_FIB_LKUP_RET_SUCCESS")                \
	X(FIB_BLACKHOLE, fib_blackhole, "BPF_FIB_LKUP_RET_BLACKHOLE")          \
	X(FIB_UNREACHABLE, fib_unreachable, "BPF_FIB_LKUP_RET_UNREACHABLE")    \
	X(FIB_PROHIBIT, fib_prohibit, "BPF_FIB_LKUP_RET_PROHIBIT")             \
	X(FIB_NOT_FWDED, fib_not_fwded, "BPF_FIB_LKUP_RET_NOT_FWDED")          \
	X(FIB_FWD_DISABLED, fib_fwd_disabled, "BPF_FIB_LKUP_RET_FWD_DISABLED") \
	X(FIB_UNSUPP_LWT, fib_unsupp_lwt, "BPF_FIB_LKUP_RET_UNSUPP_LWT")       \
	X(FIB_NO_NEIGH, fib_no_neigh, "BPF_FIB_LKUP_RET_NO_NEIGH")             \
	X(FIB_FRAG_NEEDED, fib_frag_needed, "BPF_FIB_LKUP_RET_FRAG_NEEDED")    \
	X(FIB_NO_SRC_ADDR, fib_no_src_addr, "BPF_FIB_LKUP_RET_NO_SRC_ADDR")    \
	X(FIB_ERROR, fib_error, "bpf_fib_lookup returned an error")            \
	X(CACHE_HIT, cache_hit, "route cache hit, current genid")              \
	X(SRC_HIT, src_hit, "source check answered from the cache")            \
	X(SRC_MISS, src_miss, "source check: a lookup of the route back")      \
	X(CACHE_MISS, cache_miss, "route cache miss")                          \
	X(CACHE_STALE, cache_stale, "entry found with an old genid")           \
	X(CACHE_RACE, cache_race, "entry rewritten or reused meanwhile")       \
	X(CACHE_INSERT, cache_insert, "entry added (admitted)")                \
	X(CACHE_REFUSED, cache_refused, "miss not cached: not admitted")       \
	X(CACHE_EVICT, cache_evict, "entries evicted to make room")            \
	X(CACHE_UNSEEN, cache_unseen, "storm: an unseen key, not looked up")   \
	X(CACHE_INSERT_FAIL, cache_insert_fail, "entry could not be added")    \
	X(CACHE_REFRESH, cache_refresh, "stale entry rewritten in place")      \
	X(CACHE_BIG, cache_big, "above the least PMTU: bpf_fib_lookup")        \
	X(CACHE_NO_LOG, cache_no_log,                                          \
	  "miss not cached: the fill log was full")                            \
	X(TRIMMED, trimmed, "bytes after the IP packet trimmed")               \
	X(STEERED, steered, "local, redirected to its service's CPU")

enum silo_stat {
#define SILO_X(name, field, desc) SILO_STAT_##name,
	SILO_XDP_STATS(SILO_X)
#undef SILO_X
		SILO_STAT_MAX
};

struct silo_stats {
#define SILO_X(name, field, desc) __u64 field;
	SILO_XDP_STATS(SILO_X)
#undef SILO_X
};

/*
 * daemon[0]: silod's pid and counters, written only by silod; for "silo
 * daemon status" and bpftool. The data path does not read it.
 */
#define SILO_DAEMON_STATS(X)                                                \
	X(EV_ROUTE, events_route, "route messages")                         \
	X(EV_RULE, events_rule, "policy rule messages")                     \
	X(EV_NEIGH, events_neigh, "neighbour messages")                     \
	X(EV_ADDR, events_addr, "address messages")                         \
	X(EV_LINK, events_link, "link messages")                            \
	X(EV_NEXTHOP, events_nexthop, "nexthop object messages")            \
	X(EV_NETCONF, events_netconf, "netconf (forwarding, rp_filter)")    \
	X(BURSTS, bursts, "bursts of messages handled as one")              \
	X(COALESCED, coalesced, "messages folded into a burst")             \
	X(SWEEPS, sweeps, "scoped invalidations (cache sweeps)")            \
	X(SWEEPS_AGAIN, sweeps_again, "second sweeps after a grace period") \
	X(INVALIDATED, invalidated, "cache entries removed by sweeps")      \
	X(GENID_BUMPS, genid_bumps, "global invalidations (genid bumps)")   \
	X(RESYNCS, resyncs, "full resyncs")                                 \
	X(OVERRUNS, overruns, "netlink overruns (ENOBUFS)")                 \
	X(DUMPS_RETRIED, dumps_retried, "dumps interrupted and run again")  \
	X(NEIGH_USE, neigh_use, "neighbours confirmed in use (NTF_USE)")    \
	X(INDEX_REBUILDS, index_rebuilds, "cache index rebuilt by a walk")

enum silo_daemon_stat {
#define SILO_X(name, field, desc) SILO_DSTAT_##name,
	SILO_DAEMON_STATS(SILO_X)
#undef SILO_X
		SILO_DSTAT_MAX
};

struct silo_daemon {
	__u32 pid; /* 0: not running */
	__u32 pending; /* first sweeps whose grace period has not ended */
	__u64 started_ns; /* CLOCK_MONOTONIC */
	/* starttime of /proc/PID/stat (clock ticks since boot): tells silod
	 * from a later process that reused its pid. */
	__u64 start_ticks;
#define SILO_X(name, field, desc) __u64 field;
	SILO_DAEMON_STATS(SILO_X)
#undef SILO_X
};

#define SILO_STAT_FIB_FIRST SILO_STAT_FIB_SUCCESS
#define SILO_STAT_FIB_CODES (SILO_STAT_FIB_ERROR - SILO_STAT_FIB_SUCCESS)

/*
 * silo_fib_probe program: user space hands it a bpf_fib_lookup request as
 * the packet, it runs the same helper the data path runs and writes back the
 * answer. Lets "silo route lookup" show exactly what the data path would get.
 */
struct silo_fib_probe {
	__s32 rc;
	__u32 flags;
	struct bpf_fib_lookup params;
};

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

#define SILO_PIN_REUSEPORT_GROUPS "reuseport_groups"
#define SILO_PIN_REUSEPORT_SOCKETS "reuseport_sockets"
#define SILO_PIN_REUSEPORT_NODES "reuseport_nodes"
#define SILO_PIN_REUSEPORT_STATS "reuseport_stats"
#define SILO_PIN_REUSEPORT_QUEUES "reuseport_queues"
#define SILO_PIN_REUSEPORT_SELECT "reuseport_select" /* program */
#define SILO_PIN_REUSEPORT_MIGRATE "reuseport_migrate" /* program */
#define SILO_PIN_GROUP_SOCKETS "sockets" /* in reuseport/<name>/ */
#define SILO_PIN_GROUP_SLOTS "slots"

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

enum silo_reuseport_stat {
#define SILO_X(name, field, desc) SILO_RSTAT_##name,
	SILO_REUSEPORT_STATS(SILO_X)
#undef SILO_X
		SILO_RSTAT_MAX
};

struct silo_reuseport_stats {
#define SILO_X(name, field, desc) __u64 field;
	SILO_REUSEPORT_STATS(SILO_X)
#undef SILO_X
};

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

#define SILO_PIN_SERVICES "services"
#define SILO_PIN_SERVICE_NODES "service_nodes"
#define SILO_PIN_SERVICE_STATS "service_stats"
#define SILO_PIN_QUEUE_CPU "queue_cpu"
#define SILO_PIN_CPUMAP "cpumap"

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

enum silo_service_stat {
#define SILO_X(name, field, desc) SILO_SSTAT_##name,
	SILO_SERVICE_STATS(SILO_X)
#undef SILO_X
		SILO_SSTAT_MAX
};

struct silo_service_stats {
#define SILO_X(name, field, desc) __u64 field;
	SILO_SERVICE_STATS(SILO_X)
#undef SILO_X
};

#endif /* SILO_ABI_H */
