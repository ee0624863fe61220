/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * What libsilo gives silod beyond silo.h: exactly the calls it makes, by
 * the module that has them. The modules' headers (maps.h, pins.h, nl.h,
 * ...) include this one and add what only libsilo itself uses.
 */
#ifndef SILO_LIB_SILOD_H
#define SILO_LIB_SILOD_H

#include <stdbool.h>
#include <sys/types.h>
#include "internal.h" /* the messages: pr_err() and the like */

/* The shared maps (maps.c, maps_genid.c, pins.c). */
/* Shared maps, by their names in the BPF object (pin names too). */
enum silo_map {
	SILO_MAP_META,
	SILO_MAP_LOCAL_ADDRS,
	SILO_MAP_GENID,
	SILO_MAP_CPU_NODE,
	SILO_MAP_DEVICES,
	SILO_MAP_TX_PORTS,
	SILO_MAP_STATS,
	SILO_MAP_ROUTE_CACHE,
	SILO_MAP_HEARTBEAT,
	SILO_MAP_DAEMON,
	SILO_MAP_FILL_LOG,
	SILO_MAP_PMTU_MARKS,
	SILO_MAP_PMTU_UNSEEN,
	SILO_MAP_ROUTE_MTUS,
	SILO_MAP_SRC_CHECKED,
	SILO_MAP_LOCAL_BITS,
	SILO_MAP_DIRECT_SKIP,
	SILO_MAP_CSUM_STATS,
	SILO_MAP_CT_STATS,
	SILO_MAP_CT_ASK,
	/* Services and CPU steering (service.c). */
	SILO_MAP_SERVICES,
	SILO_MAP_SERVICE_NODES,
	SILO_MAP_SERVICE_STATS,
	SILO_MAP_QUEUE_CPU,
	SILO_MAP_CPUMAP,
	SILO_MAP_COUNT
};

/* Maps added to SILO_LAYOUT_VERSION 4 after its first release: pins of
 * an earlier one lack them (fd -1 until a load of this release makes
 * them). */
static inline bool silo_map_added(unsigned int map)
{
	return map == SILO_MAP_PMTU_MARKS || map == SILO_MAP_PMTU_UNSEEN ||
	       map == SILO_MAP_ROUTE_MTUS || map == SILO_MAP_SRC_CHECKED ||
	       map == SILO_MAP_LOCAL_BITS || map == SILO_MAP_DIRECT_SKIP ||
	       map == SILO_MAP_CSUM_STATS || map == SILO_MAP_CT_STATS ||
	       map == SILO_MAP_CT_ASK;
}

/* fds of the pinned maps, opened by silo_maps_open(); -1 when closed. */
struct silo_maps {
	int fd[SILO_MAP_COUNT];
	int node_fd[SILO_MAX_NODES];
	__u32 nr_nodes;
};

void silo_maps_init(struct silo_maps *m);
void silo_maps_close(struct silo_maps *m);
/*
 * Opens the shared maps, or makes them: loads silo's XDP object (libbpf makes
 * every map, with BTF), fills them from the kernel and pins them, without
 * attaching anything. cache_size 0: whatever exists, or the default; another
 * size than the existing one is refused. *created says which happened.
 */
int silo_maps_ensure(struct silo *s, struct silo_maps *m, __u32 cache_size,
		     enum silo_cache_kind kind, bool *created);
/* Removes the shared pins and empty directories, unless still in use. */
void silo_maps_release(struct silo *s);
/* Makes (and pins) route caches up to nr_nodes, like node 0's; updates
 * meta. Never removes caches. */
int silo_maps_set_nodes(struct silo *s, struct silo_maps *m, __u32 nr_nodes);
/*
 * Reads what is asked and writes genid's flags (the cache key's fields and
 * why) and MTU floors; bumps genid when they changed. The multipath hash
 * policies are read every time: the key needs each family's.
 */
