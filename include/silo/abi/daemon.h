/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * silod's contract with the data path: its heartbeat, and its own state
 * and counters (the daemon map). Public.
 */
#ifndef SILO_ABI_DAEMON_H
#define SILO_ABI_DAEMON_H

#include "silo/abi/common.h"

/*
 * heartbeat[0]: silod's liveness, in its own cache line. Only silod
 * invalidates the route cache and re-evaluates the envelope as the
 * configuration changes (a firewall added after the load), so the data path
 * forwards only while silod beats: with last_ns 0 (no silod, or silod has
 * exited), a beat older than timeout_ns, or one stamped in the future
 * (another clock), every packet goes to the stack (pass_no_daemon). Times
 * are CLOCK_MONOTONIC_COARSE (bpf_ktime_get_coarse_ns).
 */
#define SILO_HB_ROUTE_MTUS (1U << 2)
#define SILO_HB_SRCS (1U << 3)
#define SILO_HB_LOCAL_BITS (1U << 4)
#define SILO_HB_SWEEPS (1U << 5)
#define SILO_HB_DIRECT (1U << 6)
#define SILO_HB_DIRECT_TABLES (1U << 7)

struct silo_heartbeat {
	__u64 last_ns;
	__u64 timeout_ns;
	/* Families (1 << SILO_FAM_*) for which every ICMP error that can teach
	 * this host a PMTU exception passes through silo's XDP program, and
	 * every exception the kernel held when silod started is marked
	 * (route.h, pmtu_marks): their larger packets use the cache. And
	 * SILO_HB_ROUTE_MTUS: this silod keeps route_mtus current (one of an
	 * earlier release does not: genid.route_mtu then applies), and
	 * SILO_HB_SRCS src_checked (without it every IPv4 source takes the
	 * full check), SILO_HB_LOCAL_BITS local_bits (without it every
	 * destination is looked up in local_addrs), SILO_HB_SWEEPS
	 * genid.sweeps, after every delete of entries and after its PMTU
	 * marks (without it route_hot is not used: an earlier release's
	 * silod deletes entries without moving it), SILO_HB_DIRECT
	 * direct_skip and genid's SILO_GENID_DIRECT_* (what an earlier
	 * release's program reads), SILO_HB_DIRECT_TABLES the same with the
	 * routes of the tables rules look every packet up in (what this
	 * release's reads: without it every lookup walks the rules; an
	 * earlier release's silod leaves a table's new routes out). */
	__u32 pmtu_watch;
	__u8 cacheline_pad[44];
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

#define SILO_DSTAT_ENUMERATOR(name, field, desc) SILO_DSTAT_##name,
SILO_COUNTER_ENUM(silo_daemon_stat, SILO_DAEMON_STATS, SILO_DSTAT_ENUMERATOR,
		  SILO_DSTAT_MAX);

struct silo_daemon {
	__u32 pid; /* 0: not running */
	__u32 pending; /* first sweeps whose grace period has not ended */
	__u64 started_ns; /* CLOCK_MONOTONIC */
	/* starttime of /proc/PID/stat (clock ticks since boot): tells silod
	 * from a later process that reused its pid. */
	__u64 start_ticks;
	SILO_COUNTER_FIELDS(SILO_DAEMON_STATS)
};

#endif /* SILO_ABI_DAEMON_H */
