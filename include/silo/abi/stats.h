/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The XDP program's counters (the stats map). Public.
 */
#ifndef SILO_ABI_STATS_H
#define SILO_ABI_STATS_H

#include "silo/abi/common.h"

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
	X(PASS_L4_BAD, pass_l4_bad,                                            \
	  "TCP/UDP header bad, or checksum to offload")                        \
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
	X(PASS_MTU, pass_mtu,                                                  \
	  "larger than the egress MTU, or maybe the path's")                   \
	X(PASS_HAIRPIN, pass_hairpin, "egress is the ingress device")          \
	X(PASS_NO_TX_PORT, pass_no_tx_port,                                    \
	  "egress not in tx_ports, or takes no multi-buffer frame")            \
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
	X(CACHE_BIG, cache_big, "above the least PMTU, unwatched: FIB lookup") \
	X(CACHE_NO_LOG, cache_no_log,                                          \
	  "miss not cached: the fill log was full")                            \
	X(TRIMMED, trimmed, "bytes after the IP packet trimmed")               \
	X(STEERED, steered, "local, redirected to its service's CPU")

#define SILO_STAT_ENUMERATOR(name, field, desc) SILO_STAT_##name,
SILO_COUNTERS(silo_stat, silo_stats, SILO_XDP_STATS, SILO_STAT_ENUMERATOR,
	      SILO_STAT_MAX);

/*
 * csum_stats: per device silo runs on (its ifindex), per CPU, what became
 * of the TCP and UDP checksums a sender on this host left to offload
 * (SILO_DEV_F_LOCAL_TX; docs/ENVELOPE.md). The loader makes the device's
 * entry; a packet counts at most one.
 */
#define SILO_CSUM_STATS(X)                                                 \
	X(FINISHED, finished, "left to offload: finished in XDP, sent on") \
	X(PASSED, passed, "left to offload: passed, the stack finishes it")

#define SILO_CSUM_STAT_ENUMERATOR(name, field, desc) SILO_CSUM_STAT_##name,
SILO_COUNTERS(silo_csum_stat, silo_csum_stats, SILO_CSUM_STATS,
	      SILO_CSUM_STAT_ENUMERATOR, SILO_CSUM_STAT_MAX);

#define SILO_STAT_FIB_FIRST SILO_STAT_FIB_SUCCESS
#define SILO_STAT_FIB_CODES (SILO_STAT_FIB_ERROR - SILO_STAT_FIB_SUCCESS)

/*
 * ct_stats: per CPU, the packets of a family whose firewall lets XDP
 * forward established connections (genid.ct_fams; docs/ENVELOPE.md). A
 * packet counts at most one: forwarded under conntrack's verdict, or why
 * conntrack's view sent it to the stack (the stats map counts it
 * pass_envelope too); one conntrack allowed and the route did not counts
 * only there. refreshed counts the conntrack timeouts written besides.
 */
#define SILO_CT_STATS(X)                                                       \
	X(FORWARDED, forwarded, "an established connection's, forwarded")      \
	X(PASS_NONE, pass_none, "no connection in conntrack's zone 0")         \
	X(PASS_NEW, pass_new, "connection not confirmed or not assured yet")   \
	X(PASS_STATE, pass_state,                                              \
	  "not established, dying, a helper's, expected or young")             \
	X(PASS_NAT, pass_nat, "NAT the kernel must do (binding, masq device)") \
	X(PASS_FLAGS, pass_flags, "SYN, FIN, RST or no ACK: the kernel's")     \
	X(PASS_CSUM, pass_csum, "a checksum conntrack would call invalid")     \
	X(PASS_LIBERAL, pass_liberal,                                          \
	  "window tracking not liberal yet: asked silod")                      \
	X(PASS_NO_KFUNC, pass_no_kfunc, "the kernel has no conntrack kfuncs")  \
	X(PASS_STORM, pass_storm,                                              \
	  "a storm of new connections: a flow not held before, not looked up") \
	X(REFRESHED, refreshed, "conntrack timeouts written")

#define SILO_CT_STAT_ENUMERATOR(name, field, desc) SILO_CT_STAT_##name,
SILO_COUNTERS(silo_ct_stat, silo_ct_stats, SILO_CT_STATS,
	      SILO_CT_STAT_ENUMERATOR, SILO_CT_STAT_MAX);

#endif /* SILO_ABI_STATS_H */
