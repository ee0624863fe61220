/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The route cache's contract: genid (its flags, the envelope), the
 * devices the forward path knows, the cache's keys and entries, and the
 * FIB probe. Public: installed with libsilo.
 */
#ifndef SILO_ABI_ROUTE_H
#define SILO_ABI_ROUTE_H

#include "silo/abi/common.h"
#include "silo/abi/envelope.h"

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
/* src_checked holds every prefix it should (route.h, src_checked): an
 * IPv4 source outside it needs no source check under rp_filter 0. */
#define SILO_GENID_SRCS_WHOLE (1U << 16)
/* Per family: a lookup of the main table alone (BPF_FIB_LOOKUP_DIRECT)
 * gives the rules' answer for a packet direct_skip does not hold (route.h,
 * direct_skip); _SRC_: direct_skip holds source prefixes of the family. */
#define SILO_GENID_DIRECT_V4 (1U << 17)
#define SILO_GENID_DIRECT_V6 (1U << 18)
#define SILO_GENID_DIRECT_SRC_V4 (1U << 19)
#define SILO_GENID_DIRECT_SRC_V6 (1U << 20)

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
	 * bpf_fib_lookup only a locked one: larger packets go to the stack,
	 * unless pmtu_flags has SILO_PMTU_F_ROUTE_MTUS (route_mtus holds them
	 * all, by prefix; an earlier release's program, which does not know
	 * route_mtus, still reads this).
	 */
	__u16 route_mtu[2];
	__u8 pmtu_flags; /* SILO_PMTU_F_* */
	/*
	 * Established connections under a stateful firewall (lib/ct.h,
	 * docs/ENVELOPE.md). ct_fams: SILO_FAM_* bits whose outside[] is
	 * SILO_ENV(NFTABLES) alone only because of chains proven to accept an
	 * established connection's packets first, and the operator opted in
	 * (ct_optin): XDP forwards the packets of connections conntrack holds
	 * established, and passes the rest. An earlier release's program
	 * reads outside[] alone and passes them all.
	 */
	__u8 ct_fams;
	__u8 ct_optin; /* the operator's choice: --forward-established */
	__u8 ct_flags; /* SILO_CT_F_*: the namespace's conntrack settings */
	__u8 pad[4];
	/*
	 * Moved forward after every delete of route cache entries by user
	 * space (silod's sweeps, "silo route flush") and after silod's PMTU
	 * marks. The data path keeps per-CPU copies of its flows' answers
	 * (route_hot, internal.h): a copy counts only while its genid and
	 * its sweeps are both current, so a sweep reaches the copies of
	 * what it deleted.
	 */
	__u64 sweeps;
	/* Conntrack's timeouts, seconds, that a packet of an established
	 * connection refreshes (nf_conntrack_tcp_timeout_established,
	 * nf_conntrack_udp_timeout_stream): [0] TCP, [1] UDP. */
	__u32 ct_timeout[2];
	__u8 cacheline_pad[8];
};

/* genid.ct_flags */
#define SILO_CT_F_CHECKSUM (1U << 0) /* nf_conntrack_checksum 1 */

/* genid.pmtu_flags */
#define SILO_PMTU_F_USE_V4 (1U << 0) /* net.ipv4.ip_forward_use_pmtu 1 */
#define SILO_PMTU_F_ROUTE_MTUS (1U << 1) /* route_mtus is whole */

/*
 * PMTU exceptions. The kernel learns a path MTU towards a destination from
 * an ICMP error addressed to this host (IPv4 "fragmentation needed", IPv6
 * "packet too big") and tells no one; bpf_fib_lookup does not always apply
 * it (IPv4 under ip_forward_use_pmtu with a route MTU). silo's XDP program
 * sees those errors first: it marks the destination the error quotes in
 * pmtu_marks, and a packet above the least PMTU (pmtu_floor_v4, IPv6 1280)
 * towards a marked destination goes to the stack. silod adds a mark for
 * every exception the kernel already holds, and says in the heartbeat
 * (pmtu_watch) for which families every error passes through silo: only
 * then are larger packets served from the cache.
 *
 * A mark lives in the slot of the epoch (2^SILO_PMTU_EPOCH_SHIFT ns of
 * CLOCK_MONOTONIC_COARSE, 1,100 s) it was made in, slot = epoch % 3, and counts in
 * that epoch and the next: at least 1,100 s, longer than an exception the
 * error taught can live while mtu_expires is at most
 * SILO_PMTU_EXPIRES_MAX (silod turns the watch off above it). silod empties
 * the slot of the next epoch during the first half of each epoch, when no
 * one writes it: marks are never removed while they count.
 */