#define SILO_SYNC_RULES (1U << 0) /* policy rules */
#define SILO_SYNC_SYSCTLS (1U << 1) /* min_pmtu, ip_forward_use_pmtu */
#define SILO_SYNC_ROUTE_MTU (1U << 2) /* the unlocked route MTUs */
#define SILO_SYNC_ROUTES (1U << 3) /* multipath and "from" routes */
#define SILO_SYNC_SRCS (1U << 4) /* src_checked: routes, addresses */
#define SILO_SYNC_DIRECT (1U << 5) /* direct_skip: rules, local routes */
#define SILO_SYNC_ALL 63
/* The genid flags SILO_SYNC_DIRECT decides. */
#define SILO_GENID_DIRECT_BITS                         \
	(SILO_GENID_DIRECT_V4 | SILO_GENID_DIRECT_V6 | \
	 SILO_GENID_DIRECT_SRC_V4 | SILO_GENID_DIRECT_SRC_V6)
/* The genid flags SILO_SYNC_ROUTES decides. */
#define SILO_GENID_ROUTES_BITS \
	(SILO_GENID_MPATH_V4 | SILO_GENID_MPATH_V6 | SILO_GENID_SRC_ROUTES_V6)
/* With SILO_SYNC_ROUTE_MTU, route_mtus too (mtus_fd; -1: none, and
 * genid.route_mtu alone applies); with SILO_SYNC_SRCS, src_checked
 * (srcs_fd; -1: none, every IPv4 source takes the full check); with
 * SILO_SYNC_DIRECT, direct_skip (direct_fd; -1: none, every lookup walks
 * the rules). */
int silo_sync_genid(int genid_fd, int mtus_fd, int srcs_fd, int direct_fd,
		    unsigned int what);
/* The tables that rules before main's look every packet up in, both
 * families' (at most SILO_DIRECT_TABLES_MAX), into ids: a route of one
 * changes direct_skip. Their number, or -errno. */
#define SILO_DIRECT_TABLES_MAX 32
int silo_direct_tables(__u32 *ids);
/* Fill the maps from the kernel's state. */
/* local_addrs, then local_bits (bits_fd; -1: none). */
int silo_fill_local_addrs(int map_fd, int bits_fd);
int silo_write_cpu_node(int map_fd, const __u32 *node_of, int nr_cpus);
/* Writes ifindex's record; bumps genid (unless genid_fd < 0) when an
 * existing record changed in what cached answers depend on; with tx_fd
 * >= 0, puts the device in tx_ports or takes it out (silo_sync_tx_port). */
int silo_fill_device(int map_fd, int genid_fd, int tx_fd, __u32 ifindex);
/* A device kind (IFLA_INFO_KIND) whose senders are on this host; one whose
 * native XDP sends a checksum finished in XDP as finished (devices.c). */
bool silo_kind_local_tx(const char *kind);
bool silo_kind_csum_finish(const char *kind);
/* tx_ports holds ifindex exactly while its record has SILO_DEV_F_EGRESS
 * and SILO_DEV_F_XMIT. */
int silo_sync_tx_port(int map_fd, int tx_fd, __u32 ifindex);
/* genid + n in the map (one writer at a time: the caller's to ensure). */
int silo_genid_bump_fd(int genid_fd, unsigned int n);
/* genid.sweeps + 1, after route cache entries were deleted: the data
 * path's copies of them go too (one writer at a time, as above). */
int silo_genid_sweeps_fd(int genid_fd);

/* XDP links (xdp_link.c, pins.c). */
/*
 * Removes the link pins whose link attaches to nothing (its device deleted,
 * or detached by hand) with their device entries; with the last user gone,
 * the shared maps, as an unload does (not in silod, which keeps them while
 * it runs). Returns how many it removed, or -errno.
 */
int silo_xdp_prune(struct silo *s);
/* Calls fn for each device's link pin in the namespace's directory. */
int silo_for_each_link_pin(struct silo *s,
			   int (*fn)(struct silo *s, __u32 ifindex, void *ctx),
			   void *ctx);
/* The pid of a live silod serving this namespace's pins, or 0. */
int silo_daemon_pid(struct silo *s);
/* starttime (field 22 of /proc/PID/stat, clock ticks since boot); pid 0:
 * this process. Tells a process from a later one that reused its pid. */
int silo_proc_start_ticks(int pid, __u64 *ticks);

/* CPUs (util/cpus.c). */
/* One element of a CPU list, "N" or "N-M" (N <= M), at s: *end is set past
 * it. -EINVAL when s does not start with one. */
