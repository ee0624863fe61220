/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Layouts private to silo: between its XDP program and silod (the fill
 * log) and the data path's own per-CPU state (admission). NOT installed:
 * they change with silo, under SILO_LAYOUT_VERSION like every pinned
 * map, but no application may depend on them.
 */
#ifndef SILO_ABI_INTERNAL_H
#define SILO_ABI_INTERNAL_H

#include "silo/abi/route.h"

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

/*
 * The same state, second entry (SILO_ADMIT_CT), rations conntrack lookups
 * that find nothing (bpf/lib/ct.h): within the budget every packet XDP
 * could forward is looked up; past it, in a storm of new connections,
 * only a flow conntrack held when this CPU last looked it up. Such a
 * packet is passed unlooked-at (pass_storm), which the kernel does anyway
 * for a new connection's; a connection established meanwhile is looked
 * up again from the next refill on.
 */
#define SILO_ADMIT_ROUTE 0
#define SILO_ADMIT_CT 1
#define SILO_CT_ADMIT_BURST 256
#define SILO_CT_ADMIT_NS 100000ULL /* 10,000 misses a second per CPU */

struct silo_admit {
	__u64 last_ns; /* budget last refilled */
	__u32 tokens;
	__u32 pad;
	__u32 seen[SILO_ADMIT_SLOTS]; /* key hashes, | 1 (0: empty) */
};

/*
 * A cheap hash of a route key, by 64-bit words, for admission (seen[]
 * takes its low bits), not a map. Three products that do not wait for each
 * other (a chain of six multiplies was a sixth of the program's own time in
 * a flood of new keys), then one to mix: a product spreads a bit only upwards, so keys that differ in the
 * last byte of an address would differ in the top byte alone.
 */
static inline __u32 silo_key_hash(const struct silo_route_key *k)
{
	const __u64 *w = (const __u64 *)k;
	__u64 h;

	_Static_assert(sizeof(*k) == 6 * sizeof(__u64), "key of six words");
	h = ((w[0] ^ w[3]) * 0xFF51AFD7ED558CCDULL) ^
	    ((w[1] ^ w[4]) * 0xC4CEB9FE1A85EC53ULL) ^
	    ((w[2] ^ w[5]) * 0x9E3779B97F4A7C15ULL);
	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ULL;
	return (__u32)(h >> 32);
}

/*
 * route_hot, per CPU and per program: this CPU's answers for the flows it
 * forwards, direct-mapped and checked by the frame's own bytes (its shape)
 * before anything is parsed. A flow's answer is copied there from a current
 * entry of the route cache once the source check has accepted its source
 * and the frame is on its way out; the frames that follow, the same in
 * every byte the verdict reads, are forwarded from the copy with no
 * parsing, no route key, no hash lookup. A copy counts while its genid and
 * its sweeps (genid.sweeps, read before the route cache lookup) are
 * current: whatever makes the route cache's entry go (a genid bump, a
 * sweep) makes the copy go too, and so does whatever bumps genid (a
 * device's record, an address, the key's flags). Never written by user
 * space.
 */
#define SILO_HOT_SLOTS 1024 /* a power of 2 */

/*
 * A frame's shape: its first bytes as little-endian 64-bit words, less
 * what may change from packet to packet of a flow and is checked for each
 * (the IP length, the TTL or hop limit, IPv4's ID and checksum) and what
 * follows the ports: the Ethernet header, the IP header and the ports. Five words for IPv4 with
 * no options, eight for IPv6 with TCP or UDP after the fixed header; only
 * such frames have one. Byte i is in word i / 8, bits 8 * (i % 8) on.
 */
#define SILO_SHAPE_WORDS 8
#define SILO_SHAPE_WORDS_V4 5
/* IPv4: bytes 16-19 (total length, ID), 22 (TTL) and 24-25 (checksum)
 * out; the ports end at 37. */