#define SILO_PMTU_EPOCH_SHIFT 40
#define SILO_PMTU_SLOTS 3
#define SILO_PMTU_EXPIRES_MAX 1000 /* seconds */
#define SILO_PMTU_MARKS_MAX 16384

struct silo_pmtu_key {
	__u8 family;
	__u8 slot; /* epoch % SILO_PMTU_SLOTS */
	__u8 pad[2];
	__u8 addr[16]; /* the destination the error quotes */
};

/* pmtu_marks' value: when the error was seen. */
struct silo_pmtu_mark {
	__u64 seen_ns;
};

/*
 * pmtu_unseen, __u64 CLOCK_MONOTONIC_COARSE ns (the marks' and epochs'
 * clock too), each element with one writer:
 *  [SILO_FAM_*] the last error for this host the program could not read
 *   (a fragment, IPv6 headers it does not follow) or could not mark
 *   (pmtu_marks full); the program's;
 *  [SILO_PMTU_COVERED + SILO_FAM_*] silod's: while the first is later
 *   than this, every larger packet of the family goes to the stack. Once
 *   the stack has had a second to learn from the error, silod marks every
 *   exception the kernel holds and then covers the time it read before: a
 *   later error stays uncovered;
 *  [SILO_PMTU_MARKED + SILO_FAM_*] the program's last mark (or unseen
 *   error: the clock read after it is written), and
 *   [SILO_PMTU_MARKED_SILOD + SILO_FAM_*] silod's, each written after the
 *   mark: while both are older than the last epoch no mark counts, and the
 *   marks are not looked up. silod moves genid.sweeps after its marks.
 */
#define SILO_PMTU_COVERED 2
#define SILO_PMTU_MARKED 4
#define SILO_PMTU_MARKED_SILOD 6
#define SILO_PMTU_UNSEEN_SLOTS 8

/*
 * route_mtus: an LPM trie of every prefix with an unlocked route MTU, in
 * any table, each holding the least such MTU of it and every prefix that
 * covers it. A cache entry takes the least of bpf_fib_lookup's MTU (which
 * leaves unlocked route MTUs out) and its destination's here: where rules
 * make the matched route unknowable, the least candidate (the stack gets
 * more, which is always exact). Kept by user space from a walk of the
 * routes; genid is bumped after a change. Past SILO_ROUTE_MTUS_MAX prefixes
 * it is not whole (genid.pmtu_flags): genid.route_mtu then applies.
 */
#define SILO_ROUTE_MTUS_MAX 4096

struct silo_route_mtu_key {
	__u32 prefixlen; /* 8 (the family) + the route's prefix length */
	__u8 family;
	__u8 addr[16];
} __attribute__((packed));

/*
 * src_checked: an LPM trie of the IPv4 prefixes whose sources the
 * kernel's source check (fib_validate_source) may refuse under rp_filter
 * 0 without accept_local: those of every route, in any table, of a type
 * other than unicast, throw, blackhole, unreachable or prohibit (the route
 * back of a refused source is local, broadcast, multicast, anycast...;
 * with no route back, or an error route, it is accepted), and each of this
 * host's addresses (/32: what the check takes without custom rules or
 * local routes). A source outside every prefix is accepted whatever the
 * rules select, so the data path skips the lookup back; one inside takes
 * the full check, cached in a source entry. Kept by user space from a
 * walk of the routes and addresses; past SILO_SRC_CHECKED_MAX prefixes it
 * is not whole (genid.flags SILO_GENID_SRCS_WHOLE clear) and every source
 * takes the full check. The value is unused (1).
 */