int silo_parse_cpu_range(const char *s, char **end, unsigned long *first,
			 unsigned long *last);
/* cpu -> node, from sysfs; node 0 for every CPU when there is no NUMA. */
int silo_read_cpu_nodes(__u32 *node_of, int nr_cpus, __u32 *nr_nodes);

/* Netlink (nl.c). */
/* Dumps run again because they came back with NLM_F_DUMP_INTR. */
extern unsigned long silo_nl_dumps_retried;
/* 1 when a nexthop group exists, else 0. */
int silo_nl_nexthop_groups(void);
/* Does an IPv4 route of this type (RTN_*) make the source check refuse
 * the sources it holds (src_checked)? */
bool silo_nl_route_refuses_srcs(unsigned char rtm_type);
/* What the PMTU watch reads (nl/nl_pmtu.c). Every device of the namespace: */
struct silo_nl_dev {
	__u32 ifindex;
	unsigned int flags; /* IFF_* */
	char name[16];
	char kind[16]; /* IFLA_INFO_KIND; empty: none (a NIC, loopback) */
};
typedef int (*silo_nl_dev_fn)(const struct silo_nl_dev *dev, void *ctx);
int silo_nl_dump_devs(silo_nl_dev_fn fn, void *ctx);
/* The destination of every PMTU exception of family (AF_INET, AF_INET6)
 * the kernel holds, in every table. */
typedef int (*silo_nl_exc_fn)(const struct silo_addr *dst, void *ctx);
int silo_nl_dump_exceptions(int family, silo_nl_exc_fn fn, void *ctx);
/* A device's mtu6 (0: no IPv6 on it), and whether a PMTU exception of
 * family lives at most SILO_PMTU_EXPIRES_MAX seconds (mtu_expires). */
int silo_dev_mtu6(const char *name, int *mtu6);
bool silo_pmtu_expires_ok(int family);

/*
 * The offload envelope (envelope.c): which SILO_ENV_* conditions hold in
 * the current network namespace, per family, and a line that names the
 * first one found (e.g. "nftables chain inet filter forward").
 */
struct silo_envelope {
	__u32 holds[2]; /* [SILO_FAM_V4], [SILO_FAM_V6]: SILO_ENV_* bits */
	char detail[256];
	/* Established connections (genid.ct_*): the families whose holds
	 * are NFTABLES alone, from chains that accept an established
	 * connection's packets first; conntrack's settings. */
	__u8 ct_shape;
	__u8 ct_flags;
	__u32 ct_timeout[2];
	char ct_detail[192]; /* what lets them in, or keeps them out */
};
/* Evaluates every condition; on a failure to read one, sets UNKNOWN. */
int silo_envelope_eval(struct silo_envelope *env);
/* Only what the established connections' view needs (ct_shape, ct_detail
 * and conntrack's settings): the nftables ruleset and the sysctls, none of
 * the other conditions' reads. 0 or -errno (nftables unread: no shape). */
int silo_envelope_eval_ct(struct silo_envelope *env);
/*
 * Writes env less genid.override into genid.outside (override: the
 * SILO_ENV_OVERRIDABLE bits to keep, or -1 to keep the map's), bumping
 * genid when outside changed, and the established connections' view
 * (ct_optin: the operator's opt-in, 0 or 1, or -1 to keep the map's).
 * Returns 0 or -errno.
 */
int silo_envelope_apply(int genid_fd, const struct silo_envelope *env,
			int override, int ct_optin);
/* ct_stats (fd) summed over the CPUs; fd < 0 (pins of an earlier release,
 * which lack the map) reads as zeros. */
int silo_ct_stats_sum(int fd, struct silo_ct_stats *total);
/* The families whose established connections XDP forwards with env and
 * the opt-in: ct_shape where NFTABLES is all that holds. */
unsigned int silo_envelope_ct_fams(const struct silo_envelope *env, bool optin);

/* Services (service.c). */
/* silo_service_sync, or -EAGAIN at once while another process holds the
 * lock (silod: its loop must not wait). */
int silo_service_sync_try(struct silo *s);

#endif /* SILO_LIB_SILOD_H */