#define SILO_SHAPE_V4_M2 0xFF00FFFF00000000ULL
#define SILO_SHAPE_V4_M3 0xFFFFFFFFFFFF0000ULL
#define SILO_SHAPE_V4_M4 0x0000FFFFFFFFFFFFULL
/* IPv6: bytes 18-19 (payload length) and 21 (hop limit) out; the ports
 * end at 57. */
#define SILO_SHAPE_V6_M2 0xFFFF00FF0000FFFFULL
#define SILO_SHAPE_V6_M7 0x000000000000FFFFULL

/*
 * A shape's hash, from its words that tell flows apart (an IPv4 shape's
 * words 3 and 4, then 0; an IPv6 one's words 2 to 7), masked: the same mix
 * as silo_key_hash(). Its low bits pick the slot in route_hot; its high
 * ones are the slot's tag, which the program keeps beside (2 bytes a slot,
 * in a line a storm keeps warm): a frame whose tag is not its slot's has
 * no copy, found without reading the slot.
 */
static inline __u32 silo_hot_hash(__u64 a, __u64 b, __u64 c, __u64 d, __u64 e,
				  __u64 f)
{
	__u64 h = ((a ^ d) * 0xFF51AFD7ED558CCDULL) ^
		  ((b ^ e) * 0xC4CEB9FE1A85EC53ULL) ^
		  ((c ^ f) * 0x9E3779B97F4A7C15ULL);

	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ULL;
	return (__u32)(h >> 32);
}

static inline __u32 silo_hot_index(__u32 h)
{
	return h & (SILO_HOT_SLOTS - 1);
}

/* Never 0: an empty slot's. */
static inline __u16 silo_hot_tag(__u32 h)
{
	return (__u16)(h >> 16) | 1;
}

struct silo_hot {
	__u64 shape[SILO_SHAPE_WORDS]; /* masked; an IPv4 one's last three 0 */
	__u64 genid; /* the entry's */
	__u64 sweeps; /* read before the route cache lookup */
	/* Larger frames (above the PMTU floor): served while pmtu_clean (at
	 * pmtu_stamp, in a watched family, no mark for the destination and
	 * no error unseen) and the program's last mark is older than
	 * pmtu_stamp (lib/front.h). */
	__u64 pmtu_stamp;
	__u32 in_ifindex; /* the ingress device the frame came in on */
	__u32 ifindex; /* egress */
	/* The heartbeat's pmtu_watch the answer was made under: what silod
	 * keeps decides how the source check and the PMTU guard are made. */
	__u32 watch;
	__u16 mtu;
	__u8 pmtu_clean;
	/* The ingress's senders are on this host (SILO_DEV_F_LOCAL_TX): each
	 * frame's checksum is compared with the pseudo header's, and one
	 * left to offload finished (front.h) or left to the full path. */
	__u8 local_tx;
	/* The frame's new Ethernet addresses in its order, the next hop's
	 * then the egress's: one 8-byte and one 4-byte copy (front.h). */
	__u8 eth[12] __attribute__((aligned(8)));
	__u8 pad[12]; /* two cache lines */
};

_Static_assert(sizeof(struct silo_hot) == 128, "route_hot's slot");

/*
 * ct_ask (a ring buffer, lib/ct.h): a TCP connection XDP would forward but
 * for conntrack's window tracking, which must be liberal first (else the
 * stack judges the next packet it sees invalid). silod sets
 * IP_CT_TCP_FLAG_BE_LIBERAL on both directions through ctnetlink, as
 * nft_flow_offload_eval() does; the connection's next packet is then
 * forwarded. The tuple is the packet's, network order.
 */
struct silo_ct_ask {
	__u8 src[16];
	__u8 dst[16];
	__be16 sport;
	__be16 dport;
	__u8 family; /* SILO_AF_INET, SILO_AF_INET6 */
	__u8 l4_proto;
	__u8 pad[2];
};

#endif /* SILO_ABI_INTERNAL_H */