#define SILO_SRC_CHECKED_MAX 4096

struct silo_src_key {
	__u32 prefixlen;
	__u8 addr[4]; /* IPv4, network order */
};

/*
 * direct_skip: an LPM trie of the prefixes that make a packet take the
 * whole policy-rule walk, by kind (SILO_DIRECT_*). The kernel's lookup
 * walks the rules in order; the main table's answer is the rules' answer
 * when no rule before main's can match and the local table (the rule
 * before them all) has no route for the destination. silod sets
 * genid.flags SILO_GENID_DIRECT_V4 or _V6 only when the first "lookup
 * main" rule selects on nothing and every rule before it either selects on
 * a source or destination prefix alone (not inverted) or looks a table up
 * for every packet ("lookup T" selecting on nothing, which goes on to the
 * next rule when T has no route for the destination): each such prefix is
 * here (SRC from "from", else DST from "to"), with every route of the
 * local table and of each such table T (DST; T's, when there are more than
 * SILO_DIRECT_COVER of a family, as fewer, shorter prefixes that hold them
 * all). A packet whose source and destination fall outside them is
 * looked up in main alone, which skips the rules' walk and the tables; any
 * other takes the full lookup. IPv4 with only the default rules is left
 * out: its local and main tables are one trie, already one lookup. Kept by
 * user space from a walk of the rules and routes; past SILO_DIRECT_MAX
 * prefixes the flags stay clear. The value is unused (1).
 */
#define SILO_DIRECT_MAX 4096
/* The most prefixes of a family that the routes of the tables looked up by
 * rules before main's take here: a lookup's cost grows with the trie. */
#define SILO_DIRECT_COVER 256
#define SILO_DIRECT_SRC_V4 1
#define SILO_DIRECT_DST_V4 2
#define SILO_DIRECT_SRC_V6 3
#define SILO_DIRECT_DST_V6 4

struct silo_direct_key {
	__u32 prefixlen; /* 8 (the kind) + the prefix's length */
	__u8 kind; /* SILO_DIRECT_* */
	__u8 addr[16];
} __attribute__((packed));

/* devices: per device state the forward path needs (of the ingress; of the
 * egress for a multi-buffer frame). */
#define SILO_DEV_F_ACCEPT_LOCAL (1U << 0) /* conf/{all,DEV}/accept_local */
#define SILO_DEV_F_NO_V4_ADDR (1U << 1) /* no IPv4 address (rp_filter) */
#define SILO_DEV_F_PORT (1U << 2) /* a bridge or bond port: not routed */
/* As an egress: sends multi-buffer XDP frames (netdev netlink's XDP
 * feature ndo-xmit-sg); one redirected to a device without it is lost. */
#define SILO_DEV_F_XMIT_SG (1U << 3)
/* As an egress: sends XDP frames at all (ndo-xmit; a veth only while its
 * peer runs XDP or GRO). Without it the device is kept out of tx_ports. */
#define SILO_DEV_F_XMIT (1U << 4)
/* Loaded in native mode with forwarding: in tx_ports whenever it has
 * SILO_DEV_F_XMIT (user space keeps the two in step). */
#define SILO_DEV_F_EGRESS (1U << 5)
/* Its senders are on this host (a veth, tun or tap, netkit, macvlan or
 * ipvlan): a TCP or UDP packet may come with the checksum its sender left
 * to offload (CHECKSUM_PARTIAL), the pseudo header's sum in its place,
 * which the device that sends it on, or the stack that takes it, would
 * finish. XDP sees no such state: the data path finishes a checksum that
 * holds just the pseudo header's sum (bpf/lib/csum.h). */
#define SILO_DEV_F_LOCAL_TX (1U << 6)

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
 * silo_fib_probe program: user space hands it a bpf_fib_lookup request as
 * the packet, it runs the same helper the data path runs and writes back the
 * answer. Lets "silo route lookup" show exactly what the data path would get.
 */
struct silo_fib_probe {
	__s32 rc;
	__u32 flags;
	struct bpf_fib_lookup params;
};

#endif /* SILO_ABI_ROUTE_H */
